"""Bradley-Terry fit: the ECCV user study's worked example, a naive maximum-likelihood reference, refusals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from itmbench.metrics.bradley_terry import bradley_terry, bradley_terry_batch, bradley_terry_interval

# ECCV Caption Table D.1 as printed (row i, column j: i preferred to j); E's diagonal 24 is not a comparison.
TABLE_D1 = np.array(
    [
        [0, 231, 66, 111, 316],
        [89, 0, 21, 79, 328],
        [254, 299, 0, 273, 343],
        [185, 217, 23, 0, 287],
        [28, 16, 1, 9, 24],
    ],
    dtype=float,
)
# Section 4.1's printed scores (A: 70.85, B: 13.15, C: 10.66, D: 4.89, E: 0.44), which the fit of D.1 as printed
# gives to its rows C, D, A, B, E.
PRINTED_ON_D1_ROWS = [10.66, 4.89, 70.85, 13.15, 0.44]


def naive_fit(wins: np.ndarray) -> np.ndarray:
    """Maximise the log-likelihood sum_ij w_ij log(p_i / (p_i + p_j)) over log-scores by a general optimiser."""
    w = wins.copy()
    np.fill_diagonal(w, 0)

    def nll(theta: np.ndarray) -> float:
        diff = theta[:, None] - theta[None, :]
        return float(np.sum(w * np.logaddexp(0.0, -diff)))

    res = minimize(nll, np.zeros(len(w)), method="BFGS", options={"gtol": 1e-10})
    p = np.exp(res.x - res.x.max())
    return p / p.sum()


def test_the_user_study_gives_the_printed_scores():
    assert np.round(100 * bradley_terry(TABLE_D1), 2).tolist() == PRINTED_ON_D1_ROWS


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_matches_a_naive_maximum_likelihood_fit(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 7))
    strength = rng.gamma(1.0, size=k)
    n = rng.integers(5, 60, size=(k, k))
    n = np.triu(n, 1) + np.triu(n, 1).T
    wins = rng.binomial(n, strength[:, None] / (strength[:, None] + strength[None, :])).astype(float)
    wins = np.triu(wins, 1) + np.tril(n - wins.T, -1)  # w_ji = n_ij - w_ij
    wins = np.maximum(wins, 1)  # every pair both ways: a finite fit exists
    np.testing.assert_allclose(bradley_terry(wins), naive_fit(wins), atol=1e-6)


def test_the_diagonal_is_ignored_and_the_batch_is_the_single_fit():
    bare = TABLE_D1.copy()
    bare[4, 4] = 0
    np.testing.assert_array_equal(bradley_terry(bare), bradley_terry(TABLE_D1))
    stack = np.stack([TABLE_D1, TABLE_D1.T])
    np.testing.assert_allclose(bradley_terry_batch(stack)[1], bradley_terry(TABLE_D1.T), atol=1e-12)


def test_no_finite_fit_is_refused_naming_the_groups():
    wins = np.array([[0, 5, 3], [2, 0, 4], [0, 0, 0]], dtype=float)  # system 2 never preferred
    with pytest.raises(ValueError, match=r"no finite Bradley-Terry fit.*\['a', 'b'\].*\['c'\]|\['c'\].*\['a', 'b'\]"):
        bradley_terry(wins, ["a", "b", "c"])
    with pytest.raises(ValueError, match="square matrix"):
        bradley_terry(np.ones((2, 3)))


def test_the_interval_is_seeded_and_holds_the_fit():
    lo, hi, reps = bradley_terry_interval(TABLE_D1, n_boot=200, seed=3)
    lo2, hi2, _ = bradley_terry_interval(TABLE_D1, n_boot=200, seed=3)
    fit = bradley_terry(TABLE_D1)
    np.testing.assert_array_equal(lo, lo2)
    np.testing.assert_array_equal(hi, hi2)
    assert reps.shape == (200, 5) and np.all(lo < fit) and np.all(fit < hi)
    np.testing.assert_allclose(reps.sum(axis=1), 1.0)
