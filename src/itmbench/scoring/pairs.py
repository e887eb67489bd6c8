"""Pair scores: s(caption, image) for the pairs a benchmark asks for, from a cross scorer or from embeddings.

A cross scorer (the captioner's log-likelihood, MCIC's FFNN) cannot give item embeddings; it
scores pairs. Each benchmark's `score` module lists the pairs its per-instance scores need
(`pairs_needed(tables)`), the scorer scores exactly those (a parquet of caption_id, image_id,
score), and the benchmark builds the same per-instance score table from them as from
embeddings (`score_pairs`), so that one metrics path serves both kinds of model.

The gallery benchmarks (retrieval, ECCV, CxC) rank every caption against every image. Their
pair list is the full grid, and `PairScores.as_cache` turns the grid into an embedding cache whose
dot products are the pair scores exactly: image k's "embedding" is the k-th unit vector, a
caption's is its row of scores. The benchmarks' own ranking code then runs unchanged on
image-text tasks (their image-image and text-text tasks need real embeddings).

Scoring every pair of a gallery is what a cross scorer costs most: 1.25M pairs per world gallery,
125M for COCO 5K. The field's practice (ALBEF, BLIP: ITM re-ranks the ITC top-k) is a shortlist:
a dual encoder's top-k per query, re-ranked by the cross scorer (`Shortlist`). Then
`shortlist_pairs` is the pair list (the union of the i2t and t2i shortlists), and `rerank_caches`
gives one grid per direction in which the query's shortlisted items carry the cross scorer's
scores and rank above every other item, and the others keep the dual encoder's order. Ranks
1..k are the cross scorer's; deeper ranks (median rank, R-Precision and mAP@R with more than k
positives, PMRP) are the shortlist model's order below them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_parquet
from itmbench.reading import read_parquet_file
from itmbench.scoring.embed import EmbeddingCache, OneHot
from itmbench.scoring.retrieval import top_k

PAIR_COLUMNS = ("caption_id", "image_id")
SCORE_COLUMNS = ("caption_id", "image_id", "score")


def pair_frame(caption_ids: np.ndarray, image_ids: np.ndarray) -> pd.DataFrame:
    """Distinct (caption_id, image_id) pairs, sorted: the canonical pair list."""
    frame = pd.DataFrame(
        {"caption_id": np.asarray(caption_ids, dtype=np.int64), "image_id": np.asarray(image_ids, dtype=np.int64)}
    )
    return frame.drop_duplicates().sort_values(["caption_id", "image_id"], kind="stable").reset_index(drop=True)


def union_pairs(needed: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """The pairs any of several pair lists holds, each once: the canonical pair list of their union."""
    if not needed:
        raise ValueError("union_pairs: no pair list; expected at least one")
    table = pd.concat([frame[list(PAIR_COLUMNS)] for frame in needed], ignore_index=True)
    return pair_frame(table["caption_id"].to_numpy(), table["image_id"].to_numpy())


def grid_pairs(caption_ids: np.ndarray, image_ids: np.ndarray) -> pd.DataFrame:
    """Every caption with every image (a gallery benchmark's pairs)."""
    c = np.unique(np.asarray(caption_ids, dtype=np.int64))
    i = np.unique(np.asarray(image_ids, dtype=np.int64))
    return pd.DataFrame({"caption_id": np.repeat(c, len(i)), "image_id": np.tile(i, len(c))})


def items_grid(items: pd.DataFrame) -> pd.DataFrame:
    """The full caption x image grid of an items table (kind, item_id)."""
    return grid_pairs(
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
    )


def write_pair_scores(path: str | Path, pairs: pd.DataFrame, scores: np.ndarray) -> None:
    """Write (caption_id, image_id, score) atomically."""
    out = pairs[list(PAIR_COLUMNS)].reset_index(drop=True).copy()
    out["score"] = np.asarray(scores, dtype=np.float64)
    write_parquet(path, out)


class PairScores:
    """Read side of pair-score files: s(caption, image) by id pair, naming the first pair a file lacks."""

    def __init__(self, paths: str | Path | Sequence[str | Path]) -> None:
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        if not paths:
            raise ValueError("PairScores needs at least one pair-score file")
        self.path = ", ".join(map(str, paths))
        frames = []
        for p in paths:
            frame = read_parquet_file(p)
            missing = [c for c in SCORE_COLUMNS if c not in frame.columns]
            if missing:
                raise ValueError(f"{p}: missing columns {missing}; expected {list(SCORE_COLUMNS)}")
            frames.append(frame[list(SCORE_COLUMNS)])
        table = pd.concat(frames, ignore_index=True)
        if table[list(PAIR_COLUMNS)].duplicated().any():
            dup = table[table[list(PAIR_COLUMNS)].duplicated()].iloc[0]
            raise ValueError(f"{self.path}: pair ({int(dup['caption_id'])}, {int(dup['image_id'])}) scored twice")
        self.index = pd.MultiIndex.from_arrays(
            [table["caption_id"].to_numpy(np.int64), table["image_id"].to_numpy(np.int64)]
        )
        self.values = table["score"].to_numpy(np.float64)

    def __len__(self) -> int:
        return len(self.values)

    def get(self, caption_ids: np.ndarray, image_ids: np.ndarray) -> np.ndarray:
        """Scores of the pairs (caption_ids[k], image_ids[k]), float64."""
        caption_ids, image_ids = np.asarray(caption_ids, np.int64), np.asarray(image_ids, np.int64)
        if len(caption_ids) == 0:
            return np.zeros(0, dtype=np.float64)
        rows = self.index.get_indexer(pd.MultiIndex.from_arrays([caption_ids, image_ids]))
        if (rows < 0).any():
            k = int(np.flatnonzero(rows < 0)[0])
            raise KeyError(
                f"{self.path}: no score for (caption {int(caption_ids[k])}, image {int(image_ids[k])}) "
                f"({int((rows < 0).sum())} pairs missing; is the pair-score file stale?)"
            )
        return self.values[rows]

    def as_cache(self, caption_ids: np.ndarray, image_ids: np.ndarray) -> GridCache:
        """An embedding cache over these items whose caption-image dot products are the pair scores."""
        c = np.unique(np.asarray(caption_ids, np.int64))
        i = np.unique(np.asarray(image_ids, np.int64))
        grid = self.get(np.repeat(c, len(i)), np.tile(i, len(c))).reshape(len(c), len(i))
        return GridCache(c, i, grid, self.path)


class GridCache(EmbeddingCache):
    """Pair scores as embeddings: image k is the k-th unit vector, a caption its row of scores (exact dots)."""

    def __init__(self, caption_ids: np.ndarray, image_ids: np.ndarray, grid: np.ndarray, path: str) -> None:
        self.path = Path(path)
        self.emb = {"caption": grid.astype(np.float64, copy=False), "image": OneHot.identity(len(image_ids))}
        self.row = {
            "caption": {int(v): r for r, v in enumerate(caption_ids)},
            "image": {int(v): r for r, v in enumerate(image_ids)},
        }

    def modalities(self) -> frozenset[str]:
        """Only caption-image dot products mean anything here."""
        return frozenset({"image-text"})


# --- shortlist re-ranking on the gallery benchmarks ------------------------------------------------

DIRECTIONS = ("i2t", "t2i")


@dataclass(frozen=True)
class Shortlist:
    """A dual encoder's top-k per query: the candidates a cross scorer re-ranks on a gallery benchmark."""

    cache: EmbeddingCache
    k: int

    def __post_init__(self) -> None:
        if int(self.k) < 1:
            raise ValueError(f"shortlist k: {self.k}; expected a positive number of candidates per query")
        if "image-text" not in self.cache.modalities():
            raise ValueError(
                f"{self.cache.path}: a shortlist needs image and caption embeddings (a dual encoder's cache)"
            )


def gallery_ids(items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """A gallery benchmark's caption ids and image ids, sorted (the grids' row and column order)."""
    return (
        np.unique(items.loc[items["kind"] == "caption", "item_id"].to_numpy(np.int64)),
        np.unique(items.loc[items["kind"] == "image", "item_id"].to_numpy(np.int64)),
    )


def _dual_grid(caption_ids: np.ndarray, image_ids: np.ndarray, cache: EmbeddingCache) -> tuple[np.ndarray, np.ndarray]:
    """The shortlist model's caption and image embeddings, float32 as every ranking here."""
    return (
        cache.get("caption", caption_ids).astype(np.float32, copy=False),
        cache.get("image", image_ids).astype(np.float32, copy=False),
    )


def shortlist_masks(caption_ids: np.ndarray, image_ids: np.ndarray, shortlist: Shortlist) -> dict[str, np.ndarray]:
    """Per direction, a [captions, images] mask of the shortlisted pairs: each image's top-k captions
    (i2t) and each caption's top-k images (t2i), by the shortlist model, ties by lower id."""
    cap, img = _dual_grid(caption_ids, image_ids, shortlist.cache)
    masks = {d: np.zeros((len(caption_ids), len(image_ids)), dtype=bool) for d in DIRECTIONS}
    top = top_k(img, cap, shortlist.k)  # [images, k] caption rows
    masks["i2t"][top, np.arange(len(image_ids))[:, None]] = True
    top = top_k(cap, img, shortlist.k)  # [captions, k] image rows
    masks["t2i"][np.arange(len(caption_ids))[:, None], top] = True
    return masks


def shortlist_pairs(items: pd.DataFrame, shortlist: Shortlist) -> pd.DataFrame:
    """The pairs a cross scorer re-ranks on a gallery: the union of the i2t and t2i shortlists."""
    c, i = gallery_ids(items)
    masks = shortlist_masks(c, i, shortlist)
    rows, cols = np.nonzero(masks["i2t"] | masks["t2i"])
    return pair_frame(c[rows], i[cols])


def rerank_caches(items: pd.DataFrame, pairs: PairScores, shortlist: Shortlist) -> dict[str, GridCache]:
    """Per direction, a grid whose ranking is the cross scorer's over each query's shortlist, then the
    shortlist model's order: shortlisted pairs carry their pair scores; every other pair its dual
    score shifted below the lowest pair score."""
    c, i = gallery_ids(items)
    masks = shortlist_masks(c, i, shortlist)
    cap, img = _dual_grid(c, i, shortlist.cache)
    below = (cap @ img.T).astype(np.float64)
    rows, cols = np.nonzero(masks["i2t"] | masks["t2i"])
    cross = pairs.get(c[rows], i[cols])
    below += cross.min() - 1.0 - below.max()
    out = {}
    for n, d in enumerate(DIRECTIONS):  # the last direction's grid is `below` itself: one grid fewer in memory
        grid = below if n == len(DIRECTIONS) - 1 else below.copy()
        mine = masks[d][rows, cols]
        grid[rows[mine], cols[mine]] = cross[mine]
        out[d] = GridCache(c, i, grid, pairs.path)
    return out


def by_direction(frames: Mapping[str, pd.DataFrame], column: str, t2i: str = "t2i") -> pd.DataFrame:
    """One score table from one table per direction's grid: the rows whose `column` is `t2i` (the
    benchmark's name for text-to-image) from the t2i grid's table, every other row (i2t, and e.g.
    CxC's rated pairs) from the i2t one. The tables must share their row layout."""
    first, second = frames["i2t"], frames["t2i"]
    if len(first) != len(second) or not first[column].reset_index(drop=True).equals(
        second[column].reset_index(drop=True)
    ):
        raise ValueError(
            f"re-ranked score tables differ in their {column!r} layout; expected one row per query in both"
        )
    take = (second[column] == t2i).to_numpy()
    if not take.any():
        raise ValueError(f"re-ranked score tables have no {column}={t2i!r} rows; expected the text-to-image queries")
    return pd.concat([first[~take], second[take]]).sort_index()
