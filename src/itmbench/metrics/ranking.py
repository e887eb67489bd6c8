"""Ranked-list metrics for retrieval with many positives: R@K, R-Precision, mAP@R, PMRP, COCO 1K.

Conventions shared by every function here:

- A *ranking* is a 1-D integer array of gallery ids, best first, usually the top-K of the
  full ranking. Batched functions take a 2-D array ``(n_queries, K)`` or a sequence of 1-D
  arrays (ragged). Ids must be unique within one ranking (a ranking is a permutation prefix);
  a repeated id raises ``ValueError`` (R@K checks the top K it reads).
- *Positives* of a query are an array-like of gallery ids (duplicates are ignored); R is the
  number of distinct positives.
- A query with no positive gets ``nan`` (the metric is undefined), never 0: average with
  ``np.nanmean`` only if that is what you mean.
- A ranking shorter than the depth a metric needs (R for R-P and mAP@R, min(R, cap) for PMRP)
  cannot give the exact value. With ``strict=True`` (default) that raises ``ValueError``
  naming the query; with ``strict=False`` the missing ranks count as non-relevant, which is
  the exact value when no positive sits in the missing ranks and a lower bound otherwise.
  Recall@K never needs strictness: a positive missing from a list shorter than K is a miss.
- Values are fractions in [0, 1]; papers print them x100.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

Rankings = np.ndarray | Sequence[ArrayLike]


def _padded_rankings(ranked: Rankings) -> tuple[np.ndarray, np.ndarray]:
    """Rankings as an int64 matrix padded with -1 plus per-query lengths (ragged input allowed)."""
    if isinstance(ranked, np.ndarray) and ranked.ndim == 2:
        mat = ranked.astype(np.int64, copy=False)
        return mat, np.full(mat.shape[0], mat.shape[1], dtype=np.int64)
    rows = [np.asarray(r, dtype=np.int64).ravel() for r in ranked]
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    width = int(lengths.max()) if len(rows) else 0
    mat = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        mat[i, : len(r)] = r
    return mat, lengths


def _check_unique(mat: np.ndarray, lengths: np.ndarray) -> None:
    """Raise if any ranking repeats a gallery id (a ranking must be a permutation prefix)."""
    if mat.shape[1] < 2 or mat.shape[0] == 0:
        return
    width = mat.shape[1]
    pad = np.arange(width)[None, :] >= lengths[:, None]
    if pad.any():  # give padding slots distinct values below every id so they never collide
        filler = int(mat.min()) - 1 - np.arange(width, dtype=np.int64)
        mat = np.where(pad, filler[None, :], mat)
    srt = np.sort(mat, axis=1)
    dup = srt[:, 1:] == srt[:, :-1]
    if dup.any():
        q = int(np.flatnonzero(dup.any(axis=1))[0])
        item = int(srt[q, 1:][dup[q]][0])
        raise ValueError(f"ranking of query {q} lists gallery id {item} more than once")


def _positive_pairs(positives: Sequence[ArrayLike], n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Flatten ragged positives into (query index, gallery id) arrays of distinct pairs."""
    if len(positives) != n_queries:
        raise ValueError(f"got {n_queries} rankings but {len(positives)} positive sets")
    if all(type(p) is np.ndarray and p.ndim == 1 for p in positives):  # the scorers' lists: no copy per row
        pos_rows = positives
    else:
        pos_rows = [
            np.asarray(list(p) if isinstance(p, (set, frozenset)) else p, dtype=np.int64).ravel() for p in positives
        ]
    counts = np.fromiter(map(len, pos_rows), dtype=np.int64, count=len(pos_rows))
    q = np.repeat(np.arange(n_queries, dtype=np.int64), counts)
    items = np.concatenate(pos_rows).astype(np.int64, copy=False) if len(pos_rows) else np.zeros(0, dtype=np.int64)
    if len(items) and (span := int(items.max()) - int(items.min()) + 1) * (n_queries + 1) < 2**62:
        # by query, then id, as one sort of an int64 key per pair (a lexsort of the two columns costs several times it)
        lo = int(items.min())
        keys = q * span + (items - lo)
        if len(keys) > 1 and not (keys[1:] >= keys[:-1]).all():  # rows given sorted (np.unique's) need no sort
            keys.sort()
        q, items = keys // span, keys % span + lo
    else:
        order = np.lexsort((items, q))  # by query, then id: each query's distinct ids, sorted, as np.unique gives them
        q, items = q[order], items[order]
    first = np.ones(len(q), dtype=bool)
    first[1:] = (q[1:] != q[:-1]) | (items[1:] != items[:-1])
    return q[first], items[first]


