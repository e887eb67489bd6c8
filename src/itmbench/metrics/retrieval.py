"""COCO-style retrieval metrics from first-positive ranks: R@K and median rank, with intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval, wilson_interval


def recall_at_k(ranks: np.ndarray, k: int) -> float:
    """Percentage of queries whose best positive ranks within the top k (ranks are 1-based)."""
    ranks = np.asarray(ranks)
    return float(100.0 * np.mean(ranks <= k)) if len(ranks) else float("nan")


def median_rank(ranks: np.ndarray) -> float:
    """Median over queries of the 1-based rank of the first positive (COCO's MedR)."""
    return float(np.median(ranks)) if len(ranks) else float("nan")


def retrieval_summary(
    ranks: np.ndarray,
    ks: Sequence[int] = (1, 5, 10),
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, dict[str, float]]:
    """R@K with Wilson intervals and MedR with a seeded bootstrap interval, as percentages."""
    ranks = np.asarray(ranks)
    n = int(len(ranks))
    out: dict[str, dict[str, float]] = {}
    for k in ks:
        hits = int(np.sum(ranks <= k))
        lo, hi = wilson_interval(hits, n, confidence)
        out[f"R@{k}"] = {"value": recall_at_k(ranks, k), "lo": 100 * lo, "hi": 100 * hi, "n": n}
    lo, hi = bootstrap_interval(
        ranks, median_rank, n_boot=n_boot, seed=seed, confidence=confidence, rowwise=lambda x: np.median(x, axis=1)
    )
    out["MedR"] = {"value": median_rank(ranks), "lo": lo, "hi": hi, "n": n}
    return out
