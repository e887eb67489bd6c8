"""Ranked-list metrics: ECCV worked examples, naive references on random inputs, COCO 1K folds."""

from __future__ import annotations

import numpy as np
import pytest

from itmbench.metrics.ranking import (
    as_aligned,
    coco_1k_folds,
    coco_1k_recall_at_k,
    first_positive_rank_batch,
    fold_image_ids,
    map_at_r,
    map_at_r_batch,
    pmrp,
    pmrp_batch,
    r_precision,
    r_precision_batch,
    recall_at_k,
    recall_at_k_batch,
    relevance_matrix,
    restrict_ranking,
    restricted_recall_at_k_batch,
)

# --- naive references, written from the definitions, one query at a time ---------------------


def naive_recall_at_k(ranking, positives, k):
    pos = set(int(p) for p in positives)
    if not pos:
        return np.nan
    return 1.0 if any(int(x) in pos for x in list(ranking)[:k]) else 0.0


def naive_precision_at(ranking, pos, depth):
    hits = 0
    for i in range(depth):
        if i < len(ranking) and int(ranking[i]) in pos:
            hits += 1
    return hits / depth


def naive_r_precision(ranking, positives):
    pos = set(int(p) for p in positives)
    return naive_precision_at(ranking, pos, len(pos)) if pos else np.nan


def naive_map_at_r(ranking, positives):
    pos = set(int(p) for p in positives)
    if not pos:
        return np.nan
    r = len(pos)
    total = 0.0
    for i in range(1, r + 1):
        rel_i = i <= len(ranking) and int(ranking[i - 1]) in pos
        if rel_i:
            total += naive_precision_at(ranking, pos, i)
    return total / r


def naive_pmrp(ranking, positives, cap):
    pos = set(int(p) for p in positives)
    if not pos:
        return np.nan
    depth = len(pos) if cap is None else min(len(pos), cap)
    return naive_precision_at(ranking, pos, depth)


def naive_first_rank(ranking, positives):
    pos = set(int(p) for p in positives)
    if not pos:
        return np.nan
    for i, x in enumerate(ranking):
        if int(x) in pos:
            return float(i + 1)
    return np.inf


def random_case(rng, n_queries=300, gallery=60, max_k=40, max_pos=20):
    """Ragged random rankings (permutation prefixes) and positive sets, some empty, some long."""
    ranked, positives = [], []
    for _ in range(n_queries):
        k = int(rng.integers(1, max_k + 1))
        ranked.append(rng.permutation(gallery)[:k] + 1000)  # ids need not start at 0
        n_pos = int(rng.integers(0, max_pos + 1))
        pos = rng.choice(gallery, size=n_pos, replace=False) + 1000
        if n_pos and rng.random() < 0.2:  # duplicates in positives are ignored
            pos = np.concatenate([pos, pos[:1]])
        positives.append(pos)
    return ranked, positives


# --- ECCV Caption worked examples (section 4 and appendix D.1, R = 8) --------------------------


POS8 = list(range(100, 108))
NEG = list(range(200, 230))


def ranking_from_pattern(pattern):
    """Top-8 hit pattern, then the remaining positives, then negatives (a full ranking)."""
    pos, neg = iter(POS8), iter(NEG)
    top = [next(pos) if hit else next(neg) for hit in pattern]
    return np.array(top + list(pos) + list(neg))


@pytest.mark.parametrize(
    ("pattern", "map_printed", "r1", "r5"),
    [
        ([0, 1, 1, 1, 1, 1, 1, 1], 66.0, 0.0, 1.0),  # (A) only top-1 wrong
        ([1, 0, 0, 0, 0, 0, 0, 0], 12.5, 1.0, 1.0),  # (B) only top-1 right
        ([0, 0, 0, 0, 0, 1, 1, 1], 10.3, 0.0, 0.0),  # (C) top-1..5 wrong, rest right
        ([0, 0, 0, 0, 1, 0, 0, 0], 2.5, 0.0, 1.0),  # (D) only top-5 right
    ],
)
def test_map_at_r_worked_examples(pattern, map_printed, r1, r5):
    ranking = ranking_from_pattern(pattern)
    assert round(100 * map_at_r(ranking, POS8), 1) == map_printed
    assert recall_at_k(ranking, POS8, 1) == r1
    assert recall_at_k(ranking, POS8, 5) == r5
    assert r_precision(ranking, POS8) == pytest.approx(sum(pattern) / 8)


