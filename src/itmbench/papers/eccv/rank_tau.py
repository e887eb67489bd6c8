"""ECCV Caption's ranking correlations with bootstrap intervals over queries (Table 5's Kendall tau-b, world).

Table 5 ranks the models by each metric and prints Kendall's tau-b between two metrics' rankings; the world's
Table 5 (`papers.eccv.tables`) has no interval. Here each tau-b and each difference of two taus comes with a
percentile bootstrap interval over queries:

- a replicate resamples the queries of each direction on its own (`papers.paired.query_bootstrap_means`), the
  same draws for every model and metric (the models were scored on the same queries), recomputes every model's
  metric (the mean of directions, as Table 4) and the taus between the metrics' model rankings;
- the difference tau(reference) - tau(x, y) of a replicate is taken within that replicate, so its interval is
  paired; the reference is `REFERENCE`, COCO 1K R@1 against COCO 5K R@1 (the paper: R@K metrics "are highly
  correlated with each other, while the rankings change when we shift to the ECCV mAP@R");
- the models ranked are the callers' (the rule: the image-text models, as Table 5's); every metric any model
  lacks is left out; a replicate whose tau is undefined (a metric constant over the models) is left out of the
  interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.metrics.correlation import kendall_tau_b
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.eccv.score import GALLERY_METRICS
from itmbench.papers.paired import percentile_interval, query_bootstrap_means

REFERENCE: tuple[str, str] = ("coco_1k_r1", "original_r1")
RANK_TAU_COLUMNS = [
    "metric_a",
    "metric_b",
    "minus_a",
    "minus_b",
    "value",
    "lo",
    "hi",
    "n_models",
    "models",
    "confidence",
    "n_boot",
    "seed",
]


def _tau(values: np.ndarray, i: int, j: int) -> float:
    """tau-b between columns i and j of a models x metrics matrix (NaN where a column is constant or has NaN)."""
    x, y = values[:, i], values[:, j]
    if np.isnan(x).any() or np.isnan(y).any() or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return kendall_tau_b(x, y)


def rank_tau_table(
    values: Mapping[str, pd.DataFrame],
    metrics: Sequence[str] = GALLERY_METRICS,
    reference: tuple[str, str] = REFERENCE,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Every tau-b between two metrics' model rankings and every tau(reference) - tau(a, b), each with its
    bootstrap interval over queries.

    Rows: (metric_a, metric_b, '', '') is tau(a, b); (reference..., a, b) is tau(reference) - tau(a, b), the
    reference in metric_a/metric_b and the subtracted pair in minus_a/minus_b. `values[model]` is the model's
    `papers.eccv.score.query_values`.
    """
    models = sorted(values)
    if len(models) < 3:
        raise ValueError(f"ECCV ranking correlations need 3 or more models (two give tau = +-1); got {models}")
    first = values[models[0]]
    for m in models[1:]:
        if not values[m].index.equals(first.index):
            raise ValueError(f"ECCV ranking correlations: {m} and {models[0]} were not scored on the same queries")
    used = [k for k in metrics if all(k in values[m].columns and values[m][k].notna().any() for m in models)]
    if len(used) < 2 or any(k not in used for k in reference):
        raise ValueError(f"ECCV ranking correlations: every model has only {used}; expected {list(reference)} and more")
    wide = pd.concat([values[m][used].add_prefix(f"{m}\t") for m in models], axis=1)
    point, reps = query_bootstrap_means(wide, n_boot, seed)
    shape = (len(models), len(used))
    point_m = point.reshape(shape)
    reps_m = reps.reshape((n_boot, *shape))
    position = {k: i for i, k in enumerate(used)}
    pairs = list(combinations(used, 2))
    taus = {p: (_tau(point_m, position[p[0]], position[p[1]]), None) for p in pairs}
    taus = {
        p: (t, np.array([_tau(r, position[p[0]], position[p[1]]) for r in reps_m], dtype=np.float64))
        for p, (t, _) in taus.items()
    }
    ref = reference if reference in taus else (reference[1], reference[0])
    common = {"n_models": len(models), "models": " ".join(models), "confidence": confidence, "n_boot": n_boot}
    records = []
    for (a, b), (t, r) in taus.items():
        lo, hi = percentile_interval(r, confidence)
        records.append({"metric_a": a, "metric_b": b, "minus_a": "", "minus_b": "", "value": t, "lo": lo, "hi": hi})
    ref_t, ref_r = taus[ref]
    for (a, b), (t, r) in taus.items():
        if (a, b) == ref:
            continue
        lo, hi = percentile_interval(ref_r - r, confidence)
        records.append(
            {"metric_a": ref[0], "metric_b": ref[1], "minus_a": a, "minus_b": b, "value": ref_t - t, "lo": lo, "hi": hi}
        )
    frame = pd.DataFrame.from_records(records)
    return frame.assign(**common, seed=seed)[RANK_TAU_COLUMNS]


def rank_tau(table: pd.DataFrame | None, a: str, b: str, minus: tuple[str, str] | None = None) -> dict | None:
    """One row of a rank-tau table as {value, lo, hi, n_models}: tau(a, b), or tau(a, b) - tau(minus) with
    (a, b) the reference; either order of each pair; None when the table has no such row."""
    if table is None:
        return None
    minus_a, minus_b = minus if minus is not None else ("", "")
    frame = table.fillna({"minus_a": "", "minus_b": ""})
    for x, y in ((a, b), (b, a)):
        for mx, my in ((minus_a, minus_b), (minus_b, minus_a)):
            hit = frame[
                (frame["metric_a"] == x)
                & (frame["metric_b"] == y)
                & (frame["minus_a"] == mx)
                & (frame["minus_b"] == my)
            ]
            if len(hit):
                r = hit.iloc[0]
                return {k: float(r[k]) for k in ("value", "lo", "hi")} | {"n_models": int(r["n_models"])}
    return None


def rank_tau_long(table: pd.DataFrame) -> pd.DataFrame:
    """A rank-tau table for a reader (long: row, column, value, lo, hi): 'tau(a, b)' and 'tau(a, b) - tau(c, d)'
    rows, one Kendall tau-b column with its interval."""
    rows = [
        f"tau({r.metric_a}, {r.metric_b})"
        + (f" - tau({r.minus_a}, {r.minus_b})" if isinstance(r.minus_a, str) and r.minus_a else "")
        for r in table.itertuples(index=False)
    ]
    return pd.DataFrame(
        {"row": rows, "column": "Kendall tau-b", "value": table["value"], "lo": table["lo"], "hi": table["hi"]}
    )


def write_rank_tau(table: pd.DataFrame, prefix: str | Path, title: str) -> list[Path]:
    """prefix.csv (the exact table the claims read), prefix.md and prefix.tex (`rank_tau_long`, 2 decimals)."""
    from itmbench.report.tables import write_table

    return write_table(rank_tau_long(table), prefix, title, row_header="ranking correlation", decimals=2, records=table)
