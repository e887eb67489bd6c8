"""ECCV Caption appendix E in the world: the benchmark rebuilt with each subset of the machine annotators.

Table E.1 (model performances vs annotation processes), Figure E.2 (number of annotators vs bias) and
Figure E.3 (the annotators' ranks among all models), computed from the world's build and scores:

- The datasets: the paper rebuilds the crowd-verified positives from the proposals of a subset Theta of
  its five annotators. Here the build's `annotations` table is that crowd data: every (query, candidate)
  pair one of the annotators proposed, the annotators that proposed it and its simulated answer, graded
  1 / 0.5 / 0 (Eq. E.4, `metrics.annotator_bias.answer_grade`). The Theta dataset of a query is
  `subset_grades` of its pairs (a pair stays when an annotator of Theta proposed it); the original COCO
  and CxC positives are not added (the paper's appendix E evaluates on the crowdsourced data alone).
- The scores: each evaluated model's ranking of every ECCV query (its `score-benchmark` scores table, the
  top-K gallery ids, K at least the largest ECCV positive count, so at least any Theta's R), graded R@1
  and graded R-Precision (Eq. E.2-E.4) per query, averaged over the queries with a positive in that
  dataset, x100. The evaluated models are the annotators themselves (the paper's Table E.1 rows), so
  self-bias is defined; with the simulated oracles as annotators (annotator_source 'world') the models
  are scored all the same and self-bias is empty.
- Table E.1 prints each single annotator's dataset and All, per direction (the paper prints
  text-to-image; image-to-text is added) and metric. Figure E.2's numbers are B, self-bias and
  non-self-bias (Eq. E.5) per |Theta|, averaged over every subset of that size (`bias_by_subset_size`).
- Intervals: a percentile bootstrap over the direction's ECCV queries, the same resample for every
  subset and model, so a bias and its mean over subsets are recomputed from each resample's cells. The trend
  of a quantity over |Theta| (the paper: "the general bias measurements decrease with the number of involved
  models") is the least-squares slope of its values on |Theta|, its interval from the same resamples (a slope,
  not Spearman's rho: over four sizes rho takes a handful of values and its interval says little).
- Figure E.3: every image-text model's rank (1 = best) by COCO R@1 (COCO 1K where every model has it,
  else COCO 5K) and by ECCV mAP@R, with the annotators marked (the paper: which annotators rank better
  on ECCV mAP@R than on COCO R@1).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.annotator_bias import (
    answer_grade,
    bias_by_subset_size,
    graded_r_precision_batch,
    graded_recall_at_1_batch,
    subset_grades,
)
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.eccv.canonical import I2T, T2I

GRADED_METRICS: dict[str, str] = {"recall_at_1": "Recall@1", "r_precision": "R-Precision"}
DIRECTION_LABELS: dict[str, str] = {T2I: "Text-to-Image", I2T: "Image-to-Text"}
BIAS_QUANTITIES: dict[str, str] = {"bias": "B", "self_bias": "self-bias", "non_self_bias": "non-self-bias"}
ALL = "All"
_FNS = {"recall_at_1": graded_recall_at_1_batch, "r_precision": graded_r_precision_batch}


def block_label(direction: str, metric: str) -> str:
    """A Table E.1 block as the paper names it: '(a) Text-to-Image Recall@1' style, without the letter."""
    return f"{DIRECTION_LABELS[direction]} {GRADED_METRICS[metric]}"


def crowd_data(annotations: pd.DataFrame, queries: pd.DataFrame, direction: str) -> tuple[np.ndarray, list, list]:
    """Per ECCV query of a direction: its ids, each candidate's grade and the annotators that proposed it."""
    q_ids = queries.loc[queries["direction"] == direction, "query_id"].to_numpy(dtype=np.int64)
    ann = annotations[annotations["direction"] == direction]
    grades: dict[int, dict[int, float]] = {int(q): {} for q in q_ids}
    proposers: dict[int, dict[int, set[str]]] = {int(q): {} for q in q_ids}
    for q, c, who, answer in ann[["query_id", "candidate_id", "annotator", "answer"]].itertuples(index=False):
        q, c = int(q), int(c)
        if q not in grades:
            raise ValueError(f"eccv annotations: {direction} query {q} is not an ECCV query; expected one of queries")
        grades[q][c] = answer_grade(str(answer))
        proposers[q].setdefault(c, set()).add(str(who))
    return q_ids, [grades[int(q)] for q in q_ids], [proposers[int(q)] for q in q_ids]


