"""Confidence intervals: binomial (Wilson), binomial standard error, seeded bootstrap."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

# The interval level wherever none is given: params.yaml's `score.confidence` (the home of its default)
# (tests/metrics/test_intervals_default.py holds the two equal). Every default of a `confidence` is this name.
DEFAULT_CONFIDENCE = 0.95


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion, as fractions in [0, 1]."""
    if n <= 0:
        return (float("nan"), float("nan"))
    from scipy.special import ndtri  # the normal quantile (scipy.stats.norm.ppf calls it); lighter to import

    z = float(ndtri(0.5 + confidence / 2.0))
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # clamp to [0, 1] and around p: floating error must not put p outside its own interval
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def recorded_confidence(docs: Iterable[Mapping[str, Any]]) -> float | None:
    """The interval level a set of metrics JSONs were computed at: the first "confidence" any of them
    records (params.yaml score.confidence), or None when none says."""
    for doc in docs:
        if "confidence" in doc:
            return float(doc["confidence"])
    return None


def binomial_standard_error(p: float, n: int) -> float:
    """Binomial standard error sqrt(p(1-p)/n) of a proportion (MCIC reports 100x this as '±')."""
    if n <= 0:
        return float("nan")
    return float(np.sqrt(p * (1.0 - p) / n))


def bootstrap_interval(
    values: np.ndarray,
    statistic: Callable[[np.ndarray], float],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    rowwise: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of statistic(values), resampling rows with a fixed seed.

    `rowwise`, when given, computes the statistic of every row of a 2-D block of resamples at once and must
    give what `statistic` gives row by row (e.g. `np.median(x, axis=1)` for `np.median`): it spares a Python
    call per resample on long inputs."""
    values = np.asarray(values)
    if len(values) == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    if rowwise is None:
        boots = np.array([statistic(values[i]) for i in idx], dtype=float)
    else:
        boots = np.concatenate(
            [np.asarray(rowwise(values[idx[s : s + 64]]), dtype=float) for s in range(0, n_boot, 64)]
        )
    lo, hi = np.percentile(boots, [50 * (1 - confidence), 50 * (1 + confidence)])
    return (float(lo), float(hi))
