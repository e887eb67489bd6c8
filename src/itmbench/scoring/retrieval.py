"""Chunked retrieval ranking: memory stays bounded at 5k x 25k and beyond.

The ranking functions take numpy arrays or torch tensors. With numpy arrays they compute with
numpy alone (a scoring job on the CPU never imports torch: its import is most of a job's
start-up); with torch tensors they compute with torch on the tensors' device (a GPU ranks its
chunks where the embeddings are). One implementation serves both: `_backend` picks the handful
of operations that differ between the two libraries.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from itmbench.scoring.embed import EmbeddingCache, OneHot

if TYPE_CHECKING:
    import torch

    Matrix = np.ndarray | torch.Tensor


class _Numpy:
    """The ranking's operations on numpy arrays."""

    @staticmethod
    def index(rows: np.ndarray, like: np.ndarray) -> np.ndarray:
        return rows

    @staticmethod
    def bool_zeros(shape: tuple[int, int], like: np.ndarray) -> np.ndarray:
        return np.zeros(shape, dtype=bool)

    @staticmethod
    def fill_outside(x: np.ndarray, mask: np.ndarray, value: float) -> np.ndarray:
        return np.where(mask, x, value)

    @staticmethod
    def row_max(x: np.ndarray) -> np.ndarray:
        return x.max(axis=1)

    @staticmethod
    def row_count(x: np.ndarray) -> np.ndarray:
        return x.sum(axis=1)

    @staticmethod
    def best_k(x: np.ndarray, k: int) -> np.ndarray:
        # `first_k_best`: the columns of a full stable sort's first k, without sorting whole rows
        return np.array(first_k_best(x, k), dtype=np.int64).reshape(len(x), k)

    @staticmethod
    def to_numpy(x: np.ndarray) -> np.ndarray:
        return x


class _Torch:
    """The same operations on torch tensors, on the tensors' device."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def index(self, rows: np.ndarray, like: torch.Tensor) -> torch.Tensor:
        return self.torch.from_numpy(rows).to(like.device)

    def bool_zeros(self, shape: tuple[int, int], like: torch.Tensor) -> torch.Tensor:
        return self.torch.zeros(shape, dtype=self.torch.bool, device=like.device)

    @staticmethod
    def fill_outside(x: torch.Tensor, mask: torch.Tensor, value: float) -> torch.Tensor:
        return x.masked_fill(~mask, value)

    @staticmethod
    def row_max(x: torch.Tensor) -> torch.Tensor:
        return x.max(dim=1).values

    @staticmethod
    def row_count(x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=1)

    def best_k(self, x: torch.Tensor, k: int) -> torch.Tensor:
        # a stable descending sort: best first, ties by lower index (as first_k_best)
        return self.torch.sort(x, dim=1, descending=True, stable=True).indices[:, :k]

    @staticmethod
    def to_numpy(x: torch.Tensor) -> np.ndarray:
        return x.cpu().numpy()


def dots(queries: Any, gallery: Any) -> Any:
    """queries @ gallery.T, a lookup where either side is `OneHot`."""
    if isinstance(gallery, OneHot) and isinstance(queries, OneHot):
        return (queries.rows[:, None] == gallery.rows[None, :]).astype(np.result_type(queries.dtype, gallery.dtype))
    if isinstance(gallery, OneHot):
        return np.ascontiguousarray(queries[:, gallery.rows], dtype=np.result_type(queries.dtype, gallery.dtype))
    if isinstance(queries, OneHot):
        return np.ascontiguousarray(gallery[:, queries.rows].T, dtype=np.result_type(queries.dtype, gallery.dtype))
    return queries @ gallery.T


def gathered_dots(queries: Any, gallery: Any, top: np.ndarray) -> np.ndarray:
    """[Q, k] dot products of each query row with the gallery rows `top[q]` names."""
    if isinstance(queries, OneHot) or isinstance(gallery, OneHot):
        rows = np.arange(len(queries))[:, None]
        if isinstance(gallery, OneHot) and not isinstance(queries, OneHot):
            return np.asarray(queries[rows, gallery.rows[top]])
        if isinstance(queries, OneHot) and not isinstance(gallery, OneHot):
            return np.asarray(gallery[top, queries.rows[:, None]])
        return (queries.rows[:, None] == gallery.rows[top]).astype(np.result_type(queries.dtype, gallery.dtype))
    return np.einsum("qd,qkd->qk", queries, gallery[top])


def _backend(*arrays: Any) -> _Numpy | _Torch:
    """numpy's operations when every argument is a numpy array (or `OneHot`), torch's when every one is a tensor."""
    if all(isinstance(a, np.ndarray | OneHot) for a in arrays):
        return _Numpy()
    torch = sys.modules.get("torch")  # a tensor exists only once torch is imported: never import it here
    if torch is not None and all(isinstance(a, torch.Tensor) for a in arrays):
        return _Torch(torch)
    kinds = ", ".join(type(a).__name__ for a in arrays)
    raise TypeError(f"expected numpy arrays or torch tensors (not a mix), got {kinds}")


def _positive_mask(xp: _Numpy | _Torch, positives: Sequence[np.ndarray], like: Matrix) -> Matrix:
    """[len(positives), gallery] booleans, True at each query's positive gallery rows."""
    mask = xp.bool_zeros(tuple(like.shape), like)
    lengths = [len(p) for p in positives]
    if sum(lengths):
        rows = np.repeat(np.arange(len(positives), dtype=np.int64), lengths)
        cols = np.concatenate([np.asarray(p, dtype=np.int64) for p in positives])
        mask[xp.index(rows, like), xp.index(cols, like)] = True
    return mask


