"""Each paper's results tables filled from the world's metrics, in the paper's own layout, beside the printed numbers.

The world's metrics (``results/world/metrics/<benchmark>/<model>.json``) are laid out as the paper
prints its tables (table numbers, blocks, row and column names as transcribed in
``papers/<paper>/published_results.csv``), then compared with `itmbench.papers.tables.compare`
with ``expect_equal=False`` (a world number is from another world: compared for direction, not
equality, so no cell is flagged) and ``keep_unregenerated=True`` (every printed cell stays, shown
``– | published | –`` where the world has no counterpart, e.g. the paper's other models).

World models fill printed rows through a declared mapping (params.yaml ``report.rows.<paper>``:
world model -> printed row name, e.g. BiVLC ``clip -> CLIP_COCO``); a model not mapped is a row of
its own under its world name. Each regenerated cell carries its ``model``, shown as ``row ← model``.

Tables the world fills (`WORLD_TABLES`) and what each cell is:

- BISON Table 3: BISON accuracy, and text-to-image ("Image retrieval") / image-to-text ("Caption
  retrieval") R@1, R@5 on the world's retrieval benchmark with the original positives. Table 1
  (how many of a model's R@1 errors are correct retrievals): for one model
  (``report.bison_table1_model``), t2i R@1 errors under the original positives whose top image fits
  the caption by the world's truth (the truth plays the human judge), derived from R@1 under the
  original and the complete-truth positives, which contain the original ones.
- MCIC Table 3: dev / test accuracy with the binomial standard error as "±", as printed, plus the
  answer-position prior row (always answer the option position most frequent on dev).
- ECCV Table 4: ECCV Caption mAP@R, R-P, R@1; CxC R@1; COCO 5K R@1 (the world's whole test gallery,
  original positives) and PMRP; each the mean of i2t and t2i as printed. COCO 1K and RSUM are not
  computed in the world. Table 5: Kendall tau-b (scipy) between the rankings of the world's
  image-text models by each pair of the metrics the world computes.
- BiVLC Tables 2-4: SugarCrepe, I2T, T2I, Group (and the four single comparisons; per type in Table 4),
  through `itmbench.papers.bivlc.tables.bivlc_long_table`.
- CxC Tables 2-5: i2t / t2i R@K and median rank under the MS-COCO and the CxC positives; t2t; i2i;
  Spearman x100 (mean and ± std over the bootstrap samples, as printed) for STS, SIS and SITS.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from itmbench.papers.registry import PAPERS as REGISTERED
from itmbench.papers.registry import paper as registered_paper
from itmbench.papers.tables import compare, write_comparison
from itmbench.papers.world_cells import WorldMetrics, check_rows, interval_confidence, read_world_metrics

# paper -> {file stem: printed table}: the tables the world fills, written as <out_dir>/<stem>.{csv,md,tex}
WORLD_TABLES: dict[str, dict[str, str]] = {
    name: dict(p.world_tables) for name, p in REGISTERED.items() if p.world_tables
}
# paper -> the world benchmarks whose metrics its tables read
PAPER_BENCHMARKS: dict[str, tuple[str, ...]] = {name: REGISTERED[name].benchmarks for name in WORLD_TABLES}
PAPER_TITLES: dict[str, str] = {name: REGISTERED[name].title for name in WORLD_TABLES}
WORLD_CAPTION = (
    "World numbers come from the generated world (small scenes, small models trained for minutes), "
    "not from the paper's data and models: they are compared with the printed numbers for direction, "
    "not equality, so no cell is flagged. '–' marks a printed cell the world has no counterpart for."
)


def world_long(
    paper: str,
    metrics: WorldMetrics,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One paper's world cells (table, block, row, column, value, lo, hi, model), rows named by the mapping."""
    rows = check_rows(paper, rows or {}, metrics)
    kinds, options = dict(kinds or {}), dict(options or {})
    confidence = interval_confidence(metrics, paper)
    return registered_paper(paper).part("tables").world_long(metrics, rows, kinds, options, confidence)


def world_comparison(
    paper: str,
    metrics: WorldMetrics,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The world's cells beside every printed cell of the paper's `WORLD_TABLES` (statuses compared / not_*)."""
    long = world_long(paper, metrics, rows, kinds, options)
    return compare(long, paper, expect_equal=False, keep_unregenerated=True, tables=tuple(WORLD_TABLES[paper].values()))


def table_caption(paper: str, table: str, metrics: WorldMetrics, kinds: Mapping[str, str] | None = None) -> str:
    """The caption of one world table: the world disclaimer, the interval, and what the cells are."""
    confidence = round(100 * interval_confidence(metrics, paper))
    notes = registered_paper(paper).part("tables").world_table_notes(metrics, dict(kinds or {}))
    interval = f"Intervals: {confidence}%."
    return " ".join(part for part in (WORLD_CAPTION, interval, notes.get(table, "")) if part)


def write_world_paper_tables(
    paper: str,
    metric_files: Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write each of the paper's world tables as <out_dir>/<stem>.{csv,md,tex}; return the paths."""
    if paper not in WORLD_TABLES:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(WORLD_TABLES)}")
    metrics = read_world_metrics(metric_files)
    absent = [b for b in PAPER_BENCHMARKS[paper] if b not in metrics]
    if absent:
        raise ValueError(f"{paper}: no metrics files of benchmarks {absent} among the inputs")
    compared = world_comparison(paper, metrics, rows, kinds, options)
    paths: list[Path] = []
    for stem, table in WORLD_TABLES[paper].items():
        part = compared[compared["table"] == table]
        title = f"{PAPER_TITLES[paper]} {table}, filled from the world, beside the published numbers"
        row_header = registered_paper(paper).row_headers.get(table, "model")
        caption = table_caption(paper, table, metrics, kinds)
        paths += write_comparison(part, Path(out_dir) / stem, title, row_header=row_header, caption=caption)
    return paths


def world_table_paths(paper: str, out_dir: str) -> list[str]:
    """The files `write_world_paper_tables` writes for a paper (for the workflow's outputs)."""
    return [f"{out_dir}/{stem}.{ext}" for stem in WORLD_TABLES[paper] for ext in ("csv", "md", "tex")]