def test_worked_examples_order_matches_human_preference():
    """A > B > C > D > E in mAP@R, the order of the paper's Bradley-Terry scores."""
    patterns = [
        [0, 1, 1, 1, 1, 1, 1, 1],
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 1, 1, 1],
        [0, 0, 0, 0, 1, 0, 0, 0],
        [0] * 8,
    ]
    scores = map_at_r_batch([ranking_from_pattern(p) for p in patterns], [POS8] * 5)
    assert np.all(np.diff(scores) < 0)
    assert scores[-1] == 0.0


def test_map_at_r_exact_fraction_example_a():
    expected = sum((i - 1) / i for i in range(2, 9)) / 8
    assert map_at_r(ranking_from_pattern([0, 1, 1, 1, 1, 1, 1, 1]), POS8) == pytest.approx(expected, abs=1e-15)


# --- batched functions against the naive references ------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_metrics_match_naive_reference(seed):
    rng = np.random.default_rng(seed)
    ranked, positives = random_case(rng)
    for k in (1, 5, 10, 50):
        ours = recall_at_k_batch(ranked, positives, k)
        ref = [naive_recall_at_k(r, p, k) for r, p in zip(ranked, positives, strict=True)]
        np.testing.assert_allclose(ours, ref, equal_nan=True)
    np.testing.assert_allclose(
        r_precision_batch(ranked, positives, strict=False),
        [naive_r_precision(r, p) for r, p in zip(ranked, positives, strict=True)],
        equal_nan=True,
    )
    np.testing.assert_allclose(
        map_at_r_batch(ranked, positives, strict=False),
        [naive_map_at_r(r, p) for r, p in zip(ranked, positives, strict=True)],
        equal_nan=True,
        atol=1e-12,
    )
    for cap in (None, 3, 50):
        np.testing.assert_allclose(
            pmrp_batch(ranked, positives, r_cap=cap, strict=False),
            [naive_pmrp(r, p, cap) for r, p in zip(ranked, positives, strict=True)],
            equal_nan=True,
        )
    np.testing.assert_allclose(
        first_positive_rank_batch(ranked, positives),
        [naive_first_rank(r, p) for r, p in zip(ranked, positives, strict=True)],
        equal_nan=True,
    )


def test_single_query_functions_match_batched():
    rng = np.random.default_rng(7)
    ranked, positives = random_case(rng, n_queries=40)
    for r, p in zip(ranked, positives, strict=True):
        assert recall_at_k(r, p, 5) == pytest.approx(naive_recall_at_k(r, p, 5), nan_ok=True)
        assert r_precision(r, p, strict=False) == pytest.approx(naive_r_precision(r, p), nan_ok=True)
        assert map_at_r(r, p, strict=False) == pytest.approx(naive_map_at_r(r, p), nan_ok=True)
        assert pmrp(r, p, r_cap=4, strict=False) == pytest.approx(naive_pmrp(r, p, 4), nan_ok=True)


def test_matrix_input_equals_ragged_input():
    rng = np.random.default_rng(3)
    mat = np.stack([rng.permutation(500)[:30] for _ in range(100)])
    positives = [rng.choice(500, size=int(rng.integers(1, 25)), replace=False) for _ in range(100)]
    as_list = list(mat)
    np.testing.assert_array_equal(map_at_r_batch(mat, positives), map_at_r_batch(as_list, positives))
    np.testing.assert_array_equal(r_precision_batch(mat, positives), r_precision_batch(as_list, positives))