def first_positive_ranks(
    queries: Matrix,
    gallery: Matrix,
    positives: Sequence[np.ndarray],
    chunk_size: int = 1024,
    exclude: np.ndarray | None = None,
) -> np.ndarray:
    """1-based rank of each query's best-scored positive in the gallery, by dot product.

    Queries and gallery are both numpy arrays (computed with numpy) or both torch tensors (with
    torch, on their device), ranked in chunks of `chunk_size` queries. Ties are pessimistic: a
    non-positive scoring equal to the best positive ranks above it (the same rule as BISON's 'a tie
    counts as wrong'). A query without positives is an error. With `exclude`, gallery row
    exclude[q] is left out of query q's gallery (the query itself, when both are one set of items).
    """
    if len(positives) != len(queries):
        raise ValueError(f"{len(positives)} positive sets for {len(queries)} queries")
    empty = [i for i, p in enumerate(positives) if len(p) == 0]
    if empty:
        raise ValueError(f"queries at rows {empty[:5]} have no positive in the gallery")
    if exclude is not None and len(exclude) != len(queries):
        raise ValueError(f"{len(exclude)} excluded gallery rows for {len(queries)} queries")
    xp = _backend(queries, gallery)
    ranks = np.empty(len(queries), dtype=np.int64)
    for start in range(0, len(queries), chunk_size):
        stop = min(start + chunk_size, len(queries))
        sims = dots(queries[start:stop], gallery)
        if exclude is not None:
            own = np.asarray(exclude[start:stop], dtype=np.int64)
            sims[xp.index(np.arange(stop - start, dtype=np.int64), sims), xp.index(own, sims)] = float("-inf")
        if isinstance(xp, _Numpy):
            ranks[start:stop] = _ranks_from_positive_scores(sims, positives[start:stop]) + 1
            continue
        mask = _positive_mask(xp, positives[start:stop], sims)
        best = xp.row_max(xp.fill_outside(sims, mask, float("-inf")))
        above = xp.row_count((sims >= best[:, None]) & ~mask)
        ranks[start:stop] = xp.to_numpy(above) + 1
    return ranks


def _ranks_from_positive_scores(sims: np.ndarray, positives: Sequence[np.ndarray]) -> np.ndarray:
    """Per row of `sims`, how many non-positive columns score at least its best positive: the masked count of
    `first_positive_ranks`, from the positives' own entries of `sims` (all columns at or above the best, less
    the positives among them) instead of a mask and a masked copy of the whole matrix."""
    n_rows, n_cols = sims.shape
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), [len(p) for p in positives])
    cols = np.concatenate([np.asarray(p, dtype=np.int64).ravel() for p in positives])
    if cols.min() < 0 or cols.max() >= n_cols:
        raise ValueError(f"positive gallery rows must lie in 0..{n_cols - 1}, got {int(cols.min())}..{int(cols.max())}")
    keys = np.unique(rows * n_cols + cols)  # a positive listed twice counts once, as in the mask
    rows, cols = keys // n_cols, keys % n_cols
    starts = np.searchsorted(rows, np.arange(n_rows))
    values = sims[rows, cols]
    best = np.maximum.reduceat(values, starts)
    at_or_above = (sims >= best[:, None]).sum(axis=1)
    positives_at_or_above = np.add.reduceat((values >= best[rows]).astype(np.int64), starts)
    return (at_or_above - positives_at_or_above).astype(np.int64)


