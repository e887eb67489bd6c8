"""Paired tests of model pairs on one accuracy benchmark, from the per-instance score files of the scoring rule.

A benchmark whose score module has `instance_outcomes(scores)` (a frame indexed by instance, one boolean
column per metric), `PAIRED_METRICS` and `OUTCOME_COLUMNS` can compare two models over the same instances:
BiVLC (I2T, T2I and Group), BISON (its accuracy), MCIC-COCO (test accuracy) and SugarCrepe (accuracy pooled
over its subtypes); `PAIRED_BENCHMARKS` lists them, and params.yaml's `report.<benchmark>_paired` names each
one's pairs (rule `<benchmark>_paired`, `itmbench paired-tests`). For each (A, B) pair and metric,
`itmbench.metrics.paired.compare_paired` (exact McNemar and a seeded paired bootstrap of the accuracy
difference). Decisions:

- the two models must have been scored on the same instances (same index); a mismatch is refused;
- the direction at level alpha = 1 - confidence: 'A above B' where the McNemar p-value is below alpha
  and the bootstrap interval of A - B lies above 0, 'A below B' the mirror, 'no significant difference'
  where neither test rejects, and 'the tests disagree' otherwise (stated, never resolved silently).

The table (`write_paired_table`) is CSV (every number exact, one record per pair and metric), Markdown
and LaTeX (`itmbench.report.tables.write_table`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.metrics.paired import PairedComparison, compare_paired

RECORD_COLUMNS = [
    "benchmark",
    "model_a",
    "model_b",
    "metric",
    "n",
    "accuracy_a",
    "accuracy_b",
    "a_only",
    "b_only",
    "p_mcnemar",
    "difference",
    "lo",
    "hi",
    "confidence",
    "n_boot",
    "seed",
    "direction",
]


# The accuracy benchmarks whose score modules give per-instance outcomes (their params key: report.<name>_paired).
PAIRED_BENCHMARKS: tuple[str, ...] = ("bivlc", "bison", "mcic", "sugarcrepe")

METRIC_LABELS = {
    "i2t": "I2T",
    "t2i": "T2I",
    "group": "Group",
    "bison": "BISON accuracy",
    "accuracy_test": "test accuracy",
    "pooled": "accuracy (all subtypes)",
}


def direction(c: PairedComparison) -> str:
    """The pair's verdict at level 1 - confidence (module docstring)."""
    alpha = 1.0 - c.confidence
    mcnemar = c.p_mcnemar < alpha
    if mcnemar and c.lo > 0:
        return "A above B"
    if mcnemar and c.hi < 0:
        return "A below B"
    if not mcnemar and c.lo <= 0 <= c.hi:
        return "no significant difference"
    return "the tests disagree"


