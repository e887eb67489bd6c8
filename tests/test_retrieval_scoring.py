"""Chunked retrieval ranking and R@K / MedR against a naive full-sort reference."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from itmbench.metrics.intervals import wilson_interval
from itmbench.metrics.retrieval import median_rank, recall_at_k, retrieval_summary
from itmbench.scoring.retrieval import first_k_best, first_positive_ranks, top_k


def naive_first_positive_rank(sims: np.ndarray, positives: list[np.ndarray]) -> np.ndarray:
    """Sort each row (non-positives first among equals: pessimistic ties) and find the first positive."""
    ranks = []
    for row, pos in zip(sims, positives):
        is_pos = np.zeros(len(row), dtype=bool)
        is_pos[pos] = True
        order = np.lexsort((is_pos, -row))  # by score desc, then non-positive before positive
        ranks.append(int(np.nonzero(is_pos[order])[0][0]) + 1)
    return np.array(ranks)


@pytest.mark.parametrize("chunk", [1, 7, 1024])
def test_ranks_match_naive_with_ties(chunk):
    rng = np.random.default_rng(0)
    # coarse values make ties frequent
    q = torch.from_numpy(rng.integers(-2, 3, size=(50, 4)).astype(np.float32))
    g = torch.from_numpy(rng.integers(-2, 3, size=(80, 4)).astype(np.float32))
    positives = [np.sort(rng.choice(80, size=rng.integers(1, 6), replace=False)) for _ in range(50)]
    expected = naive_first_positive_rank((q @ g.T).numpy(), positives)
    assert np.array_equal(first_positive_ranks(q, g, positives, chunk_size=chunk), expected)


def test_ranks_do_not_depend_on_chunk_size():
    rng = np.random.default_rng(1)
    q, g = torch.randn(300, 16, generator=torch.Generator().manual_seed(0)), torch.randn(900, 16)
    pos = [rng.choice(900, size=3, replace=False) for _ in range(300)]
    ref = first_positive_ranks(q, g, pos, chunk_size=300)
    for chunk in (1, 64, 1000):
        assert np.array_equal(first_positive_ranks(q, g, pos, chunk_size=chunk), ref)


@pytest.mark.parametrize("chunk", [1, 7, 16])
def test_a_positive_listed_twice_counts_once(chunk):
    q, g, positives = tied_data(7)
    twice = [np.concatenate([p, p[:1]]) for p in positives]
    expected = naive_first_positive_rank(q @ g.T, positives)
    assert np.array_equal(first_positive_ranks(q, g, twice, chunk_size=chunk), expected)
    assert np.array_equal(
        first_positive_ranks(torch.from_numpy(q), torch.from_numpy(g), twice, chunk_size=chunk), expected
    )


@pytest.mark.parametrize("bad", [-1, 10_000])
def test_a_positive_outside_the_gallery_is_an_error(bad):
    q, g, positives = tied_data(8)
    with pytest.raises(ValueError, match="positive gallery rows"):
        first_positive_ranks(q, g, [np.array([bad])] + positives[1:])


def test_query_without_positive_is_an_error():
    with pytest.raises(ValueError, match="no positive"):
        first_positive_ranks(torch.eye(2), torch.eye(2), [np.array([0]), np.array([], dtype=int)])


def test_top_k_matches_argsort():
    rng = np.random.default_rng(2)
    q, g = (
        torch.from_numpy(rng.normal(size=(20, 8)).astype(np.float32)),
        torch.from_numpy(rng.normal(size=(50, 8)).astype(np.float32)),
    )
    expected = np.argsort(-(q @ g.T).numpy(), axis=1, kind="stable")[:, :5]
    assert np.array_equal(top_k(q, g, 5, chunk_size=3), expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("levels", [3, 50, None])
def test_first_k_best_equals_a_filtered_full_stable_sort(levels, dtype):
    """No row sorted whole, yet the same columns as `np.argsort(-x, kind="stable")` filtered: ties on a few
    levels, signed zeros, infinities, a row with fewer allowed columns than k, rows with a NaN; in float32 too
    (ECCV's annotator lists rank the float32 products, as their float64 copies would)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, size=(40, 60)).astype(dtype)
    if levels is not None:
        x = np.round(x * levels) / levels
        x[x == 0] = rng.choice([0.0, -0.0], size=int((x == 0).sum()))
    x[3, :10] = -np.inf
    x[4, 20:25] = np.inf
    excluded = rng.random(x.shape) < 0.3
    excluded[5, :55] = True
    for frame in (x, np.where(rng.random(x.shape) < 0.01, np.nan, x)):
        for k in (1, 7, 12, 60, 80):
            for mask in (excluded, None):
                got = first_k_best(frame, k, mask)
                for r in range(len(frame)):
                    order = np.argsort(-frame[r], kind="stable")
                    keep = order if mask is None else order[~mask[r][order]]
                    assert got[r].tolist() == keep[:k].tolist()


def test_recall_and_median_rank_by_hand():
    ranks = np.array([1, 2, 5, 11, 30])
    assert recall_at_k(ranks, 1) == 20.0
    assert recall_at_k(ranks, 5) == 60.0
    assert recall_at_k(ranks, 10) == 60.0
    assert median_rank(ranks) == 5.0
    s = retrieval_summary(ranks, ks=(1, 5), n_boot=200, seed=0)
    lo, hi = wilson_interval(3, 5)
    assert s["R@5"]["lo"] == pytest.approx(100 * lo) and s["R@5"]["hi"] == pytest.approx(100 * hi)
    assert s["MedR"]["lo"] <= 5.0 <= s["MedR"]["hi"]


def test_wilson_interval_known_values():
    # Wilson 95% for 0/10 is [0, 0.2775]; for 5/10 [0.2366, 0.7634] (standard tables)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)


def test_retrieval_summary_is_deterministic():
    ranks = np.random.default_rng(0).integers(1, 100, size=500)
    assert retrieval_summary(ranks) == retrieval_summary(ranks)


@pytest.mark.parametrize("n", [1, 2, 7, 500, 1001])
def test_medr_interval_is_the_one_a_median_per_resample_gives(n):
    from itmbench.metrics.intervals import bootstrap_interval

    ranks = np.random.default_rng(n).integers(1, 60, size=n)
    by_resample = bootstrap_interval(ranks, median_rank, n_boot=300, seed=4)  # one np.median call per resample
    summary = retrieval_summary(ranks, n_boot=300, seed=4)["MedR"]
    assert (summary["lo"], summary["hi"]) == by_resample  # bit for bit


def test_positive_lists_keep_gallery_rows():
    from itmbench.scoring.retrieval import positive_lists

    pairs = pd.DataFrame({"image_id": [10, 10, 11], "caption_id": [5, 7, 7]})
    lists = positive_lists(np.array([10, 11, 12]), np.array([7, 5, 9]), pairs, "image_id", "caption_id")
    assert [list(x) for x in lists] == [[0, 1], [0], []]


# --- numpy and torch: one ranking, two libraries ---------------------------------------------------

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA"))]


def tied_data(seed: int, n_queries: int = 50, n_distinct: int = 30, n_gallery: int = 80, dim: int = 6):
    """Embeddings whose dot products are exact in float32 whatever the summation order (multiples of 1/4 in
    [-1, 1]), so numpy and torch must agree bit for bit: many exact ties, and a gallery of duplicated rows."""
    rng = np.random.default_rng(seed)
    distinct = (rng.integers(-4, 5, size=(n_distinct, dim)) / 4).astype(np.float32)
    gallery = distinct[rng.integers(0, n_distinct, size=n_gallery)]  # every row has copies elsewhere, likely
    queries = (rng.integers(-4, 5, size=(n_queries, dim)) / 4).astype(np.float32)
    positives = [np.sort(rng.choice(n_gallery, size=rng.integers(1, 6), replace=False)) for _ in range(n_queries)]
    return queries, gallery, positives


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 7, 16])
def test_numpy_and_torch_ranks_agree_with_ties_and_duplicates(chunk, device):
    q, g, positives = tied_data(3)
    sims = q @ g.T
    dup = (sims[:, :, None] == sims[:, None, :]).sum() - sims.size  # pairs of gallery items tied for a query
    assert dup > 0 and len(np.unique(g, axis=0)) < len(g)
    from_numpy = first_positive_ranks(q, g, positives, chunk_size=chunk)
    from_torch = first_positive_ranks(
        torch.from_numpy(q).to(device), torch.from_numpy(g).to(device), positives, chunk_size=chunk
    )
    assert from_numpy.dtype == from_torch.dtype == np.int64
    assert np.array_equal(from_numpy, from_torch)
    assert np.array_equal(from_numpy, naive_first_positive_rank(sims, positives))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 7, 16])