def first_k_best(x: np.ndarray, k: int, excluded: np.ndarray | None = None) -> list[np.ndarray]:
    """Per row of `x`, the columns of its `k` best scores not `excluded`, best first, ties by lower column.

    Exactly `order[~excluded[r][order]][:k]` with `order = np.argsort(-x[r], kind="stable")` (fewer than
    `k` where fewer are allowed), without sorting whole rows: only the columns at or above a row's k-th
    best allowed score can be among its first k, and only they are sorted. A matrix with a NaN (which a
    full sort puts last) is sorted whole.
    """
    n_rows, n_cols = x.shape
    if n_rows == 0 or n_cols == 0 or k <= 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(n_rows)]
    if np.isnan(np.min(x)):  # min propagates a NaN: one pass, no mask
        excluded = np.zeros(x.shape, dtype=bool) if excluded is None else excluded
        order = np.argsort(-x, axis=1, kind="stable")
        return [order[r][~excluded[r][order[r]]][:k] for r in range(n_rows)]
    kk = min(k, n_cols)
    allowed = x if excluded is None else np.where(excluded, -np.inf, x)
    kth = np.partition(allowed, n_cols - kk, axis=1)[:, n_cols - kk]  # each row's kk-th best allowed score
    keep = allowed >= kth[:, None]
    if excluded is not None:
        keep &= ~excluded
    rows, cols = np.nonzero(keep)
    order = np.lexsort((cols, -x[rows, cols], rows))
    rows, cols = rows[order], cols[order].astype(np.int64)
    starts = np.searchsorted(rows, np.arange(n_rows + 1))
    return [cols[starts[r] : min(starts[r] + k, starts[r + 1])] for r in range(n_rows)]


def top_k(queries: Matrix, gallery: Matrix, k: int, chunk_size: int = 1024) -> np.ndarray:
    """Indices [Q, k] of each query's k best gallery items, best first (ties by lower index).

    numpy arrays are ranked with numpy (`first_k_best`: no row sorted whole), torch tensors with torch
    on their device (a stable sort of each row), in query chunks.
    """
    xp = _backend(queries, gallery)
    k = min(k, gallery.shape[0])
    out = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), chunk_size):
        sims = dots(queries[start : start + chunk_size], gallery)
        out[start : start + len(sims)] = xp.to_numpy(xp.best_k(sims, k))
    return out


def positive_lists(
    query_ids: np.ndarray, gallery_ids: np.ndarray, pairs: pd.DataFrame, query_col: str, gallery_col: str
) -> list[np.ndarray]:
    """For each query id, the sorted, distinct gallery row indices of its positives (vectorised)."""
    q_rows = pd.Index(query_ids).get_indexer(pairs[query_col].to_numpy())
    g_rows = pd.Index(gallery_ids).get_indexer(pairs[gallery_col].to_numpy())
    keep = (q_rows >= 0) & (g_rows >= 0)
    q_rows, g_rows = q_rows[keep], g_rows[keep]
    order = np.lexsort((g_rows, q_rows))
    q_rows, g_rows = q_rows[order], g_rows[order]
    bounds = np.searchsorted(q_rows, np.arange(len(query_ids) + 1))
    return [np.unique(g_rows[bounds[i] : bounds[i + 1]]).astype(np.int64) for i in range(len(query_ids))]


def score_retrieval(
    items: pd.DataFrame,
    positives: pd.DataFrame,
    cache: EmbeddingCache,
    chunk_size: int = 1024,
    ranked: Sequence[str] = ("i2t", "t2i"),
) -> pd.DataFrame:
    """Per-query first-positive ranks for i2t and t2i under every positive set of the benchmark. A direction not
    in `ranked` keeps its rows with rank -1 (a re-ranking grid's other direction, which `pairs.by_direction`
    drops)."""
    image_ids = items.loc[items["kind"] == "image", "item_id"].to_numpy(dtype=np.int64)
    caption_ids = items.loc[items["kind"] == "caption", "item_id"].to_numpy(dtype=np.int64)
    img, cap = cache.get("image", image_ids), cache.get("caption", caption_ids)
    frames = []
    for positive_set in sorted(positives["positive_set"].unique()):
        pairs = positives[positives["positive_set"] == positive_set]
        for direction, q_ids, g_ids, q_emb, g_emb, q_col, g_col in (
            ("i2t", image_ids, caption_ids, img, cap, "image_id", "caption_id"),
            ("t2i", caption_ids, image_ids, cap, img, "caption_id", "image_id"),
        ):
            pos = positive_lists(q_ids, g_ids, pairs, q_col, g_col)
            if direction in ranked:
                ranks = first_positive_ranks(q_emb, g_emb, pos, chunk_size)
            else:
                ranks = np.full(len(q_ids), -1, dtype=np.int64)
            frames.append(
                pd.DataFrame(
                    {
                        "direction": direction,
                        "positive_set": positive_set,
                        "query_id": q_ids,
                        "n_positives": np.array([len(p) for p in pos], dtype=np.int64),
                        "rank": ranks,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