def model_rankings(scores: pd.DataFrame, direction: str, q_ids: np.ndarray, model: str) -> list[np.ndarray]:
    """A model's ranked gallery ids for each query (its score-benchmark scores table)."""
    sub = scores[scores["direction"] == direction].set_index("query_id")
    missing = [int(q) for q in q_ids if int(q) not in sub.index]
    if missing:
        raise ValueError(f"eccv scores of {model}: no {direction} ranking for queries {missing[:5]}; expected one each")
    return [np.asarray(sub.at[int(q), "ranked_ids"], dtype=np.int64) for q in q_ids]


def subset_key(theta: frozenset[str], annotators: Sequence[str]) -> str:
    """A subset's label: 'All' for the full set, else its annotators in annotator order joined by '+'."""
    if theta == frozenset(annotators):
        return ALL
    return "+".join(a for a in annotators if a in theta)


def _percentile(reps: np.ndarray, confidence: float) -> tuple[float, float]:
    reps = reps[~np.isnan(reps)]
    if len(reps) == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(reps, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def trend_slope(sizes: np.ndarray, values: np.ndarray) -> np.ndarray | float:
    """The least-squares slope of values on sizes: of one sweep (1-D values) or of each row (2-D, one replicate a
    row); NaN where a row has a NaN. Figure E.2's trend test: its bootstrap interval over the queries' resamples."""
    x = np.asarray(sizes, dtype=float) - np.mean(sizes)
    v = np.asarray(values, dtype=float)
    slope = (v * x).sum(axis=-1) / (x * x).sum()
    return float(slope) if v.ndim == 1 else slope


BIAS_COLUMNS = [
    "direction",
    "metric",
    "size",
    "quantity",
    "value",
    "lo",
    "hi",
    "n_subsets",
    "slope",
    "slope_lo",
    "slope_hi",
]


def annotator_bias_analysis(
    annotations: pd.DataFrame,
    queries: pd.DataFrame,
    scores: Mapping[str, pd.DataFrame],
    annotators: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every subset's graded scores of every model, and the bias per |Theta|, with bootstrap intervals.

    Returns (cells, bias): cells has direction, metric, subset, size, model, value, lo, hi (x100, one row per
    subset x model, the full set's subset 'All'); bias has direction, metric, size, quantity (bias,
    self_bias, non_self_bias), value, lo, hi, n_subsets, and the quantity's trend over the sizes: slope (the
    least-squares slope of the values on |Theta|, `trend_slope`), slope_lo, slope_hi (its bootstrap interval).
    """
    names = list(annotators) if annotators is not None else list(dict.fromkeys(annotations["annotator"].astype(str)))
    unknown = sorted(set(annotations["annotator"].astype(str)) - set(names))
    if unknown or len(names) < 2:
        raise ValueError(f"eccv annotator bias: annotations by {unknown or names}; expected two or more of {names}")
    subsets = [frozenset(c) for k in range(1, len(names) + 1) for c in combinations(names, k)]
    models = list(scores)
    cell_rows: list[tuple[Any, ...]] = []
    bias_rows: list[tuple[Any, ...]] = []
    for d_index, direction in enumerate((T2I, I2T)):
        q_ids, grades, proposers = crowd_data(annotations, queries, direction)
        rankings = {m: model_rankings(scores[m], direction, q_ids, m) for m in models}
        rng = np.random.default_rng(np.random.SeedSequence([seed, d_index]))
        idx = rng.integers(0, len(q_ids), size=(n_boot, len(q_ids)))
        for metric, fn in _FNS.items():
            point: dict[frozenset[str], dict[str, float]] = {}
            reps: dict[frozenset[str], dict[str, np.ndarray]] = {}
            for theta in subsets:
                g = [subset_grades(gr, pb, theta) for gr, pb in zip(grades, proposers, strict=True)]
                point[theta], reps[theta] = {}, {}
                for m in models:
                    v = 100 * fn(rankings[m], g)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)  # a resample without a positive: nan
                        point[theta][m] = float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
                        reps[theta][m] = np.nanmean(v[idx], axis=1)
                    lo, hi = _percentile(reps[theta][m], confidence)
                    cell_rows.append(
                        (direction, metric, subset_key(theta, names), len(theta), m, point[theta][m], lo, hi)
                    )
            by_size = bias_by_subset_size(point, names)
            boot = [
                bias_by_subset_size({t: {m: float(reps[t][m][b]) for m in models} for t in subsets}, names)
                for b in range(n_boot)
            ]
            sizes = np.array(sorted(by_size), dtype=float)
            for quantity in BIAS_QUANTITIES:
                point_q = np.array([by_size[int(s)][quantity] for s in sizes], dtype=float)
                reps_q = np.array([[bb[int(s)][quantity] for s in sizes] for bb in boot], dtype=float)
                trend = (trend_slope(sizes, point_q), *_percentile(trend_slope(sizes, reps_q), confidence))
                for i, size in enumerate(int(s) for s in sizes):
                    lo, hi = _percentile(reps_q[:, i], confidence)
                    values = by_size[size]
                    bias_rows.append(
                        (direction, metric, size, quantity, values[quantity], lo, hi, int(values["n_subsets"]), *trend)
                    )
    cells = pd.DataFrame(
        cell_rows, columns=["direction", "metric", "subset", "size", "model", "value", "lo", "hi"]
    ).astype({"size": "int64"})
    bias = pd.DataFrame(bias_rows, columns=BIAS_COLUMNS).astype({"size": "int64", "n_subsets": "int64"})
    return cells, bias


def table_e1_long(cells: pd.DataFrame, annotators: Sequence[str], published: pd.DataFrame | None) -> pd.DataFrame:
    """Table E.1 as a long table: per block (direction, metric) the models' rows under each single annotator's
    dataset and All, then the printed Table E.1 (text-to-image, the paper's models) as rows of its own."""
    columns = [*annotators, ALL]
    keep = cells[cells["subset"].isin(columns)]
    records = []
    for direction in (T2I, I2T):
        for metric in GRADED_METRICS:
            block = block_label(direction, metric)
            part = keep[(keep["direction"] == direction) & (keep["metric"] == metric)]
            for r in part.itertuples(index=False):
                records.append((f"{block}: {r.model}", r.subset, r.value, r.lo, r.hi, "world", ""))
    if published is not None:
        printed = published[published["table"] == "Table E.1"]
        for r in printed.itertuples(index=False):
            value = float(r.value)  # as printed (one decimal), not as a count
            row = f"published {r.block}: {r.row}"
            records.append((row, r.column, value, np.nan, np.nan, "published", f"{value:.{int(r.decimals)}f}"))
    return pd.DataFrame.from_records(records, columns=["row", "column", "value", "lo", "hi", "source", "note"])


def figure_e2_long(bias: pd.DataFrame) -> pd.DataFrame:
    """Figure E.2's numbers as a long table: a row per (direction, metric, quantity), a column per |Theta|."""
    out = bias.assign(
        row=[
            f"{block_label(d, m)}: {BIAS_QUANTITIES[q]}"
            for d, m, q in bias[["direction", "metric", "quantity"]].itertuples(index=False)
        ],
        column=[f"|Θ| = {s}" for s in bias["size"]],
    )
    extra = ["direction", "metric", "quantity", "size", "n_subsets", "slope", "slope_lo", "slope_hi"]
    return out[["row", "column", "value", "lo", "hi", *extra]]


def annotator_ranks(
    values: Mapping[str, Mapping[str, float]], annotators: Sequence[str], r1_label: str
) -> pd.DataFrame:
    """Figure E.3: each model's rank (1 = best, ties share the best rank) by COCO R@1 and by ECCV mAP@R.

    ``values[model]`` holds 'r1' and 'map_at_r'; a long table (row = model, column, value) with the extra
    columns model, annotator, rank_r1, rank_map_at_r.
    """
    if len(values) < 2:
        raise ValueError(f"Figure E.3 ranks need two or more models; got {sorted(values)}")
    frame = pd.DataFrame({m: {"r1": float(v["r1"]), "map_at_r": float(v["map_at_r"])} for m, v in values.items()}).T
    frame["rank_r1"] = frame["r1"].rank(ascending=False, method="min").astype(int)
    frame["rank_map_at_r"] = frame["map_at_r"].rank(ascending=False, method="min").astype(int)
    frame = frame.sort_values(["rank_r1", "rank_map_at_r"], kind="stable")
    records = []
    for model, r in frame.iterrows():
        extra = (str(model), model in set(annotators), int(r["rank_r1"]), int(r["rank_map_at_r"]))
        records += [
            (str(model), r1_label, float(r["r1"]), *extra),
            (str(model), f"rank by {r1_label}", float(r["rank_r1"]), *extra),
            (str(model), "ECCV mAP@R", float(r["map_at_r"]), *extra),
            (str(model), "rank by ECCV mAP@R", float(r["rank_map_at_r"]), *extra),
        ]
    long = pd.DataFrame.from_records(
        records, columns=["row", "column", "value", "model", "annotator", "rank_r1", "rank_map_at_r"]
    )
    return long.assign(lo=np.nan, hi=np.nan)[
        ["row", "column", "value", "lo", "hi", "model", "annotator", "rank_r1", "rank_map_at_r"]
    ]