def _pair_keys(mat: np.ndarray, pq: np.ndarray, pitems: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One int64 key per (query, id) for the ranked matrix and the positive pairs, in the pairs' order (a key
    grows with the query, then the id, so pairs sorted that way give sorted keys)."""
    lo = min(int(mat.min()), int(pitems.min()))
    span = max(int(mat.max()), int(pitems.max())) - lo + 1
    if span * (mat.shape[0] + 1) >= 2**62:  # sparse huge ids: re-code them densely first
        codes, inverse = np.unique(np.concatenate([mat.ravel(), pitems]), return_inverse=True)
        mat = inverse[: mat.size].reshape(mat.shape).astype(np.int64)
        pitems = inverse[mat.size :].astype(np.int64)
        lo, span = 0, codes.size
    row = np.arange(mat.shape[0], dtype=np.int64)[:, None]
    return row * span + (mat - lo), pq * span + (pitems - lo)


def relevance_matrix(ranked: Rankings, positives: Sequence[ArrayLike]) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (n_queries, K) hit matrix and per-query positive counts R, vectorised."""
    mat, lengths = _padded_rankings(ranked)
    _check_unique(mat, lengths)
    n, width = mat.shape
    pq, pitems = _positive_pairs(positives, n)
    n_pos = np.bincount(pq, minlength=n).astype(np.int64)
    if n == 0 or width == 0 or len(pitems) == 0:
        return np.zeros((n, width), dtype=bool), n_pos
    ranked_keys, pos_keys = _pair_keys(mat, pq, pitems)
    # membership by binary search in the positive keys, sorted already (`_positive_pairs` orders the pairs by
    # query, then id, and `_pair_keys` keeps that order): np.isin would sort the [n, K] ranked keys too
    at = np.minimum(np.searchsorted(pos_keys, ranked_keys), len(pos_keys) - 1)
    rel = pos_keys[at] == ranked_keys
    rel &= np.arange(width)[None, :] < lengths[:, None]
    return rel, n_pos


def _check_depth(lengths: np.ndarray, depth: np.ndarray, metric: str) -> None:
    """Raise when a ranking is shorter than the depth the metric needs (strict mode)."""
    short = lengths < depth
    if short.any():
        q = int(np.flatnonzero(short)[0])
        raise ValueError(
            f"{metric}: ranking of query {q} has {int(lengths[q])} items but the metric needs the "
            f"top {int(depth[q])} ({int(short.sum())} queries too short); pass a longer top-K or "
            "strict=False for a lower bound"
        )


def _lengths(ranked: Rankings) -> np.ndarray:
    """Per-query ranking lengths."""
    if isinstance(ranked, np.ndarray) and ranked.ndim == 2:
        return np.full(ranked.shape[0], ranked.shape[1], dtype=np.int64)
    return np.array([np.asarray(r).size for r in ranked], dtype=np.int64)


