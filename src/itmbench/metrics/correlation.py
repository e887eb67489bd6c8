"""Correlations: CxC's sampled-bootstrap Spearman, a line of best fit with its correlations, Kendall tau-b."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE


@dataclass(frozen=True)
class BootstrapCorrelation:
    """Mean and standard deviation (ddof=0) of bootstrap correlations, plus every sample."""

    mean: float
    std: float
    samples: np.ndarray

    @property
    def mean_x100(self) -> float:
        """Mean correlation x100, as CxC Table 5 prints it."""
        return 100.0 * self.mean

    @property
    def std_x100(self) -> float:
        """Standard deviation x100."""
        return 100.0 * self.std


def bootstrap_pair_draws(query_ids: ArrayLike, n_boot: int = 1000, fraction: float = 0.5, seed: int = 0) -> np.ndarray:
    """Pair indices (n_boot, n_sampled): each row is half the queries, one rated pair of each.

    CxC's scheme: sample floor(fraction * n_queries) distinct queries without replacement, then
    one of each sampled query's rated pairs uniformly; seeded, so deterministic.
    """
    q = np.asarray(query_ids)
    if q.ndim != 1 or q.size == 0:
        raise ValueError("query_ids must be a non-empty 1-D array, one entry per rated pair")
    _, codes = np.unique(q, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    n_q = counts.size
    n_take = int(np.floor(fraction * n_q))
    if n_take < 2:
        raise ValueError(f"{n_q} queries x fraction {fraction} leaves fewer than 2 per sample")
    rng = np.random.default_rng(seed)
    keys = rng.random((n_boot, n_q))
    chosen = np.argpartition(keys, n_take - 1, axis=1)[:, :n_take]
    offsets = np.floor(rng.random((n_boot, n_take)) * counts[chosen]).astype(np.int64)
    return order[starts[chosen] + offsets]


def _drawn_ranks(values: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """`scipy.stats.rankdata(values[idx], axis=1)` (average ranks for ties), by counting where `values` takes
    no more distinct values than a row is long (CxC's ratings: a handful of levels), so that no row is sorted:
    a value's average rank is the count of smaller values in its row plus (its own count + 1) / 2, the
    same halves rankdata computes."""
    levels, codes = np.unique(values, return_inverse=True)
    n_rows, width = idx.shape
    if len(levels) > width or np.isnan(levels).any():
        from scipy import stats

        return stats.rankdata(values[idx], axis=1)
    drawn = codes.ravel()[idx]
    counts = np.bincount((np.arange(n_rows)[:, None] * len(levels) + drawn).ravel(), minlength=n_rows * len(levels))
    counts = counts.reshape(n_rows, len(levels))
    average = (np.cumsum(counts, axis=1) - counts) + (counts + 1) / 2.0
    return average[np.arange(n_rows)[:, None], drawn]


def _rowwise_spearman(x: np.ndarray, y: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """Spearman rho of each row pair (average ranks for ties; nan for a constant row); with `idx`, of the rows of
    x[idx] and y[idx] (x and y 1-D)."""
    if idx is None:
        from scipy import stats

        return _spearman_of_ranks(stats.rankdata(x, axis=1), stats.rankdata(y, axis=1))
    return _spearman_of_ranks(_drawn_ranks(x, idx), _drawn_ranks(y, idx))


def _spearman_of_ranks(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of ranks: Spearman's rho (nan for a constant row). The ranks are not changed."""
    rx = rx - rx.mean(axis=1, keepdims=True)
    ry = ry - ry.mean(axis=1, keepdims=True)
    num = (rx * ry).sum(axis=1)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _content_key(values: np.ndarray) -> tuple[str, bytes] | None:
    """A hashable key of an array's contents, or None for an object array (its bytes are pointers)."""
    return None if values.dtype.kind == "O" else (values.dtype.str, values.tobytes())


class SpearmanBootstraps:
    """`spearman_bootstrap` over many models' scores, each part computed once: the draws once per set of query ids,
    the ratings' ranks in them once per distinct ratings, a model's correlation samples once per distinct (ids,
    ratings, scores). Values equal `spearman_bootstrap`'s bit for bit (it is this, called once).
    CxC's paired comparisons score each model in several pairs over the same rated pairs."""

    def __init__(self, n_boot: int = 1000, fraction: float = 0.5, seed: int = 0) -> None:
        self.n_boot, self.fraction, self.seed = n_boot, fraction, seed
        self._draws: dict = {}
        self._ranks: dict = {}
        self._results: dict = {}

    def __call__(self, query_ids: ArrayLike, human_scores: ArrayLike, model_scores: ArrayLike) -> BootstrapCorrelation:
        h = np.asarray(human_scores, dtype=float).ravel()
        m = np.asarray(model_scores, dtype=float).ravel()
        q = np.asarray(query_ids).ravel()
        if not (h.size == m.size == q.size):
            raise ValueError(f"lengths differ: {q.size} query ids, {h.size} ratings, {m.size} scores")
        if np.isnan(h).any() or np.isnan(m).any():
            raise ValueError("ratings and model scores must not contain NaN")
        q_key = _content_key(q)
        key = None if q_key is None else (q_key, _content_key(h), _content_key(m))
        if key is not None and key in self._results:
            return self._results[key]
        idx = self._cached(self._draws, q_key, lambda: bootstrap_pair_draws(q, self.n_boot, self.fraction, self.seed))

        h_key = None if q_key is None else (q_key, _content_key(h))
        h_ranks = self._cached(self._ranks, h_key, lambda: _drawn_ranks(h, idx))
        rho = _spearman_of_ranks(h_ranks, _drawn_ranks(m, idx))  # a model's ranks are not kept: its samples are
        result = BootstrapCorrelation(float(np.nanmean(rho)), float(np.nanstd(rho)), rho)
        if key is not None:
            self._results[key] = result
        return result

    @staticmethod
    def _cached(store: dict, key, compute):
        if key is None:
            return compute()
        if key not in store:
            store[key] = compute()
        return store[key]


def spearman_bootstrap(
    query_ids: ArrayLike,
    human_scores: ArrayLike,
    model_scores: ArrayLike,
    n_boot: int = 1000,
    fraction: float = 0.5,
    seed: int = 0,
) -> BootstrapCorrelation:
    """CxC correlation: Spearman(human, model) over n_boot samples of half the queries x one pair.

    One entry per rated pair; ``query_ids`` says which query each pair belongs to (the caller
    picks the query side). Returns the mean and std of the samples (CxC reports both x100);
    a sample where one side is constant has no Spearman (nan) and is left out of both.
    """
    return SpearmanBootstraps(n_boot, fraction, seed)(query_ids, human_scores, model_scores)


LINE_FIT_STATISTICS: tuple[str, ...] = ("slope", "intercept", "pearson", "spearman")


def _rowwise_line_fit(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Least-squares slope and intercept of y on x, Pearson r and Spearman rho, one value per row (nan where x
    or y is constant in the row)."""
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    sxx, syy, sxy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1), (dx * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.where(sxx > 0, sxy / np.where(sxx > 0, sxx, 1.0), np.nan)
        pearson = np.where(
            (sxx > 0) & (syy > 0), sxy / np.sqrt(np.where((sxx > 0) & (syy > 0), sxx * syy, 1.0)), np.nan
        )
    intercept = y.mean(axis=1) - slope * x.mean(axis=1)
    return {"slope": slope, "intercept": intercept, "pearson": pearson, "spearman": _rowwise_spearman(x, y)}


def line_fit_bootstrap(
    x: ArrayLike, y: ArrayLike, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, tuple[float, float, float]]:
    """The line of best fit of y on x (least squares) and the Pearson and Spearman correlations, each as
    (value on all pairs, lo, hi): a percentile interval over `n_boot` resamples of the pairs with replacement
    (seeded). Keys: `LINE_FIT_STATISTICS`. CxC's Fig. 5 draws BoW cosine against STS with this line."""
    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    if a.size != b.size:
        raise ValueError(f"lengths differ: {a.size} x values, {b.size} y values")
    if a.size < 3:
        raise ValueError(f"a line fit with an interval needs at least 3 pairs, got {a.size}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("x and y must be finite")
    point = _rowwise_line_fit(a[None, :], b[None, :])
    idx = np.random.default_rng(seed).integers(0, a.size, size=(n_boot, a.size))
    boots = _rowwise_line_fit(a[idx], b[idx])
    q = [50 * (1 - confidence), 50 * (1 + confidence)]
    out: dict[str, tuple[float, float, float]] = {}
    for name in LINE_FIT_STATISTICS:
        samples = boots[name][np.isfinite(boots[name])]
        lo, hi = np.percentile(samples, q) if samples.size else (np.nan, np.nan)
        out[name] = (float(point[name][0]), float(lo), float(hi))
    return out


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall tau-b between two score vectors over the same models (ties handled, ECCV Table 5)."""
    from scipy import stats

    a = np.asarray(x, dtype=float).ravel()
    b = np.asarray(y, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"score vectors differ in length: {a.size} vs {b.size}")
    return float(stats.kendalltau(a, b, variant="b").statistic)


def kendall_tau_b_matrix(scores: Mapping[str, ArrayLike]) -> tuple[list[str], np.ndarray]:
    """Kendall tau-b between every pair of metrics' model scores (names in input order, diag 1)."""
    names = list(scores)
    cols = [np.asarray(scores[k], dtype=float).ravel() for k in names]
    if len({c.size for c in cols}) > 1:
        raise ValueError("every metric must score the same models")
    n = len(names)
    tau = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            tau[i, j] = tau[j, i] = kendall_tau_b(cols[i], cols[j])
    return names, tau


def paired_spearman_bootstrap(
    query_ids: ArrayLike,
    human_scores: ArrayLike,
    scores_a: ArrayLike,
    scores_b: ArrayLike,
    n_boot: int = 1000,
    fraction: float = 0.5,
    seed: int = 0,
    bootstraps: SpearmanBootstraps | None = None,
) -> tuple[BootstrapCorrelation, BootstrapCorrelation, np.ndarray]:
    """Two models' CxC correlations over the same rated pairs, from the same samples (`spearman_bootstrap`'s,
    so each equals that model's own): both, and the per-sample differences A - B (nan where either is).
    `bootstraps` (of these n_boot, fraction and seed) shares the draws and each model's samples across calls."""
    if bootstraps is None:
        bootstraps = SpearmanBootstraps(n_boot, fraction, seed)
    elif (bootstraps.n_boot, bootstraps.fraction, bootstraps.seed) != (n_boot, fraction, seed):
        raise ValueError(
            f"paired_spearman_bootstrap: bootstraps of n_boot={bootstraps.n_boot}, fraction={bootstraps.fraction}, "
            f"seed={bootstraps.seed}; expected n_boot={n_boot}, fraction={fraction}, seed={seed}"
        )
    a = bootstraps(query_ids, human_scores, scores_a)
    b = bootstraps(query_ids, human_scores, scores_b)
    return a, b, a.samples - b.samples
