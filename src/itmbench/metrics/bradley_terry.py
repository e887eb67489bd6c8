"""Bradley-Terry preference scores from pairwise preference counts (Bradley and Terry, 1952).

The model: system i is preferred to system j with probability p_i / (p_i + p_j). Given the counts
``wins[i, j]`` (how often i was preferred to j), `bradley_terry` returns the maximum-likelihood p,
normalised to sum to 1, by Hunter's (2004) minorisation-maximisation iteration

    p_i <- W_i / sum_{j != i} n_ij / (p_i + p_j),    W_i = sum_j wins[i, j],  n_ij = wins[i, j] + wins[j, i],

which increases the likelihood at every step and converges to the unique maximum whenever it exists:
when for every split of the systems into two groups some system of each group was preferred at least
once to some system of the other (the directed "was preferred to" graph is strongly connected; Hunter's
Assumption 1). Otherwise a system's score runs off to 0 or to 1 and no finite maximum exists: refused.
The diagonal is not a comparison and is ignored.

`bradley_terry_interval`: a percentile bootstrap that redraws every pair's preferences from its observed
split, binomially with the pair's number of comparisons (the comparisons of a pair are independent
Bernoulli trials under the model), and refits; seeded, so the same counts give the same interval.
"""

from __future__ import annotations

import numpy as np

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE

DEFAULT_TOLERANCE = 1e-12
DEFAULT_MAX_ITER = 100_000


def _check_wins(wins: np.ndarray) -> np.ndarray:
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise ValueError(f"preference counts: expected a square matrix of at least 2 systems, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("preference counts: expected finite counts >= 0")
    w = w.copy()
    np.fill_diagonal(w, 0.0)
    return w


def _check_connected(w: np.ndarray, labels: list[str]) -> None:
    """Refuse counts for which no finite maximum-likelihood estimate exists (not strongly connected)."""
    from scipy.sparse.csgraph import connected_components

    n, components = connected_components(w > 0, directed=True, connection="strong")
    if n > 1:
        groups = [[labels[i] for i in np.flatnonzero(components == c)] for c in range(n)]
        raise ValueError(
            "preference counts: no finite Bradley-Terry fit: the systems split into groups of which one is never "
            f"preferred to another ({groups}); expected every group of systems to win at least once against the rest"
        )


def bradley_terry_batch(
    wins: np.ndarray,
    labels: list[str] | None = None,
    tol: float = DEFAULT_TOLERANCE,
    max_iter: int = DEFAULT_MAX_ITER,
) -> np.ndarray:
    """`bradley_terry` of each of a stack of count matrices ([B, k, k] -> [B, k]), iterated together."""
    stack = np.asarray(wins, dtype=float)
    if stack.ndim != 3:
        raise ValueError(f"preference counts: expected a [B, k, k] stack, got shape {stack.shape}")
    checked = np.stack([_check_wins(w) for w in stack])
    names = labels or [str(i) for i in range(stack.shape[1])]
    for b, w in enumerate(checked):
        try:
            _check_connected(w, names)
        except ValueError as err:
            raise ValueError(f"{err} (count matrix {b} of {len(checked)})" if len(checked) > 1 else str(err)) from err
    n = checked + checked.transpose(0, 2, 1)
    total = checked.sum(axis=2)
    p = np.full(total.shape, 1.0 / total.shape[1])
    for _ in range(max_iter):
        denominator = (n / (p[:, :, None] + p[:, None, :])).sum(axis=2)
        new = total / denominator
        new /= new.sum(axis=1, keepdims=True)
        if np.max(np.abs(new - p)) < tol:
            return new
        p = new
    raise ValueError(f"Bradley-Terry fit: no convergence to {tol} in {max_iter} iterations")


def bradley_terry(
    wins: np.ndarray,
    labels: list[str] | None = None,
    tol: float = DEFAULT_TOLERANCE,
    max_iter: int = DEFAULT_MAX_ITER,
) -> np.ndarray:
    """The maximum-likelihood Bradley-Terry scores of `wins` (wins[i, j]: i preferred to j), summing to 1."""
    return bradley_terry_batch(np.asarray(wins, dtype=float)[None], labels, tol, max_iter)[0]


def bradley_terry_interval(
    wins: np.ndarray,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    labels: list[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, replicates): percentile bootstrap bounds of each system's score and the [n_boot, systems]
    replicate scores (each pair's preferences redrawn binomially from its observed split, then refitted).
    A replicate without a finite fit is an error, never skipped: skipping would bias the interval."""
    w = _check_wins(wins)
    n = w + w.T
    upper = np.triu_indices(len(w), k=1)
    trials = n[upper].astype(np.int64)
    share = np.divide(w[upper], n[upper], out=np.zeros(len(trials)), where=n[upper] > 0)
    drawn = np.random.default_rng(seed).binomial(trials, share, size=(n_boot, len(trials)))
    redrawn = np.zeros((n_boot, *w.shape))
    redrawn[:, upper[0], upper[1]] = drawn
    redrawn[:, upper[1], upper[0]] = trials - drawn
    try:
        reps = bradley_terry_batch(redrawn, labels)
    except ValueError as err:
        raise ValueError(f"Bradley-Terry bootstrap (seed {seed}): {err}") from err
    lo, hi = np.percentile(reps, [50 * (1 - confidence), 50 * (1 + confidence)], axis=0)
    return lo, hi, reps
