"""ECCV Caption tables computed from other tables: Table 5 (Kendall tau-b between metric rankings).

`kendall_table_from_table4` recomputes Table 5 from the transcribed Table 4 (plus Tables D.2/D.3 for
the COCO R@5/R@10 columns); `table5_comparison` sets it beside the printed Table 5 through
`itmbench.papers.tables.compare` (status per cell), `write_table5_comparison` writes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from itmbench.papers.world_cells import WorldMetrics, cell, entry_cell, long_frame, metric_entry, models_of

# Row and column labels of Table 5, in printed order.
TABLE5_METRICS: tuple[str, ...] = (
    "COCO 1K R@1",
    "COCO 1K R@5",
    "COCO 1K R@10",
    "RSUM",
    "COCO 5K R@1",
    "COCO 5K R@5",
    "COCO 5K R@10",
    "CxC R@1",
    "ECCV R@1",
    "ECCV R-Precision",
    "ECCV mAP@R",
    "PMRP",
)

# Where each Table 5 metric is printed: Table 4 (block, column) holds the mean of i2t and t2i ...
TABLE4_CELLS: dict[str, tuple[str, str]] = {
    "COCO 1K R@1": ("COCO", "1K R@1"),
    "RSUM": ("COCO", "RSUM"),
    "COCO 5K R@1": ("COCO", "5K R@1"),
    "CxC R@1": ("CxC", "R@1"),
    "ECCV R@1": ("ECCV Caption", "R@1"),
    "ECCV R-Precision": ("ECCV Caption", "R-P"),
    "ECCV mAP@R": ("ECCV Caption", "mAP@R"),
    "PMRP": ("COCO", "PMRP"),
}
# ... and the COCO R@5 / R@10 ranks come from the per-modality Tables D.2 (i2t) and D.3 (t2i), averaged.
APPENDIX_D_CELLS: dict[str, tuple[str, str]] = {
    "COCO 1K R@5": ("COCO 1K", "R@5"),
    "COCO 1K R@10": ("COCO 1K", "R@10"),
    "COCO 5K R@5": ("COCO 5K", "R@5"),
    "COCO 5K R@10": ("COCO 5K", "R@10"),
}

# Tables D.2 / D.3 name six models differently from Table 4 (same order, same values).
APPENDIX_D_TO_TABLE4_ROW: dict[str, str] = {
    "PCME (CutMix)": "PCME (CutMix pre-trained)",
    "VSE infty (BUTD region)": "VSE∞ (BUTD region)",
    "VSE infty (BUTD grid)": "VSE∞ (BUTD grid)",
    "VSE infty (WSL grid)": "VSE∞ (WSL grid)",
    "PVSE K=1, Sum triplet": "PVSE K=1, No NM",
    "PVSE K=1, SHM": "PVSE K=1, Semi-hard NM",
    "PVSE K=1, HNM": "PVSE K=1, Hardest NM",
}

_LONG_COLUMNS = {"table", "block", "row", "column", "value"}


def _cells(published: pd.DataFrame, table: str, block: str, column: str) -> pd.Series:
    part = published[(published["table"] == table) & (published["block"] == block) & (published["column"] == column)]
    if part.empty:
        raise KeyError(f"ECCV published results have no {table} cells block={block!r} column={column!r}")
    return pd.Series(part["value"].to_numpy(), index=part["row"].to_numpy(), name=column)


def table5_inputs_from_published(published: pd.DataFrame) -> pd.DataFrame:
    """The 25 models x 12 metrics that Table 5 ranks, from the transcribed Table 4 and Tables D.2/D.3."""
    columns: dict[str, pd.Series] = {}
    for metric, (block, column) in TABLE4_CELLS.items():
        columns[metric] = _cells(published, "Table 4", block, column)
    models = list(columns["ECCV mAP@R"].index)
    for metric, (block, column) in APPENDIX_D_CELLS.items():
        i2t = _cells(published, "Table D.2", block, column).rename(index=APPENDIX_D_TO_TABLE4_ROW)
        t2i = _cells(published, "Table D.3", block, column).rename(index=APPENDIX_D_TO_TABLE4_ROW)
        columns[metric] = (i2t + t2i) / 2.0
    inputs = pd.DataFrame(columns).reindex(index=models, columns=list(TABLE5_METRICS))
    missing = inputs.isna().any(axis=1)
    if missing.any():
        raise ValueError(f"ECCV Table 5 inputs incomplete for models {list(inputs.index[missing])}")
    return inputs


def kendall_table_from_table4(df: pd.DataFrame) -> pd.DataFrame:
    """ECCV Table 5: Kendall tau-b between the model rankings of each pair of metrics (NaN diagonal).

    ``df`` is either the long published frame of the ECCV paper (Table 4 plus Tables D.2/D.3 for the
    COCO R@5/R@10 columns) or a wide frame with one row per model and the ``TABLE5_METRICS`` columns,
    e.g. a regenerated Table 4. Values are unrounded; the paper prints two decimals.
    """
    inputs = table5_inputs_from_published(df) if _LONG_COLUMNS <= set(df.columns) else df
    absent = [m for m in TABLE5_METRICS if m not in inputs.columns]
    if absent:
        raise KeyError(f"Table 5 needs metric columns {absent}")
    return kendall_matrix(inputs, TABLE5_METRICS)


def kendall_matrix(inputs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Kendall tau-b between the model rankings (rows of `inputs`) by each pair of `metrics` (NaN diagonal).

    A pair where a metric gives every model the same value has no ranking: tau is NaN there.
    """
    absent = [m for m in metrics if m not in inputs.columns]
    if absent:
        raise KeyError(f"Kendall table needs metric columns {absent}; have {list(inputs.columns)}")
    if len(inputs) < 2:
        raise ValueError(f"Kendall's tau needs at least two models, got {list(inputs.index)}")
    metrics = list(metrics)
    taus = pd.DataFrame(np.nan, index=metrics, columns=metrics, dtype=float)
    for i, first in enumerate(metrics):
        for second in metrics[i + 1 :]:
            x, y = inputs[first].to_numpy(float), inputs[second].to_numpy(float)
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                continue
            result = kendalltau(x, y, variant="b")
            taus.loc[first, second] = taus.loc[second, first] = float(result.statistic)
    return taus


