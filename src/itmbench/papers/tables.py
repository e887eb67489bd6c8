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

Numbers regenerated elsewhere than on the paper's data (the world) are not expected to equal the
printed ones: `compare(..., expect_equal=False)` marks a cell with both numbers ``compared`` (never
flagged), and `compare(..., keep_unregenerated=True)` keeps every printed cell of the compared
(table, block)s that nothing regenerated, as ``not_regenerated`` (shown ``– | published | –``), so a
table is laid out as printed, with nothing silently dropped. An optional ``model`` column (the
regenerated model that fills a printed row) is carried through and shown beside the row name.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_text
from itmbench.papers.published import KEY, _printed_column_order, load_published

STATUSES: tuple[str, ...] = ("match", "differs", "not_published")
# statuses of a comparison that does not expect equality (`compare(..., expect_equal=False, keep_unregenerated=True)`)
EXTRA_STATUSES: tuple[str, ...] = ("compared", "not_regenerated")
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


def printed_precision(cells: pd.DataFrame) -> dict[tuple[str, str], int]:
    """{(table, column): the decimals the column is printed at}: the decimals of a strict majority of its
    cells. A paper prints a column at one precision but the odd cell (BiVLC Table 4 prints Open CapPa's
    Add Group as 9.263 among two-decimal numbers; ECCV Table D.3 prints 60.6 among 60.78): the odd cell
    keeps its own decimals where it is compared, and the column shows at this precision. A column without
    such a majority holds numbers of different kinds (BiVLC Table 6: a count row above a share row) and
    is left out: each of its cells shows at its own printed decimals."""
    out: dict[tuple[str, str], int] = {}
    for (table, column), decimals in cells.groupby(["table", "column"], sort=False)["decimals"]:
        counts = decimals.astype("int64").value_counts()
        top = int(max(counts.index, key=lambda d: (counts[d], d)))
        if 2 * counts[top] > len(decimals):
            out[str(table), str(column)] = top
    return out


def round_printed(value: float, decimals: int) -> float:
    """A value rounded as it would be printed with `decimals` digits (the float f-string formatting gives)."""
    return float(f"{value:.{int(decimals)}f}")


