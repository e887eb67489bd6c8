"""Paired tests of two models over the same instances: exact McNemar and the paired bootstrap of the difference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from itmbench.metrics.paired import compare_paired, discordant_counts, mcnemar_exact, paired_difference_interval


def test_mcnemar_worked_example() -> None:
    # 2 instances only A gets right, 8 only B: p = 2 * P(X <= 2), X ~ Bin(10, 1/2) = 2 * (1 + 10 + 45) / 1024
    assert mcnemar_exact(2, 8) == pytest.approx(112 / 1024)
    assert mcnemar_exact(8, 2) == pytest.approx(112 / 1024)
    assert mcnemar_exact(0, 0) == 1.0  # no discordant instance: nothing tells the models apart
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)


@pytest.mark.parametrize("a_only,b_only", [(0, 1), (3, 4), (7, 20), (30, 12), (100, 131), (512, 470), (0, 60)])
def test_mcnemar_equals_scipys_binomial_test(a_only: int, b_only: int) -> None:
    reference = binomtest(a_only, a_only + b_only, 0.5, alternative="two-sided").pvalue
    assert mcnemar_exact(a_only, b_only) == pytest.approx(reference, rel=1e-9, abs=1e-300)


def test_discordant_counts_by_hand() -> None:
    a = np.array([1, 1, 0, 0, 1, 0, 1], dtype=bool)
    b = np.array([1, 0, 1, 0, 0, 0, 1], dtype=bool)
    assert discordant_counts(a, b) == (2, 1)
    with pytest.raises(ValueError, match="same instances"):
        discordant_counts(a, b[:-1])
    with pytest.raises(ValueError, match="0/1"):
        discordant_counts(np.array([0.5, 1.0]), np.array([1, 0]))


def _naive_bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int, confidence: float) -> tuple[float, float]:
    """Resample the instances with a loop, keeping each instance's two outcomes together."""
    rng = np.random.default_rng(seed)
    n = len(a)
    idx = rng.integers(0, n, size=(n_boot, n))
    diffs = []
    for row in idx:
        right_a = sum(int(a[i]) for i in row)
        right_b = sum(int(b[i]) for i in row)
        diffs.append(100.0 * (right_a - right_b) / n)
    lo, hi = np.percentile(diffs, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def test_paired_bootstrap_equals_a_hand_loop() -> None:
    rng = np.random.default_rng(3)
    a = rng.random(150) < 0.6
    b = np.where(rng.random(150) < 0.7, a, ~a)  # correlated with a, as two models on the same instances are
    diff, lo, hi = paired_difference_interval(a, b, n_boot=300, seed=5, confidence=0.9)
    assert diff == pytest.approx(100.0 * (a.mean() - b.mean()))
    assert (lo, hi) == pytest.approx(_naive_bootstrap(a, b, 300, 5, 0.9))
    assert lo <= diff <= hi
    assert paired_difference_interval(a, b, n_boot=300, seed=5, confidence=0.9) == (diff, lo, hi)  # seeded


def test_the_pairing_narrows_the_interval_of_correlated_models() -> None:
    rng = np.random.default_rng(0)
    a = rng.random(400) < 0.5
    b = a.copy()
    flip = rng.choice(400, 20, replace=False)
    b[flip] = ~b[flip]  # b agrees with a on 380 of 400 instances
    _, lo, hi = paired_difference_interval(a, b, n_boot=500, seed=0)
    assert hi - lo < 6.0  # unpaired, two independent 400-instance proportions near 50% give about +-7 each side


def test_compare_paired_collects_both_tests() -> None:
    a = np.array([1] * 30 + [0] * 10 + [1] * 40 + [0] * 20, dtype=bool)
    b = np.array([0] * 30 + [1] * 10 + [1] * 40 + [0] * 20, dtype=bool)
    c = compare_paired(a, b, n_boot=200, seed=1)
    assert (c.n, c.a_only, c.b_only) == (100, 30, 10)
    assert (c.accuracy_a, c.accuracy_b, c.difference) == pytest.approx((70.0, 50.0, 20.0))
    assert c.p_mcnemar == pytest.approx(binomtest(10, 40, 0.5).pvalue)
    assert c.lo > 0 and c.hi < 40