def table5_long(taus: pd.DataFrame, table: str = "Table 5", upper_only: bool = False) -> pd.DataFrame:
    """A Kendall matrix as a long table (table, block, row, column, value, lo, hi), diagonal and NaN left out.

    upper_only keeps each pair once (row before column in printed order) instead of both triangles.
    """
    position = {name: i for i, name in enumerate(taus.columns)}
    records = [
        (table, "", str(row), str(column), float(taus.loc[row, column]), np.nan, np.nan)
        for i, row in enumerate(taus.index)
        for column in taus.columns
        if row != column and (not upper_only or position[column] > i) and not np.isnan(taus.loc[row, column])
    ]
    return pd.DataFrame.from_records(records, columns=["table", "block", "row", "column", "value", "lo", "hi"])


def table5_comparison(published: pd.DataFrame | None = None, upper_only: bool = False) -> pd.DataFrame:
    """ECCV Table 5 recomputed from Table 4 (and D.2/D.3) beside the printed Table 5, every cell's status.

    By default both triangles are compared, as printed (132 cells): the 4 PMRP pairs that come out
    0.01 lower (rounding in the published inputs, NOTES.md) are 8 flagged cells; with upper_only each
    pair appears once (66 cells, 4 flagged). Flagged cells are never hidden.
    """
    from itmbench.papers.published import load_published
    from itmbench.papers.tables import compare

    eccv = load_published("eccv") if published is None else published
    return compare(table5_long(kendall_table_from_table4(eccv), upper_only=upper_only), "eccv", published=eccv)


def write_table5_comparison(
    prefix: str | Path, published: pd.DataFrame | None = None, upper_only: bool = False
) -> list[Path]:
    """Write the Table 5 comparison as prefix.{csv,md,tex}; return the paths."""
    from itmbench.papers.tables import write_comparison

    title = "ECCV Caption Table 5 (Kendall tau-b between metric rankings) recomputed from Table 4 vs published"
    return write_comparison(table5_comparison(published, upper_only), prefix, title, row_header="metric")