def compare(
    regenerated: pd.DataFrame,
    paper: str,
    published: pd.DataFrame | None = None,
    default_decimals: int = 2,
    expect_equal: bool = True,
    keep_unregenerated: bool = False,
    tables: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Join regenerated cells to the published ones and mark each match / differs / not_published.

    With expect_equal=False a cell with both numbers is ``compared`` instead of match/differs. With
    keep_unregenerated=True every printed cell of the (table, block)s regenerated (or of every block
    of `tables`) that has no regenerated value is kept as ``not_regenerated``, rows and columns in
    printed order, regenerated rows the paper does not print after them. A cell the paper does not
    print takes the precision its (table, column) is printed at (`printed_precision`) where the paper
    prints the column, else `default_decimals`.
    """
    frame = _normalise(regenerated)
    pub = load_published(paper) if published is None else published
    pub = pub[[*KEY, "value", "decimals", "note"]].rename(columns={"value": "published"})
    merged = frame.merge(pub, on=list(KEY), how="left", validate="one_to_one")
    if keep_unregenerated:
        merged = _with_unregenerated(merged, pub, tables)
    has_pub = merged["published"].notna()
    has_value = merged["value"].notna()
    column_decimals = printed_precision(pub)
    fallback = [int(column_decimals.get((t, c), default_decimals)) for t, c in zip(merged["table"], merged["column"])]
    decimals = merged["decimals"].where(has_pub, pd.Series(fallback, index=merged.index)).astype("int64")
    rounded = [round_printed(v, d) if not math.isnan(v) else math.nan for v, d in zip(merged["value"], decimals)]
    difference = [
        round_printed(r - p, d) if not (math.isnan(p) or math.isnan(r)) else math.nan
        for r, p, d in zip(rounded, merged["published"].astype(float), decimals)
    ]
    both = np.where(np.asarray(difference) == 0, "match", "differs") if expect_equal else "compared"
    status = np.where(~has_pub, "not_published", np.where(~has_value, "not_regenerated", both))
    merged["decimals"] = decimals
    merged["regenerated"] = rounded
    merged["difference"] = [0.0 if d == 0 else d for d in difference]  # no '-0.0'
    merged["status"] = status
    merged["note"] = merged["note"].fillna("").astype(str)
    first = [*KEY, "value", "lo", "hi", "regenerated", "published", "difference", "decimals", "status", "note"]
    return merged[first + [c for c in merged.columns if c not in first]].reset_index(drop=True)


def _with_unregenerated(merged: pd.DataFrame, pub: pd.DataFrame, tables: Iterable[str] | None) -> pd.DataFrame:
    """Add the printed cells of the compared (table, block)s that nothing regenerated; order as printed."""
    groups = list(dict.fromkeys(zip(merged["table"], merged["block"])))
    if tables is not None:
        wanted = list(tables)
        printed = pub[pub["table"].isin(wanted)]
        groups += [g for g in dict.fromkeys(zip(printed["table"], printed["block"])) if g not in groups]
        groups.sort(key=lambda g: wanted.index(g[0]) if g[0] in wanted else len(wanted))
    in_groups = pub.set_index(["table", "block"]).index.isin(groups)
    missing = pub[in_groups].merge(merged[list(KEY)], on=list(KEY), how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"].drop(columns="_merge")
    full = pd.concat([merged, missing], ignore_index=True)
    group_rank = {g: i for i, g in enumerate(groups)}
    keys: list[tuple[int, int, int]] = []
    row_rank: dict[tuple[str, str], dict[str, int]] = {}
    column_rank: dict[tuple[str, str], dict[str, int]] = {}
    for g in groups:
        part_pub = pub[(pub["table"] == g[0]) & (pub["block"] == g[1])]
        part = full[(full["table"] == g[0]) & (full["block"] == g[1])]
        row_rank[g] = {r: i for i, r in enumerate(dict.fromkeys([*part_pub["row"], *part["row"]]))}
        printed = _printed_column_order([list(c["column"]) for _, c in part_pub.groupby("row", sort=False)])
        column_rank[g] = {c: i for i, c in enumerate(dict.fromkeys([*printed, *part["column"]]))}
    for t, b, r, c in zip(full["table"], full["block"], full["row"], full["column"]):
        keys.append((group_rank[t, b], row_rank[t, b][r], column_rank[t, b][c]))
    order = sorted(range(len(full)), key=lambda i: (keys[i], i))
    return full.iloc[order].reset_index(drop=True)


def status_counts(compared: pd.DataFrame) -> dict[str, int]:
    """How many cells match, differ and are not published (0 where none), plus compared / not_regenerated if any."""
    counts = compared["status"].value_counts()
    out = {s: int(counts.get(s, 0)) for s in STATUSES}
    out.update({s: int(counts[s]) for s in EXTRA_STATUSES if counts.get(s, 0)})
    return out


def _counts_text(compared: pd.DataFrame, flag: str) -> str:
    """'N match, N differ (flag), N not published[, N compared, N not regenerated]'."""
    counts = status_counts(compared)
    text = f"{counts['match']} match, {counts['differs']} differ ({flag}), {counts['not_published']} not published"
    if "compared" in counts:
        text += f", {counts['compared']} compared"
    if "not_regenerated" in counts:
        text += f", {counts['not_regenerated']} printed but not regenerated (–)"
    return text


def differing_cells(compared: pd.DataFrame) -> list[str]:
    """Each differing cell as 'table / block / row / column: regenerated vs published' (for reports and asserts)."""
    part = compared[compared["status"] == "differs"]
    return [
        f"{r.table} / {r.block} / {r.row} / {r.column}: {r.regenerated:.{r.decimals}f} vs {r.published:.{r.decimals}f}"
        for r in part.itertuples(index=False)
    ]


def comparison_cell(record: pd.Series, separator: str = " | ", flag: str = FLAG_MD, decimals: int | None = None) -> str:
    """'regenerated (lo–hi) | published | difference', flagged when the cell differs from the paper: the
    published number as printed (its own decimals), the others at `decimals` (its column's precision;
    default: the cell's own)."""
    printed = int(record["decimals"])
    d = printed if decimals is None else int(decimals)
    if record["status"] == "not_regenerated":
        return f"–{separator}{record['published']:.{printed}f}{separator}–"
    text = f"{record['value']:.{d}f}"
    if not (pd.isna(record["lo"]) or pd.isna(record["hi"])):
        text += f" ({record['lo']:.{d}f}–{record['hi']:.{d}f})"
    if record["status"] == "not_published":
        return f"{text}{separator}–{separator}–"
    difference = record["value"] - record["published"] if d > printed else record["difference"]
    text += f"{separator}{record['published']:.{printed}f}{separator}{difference:+.{d}f}"
    return f"{text} {flag}" if record["status"] == "differs" else text


def comparison_wide(
    compared: pd.DataFrame, separator: str = " | ", flag: str = FLAG_MD
) -> dict[tuple[str, str], pd.DataFrame]:
    """{(table, block): rows x columns of comparison cells}, in input order; each column of a table at one
    precision (`printed_precision` of its cells)."""
    precision = printed_precision(compared)
    out: dict[tuple[str, str], pd.DataFrame] = {}
    for (table, block), part in compared.groupby(["table", "block"], sort=False):
        rows = list(dict.fromkeys(part["row"]))
        columns = _printed_column_order([list(cells["column"]) for _, cells in part.groupby("row", sort=False)])
        if set(columns) == set(rows):  # a square matrix (ECCV Table 5): columns in the rows' order
            columns = list(rows)
        cells = {
            (r["row"], r["column"]): comparison_cell(r, separator, flag, precision.get((str(table), str(r["column"]))))
            for _, r in part.iterrows()
        }
        labels = _row_labels(part)
        out[str(table), str(block)] = pd.DataFrame(
            [[cells.get((r, c), "") for c in columns] for r in rows], index=[labels[r] for r in rows], columns=columns
        )
    return out


def _row_labels(part: pd.DataFrame) -> dict[str, str]:
    """Row name as shown: with '← model' where a regenerated model (column `model`) fills a printed row."""
    labels = {str(r): str(r) for r in part["row"]}
    if "model" not in part.columns:
        return labels
    for row, model, status in zip(part["row"], part["model"], part["status"]):
        if isinstance(model, str) and model and status != "not_regenerated":
            labels[str(row)] = f"{row} ← {model}" if model != row else str(row)
    return labels


def _tex_escape(text: str) -> str:
    """Escape the LaTeX specials that table labels and cells contain."""
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("–", "--")):
        text = text.replace(a, b)
    for a, b in (("←", r"$\leftarrow$"), ("→", r"$\rightarrow$"), ("±", r"$\pm$")):
        text = text.replace(a, b)
    return text


def _group_title(table: str, block: str) -> str:
    return f"{table} — {block}" if block else table


def comparison_markdown(compared: pd.DataFrame, title: str, row_header: str = "model", caption: str = "") -> str:
    """Markdown: a title, the caption, the status counts, then one table per (table, block); '|' in cells escaped."""
    lines = [f"**{title}**", ""]
    if caption:
        lines += [caption, ""]
    lines.append(f"Cells: regenerated (interval) | published | difference. {_counts_text(compared, FLAG_MD)}.")
    for (table, block), wide in comparison_wide(compared, separator=" \\| ", flag=FLAG_MD).items():
        header = [row_header, *wide.columns]
        lines += ["", f"*{_group_title(table, block)}*", ""]
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
        lines += ["| " + " | ".join([str(name), *row.tolist()]) + " |" for name, row in wide.iterrows()]
    return "\n".join(lines) + "\n"


def comparison_latex(
    compared: pd.DataFrame, title: str, label: str, row_header: str = "model", caption: str = ""
) -> str:
    """LaTeX (booktabs): one tabular per (table, block) in one table float; differing cells marked (!)."""
    extra = f" {caption}" if caption else ""
    caption = (
        f"{title}.{extra} Cells: regenerated (interval) / published / difference; "
        f"{_counts_text(compared, 'marked ' + FLAG_TEX)}."
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


def write_comparison(
    compared: pd.DataFrame, prefix: str | Path, title: str, row_header: str = "model", caption: str = ""
) -> list[Path]:
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
    write_text(paths[1], comparison_markdown(compared, title, row_header, caption))
    write_text(paths[2], comparison_latex(compared, title, f"tab:{prefix.name}", row_header, caption))
    return paths