def _precision_at_depth(rel: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Hits in the top depth[q] divided by depth[q]; nan where depth is 0."""
    n, width = rel.shape
    cum = np.concatenate([np.zeros((n, 1), dtype=np.int64), np.cumsum(rel, axis=1)], axis=1)
    hits = cum[np.arange(n), np.minimum(depth, width)]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(depth > 0, hits / np.maximum(depth, 1), np.nan)


def recall_at_k_batch(ranked: Rankings, positives: Sequence[ArrayLike], k: int) -> np.ndarray:
    """Per-query hit rate R@K (1.0 if any positive is in the top K): the COCO/CxC/ECCV R@K. Only each ranking's
    top K is read (and checked for a repeated id): a deeper list gives the same hits at a fraction of the cost."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if isinstance(ranked, np.ndarray) and ranked.ndim == 2:
        ranked = ranked[:, :k]
    else:
        ranked = [np.asarray(r).ravel()[:k] for r in ranked]
    rel, n_pos = relevance_matrix(ranked, positives)  # at most k columns
    hit = rel.any(axis=1).astype(float)
    return np.where(n_pos > 0, hit, np.nan)


def r_precision_batch(ranked: Rankings, positives: Sequence[ArrayLike], strict: bool = True) -> np.ndarray:
    """Per-query R-Precision: precision in the top R, R = number of positives (Musgrave et al.)."""
    rel, n_pos = relevance_matrix(ranked, positives)
    if strict:
        _check_depth(_lengths(ranked), n_pos, "R-Precision")
    return _precision_at_depth(rel, n_pos)


def map_at_r_batch(ranked: Rankings, positives: Sequence[ArrayLike], strict: bool = True) -> np.ndarray:
    """Per-query mAP@R = (1/R) sum_{i<=R} P(i) rel(i): ECCV Caption's main metric."""
    rel, n_pos = relevance_matrix(ranked, positives)
    if strict:
        _check_depth(_lengths(ranked), n_pos, "mAP@R")
    width = rel.shape[1]
    prec = np.cumsum(rel, axis=1) / np.arange(1, width + 1)[None, :]
    within_r = np.arange(width)[None, :] < n_pos[:, None]
    total = np.where(rel & within_r, prec, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_pos > 0, total / np.maximum(n_pos, 1), np.nan)


def pmrp_batch(
    ranked: Rankings,
    positives: Sequence[ArrayLike],
    r_cap: int | None = 50,
    strict: bool = True,
    depth: ArrayLike | None = None,
) -> np.ndarray:
    """Per-query PMRP: R-Precision on plausible-match positives with R -> min(R, r_cap) (ECCV), or to each
    query's `depth` where the benchmark states it (ECCV's `pm_vectors.pm_depth`; `r_cap` is then unused)."""
    rel, n_pos = relevance_matrix(ranked, positives)
    if depth is not None:
        depth = np.asarray(depth, dtype=np.int64)
        if depth.shape != n_pos.shape:
            raise ValueError(f"PMRP: {depth.shape[0]} depths for {n_pos.shape[0]} queries; expected one per query")
    else:
        depth = n_pos if r_cap is None else np.minimum(n_pos, int(r_cap))
    if strict:
        _check_depth(_lengths(ranked), depth, "PMRP")
    return _precision_at_depth(rel, depth)


def first_positive_rank_batch(ranked: Rankings, positives: Sequence[ArrayLike]) -> np.ndarray:
    """Per-query 1-based rank of the first positive (inf if none listed): CxC's median rank."""
    rel, n_pos = relevance_matrix(ranked, positives)
    any_hit = rel.any(axis=1)
    rank = np.where(any_hit, rel.argmax(axis=1) + 1.0, np.inf)
    return np.where(n_pos > 0, rank, np.nan)


def recall_at_k(ranking: ArrayLike, positives: ArrayLike, k: int) -> float:
    """R@K of one query: 1.0 if any positive is in the top K, else 0.0 (nan without positives)."""
    return float(recall_at_k_batch([ranking], [positives], k)[0])


def r_precision(ranking: ArrayLike, positives: ArrayLike, strict: bool = True) -> float:
    """R-Precision of one query: fraction of the top R that are positives."""
    return float(r_precision_batch([ranking], [positives], strict=strict)[0])


def map_at_r(ranking: ArrayLike, positives: ArrayLike, strict: bool = True) -> float:
    """mAP@R of one query: (1/R) sum_{i<=R} P(i) rel(i)."""
    return float(map_at_r_batch([ranking], [positives], strict=strict)[0])


def pmrp(ranking: ArrayLike, positives: ArrayLike, r_cap: int | None = 50, strict: bool = True) -> float:
    """PMRP of one query: R-Precision against plausible-match positives with R capped."""
    return float(pmrp_batch([ranking], [positives], r_cap=r_cap, strict=strict)[0])


# --- COCO 1K protocol -------------------------------------------------------------------------


def coco_1k_folds(caption_ids_in_order: ArrayLike, n_folds: int = 5) -> list[np.ndarray]:
    """Split ordered test caption ids into n_folds consecutive equal folds (COCO 1K: 5 x 5,000)."""
    ids = np.asarray(caption_ids_in_order).ravel()
    if n_folds < 1 or len(ids) % n_folds:
        raise ValueError(f"{len(ids)} caption ids cannot be split into {n_folds} equal folds")
    return list(ids.reshape(n_folds, -1))


def fold_image_ids(fold_caption_ids: ArrayLike, caption_to_image: Mapping[int, int]) -> np.ndarray:
    """Distinct image ids of one fold's captions, in order of first appearance."""
    imgs = np.array([int(caption_to_image[int(c)]) for c in np.asarray(fold_caption_ids).ravel()])
    _, first = np.unique(imgs, return_index=True)
    return imgs[np.sort(first)]


def restrict_ranking(ranking: ArrayLike, gallery_ids: ArrayLike) -> np.ndarray:
    """Keep only the items of a ranking that belong to a sub-gallery, order preserved."""
    r = np.asarray(ranking, dtype=np.int64).ravel()
    return r[np.isin(r, np.asarray(gallery_ids, dtype=np.int64))]


def restricted_recall_at_k_batch(
    ranked: Rankings, positives: Sequence[ArrayLike], gallery_ids: ArrayLike, k: int
) -> np.ndarray:
    """Per-query R@K after dropping ranked items outside a sub-gallery (COCO 1K from 5K lists)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    mat, lengths = _padded_rankings(ranked)
    rel, n_pos = relevance_matrix(ranked, positives)
    keep = np.isin(mat, np.asarray(gallery_ids, dtype=np.int64))
    keep &= np.arange(mat.shape[1])[None, :] < lengths[:, None]
    within = np.cumsum(keep, axis=1) <= k
    hit = (rel & keep & within).any(axis=1).astype(float)
    return np.where(n_pos > 0, hit, np.nan)


def coco_1k_recall_at_k(
    i2t_ranked: Mapping[int, ArrayLike],
    t2i_ranked: Mapping[int, ArrayLike],
    caption_ids_in_order: ArrayLike,
    caption_to_image: Mapping[int, int],
    k: int = 1,
    n_folds: int = 5,
) -> dict[str, float]:
    """COCO 1K R@K: mean over folds of R@K with queries and gallery restricted to the fold.

    Rankings are over the whole 5K gallery (query id -> ranked gallery ids); each is filtered to
    the fold's gallery, so a top-K list must hold at least k fold items for the exact value
    (fewer count as misses). Positives are the original COCO pairs given by caption_to_image.
    """
    i2t_means, t2i_means = [], []
    for fold_caps in coco_1k_folds(caption_ids_in_order, n_folds):
        fold_imgs = fold_image_ids(fold_caps, caption_to_image)
        caps_of: dict[int, list[int]] = {int(i): [] for i in fold_imgs}
        for c in fold_caps:
            caps_of[int(caption_to_image[int(c)])].append(int(c))
        i2t_lists = [np.asarray(i2t_ranked[int(i)], dtype=np.int64) for i in fold_imgs]
        i2t_pos = [caps_of[int(i)] for i in fold_imgs]
        t2i_lists = [np.asarray(t2i_ranked[int(c)], dtype=np.int64) for c in fold_caps]
        t2i_pos = [[int(caption_to_image[int(c)])] for c in fold_caps]
        i2t_hits = restricted_recall_at_k_batch(i2t_lists, i2t_pos, fold_caps, k)
        t2i_hits = restricted_recall_at_k_batch(t2i_lists, t2i_pos, fold_imgs, k)
        i2t_means.append(float(np.mean(i2t_hits)))
        t2i_means.append(float(np.mean(t2i_hits)))
    return {"i2t": float(np.mean(i2t_means)), "t2i": float(np.mean(t2i_means))}


def as_aligned(
    ranked_by_query: Mapping[int, ArrayLike], positives_by_query: Mapping[int, Iterable[int]]
) -> tuple[list[int], list[np.ndarray], list[np.ndarray]]:
    """Align id-keyed rankings and positives (eccv_caption style dicts) into batched inputs."""
    qids = list(positives_by_query)
    missing = [q for q in qids if q not in ranked_by_query]
    if missing:
        raise KeyError(f"no ranking for {len(missing)} queries with positives, e.g. {missing[0]}")
    ranked = [np.asarray(ranked_by_query[q], dtype=np.int64) for q in qids]
    pos = [np.asarray(list(positives_by_query[q]), dtype=np.int64) for q in qids]
    return qids, ranked, pos