# --- Tables 4 and 5 filled from the world's metrics ------------------------------------------------

# ECCV Table 5 metrics the world computes -> the world's metric name (mean of i2t and t2i)
ECCV_TABLE5_WORLD: dict[str, str] = {
    "COCO 1K R@1": "coco_1k_r1",
    "COCO 1K R@5": "coco_1k_r5",
    "COCO 1K R@10": "coco_1k_r10",
    "RSUM": "coco_1k_rsum",
    "COCO 5K R@1": "original_r1",
    "COCO 5K R@5": "original_r5",
    "COCO 5K R@10": "original_r10",
    "CxC R@1": "cxc_r1",
    "ECCV R@1": "eccv_r1",
    "ECCV R-Precision": "eccv_r_precision",
    "ECCV mAP@R": "eccv_map_at_r",
    "PMRP": "pmrp",
}
# ECCV Table 4 (block, column) -> the world's metric name
ECCV_TABLE4_WORLD: dict[tuple[str, str], str] = {
    ("ECCV Caption", "mAP@R"): "eccv_map_at_r",
    ("ECCV Caption", "R-P"): "eccv_r_precision",
    ("ECCV Caption", "R@1"): "eccv_r1",
    ("CxC", "R@1"): "cxc_r1",
    ("COCO", "1K R@1"): "coco_1k_r1",
    ("COCO", "5K R@1"): "original_r1",
    ("COCO", "PMRP"): "pmrp",
    ("COCO", "RSUM"): "coco_1k_rsum",
}


# Table 5 metrics a model must have to be ranked. The others join where every ranked model has them: COCO 1K
# and RSUM (metrics files written before the COCO 1K folds lack them) and PMRP (it needs the world's truth: the
# coco source's models have none, and are ranked by the metrics their released positives allow).
ECCV_TABLE5_REQUIRED: tuple[str, ...] = tuple(
    m for m in ECCV_TABLE5_WORLD if not m.startswith(("COCO 1K", "RSUM")) and m != "PMRP"
)


def eccv_table5_models(metrics: WorldMetrics, kinds: Mapping[str, str]) -> list[str]:
    """The world models ECCV Table 5 ranks: image-text models (kind 'contrastive') with the required metrics."""
    docs = metrics.get("eccv", {})
    return [
        m
        for m in models_of(metrics, "eccv")
        if kinds.get(m, "chance" if m == "random" else "contrastive") == "contrastive"
        and all(
            metric_entry(docs[m], ECCV_TABLE5_WORLD[name], f"eccv/{m}.json") is not None
            for name in ECCV_TABLE5_REQUIRED
        )
    ]


def eccv_table5_columns(metrics: WorldMetrics, ranked: Sequence[str]) -> list[str]:
    """The Table 5 metrics (printed order) that every ranked model has."""
    docs = metrics.get("eccv", {})
    return [
        m
        for m in TABLE5_METRICS
        if m in ECCV_TABLE5_WORLD
        and all(metric_entry(docs[r], ECCV_TABLE5_WORLD[m], f"eccv/{r}.json") is not None for r in ranked)
    ]


