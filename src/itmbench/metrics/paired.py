"""Paired tests of two models' per-instance correctness over the same instances.

Two models scored on the same instances are not independent samples: comparing their accuracies by
whether two marginal intervals overlap wastes the pairing (and is conservative). Two standard paired
tests, both over the per-instance booleans of the two models:

- exact McNemar: of the discordant instances (one model right, the other wrong), under the null of
  equal accuracy each is equally likely to favour either model, so the count favouring A is
  Binomial(b + c, 1/2); the two-sided p-value is the binomial test's (min(1, 2 * the smaller tail),
  as `scipy.stats.binomtest` computes it for p = 1/2), and 1 when there is no discordant pair;
- a paired percentile bootstrap of the accuracy difference (A - B, in percentage points): instances
  are resampled with their two outcomes together (`metrics.intervals.bootstrap_interval`, seeded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval


@dataclass(frozen=True)
class PairedComparison:
    """A vs B over n paired instances: accuracies (%), discordant counts, McNemar p, the difference and its interval."""

    n: int
    accuracy_a: float
    accuracy_b: float
    a_only: int  # instances A gets right and B wrong
    b_only: int  # instances B gets right and A wrong
    p_mcnemar: float
    difference: float  # accuracy A - accuracy B, percentage points
    lo: float
    hi: float
    confidence: float
    n_boot: int
    seed: int


def _booleans(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"paired test: {name} has shape {arr.shape}; expected one boolean per instance")
    if arr.dtype != bool:
        if not np.isin(arr, (0, 1)).all():
            raise ValueError(f"paired test: {name} holds values other than 0/1; expected one boolean per instance")
        arr = arr.astype(bool)
    return arr


def discordant_counts(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """(instances A right and B wrong, instances B right and A wrong)."""
    a, b = _booleans(a, "a"), _booleans(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"paired test: {a.shape[0]} outcomes of A vs {b.shape[0]} of B; expected the same instances")
    return int(np.sum(a & ~b)), int(np.sum(~a & b))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts: a_only ~ Bin(a_only + b_only, 1/2)."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"McNemar: discordant counts {a_only}, {b_only}; expected counts >= 0")
    m = a_only + b_only
    if m == 0:
        return 1.0
    from scipy.stats import binom

    tail = float(binom.cdf(min(a_only, b_only), m, 0.5))
    return min(1.0, 2.0 * tail)


def paired_difference_interval(
    a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float, float]:
    """Accuracy of A minus accuracy of B (percentage points) and its paired percentile bootstrap interval."""
    a, b = _booleans(a, "a"), _booleans(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"paired test: {a.shape[0]} outcomes of A vs {b.shape[0]} of B; expected the same instances")
    if len(a) == 0:
        return float("nan"), float("nan"), float("nan")
    diff = a.astype(float) - b.astype(float)  # one value per instance: resampling it resamples both outcomes
    lo, hi = bootstrap_interval(diff, lambda x: 100.0 * float(x.mean()), n_boot, seed, confidence)
    return 100.0 * float(diff.mean()), lo, hi


def compare_paired(
    a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE
) -> PairedComparison:
    """Both tests of A vs B on the same instances (booleans in the same instance order)."""
    a_only, b_only = discordant_counts(a, b)
    a, b = _booleans(a, "a"), _booleans(b, "b")
    difference, lo, hi = paired_difference_interval(a, b, n_boot, seed, confidence)
    n = len(a)
    return PairedComparison(
        n=n,
        accuracy_a=100.0 * float(a.mean()) if n else float("nan"),
        accuracy_b=100.0 * float(b.mean()) if n else float("nan"),
        a_only=a_only,
        b_only=b_only,
        p_mcnemar=mcnemar_exact(a_only, b_only),
        difference=difference,
        lo=lo,
        hi=hi,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
    )