def test_perfect_and_worst_rankings():
    pos = [[3, 1, 2], [9]]
    assert np.all(map_at_r_batch([[1, 2, 3, 7], [9, 0]], pos) == 1.0)
    assert np.all(r_precision_batch([[1, 2, 3, 7], [9, 0]], pos) == 1.0)
    assert np.all(map_at_r_batch([[7, 8, 9, 1], [0, 9]], pos) == 0.0)


def test_positives_as_sets_and_negative_ids():
    assert map_at_r([-5, -7, 2], {-7, -5}) == 1.0
    assert recall_at_k([-5, -7, 2], {2}, 2) == 0.0


# --- contract: short lists, empty positives, duplicates ---------------------------------------


def test_short_ranking_raises_in_strict_mode_and_lower_bounds_otherwise():
    ranking = [100, 200, 101, 102, 103]  # top-5 only, R = 8
    with pytest.raises(ValueError, match="query 0 has 5 items but the metric needs the top 8"):
        map_at_r(ranking, POS8)
    with pytest.raises(ValueError, match="R-Precision"):
        r_precision(ranking, POS8)
    lower = map_at_r(ranking, POS8, strict=False)
    padded = [*ranking, 201, 202, 203]  # the missing ranks filled with non-positives
    assert lower == pytest.approx(map_at_r(padded, POS8))
    completed = [*ranking, 104, 105, 106]  # any other completion can only score higher
    assert map_at_r(completed, POS8) > lower
    assert r_precision(ranking, POS8, strict=False) == pytest.approx(4 / 8)


def test_pmrp_cap_limits_required_depth():
    positives = np.arange(80)
    ranking = np.concatenate([np.arange(40), np.arange(1000, 1010)])  # 50 long, 40 hits
    assert pmrp(ranking, positives, r_cap=50) == pytest.approx(40 / 50)
    with pytest.raises(ValueError):
        pmrp(ranking, positives, r_cap=None)
    assert pmrp(ranking, positives, r_cap=None, strict=False) == pytest.approx(40 / 80)


def test_pmrp_at_a_stated_depth_is_the_hits_in_that_many_top_ranks_over_it():
    """ECCV's score reads each query's depth from its pm_vectors: the hits among the top depth[q] ranks over
    depth[q], counted by hand; depth 0 is NaN; a ranking shorter than its depth raises unless strict=False."""
    ranked = [[5, 1, 7, 2, 9], [3, 4, 6], [8, 0]]
    positives = [[1, 2, 9, 11], [4], [0, 8]]
    got = pmrp_batch(ranked, positives, depth=[3, 2, 0], strict=False)
    np.testing.assert_allclose(got, [1 / 3, 1 / 2, np.nan], equal_nan=True)  # [5,1,7]: one hit; [3,4]: one
    assert pmrp_batch(ranked, positives, depth=[4, 1, 2])[2] == 1.0
    with pytest.raises(ValueError, match="needs the top 6"):
        pmrp_batch(ranked, positives, depth=[6, 1, 1])
    with pytest.raises(ValueError, match="2 depths for 3 queries"):
        pmrp_batch(ranked, positives, depth=[1, 1])


def test_query_without_positives_is_nan_not_zero():
    out = map_at_r_batch([[1, 2], [3, 4]], [[2, 9], []])
    assert out[0] == 0.25  # R = 2, hit at rank 2: P(2) / R
    assert np.isnan(out[1])
    assert np.isnan(recall_at_k_batch([[1, 2]], [[]], 1)[0])


def test_duplicate_ids_in_a_ranking_raise():
    with pytest.raises(ValueError, match="query 1 lists gallery id 4 more than once"):
        map_at_r_batch([[1, 2, 3], [4, 5, 4]], [[1], [4]])
    with pytest.raises(ValueError):
        relevance_matrix(np.array([[1, 1]]), [[1]])


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="2 rankings but 1 positive sets"):
        recall_at_k_batch([[1], [2]], [[1]], 1)
    with pytest.raises(ValueError):
        recall_at_k([1, 2], [1], 0)