def eccv_world_long(metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]) -> pd.DataFrame:
    """ECCV Table 4 (per model) and Table 5 (Kendall tau-b between metric rankings over the world's models)."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("eccv", {})
    for model in models_of(metrics, "eccv"):
        row = rows.get(model, model)
        for (block, column), name in ECCV_TABLE4_WORLD.items():
            entry = metric_entry(docs[model], name, f"eccv/{model}.json")
            if entry is not None:
                records.append(entry_cell("Table 4", block, row, column, entry, model))
    ranked = eccv_table5_models(metrics, kinds)
    if len(ranked) >= 2:
        columns = eccv_table5_columns(metrics, ranked)
        inputs = pd.DataFrame(
            {m: [float(docs[model]["metrics"][ECCV_TABLE5_WORLD[m]]["value"]) for model in ranked] for m in columns},
            index=ranked,
        )
        taus = table5_long(kendall_matrix(inputs, columns))
        records += [
            cell(r.table, r.block, r.row, r.column, r.value, math.nan, math.nan, "")
            for r in taus.itertuples(index=False)
        ]
    return long_frame(records)


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """ECCV Caption's world cells (rows named by the mapping; Table 5 over the image-text models)."""
    return eccv_world_long(metrics, rows, kinds)


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    ranked = eccv_table5_models(metrics, kinds)
    unranked = (
        ""
        if len(ranked) >= 2
        else f" No cell regenerated: a ranking needs >= 2 image-text models, this run has {len(ranked)} "
        "('random' is none)."
    )
    return {
        "Table 4": "Each cell is the mean of i2t and t2i, as printed. COCO 5K R@1 = R@1 over the world's "
        "whole test gallery with the original positives; COCO 1K R@1 = R@1 within 5 folds of consecutive "
        "fifths of the test images (with their captions), averaged: a fifth of the world's split, not 1,000 "
        "images; RSUM = the sum of the six COCO 1K recalls (R@1, R@5, R@10 of both directions), 0-600.",
        "Table 5": "Kendall tau-b (scipy) between the rankings of the world's image-text models "
        f"({', '.join(ranked)}) by each pair of metrics, no interval; "
        f"COCO 1K = 5 folds of a fifth of the world's test split.{unranked}",
    }


# --- Figure 5: the rankings of the models under each metric ----------------------------------------------


def model_ranks_long(metrics: WorldMetrics, kinds: Mapping[str, str]) -> pd.DataFrame:
    """ECCV Figure 5's numbers: each image-text model's rank (1 = best, ties share the best) under each Table 5
    metric that every ranked model has, printed order; a long table with the extra columns model, metric, rank."""
    ranked = eccv_table5_models(metrics, kinds)
    if len(ranked) < 2:
        raise ValueError(f"ECCV Figure 5 ranks need two or more image-text models; got {ranked}")
    docs = metrics["eccv"]
    records = []
    for metric in eccv_table5_columns(metrics, ranked):
        values = pd.Series({m: float(docs[m]["metrics"][ECCV_TABLE5_WORLD[metric]]["value"]) for m in ranked})
        ranks = values.rank(ascending=False, method="min").astype(int)
        records += [(m, metric, float(ranks[m]), m, metric, int(ranks[m]), values[m]) for m in ranked]
    long = pd.DataFrame.from_records(records, columns=["row", "column", "value", "model", "metric", "rank", "score"])
    return long.assign(lo=np.nan, hi=np.nan)[["row", "column", "value", "lo", "hi", "model", "metric", "rank", "score"]]


# --- Figure 3(a): positives per query ----------------------------------------------------------------------


def positives_per_query_long(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """ECCV Figure 3(a)'s numbers: over the ECCV queries of each direction, how many queries have n positives
    under each set of positives (ECCV, CxC, original), n from 0 to the largest; a long table (row = n, column =
    '<source> <i2t|t2i>', value = queries) with the extra columns direction, source, n_positives."""
    from itmbench.papers.eccv.canonical import I2T, SHORT
    from itmbench.papers.eccv.released import DIRECTIONS, SOURCES

    pos, queries = tables["positives"], tables["queries"]
    counts: dict[tuple[str, str], pd.Series] = {}
    for direction in DIRECTIONS:
        q_ids = queries.loc[queries["direction"] == direction, "query_id"].to_numpy()
        qcol = "image_id" if direction == I2T else "caption_id"
        for source in SOURCES:
            sub = pos[(pos["source"] == source) & (pos["direction"] == direction)]
            if sub.empty:
                continue
            n = sub.groupby(qcol).size().reindex(q_ids, fill_value=0)
            counts[(direction, source)] = n.value_counts()
    if not counts:
        raise ValueError("eccv tables: no positives of any source; expected the positives table of a build")
    top = int(max(int(c.index.max()) for c in counts.values()))
    records = []
    for n in range(top + 1):
        for (direction, source), c in counts.items():
            records.append((str(n), f"{source} {SHORT[direction]}", float(c.get(n, 0)), direction, source, n))
    long = pd.DataFrame.from_records(records, columns=["row", "column", "value", "direction", "source", "n_positives"])
    return long.assign(lo=np.nan, hi=np.nan)[
        ["row", "column", "value", "lo", "hi", "direction", "source", "n_positives"]
    ]