def test_numpy_and_torch_top_k_agree_with_ties_and_duplicates(chunk, device):
    q, g, _ = tied_data(4)
    from_numpy = top_k(q, g, 12, chunk_size=chunk)
    from_torch = top_k(torch.from_numpy(q).to(device), torch.from_numpy(g).to(device), 12, chunk_size=chunk)
    assert np.array_equal(from_numpy, from_torch)
    assert np.array_equal(from_numpy, np.argsort(-(q @ g.T), axis=1, kind="stable")[:, :12])  # ties: lower index
    assert top_k(q, g, 500, chunk_size=chunk).shape == (len(q), len(g))  # k is capped at the gallery


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("chunk", [1, 7, 16])
def test_numpy_and_torch_ranks_excluding_the_query_agree(chunk, device):
    from itmbench.papers.cxc import score as cxc_score

    _, g, _ = tied_data(5)
    rng = np.random.default_rng(6)
    keep = np.sort(rng.choice(len(g), size=40, replace=False))  # queries are gallery rows (t2t, i2i)
    positives = [
        np.sort(rng.choice(np.delete(np.arange(len(g)), k), size=rng.integers(1, 5), replace=False)) for k in keep
    ]
    from_numpy = cxc_score.first_positive_ranks_excluding(g[keep], g, positives, keep, chunk_size=chunk)
    gt = torch.from_numpy(g).to(device)
    from_torch = cxc_score.first_positive_ranks_excluding(gt[keep], gt, positives, keep, chunk_size=chunk)
    assert np.array_equal(from_numpy, from_torch)
    sims = g[keep] @ g.T
    sims[np.arange(len(keep)), keep] = -np.inf  # the query is not in its own gallery
    assert np.array_equal(from_numpy, naive_first_positive_rank(sims, positives))
    # leaving the query out of its gallery can only lower its rank (its duplicate rows stay in)
    assert (from_numpy <= first_positive_ranks(g[keep], g, positives, chunk_size=chunk)).all()


def test_mixed_numpy_and_torch_inputs_are_an_error():
    q, g, positives = tied_data(7, n_queries=5)
    with pytest.raises(TypeError, match="not a mix"):
        first_positive_ranks(q, torch.from_numpy(g), positives)
    with pytest.raises(TypeError, match="not a mix"):
        top_k(torch.from_numpy(q), g, 3)