def paired_records(
    benchmark: str,
    outcomes: Mapping[str, pd.DataFrame],
    pairs: Sequence[tuple[str, str]],
    metrics: Iterable[str],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """One record per (pair, metric): both tests of A vs B over the same instances (`RECORD_COLUMNS`)."""
    records: list[dict[str, Any]] = []
    metrics = list(metrics)
    for a, b in pairs:
        oa, ob = same_units(benchmark, outcomes, a, b, "instance")
        for metric in metrics:
            c = compare_paired(oa[metric].to_numpy(bool), ob[metric].to_numpy(bool), n_boot, seed, confidence)
            records.append(
                {
                    "benchmark": benchmark,
                    "model_a": a,
                    "model_b": b,
                    "metric": metric,
                    "n": c.n,
                    "accuracy_a": c.accuracy_a,
                    "accuracy_b": c.accuracy_b,
                    "a_only": c.a_only,
                    "b_only": c.b_only,
                    "p_mcnemar": c.p_mcnemar,
                    "difference": c.difference,
                    "lo": c.lo,
                    "hi": c.hi,
                    "confidence": confidence,
                    "n_boot": n_boot,
                    "seed": seed,
                    "direction": direction(c),
                }
            )
    return pd.DataFrame.from_records(records, columns=RECORD_COLUMNS)


def _p_text(p: float) -> str:
    """A p-value for a reader: 3 significant digits, in scientific notation below 0.001."""
    return f"{p:.2e}" if p < 1e-3 else f"{p:.3f}"


def paired_long(records: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """The records as a long table (row, column, value, lo, hi, note) for `write_table`: a row per pair and
    metric; the counts bare, the difference with its interval, the p-value and the direction as notes."""
    rows: list[dict[str, Any]] = []
    nan = float("nan")
    for r in records.itertuples(index=False):
        row = f"{r.model_a} vs {r.model_b}: {METRIC_LABELS.get(r.metric, r.metric)}"
        cells = [
            ("n", r.n, nan, nan, ""),
            ("A right, B wrong", r.a_only, nan, nan, ""),
            ("B right, A wrong", r.b_only, nan, nan, ""),
            ("accuracy A", r.accuracy_a, nan, nan, f"{r.accuracy_a:.{decimals}f}"),
            ("accuracy B", r.accuracy_b, nan, nan, f"{r.accuracy_b:.{decimals}f}"),
            (f"A − B ({100 * r.confidence:g}% paired bootstrap)", r.difference, r.lo, r.hi, ""),
            ("McNemar p (exact)", r.p_mcnemar, nan, nan, _p_text(float(r.p_mcnemar))),
            ("direction", nan, nan, nan, str(r.direction)),
        ]
        rows += long_rows(row, cells)
    return pd.DataFrame(rows, columns=LONG_COLUMNS)


def write_paired_table(
    records: pd.DataFrame, prefix: str | os.PathLike, title: str, decimals: int = 2, long: Any = None
) -> list[Path]:
    """prefix.csv (the records, exact), prefix.md and prefix.tex (`write_table` of `long`, default `paired_long`)."""
    from itmbench.report.tables import write_table

    frame = (long or paired_long)(records, decimals)
    return write_table(frame, Path(prefix), title, row_header="A vs B: metric", decimals=decimals, records=records)


def paired_table_index(records: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Records as {"benchmark/model_a/model_b/metric": record} (what the claims read)."""
    return {f"{r['benchmark']}/{r['model_a']}/{r['model_b']}/{r['metric']}": r for r in records.to_dict("records")}


def mirrored(record: Mapping[str, Any]) -> dict[str, Any]:
    """A paired record of A vs B read as B vs A: the difference and its interval negated (a percentile interval of
    -d is minus the swapped ends of d's), the discordant counts and accuracies swapped; McNemar is symmetric."""
    flip = {"A above B": "A below B", "A below B": "A above B"}
    out = dict(record)
    out.update(
        model_a=record["model_b"],
        model_b=record["model_a"],
        accuracy_a=record["accuracy_b"],
        accuracy_b=record["accuracy_a"],
        a_only=record["b_only"],
        b_only=record["a_only"],
        difference=-float(record["difference"]),
        lo=-float(record["hi"]),
        hi=-float(record["lo"]),
        direction=flip.get(str(record["direction"]), record["direction"]),
    )
    return out


def pair_test(
    paired: Mapping[str, Mapping[str, Any]], benchmark: str, a: str, b: str, metric: str
) -> dict[str, Any] | None:
    """The paired test of A against B on a metric from `paired_table_index` records, computed as (A, B) or as
    (B, A) (then `mirrored`); None when neither was computed."""
    record = paired.get(f"{benchmark}/{a}/{b}/{metric}")
    if record is not None:
        return dict(record)
    record = paired.get(f"{benchmark}/{b}/{a}/{metric}")
    return None if record is None else mirrored(record)


def read_paired(paths: Iterable[str | os.PathLike]) -> dict[str, dict[str, Any]]:
    """Paired-test CSVs (`write_paired_table`) as `paired_table_index`."""
    from itmbench.errors import InputError

    out: dict[str, dict[str, Any]] = {}
    for path in paths:
        frame = pd.read_csv(path)
        missing = [c for c in RECORD_COLUMNS if c not in frame.columns]
        if missing:
            raise InputError(f"{path}: paired-test table without columns {missing}; expected {RECORD_COLUMNS}")
        out.update(paired_table_index(frame))
    return out


# --- gallery benchmarks (ECCV Caption, CxC): two models' per-query metrics over the same queries -----------------
#
# A gallery benchmark's score module gives `query_values(scores)`: a frame indexed by (group, query_id), one float
# column per metric (the per-query R@K hit, AP@R, R-Precision, x100) and NaN where a metric does not apply to a
# query (ECCV's mAP@R outside its ECCV queries, CxC's t2t R@1 on an image query). The group is resampled on its
# own and a metric is the mean of its groups' means: ECCV's directions (its Table 4 prints the mean of i2t and t2i,
# `papers.eccv.score.summarize`); CxC's tasks (one task per metric). Decisions:
#
# - the paired bootstrap resamples queries, both models' values of a query together (the difference per query),
#   each group from its own generator (seeded by (seed, group index)), in chunks of replicates (the same draws
#   whatever the chunk); a replicate's metric is its groups' nanmean over the resampled queries, averaged;
# - both models must have been scored on the same queries (same index, the metric defined on the same ones);
#   a mismatch is refused;
# - the direction at level 1 - confidence: 'A above B' where the percentile interval of A - B lies above 0,
#   'A below B' below 0, else 'no significant difference'.

GALLERY_COLUMNS = [
    "benchmark",
    "model_a",
    "model_b",
    "metric",
    "n",
    "value_a",
    "value_b",
    "difference",
    "lo",
    "hi",
    "confidence",
    "n_boot",
    "seed",
    "direction",
]


LONG_COLUMNS = ["row", "column", "value", "lo", "hi", "note"]


def long_rows(row: str, cells: Iterable[tuple[str, Any, Any, Any, str]]) -> list[dict[str, Any]]:
    """One row's (column, value, lo, hi, note) cells as records of a long table (`paired_long`, `gallery_long`)."""
    return [{"row": row, "column": c, "value": v, "lo": lo, "hi": hi, "note": note} for c, v, lo, hi, note in cells]


def same_units(
    benchmark: str, tables: Mapping[str, pd.DataFrame], a: str, b: str, unit: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Models A's and B's per-unit tables (unit: 'instance' or 'query'), refused unless both exist and index
    the same units."""
    for name in (a, b):
        if name not in tables:
            raise ValueError(f"paired tests on {benchmark}: no per-{unit} scores of model {name!r}")
    ta, tb = tables[a], tables[b]
    if not ta.index.equals(tb.index):
        units = "queries" if unit == "query" else f"{unit}s"
        raise ValueError(
            f"paired tests on {benchmark}: {a} has {len(ta)} {units} and {b} {len(tb)}, not the same ones; "
            "expected both scored on the same build"
        )
    return ta, tb


def _query_groups(frame: pd.DataFrame, what: str) -> list[np.ndarray]:
    """The row positions of each group (the first index level), groups in sorted order."""
    if frame.index.nlevels != 2:
        raise ValueError(f"{what}: expected a frame indexed by (group, query_id), got {frame.index.nlevels} level(s)")
    codes = frame.index.get_level_values(0)
    return [np.flatnonzero(codes == g) for g in sorted(set(codes))]


def query_bootstrap_means(
    frame: pd.DataFrame, n_boot: int = 1000, seed: int = 0, chunk: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Every column's value (the mean over groups of each group's nanmean) and its n_boot bootstrap replicates
    (shape (n_boot, n_columns)): the rows of each group resampled with replacement, the same draws for every
    column (so that replicates of different columns are paired). A group where a column has no value is left out
    of that column's mean; a replicate where it draws none, too (NaN when no group is left)."""
    values = frame.to_numpy(dtype=np.float64)
    known = ~np.isnan(values)
    filled = np.where(known, values, 0.0)
    groups = _query_groups(frame, "query bootstrap")
    point_sums = np.zeros(values.shape[1])
    point_counts = np.zeros(values.shape[1])
    sums = np.zeros((n_boot, values.shape[1]))
    counts = np.zeros((n_boot, values.shape[1]))
    for g_index, rows in enumerate(groups):
        v, k = filled[rows], known[rows].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = v.sum(axis=0) / k.sum(axis=0)
        point_sums += np.where(np.isnan(mean), 0.0, mean)
        point_counts += ~np.isnan(mean)
        rng = np.random.default_rng(np.random.SeedSequence([seed, g_index]))
        for start in range(0, n_boot, chunk):
            size = min(chunk, n_boot - start)
            idx = rng.integers(0, len(rows), size=(size, len(rows)))
            weights = np.stack([np.bincount(i, minlength=len(rows)) for i in idx]).astype(np.float64)
            with np.errstate(invalid="ignore", divide="ignore"):
                rep = (weights @ v) / (weights @ k)
            sums[start : start + size] += np.where(np.isnan(rep), 0.0, rep)
            counts[start : start + size] += ~np.isnan(rep)
    with np.errstate(invalid="ignore", divide="ignore"):
        return point_sums / point_counts, sums / counts


def percentile_interval(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (NaN replicates left out; NaN when none is left)."""
    reps = np.asarray(replicates, dtype=np.float64)
    reps = reps[~np.isnan(reps)]
    if len(reps) == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(reps, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def gallery_direction(lo: float, hi: float) -> str:
    """A gallery pair's verdict from the interval of A - B (module section above)."""
    if lo > 0:
        return "A above B"
    if hi < 0:
        return "A below B"
    return "no significant difference"


def gallery_records(
    benchmark: str,
    values: Mapping[str, pd.DataFrame],
    pairs: Sequence[tuple[str, str]],
    metrics: Iterable[str],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """One record per (pair, metric): A's and B's metric, A - B and its paired bootstrap interval over the same
    queries (`GALLERY_COLUMNS`); `values[model]` is its score module's `query_values` frame."""
    records: list[dict[str, Any]] = []
    metrics = list(metrics)
    for a, b in pairs:
        va, vb = same_units(benchmark, values, a, b, "query")
        columns: dict[str, np.ndarray] = {}
        for metric in metrics:
            for name, frame in ((a, va), (b, vb)):
                if metric not in frame.columns:
                    raise ValueError(f"paired tests on {benchmark}: {name}'s per-query scores have no {metric}")
            x, y = va[metric].to_numpy(np.float64), vb[metric].to_numpy(np.float64)
            if not np.array_equal(np.isnan(x), np.isnan(y)):
                raise ValueError(f"paired tests on {benchmark}: {a} and {b} have {metric} on different queries")
            columns |= {f"{metric}\ta": x, f"{metric}\tb": y, f"{metric}\td": x - y}
        # one bootstrap per pair: every metric's difference from the same draws of queries
        point, reps = query_bootstrap_means(pd.DataFrame(columns, index=va.index), n_boot, seed)
        for i, metric in enumerate(metrics):
            lo, hi = percentile_interval(reps[:, 3 * i + 2], confidence)
            records.append(
                {
                    "benchmark": benchmark,
                    "model_a": a,
                    "model_b": b,
                    "metric": metric,
                    "n": int(np.sum(~np.isnan(columns[f"{metric}\ta"]))),
                    "value_a": float(point[3 * i]),
                    "value_b": float(point[3 * i + 1]),
                    "difference": float(point[3 * i + 2]),
                    "lo": lo,
                    "hi": hi,
                    "confidence": confidence,
                    "n_boot": n_boot,
                    "seed": seed,
                    "direction": gallery_direction(lo, hi),
                }
            )
    return pd.DataFrame.from_records(records, columns=GALLERY_COLUMNS)


def gallery_long(records: pd.DataFrame, decimals: int = 2) -> pd.DataFrame:
    """The gallery records as a long table (row, column, value, lo, hi, note) for `write_paired_table`."""
    rows: list[dict[str, Any]] = []
    nan = float("nan")
    for r in records.itertuples(index=False):
        row = f"{r.model_a} vs {r.model_b}: {r.metric}"
        cells = [
            ("queries", r.n, nan, nan, ""),
            ("A", r.value_a, nan, nan, ""),
            ("B", r.value_b, nan, nan, ""),
            (f"A − B ({100 * r.confidence:g}% paired bootstrap over queries)", r.difference, r.lo, r.hi, ""),
            ("direction", nan, nan, nan, str(r.direction)),
        ]
        rows += long_rows(row, cells)
    return pd.DataFrame(rows, columns=LONG_COLUMNS)


def gallery_test(table: pd.DataFrame | None, a: str, b: str, metric: str) -> dict[str, Any] | None:
    """A's paired test against B on a metric from a gallery table, in either orientation (B vs A negated);
    None when the table has neither."""
    if table is None:
        return None
    for x, y, sign in ((a, b, 1.0), (b, a, -1.0)):
        hit = table[(table["model_a"] == x) & (table["model_b"] == y) & (table["metric"] == metric)]
        if len(hit):
            r = hit.iloc[0]
            lo, hi = (float(r["lo"]), float(r["hi"])) if sign > 0 else (-float(r["hi"]), -float(r["lo"]))
            value_a, value_b = (r["value_a"], r["value_b"]) if sign > 0 else (r["value_b"], r["value_a"])
            return {
                "a": a,
                "b": b,
                "metric": metric,
                "n": int(r["n"]),
                "value_a": float(value_a),
                "value_b": float(value_b),
                "difference": sign * float(r["difference"]),
                "lo": lo,
                "hi": hi,
                "confidence": float(r["confidence"]),
            }
    return None
