"""Tables as CSV (exact), Markdown (for reading and diffs) and LaTeX, every cell with its interval."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from itmbench.io import write_text

LONG_COLUMNS = ["row", "column", "value", "lo", "hi"]
STATUS_COLUMN = "status"  # the cell of a model a table does not score, with the reason as its note


def _cell(value: float, lo: float, hi: float, decimals: int) -> str:
    if pd.isna(value):
        return "–"
    if pd.isna(lo) or pd.isna(hi):
        if float(value).is_integer() and abs(value) < 1e15:
            return f"{int(value)}"  # a count
        return f"{value:.{decimals}f}"
    return f"{value:.{decimals}f} ({lo:.{decimals}f}–{hi:.{decimals}f})"


def to_wide(long: pd.DataFrame, decimals: int, column_decimals: Mapping[str, int] | None = None) -> pd.DataFrame:
    """Pivot a long table (row, column, value, lo, hi) to display cells, keeping input order; every cell of
    a column at one precision: `column_decimals[column]` where given, else `decimals`."""
    missing = [c for c in LONG_COLUMNS if c not in long.columns]
    if missing:
        raise ValueError(f"table is missing columns {missing}; expected {LONG_COLUMNS}")
    rows = list(dict.fromkeys(long["row"]))
    cols = list(dict.fromkeys(long["column"]))
    precision = {c: (column_decimals or {}).get(c, decimals) for c in cols}
    cells = {(r, c): _cell(v, lo, hi, precision[c]) for r, c, v, lo, hi in long[LONG_COLUMNS].itertuples(index=False)}
    if "note" in long.columns:
        for r, c, note in long[["row", "column", "note"]].itertuples(index=False):
            if isinstance(note, str) and note:
                cells[(r, c)] = note
    return pd.DataFrame([[cells.get((r, c), "") for c in cols] for r in rows], index=rows, columns=cols)


def markdown(wide: pd.DataFrame, title: str, row_header: str) -> str:
    """A GitHub-flavoured Markdown table with a title line."""
    header = [row_header, *wide.columns]
    lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for name, row in wide.iterrows():
        lines.append("| " + " | ".join([str(name), *row.tolist()]) + " |")
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("–", "--")):
        text = text.replace(a, b)
    return text


def latex(wide: pd.DataFrame, title: str, row_header: str, label: str) -> str:
    """A booktabs LaTeX table."""
    spec = "l" + "r" * len(wide.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\caption{{{_tex_escape(title)}}}",
        rf"\label{{{label}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(_tex_escape(str(c)) for c in [row_header, *wide.columns]) + r" \\",
        r"\midrule",
    ]
    for name, row in wide.iterrows():
        lines.append(" & ".join(_tex_escape(str(c)) for c in [name, *row.tolist()]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table_set(long: pd.DataFrame, out_csv: str | Path, title: str, **keywords: Any) -> list[Path]:
    """What a table command writes: `write_table` beside `out_csv` (its .csv, .md and .tex), the three together or
    not at all (one `output_set`)."""
    from itmbench.io import output_set

    with output_set(folders=[Path(out_csv).parent]):
        return write_table(long, Path(out_csv).with_suffix(""), title, **keywords)


def write_table(
    long: pd.DataFrame,
    prefix: str | Path,
    title: str,
    row_header: str = "model",
    decimals: int = 1,
    column_decimals: Mapping[str, int] | None = None,
    records: pd.DataFrame | None = None,
) -> list[Path]:
    """Write prefix.csv (long, exact to 6 decimals; or `records`, when given, to 6 significant digits: the
    table a reader of the CSV wants, where `long` is only its layout for people), prefix.md and prefix.tex;
    return the paths.

    Markdown and LaTeX print each column at one precision (`to_wide`: `column_decimals[column]`, else
    `decimals`): a benchmark's table at its paper's printed precision (`BenchmarkEntry.column_precision`)."""
    prefix = Path(prefix)
    wide = to_wide(long, decimals, column_decimals)
    paths = [prefix.with_suffix(".csv"), prefix.with_suffix(".md"), prefix.with_suffix(".tex")]
    if records is not None:
        write_text(paths[0], records.to_csv(index=False, lineterminator="\n", float_format="%.6g"))
    else:
        exact = long.copy()
        for c in ("value", "lo", "hi"):
            exact[c] = exact[c].astype(float).round(6)
        write_text(paths[0], exact.to_csv(index=False, lineterminator="\n"))
    write_text(paths[1], markdown(wide, title, row_header))
    write_text(paths[2], latex(wide, title, row_header, label=f"tab:{prefix.name}"))
    return paths


def write_comparison_table(df: pd.DataFrame, prefix: str | Path, title: str) -> list[Path]:
    """A published-vs-regenerated table (table, row, column, published, regenerated, difference, status)."""
    needed = ["table", "row", "column", "published", "regenerated", "difference", "status"]
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise ValueError(f"comparison table is missing columns {missing}; expected {needed}")
    prefix = Path(prefix)

    def fmt(v: object) -> str:
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return "–"
        if isinstance(v, float):
            return f"{v:g}"
        return str(v)

    wide = pd.DataFrame(
        {
            "published": [fmt(v) for v in df["published"]],
            "regenerated": [fmt(v) for v in df["regenerated"]],
            "difference": [fmt(v) for v in df["difference"]],
            "status": df["status"].astype(str).tolist(),
        },
        index=[f"{t} / {r} / {c}" for t, r, c in zip(df["table"], df["row"], df["column"])],
    )
    paths = [prefix.with_suffix(".csv"), prefix.with_suffix(".md"), prefix.with_suffix(".tex")]
    write_text(paths[0], df.to_csv(index=False, lineterminator="\n"))
    write_text(paths[1], markdown(wide, title, "table / row / column"))
    write_text(paths[2], latex(wide, title, "table / row / column", label=f"tab:{prefix.name}"))
    return paths


def absent_rows(reasons: dict[str, str], columns: Any) -> pd.DataFrame:
    """One 'status' row per model a table does not score: no value, its reason as the cell's note."""
    rows = [{"row": model, "column": STATUS_COLUMN, "note": reason} for model, reason in sorted(reasons.items())]
    frame = pd.DataFrame(rows)
    for c in columns:
        if c not in frame.columns:
            frame[c] = frame["row"] if c == "model" else (float("nan") if c in ("value", "lo", "hi", "n") else "")
    return frame