# --- COCO 1K -----------------------------------------------------------------------------------


def test_coco_1k_folds_are_consecutive_and_equal():
    ids = np.arange(25_000) * 3 + 7
    folds = coco_1k_folds(ids)
    assert len(folds) == 5
    assert all(len(f) == 5000 for f in folds)
    np.testing.assert_array_equal(np.concatenate(folds), ids)
    assert folds[1][0] == ids[5000]
    with pytest.raises(ValueError):
        coco_1k_folds(np.arange(10), 3)


def test_fold_image_ids_and_restrict_ranking():
    c2i = {10: 1, 11: 1, 12: 2, 13: 3, 14: 2}
    np.testing.assert_array_equal(fold_image_ids([12, 10, 14, 11], c2i), [2, 1])
    np.testing.assert_array_equal(restrict_ranking([5, 3, 9, 1], [1, 9]), [9, 1])


def test_restricted_recall_matches_naive_on_ragged_lists():
    rng = np.random.default_rng(5)
    ranked, positives = random_case(rng, n_queries=200)
    gallery = rng.choice(np.arange(1000, 1060), size=25, replace=False)
    for k in (1, 3, 10):
        ours = restricted_recall_at_k_batch(ranked, positives, gallery, k)
        ref = [naive_recall_at_k(restrict_ranking(r, gallery), p, k) for r, p in zip(ranked, positives, strict=True)]
        np.testing.assert_allclose(ours, ref, equal_nan=True)


def test_coco_1k_recall_matches_reranking_within_each_fold():
    """Filtering a 5K ranking to a fold equals ranking the fold's own gallery (naive)."""
    rng = np.random.default_rng(11)
    n_img, per = 50, 5
    cap_ids = np.arange(n_img * per) + 500
    c2i = {int(c): int(i) for c, i in zip(cap_ids, np.repeat(np.arange(n_img), per), strict=True)}
    sim = rng.normal(size=(n_img, len(cap_ids)))
    sim[np.repeat(np.arange(n_img), per), np.arange(len(cap_ids))] += 1.5
    i2t = {i: cap_ids[np.argsort(-sim[i])] for i in range(n_img)}
    t2i = {int(c): np.argsort(-sim[:, j]) for j, c in enumerate(cap_ids)}
    for k in (1, 5):
        ours = coco_1k_recall_at_k(i2t, t2i, cap_ids, c2i, k=k, n_folds=5)
        ref_i2t, ref_t2i = [], []
        for f in range(5):
            caps = np.arange(f * 50, (f + 1) * 50)  # column indices of the fold's captions
            imgs = np.arange(f * 10, (f + 1) * 10)
            sub = sim[np.ix_(imgs, caps)]
            for a, i in enumerate(imgs):
                top = caps[np.argsort(-sub[a])[:k]]
                ref_i2t.append(any(c2i[int(cap_ids[c])] == i for c in top))
            for b, c in enumerate(caps):
                top = imgs[np.argsort(-sub[:, b])[:k]]
                ref_t2i.append(c2i[int(cap_ids[c])] in top)
        assert ours["i2t"] == pytest.approx(np.mean(ref_i2t))
        assert ours["t2i"] == pytest.approx(np.mean(ref_t2i))
        assert 0.0 < ours["t2i"] < 1.0


def test_coco_1k_folds_of_the_released_ids_hold_1000_images_each(github_raw):
    import json

    data = github_raw / "naver-ai/eccv-caption/main/eccv_caption/data"
    ids = np.load(data / "coco_test_ids.npy")
    c2i = {int(k): v[0] for k, v in json.loads((data / "original_caption_to_image.json").read_text()).items()}
    folds = coco_1k_folds(ids)
    sizes = [len(fold_image_ids(f, c2i)) for f in folds]
    assert sizes == [1000] * 5
    assert len(set(np.concatenate([fold_image_ids(f, c2i) for f in folds]).tolist())) == 5000


