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

import pandas as pd

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
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One record per (pair, metric): both tests of A vs B over the same instances (`RECORD_COLUMNS`)."""
    records: list[dict[str, Any]] = []
    metrics = list(metrics)
    for a, b in pairs:
        for name in (a, b):
            if name not in outcomes:
                raise ValueError(f"paired tests on {benchmark}: no per-instance scores of model {name!r}")
        oa, ob = outcomes[a], outcomes[b]
        if not oa.index.equals(ob.index):
            raise ValueError(
                f"paired tests on {benchmark}: {a} has {len(oa)} instances and {b} {len(ob)}, not the same ones; "
                "expected both scored on the same build"
            )
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
        rows += [
            {"row": row, "column": c, "value": v, "lo": lo, "hi": hi, "note": note} for c, v, lo, hi, note in cells
        ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi", "note"])


def write_paired_table(records: pd.DataFrame, prefix: str | os.PathLike, title: str, decimals: int = 2) -> list[Path]:
    """prefix.csv (the records, exact), prefix.md and prefix.tex (`write_table` of `paired_long`)."""
    from itmbench.io import write_text
    from itmbench.report.tables import write_table

    prefix = Path(prefix)
    paths = write_table(paired_long(records, decimals), prefix, title, row_header="A vs B: metric", decimals=decimals)
    write_text(paths[0], records.to_csv(index=False, lineterminator="\n", float_format="%.6g"))
    return paths


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
