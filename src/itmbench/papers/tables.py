"""Regenerated numbers beside the published ones: the generic comparison and its CSV/Markdown/LaTeX tables.

A *regenerated* table is long: one number a line with columns table, block, row, column, value, lo,
hi (block may be absent, meaning ''; lo/hi may be NaN for a number without an interval). `compare`
joins it to a paper's transcription (`itmbench.papers.published`) on (table, block, row, column) and
adds:

``published``, ``decimals``, ``note``
    The printed number, its printed decimals and the transcription note (NaN/''/`default_decimals`
    for a cell the paper does not print).
``regenerated``
    The regenerated value rounded to the printed precision (Python's ``round``, i.e. the value as
    ``f"{value:.{decimals}f}"`` prints it: the printed numbers are rounded from binary floats too).
``difference``
    ``regenerated - published`` at the printed precision.
``status``
    ``match`` (equal at the printed precision), ``differs`` (a cell to look at: it is flagged, never
    hidden) or ``not_published`` (the paper prints no such cell).

`write_comparison` writes the compared table as CSV (every column, exact), Markdown and LaTeX, one
sub-table per (table, block); each cell reads ``regenerated (lo–hi) | published | difference`` and a
differing cell is marked with ⚠ (Markdown) or (!) (LaTeX).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_text
from itmbench.papers.published import KEY, load_published

STATUSES: tuple[str, ...] = ("match", "differs", "not_published")
REQUIRED: tuple[str, ...] = ("table", "row", "column", "value")
FLAG_MD = "⚠"
FLAG_TEX = "(!)"


def _normalise(regenerated: pd.DataFrame) -> pd.DataFrame:
    """Regenerated long table with block, lo and hi present, keys as str, values as float; checked."""
    missing = [c for c in REQUIRED if c not in regenerated.columns]
    if missing:
        raise ValueError(f"regenerated table is missing columns {missing}; expected {list(REQUIRED)} (+ block, lo, hi)")
    frame = regenerated.reset_index(drop=True).copy()
    if "block" not in frame.columns:
        frame["block"] = ""
    for name in ("lo", "hi"):
        if name not in frame.columns:
            frame[name] = np.nan
    for name in KEY:
        frame[name] = frame[name].fillna("").astype(str)
    for name in ("value", "lo", "hi"):
        frame[name] = pd.to_numeric(frame[name], errors="raise").astype(float)
    bad = frame["value"].isna()
    if bad.any():
        first = frame.loc[bad, list(KEY)].iloc[0].to_dict()
        raise ValueError(f"regenerated value is NaN for {first} ({int(bad.sum())} cells); expected a number")
    dup = frame.duplicated(list(KEY), keep=False)
    if dup.any():
        first = frame.loc[dup, list(KEY)].iloc[0].to_dict()
        raise ValueError(f"regenerated table lists cell {first} more than once; expected one value per cell")
    return frame


def round_printed(value: float, decimals: int) -> float:
    """A value rounded as it would be printed with `decimals` digits (the float f-string formatting gives)."""
    return float(f"{value:.{int(decimals)}f}")


def compare(
    regenerated: pd.DataFrame,
    paper: str,
    published: pd.DataFrame | None = None,
    default_decimals: int = 2,
) -> pd.DataFrame:
    """Join regenerated cells to the published ones and mark each match / differs / not_published."""
    frame = _normalise(regenerated)
    pub = load_published(paper) if published is None else published
    pub = pub[[*KEY, "value", "decimals", "note"]].rename(columns={"value": "published"})
    merged = frame.merge(pub, on=list(KEY), how="left", validate="one_to_one")
    has_pub = merged["published"].notna()
    decimals = merged["decimals"].where(has_pub, default_decimals).astype("int64")
    rounded = [round_printed(v, d) for v, d in zip(merged["value"], decimals)]
    difference = [
        round_printed(r - p, d) if not math.isnan(p) else math.nan
        for r, p, d in zip(rounded, merged["published"].astype(float), decimals)
    ]
    status = np.where(~has_pub, "not_published", np.where(np.asarray(difference) == 0, "match", "differs"))
    merged["decimals"] = decimals
    merged["regenerated"] = rounded
    merged["difference"] = [0.0 if d == 0 else d for d in difference]  # no '-0.0'
    merged["status"] = status
    merged["note"] = merged["note"].fillna("").astype(str)
    first = [*KEY, "value", "lo", "hi", "regenerated", "published", "difference", "decimals", "status", "note"]
    return merged[first + [c for c in merged.columns if c not in first]]


def status_counts(compared: pd.DataFrame) -> dict[str, int]:
    """How many cells match, differ and are not published (every status present, 0 where none)."""
    counts = compared["status"].value_counts()
    return {s: int(counts.get(s, 0)) for s in STATUSES}


def differing_cells(compared: pd.DataFrame) -> list[str]:
    """Each differing cell as 'table / block / row / column: regenerated vs published' (for reports and asserts)."""
    part = compared[compared["status"] == "differs"]
    return [
        f"{r.table} / {r.block} / {r.row} / {r.column}: {r.regenerated:.{r.decimals}f} vs {r.published:.{r.decimals}f}"
        for r in part.itertuples(index=False)
    ]


def comparison_cell(record: pd.Series, separator: str = " | ", flag: str = FLAG_MD) -> str:
    """'regenerated (lo–hi) | published | difference', flagged when the cell differs from the paper."""
    d = int(record["decimals"])
    text = f"{record['regenerated']:.{d}f}"
    if not (pd.isna(record["lo"]) or pd.isna(record["hi"])):
        text += f" ({record['lo']:.{d}f}–{record['hi']:.{d}f})"
    if record["status"] == "not_published":
        return f"{text}{separator}–{separator}–"
    text += f"{separator}{record['published']:.{d}f}{separator}{record['difference']:+.{d}f}"
    return f"{text} {flag}" if record["status"] == "differs" else text


def comparison_wide(
    compared: pd.DataFrame, separator: str = " | ", flag: str = FLAG_MD
) -> dict[tuple[str, str], pd.DataFrame]:
    """{(table, block): rows x columns of comparison cells}, in input order."""
    out: dict[tuple[str, str], pd.DataFrame] = {}
    for (table, block), part in compared.groupby(["table", "block"], sort=False):
        rows = list(dict.fromkeys(part["row"]))
        columns = list(dict.fromkeys(part["column"]))
        cells = {(r["row"], r["column"]): comparison_cell(r, separator, flag) for _, r in part.iterrows()}
        out[str(table), str(block)] = pd.DataFrame(
            [[cells.get((r, c), "") for c in columns] for r in rows], index=rows, columns=columns
        )
    return out


def _tex_escape(text: str) -> str:
    """Escape the LaTeX specials that table labels and cells contain."""
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("–", "--")):
        text = text.replace(a, b)
    return text


def _group_title(table: str, block: str) -> str:
    return f"{table} — {block}" if block else table


def comparison_markdown(compared: pd.DataFrame, title: str, row_header: str = "model") -> str:
    """Markdown: a title, the status counts, then one table per (table, block); '|' inside cells escaped."""
    counts = status_counts(compared)
    lines = [
        f"**{title}**",
        "",
        "Cells: regenerated (interval) | published | difference. "
        f"{counts['match']} match, {counts['differs']} differ ({FLAG_MD}), {counts['not_published']} not published.",
    ]
    for (table, block), wide in comparison_wide(compared, separator=" \\| ", flag=FLAG_MD).items():
        header = [row_header, *wide.columns]
        lines += ["", f"*{_group_title(table, block)}*", ""]
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
        lines += ["| " + " | ".join([str(name), *row.tolist()]) + " |" for name, row in wide.iterrows()]
    return "\n".join(lines) + "\n"


def comparison_latex(compared: pd.DataFrame, title: str, label: str, row_header: str = "model") -> str:
    """LaTeX (booktabs): one tabular per (table, block) in one table float; differing cells marked (!)."""
    counts = status_counts(compared)
    caption = (
        f"{title}. Cells: regenerated (interval) / published / difference; {counts['match']} match, "
        f"{counts['differs']} differ (marked {FLAG_TEX}), {counts['not_published']} not published."
    )
    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{_tex_escape(caption)}}}", rf"\label{{{label}}}"]
    for (table, block), wide in comparison_wide(compared, separator=" / ", flag=FLAG_TEX).items():
        lines += [
            rf"\par\smallskip\textit{{{_tex_escape(_group_title(table, block))}}}\par",
            rf"\begin{{tabular}}{{l{'r' * len(wide.columns)}}}",
            r"\toprule",
            " & ".join(_tex_escape(str(c)) for c in [row_header, *wide.columns]) + r" \\",
            r"\midrule",
        ]
        lines += [
            " & ".join(_tex_escape(str(c)) for c in [name, *row.tolist()]) + r" \\" for name, row in wide.iterrows()
        ]
        lines += [r"\bottomrule", r"\end{tabular}"]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_comparison(compared: pd.DataFrame, prefix: str | Path, title: str, row_header: str = "model") -> list[Path]:
    """Write prefix.csv (every column, values exact to 6 decimals), prefix.md and prefix.tex atomically."""
    missing = [
        c for c in ("regenerated", "published", "difference", "decimals", "status", "lo", "hi") if c not in compared
    ]
    if missing:
        raise ValueError(f"not a compared table (missing {missing}); build it with compare()")
    prefix = Path(prefix)
    exact = compared.copy()
    for name in ("value", "lo", "hi"):
        exact[name] = exact[name].astype(float).round(6)
    paths = [prefix.with_suffix(".csv"), prefix.with_suffix(".md"), prefix.with_suffix(".tex")]
    write_text(paths[0], exact.to_csv(index=False, lineterminator="\n"))
    write_text(paths[1], comparison_markdown(compared, title, row_header))
    write_text(paths[2], comparison_latex(compared, title, f"tab:{prefix.name}", row_header))
    return paths