def test_as_aligned_orders_by_positive_keys_and_reports_missing():
    qids, ranked, pos = as_aligned({2: [5, 6], 1: [7]}, {1: [7], 2: [6]})
    assert qids == [1, 2]
    assert recall_at_k_batch(ranked, pos, 1).tolist() == [1.0, 0.0]
    with pytest.raises(KeyError):
        as_aligned({1: [7]}, {1: [7], 3: [1]})


def test_huge_sparse_ids_take_the_recoding_path():
    """Ids near 2**62 (hashes) would overflow the (query, id) keys; they are re-coded densely."""
    rng = np.random.default_rng(12)
    ranked, positives = random_case(rng, n_queries=50)

    def spread(ids):  # ids 1000..1059 -> multiples of 2**56 spanning ~4e18, some negative
        return (np.asarray(ids, dtype=np.int64) - 1000) * 2**56 - 2**61

    ranked_big = [spread(r) for r in ranked]
    positives_big = [spread(p) for p in positives]
    np.testing.assert_allclose(
        map_at_r_batch(ranked_big, positives_big, strict=False),
        map_at_r_batch(ranked, positives, strict=False),
        equal_nan=True,
    )


def test_ids_spanning_the_int64_range():
    """Ids from -2**62 to 2**62 - 1: (query, id) keys need re-coding, else they overflow."""
    lo, hi = -(2**62), 2**62 - 1
    ranked = [[lo, hi, 0], [hi, 0, lo], [0, lo, hi]]
    positives = [[hi], [lo, 0], [lo]]
    expected = [naive_map_at_r(r, p) for r, p in zip(ranked, positives, strict=True)]
    np.testing.assert_allclose(map_at_r_batch(ranked, positives), expected)
    assert expected == [0.0, 0.25, 0.0]


def test_positives_as_arrays_give_what_the_same_sets_and_lists_give():
    """The scorers pass one int64 array per query (read without a copy each); sets, lists, other dtypes, a
    repeated id and an empty row go the general way, rows given in order skip the sort, and ids too far apart for
    one sort key the column-wise sort: the hit matrix and the counts are the same, and the naive membership's."""
    rng = np.random.default_rng(3)
    ranked = np.stack([rng.permutation(40)[:10] for _ in range(30)])
    rows = [rng.choice(40, size=int(rng.integers(0, 6)), replace=False) for _ in range(30)]
    rows[4] = np.concatenate([rows[4], rows[4][:1]]) if len(rows[4]) else np.array([7, 7])  # a repeated id
    rows[5] = np.zeros(0, dtype=np.int64)
    expected = relevance_matrix(ranked, [set(int(x) for x in r) for r in rows])
    naive = np.array([[int(x) in set(r.tolist()) for x in ranking] for ranking, r in zip(ranked, rows)])
    assert np.array_equal(expected[0], naive)
    for positives in (
        [r.astype(np.int64) for r in rows],
        [np.sort(r).astype(np.int64) for r in rows],  # rows already in order: the pairs are not sorted again
        [r.astype(np.int32) for r in rows],
        [r.tolist() for r in rows],
        [r.astype(np.int64) for r in rows[:-1]] + [set(rows[-1].tolist())],
    ):
        rel, n_pos = relevance_matrix(ranked, positives)
        assert np.array_equal(rel, expected[0]) and np.array_equal(n_pos, expected[1])
    assert expected[1][4] == len(set(rows[4].tolist())) and expected[1][5] == 0
    far = 2**61  # an id too far from the others for one int64 key per (query, id): sorted column by column
    rel, n_pos = relevance_matrix(ranked, [np.append(r, far).astype(np.int64) for r in rows])
    assert np.array_equal(rel, expected[0]) and np.array_equal(n_pos, expected[1] + 1)
