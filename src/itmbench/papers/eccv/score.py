"""ECCV Caption's scoring: per-query rankings of a dual encoder or a cross scorer, and the metrics.

Scoring (dual encoder): every item of the split is a query; its top-K gallery ids by dot product
(scoring.retrieval.top_k, ties by lower gallery position, K = the largest positive count or PM depth
needed, at least 10) give per-query R@1/5/10, R-Precision and mAP@R on the ECCV positives (ECCV
queries only), R@K on the original and CxC positives (all queries: COCO 5K and CxC R@K), and PMRP.
summarize reports each per direction and as the mean of i2t and t2i, x100 as the paper prints them,
with percentile-bootstrap intervals over queries (each direction resampled on its own).

COCO 1K (`coco_1k_folds`): the papers split the 5K test gallery into 5 folds of 1,000 images, each
with its 5,000 captions (consecutive caption ids of coco_test_ids.npy, five per image), rank each
query within its fold against the original positives and average the folds. Here the fold of a
caption is that of its image (its original t2i positive); images are ordered by the first appearance
of their captions in the items table (the world: caption id order; COCO: coco_test_ids.npy order) and
cut into COCO_1K_FOLDS consecutive chunks of equal size (np.array_split: sizes differ by at most one
image when the split does not divide by 5). A fold is therefore a fifth of the split, which is 1K only
on COCO's 5K: the world's 500-image test split gives folds of 100 images and 500 captions. Per query
coco_1k_r{k} is the hit in the top k of its fold; the mean over queries equals the mean of the fold
means when the folds are equal. RSUM = the sum of COCO 1K R@1, R@5, R@10 of both directions (the
paper's Table 4), i.e. 2 x the mean of directions of coco_1k_rsum_part = r1 + r5 + r10 per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.metrics.ranking import map_at_r_batch, pmrp_batch, r_precision_batch, recall_at_k_batch
from itmbench.papers.eccv.canonical import GALLERY_KIND, I2T, PM_TABLES, QUERY_KIND, SHORT, T2I
from itmbench.papers.eccv.released import DIRECTIONS, SOURCES
from itmbench.scoring.embed import EmbeddingCache
from itmbench.scoring.pairs import PairScores, Shortlist, items_grid, rerank_caches, shortlist_pairs
from itmbench.scoring.retrieval import gathered_dots, top_k

PMRP_SKIPPED_NOTE = "pmrp not computed: the benchmark has no plausible-match tables (pm_vectors, pm_positives)"
METRIC_COLUMNS = ("r1", "r5", "r10")
COCO_1K_FOLDS = 5
RSUM_KS = (1, 5, 10)


def coco_1k_folds(tables: dict[str, pd.DataFrame], n_folds: int = COCO_1K_FOLDS) -> tuple[pd.Series, pd.Series]:
    """The COCO 1K fold (0..n_folds-1) of every image and caption of the split (see the module docstring).

    Images in order of their captions' first appearance in the items table (images without a caption
    last, in items order), cut into n_folds consecutive chunks; a caption takes its image's fold, and a
    caption with no original image gets -1 (it is no 1K query).
    """
    items, pos = tables["items"], tables["positives"]
    image_ids = items.loc[items["kind"] == "image", "item_id"].to_numpy(dtype=np.int64)
    caption_ids = items.loc[items["kind"] == "caption", "item_id"].to_numpy(dtype=np.int64)
    if len(image_ids) < n_folds:
        raise ValueError(f"eccv items: {len(image_ids)} images; COCO 1K needs at least {n_folds} (one per fold)")
    own = pos[(pos["source"] == "original") & (pos["direction"] == T2I)]
    own = own[own["caption_id"].isin(caption_ids) & own["image_id"].isin(image_ids)]
    image_of = own.drop_duplicates("caption_id").set_index("caption_id")["image_id"]
    order = pd.unique(pd.concat([image_of.reindex(caption_ids).dropna().astype(np.int64), pd.Series(image_ids)]))
    image_fold = pd.Series(0, index=pd.Index(order, dtype=np.int64), dtype=np.int64)
    for f, chunk in enumerate(np.array_split(np.asarray(order, dtype=np.int64), n_folds)):
        image_fold.loc[chunk] = f
    caption_fold = image_of.reindex(caption_ids).map(image_fold).fillna(-1).astype(np.int64)
    return image_fold.reindex(image_ids), caption_fold


def _coco_1k_recalls(
    emb_q: np.ndarray,
    emb_g: np.ndarray,
    q_fold: np.ndarray,
    g_fold: np.ndarray,
    g_ids: np.ndarray,
    positives: list[np.ndarray],
    ks: Sequence[int],
    chunk_size: int,
) -> dict[int, np.ndarray]:
    """Per query, the hit in the top k of its own fold's gallery (NaN for a query outside every fold)."""
    out = {k: np.full(len(emb_q), np.nan) for k in ks}
    for f in np.unique(q_fold[q_fold >= 0]):
        q_rows, g_rows = np.flatnonzero(q_fold == f), np.flatnonzero(g_fold == f)
        ranked = g_ids[g_rows][top_k(emb_q[q_rows], emb_g[g_rows], max(ks), chunk_size)]
        fold_pos = [positives[r] for r in q_rows]
        for k in ks:
            out[k][q_rows] = recall_at_k_batch(ranked, fold_pos, k)
    return out


def _aligned_positives(pairs: pd.DataFrame, direction: str, query_ids: np.ndarray) -> list[np.ndarray]:
    """For each query id, its positive gallery ids in the pairs' order (empty where none)."""
    qcol, tcol = ("image_id", "caption_id") if direction == I2T else ("caption_id", "image_id")
    q = pairs[qcol].to_numpy(dtype=np.int64)
    order = np.argsort(q, kind="stable")  # a query's pairs stay in their order
    q, t = q[order], pairs[tcol].to_numpy(dtype=np.int64)[order]
    starts = np.flatnonzero(np.diff(q, prepend=q[:1] - 1))  # each query's first pair (np.unique would sort again)
    keys = q[starts]
    ends = np.append(starts[1:], len(q))
    at = np.searchsorted(keys, np.asarray(query_ids, dtype=np.int64))
    empty = np.empty(0, dtype=np.int64)
    out = []
    for query, i in zip(query_ids, at):
        out.append(t[starts[i] : ends[i]] if i < len(keys) and keys[i] == query else empty)
    return out


def _pairs_where(table: pd.DataFrame, **equal: str) -> pd.DataFrame:
    """The (image_id, caption_id) columns of the rows whose named columns equal the given values (the id columns
    alone: taking the string columns too costs more than the filtering, on ECCV's millions of PM pairs)."""
    mask = np.ones(len(table), dtype=bool)
    for column, value in equal.items():
        mask &= (table[column] == value).to_numpy(dtype=bool)
    return table.loc[mask, ["image_id", "caption_id"]]


def score_dual(
    tables: dict[str, pd.DataFrame],
    cache: EmbeddingCache,
    ks: Sequence[int] = (1, 5, 10),
    chunk_size: int = 1024,
    directions: Sequence[str] = DIRECTIONS,
) -> pd.DataFrame:
    """Per-query top-K rankings of a dual encoder and their per-query ECCV, COCO 5K, CxC and PMRP values
    (the queries of `directions`, in that order).

    One row per (direction, query) over every item of the split: ranked_ids / ranked_scores (the
    top-K gallery ids and their dot products, best first), then per source s in eccv, original, cxc
    the positive count n_s and s_r{k} (hit in the top k), and for eccv also eccv_r_precision and
    eccv_map_at_r; n_pm, pm_depth and pmrp (only when the benchmark has its PM tables). A value is NaN
    where the query has no positive of that source (non-ECCV queries, or no CxC table).
    """
    items, pos = tables["items"], tables["positives"]
    ids = {
        "image": items.loc[items["kind"] == "image", "item_id"].to_numpy(dtype=np.int64),
        "caption": items.loc[items["kind"] == "caption", "item_id"].to_numpy(dtype=np.int64),
    }
    emb = {kind: cache.get(kind, v).astype(np.float32, copy=False) for kind, v in ids.items()}
    has_pm = all(t in tables for t in PM_TABLES)
    ks = tuple(int(k) for k in ks)
    k1 = tuple(sorted(set(ks) | set(RSUM_KS)))
    image_fold, caption_fold = coco_1k_folds(tables)
    fold_of = {"image": image_fold.to_numpy(), "caption": caption_fold.to_numpy()}
    frames = []
    for direction in directions:
        q_kind, g_kind = QUERY_KIND[direction], GALLERY_KIND[direction]
        q_ids, g_ids = ids[q_kind], ids[g_kind]
        eccv_queries = set(tables["queries"].loc[tables["queries"]["direction"] == direction, "query_id"].tolist())
        sources = {
            s: _aligned_positives(_pairs_where(pos, source=s, direction=direction), direction, q_ids) for s in SOURCES
        }
        if has_pm:
            pm_pos, n_pm, depth = _pm_depths(tables, direction, q_kind, q_ids)
        else:
            pm_pos, n_pm, depth = [], np.zeros(len(q_ids), dtype=np.int64), np.zeros(len(q_ids), dtype=np.int64)
        need = max(
            max(ks),
            int(depth.max(initial=0)),
            max((len(p) for p in sources["eccv"]), default=0),
        )
        k = min(need, len(g_ids))
        top = top_k(emb[q_kind], emb[g_kind], k, chunk_size)
        ranked = g_ids[top]
        scores = np.empty(top.shape, dtype=np.float32)
        g_emb = emb[g_kind]
        for start in range(0, len(q_ids), chunk_size):
            q = emb[q_kind][start : start + chunk_size]
            scores[start : start + len(q)] = gathered_dots(q, g_emb, top[start : start + chunk_size])
        row: dict[str, Any] = {
            "direction": direction,
            "query_id": q_ids,
            "eccv_query": np.isin(q_ids, list(eccv_queries)),
            "ranked_ids": list(ranked),
            "ranked_scores": list(scores),
        }
        for s in SOURCES:
            p = sources[s]
            row[f"n_{s}"] = np.array([len(x) for x in p], dtype=np.int64)
            for kk in ks:
                row[f"{s}_r{kk}"] = recall_at_k_batch(ranked, p, kk)
            if s == "eccv":
                row["eccv_r_precision"] = r_precision_batch(ranked, p)
                row["eccv_map_at_r"] = map_at_r_batch(ranked, p)
        coco_1k = _coco_1k_recalls(
            emb[q_kind], emb[g_kind], fold_of[q_kind], fold_of[g_kind], g_ids, sources["original"], k1, chunk_size
        )
        row["coco_1k_fold"] = fold_of[q_kind]
        for kk in ks:
            row[f"coco_1k_r{kk}"] = coco_1k[kk]
        row["coco_1k_rsum_part"] = sum(coco_1k[kk] for kk in RSUM_KS)
        if has_pm:
            row["n_pm"] = n_pm
            row["pm_depth"] = depth
            # a gallery smaller than a query's depth counts the hits it has (a lower bound), as a short top-K
            row["pmrp"] = pmrp_batch(ranked, pm_pos, depth=depth, strict=False)
        frames.append(pd.DataFrame(row))
    return pd.concat(frames, ignore_index=True)


def _pm_depths(
    tables: dict[str, pd.DataFrame], direction: str, q_kind: str, q_ids: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Each query's PM positives, PM count and capped PMRP depth, checked against pm_vectors."""
    pm_pairs, pm_vec = tables["pm_positives"], tables["pm_vectors"]
    pm_pos = _aligned_positives(_pairs_where(pm_pairs, direction=direction), direction, q_ids)
    pv = pm_vec[pm_vec["kind"] == q_kind].set_index("item_id")
    missing = [int(q) for q in q_ids if int(q) not in pv.index]
    if missing:
        raise ValueError(f"eccv pm_vectors: no {q_kind} rows for ids {missing[:5]}; expected one per item")
    depth = pv.loc[q_ids, "pm_depth"].to_numpy(dtype=np.int64)
    n_pm = np.array([len(p) for p in pm_pos], dtype=np.int64)
    if not np.array_equal(n_pm, pv.loc[q_ids, "n_pm_positives"].to_numpy(dtype=np.int64)):
        raise ValueError(f"eccv tables: pm_positives and pm_vectors disagree on PM counts ({direction})")
    return pm_pos, n_pm, depth


def pairs_needed(tables: dict[str, pd.DataFrame], shortlist: Shortlist | None = None) -> pd.DataFrame:
    """The pairs a cross scorer must score: every caption with every image of the split (a gallery),
    or, with a shortlist, each query's top-k by the shortlist model."""
    if shortlist is not None:
        return shortlist_pairs(tables["items"], shortlist)
    return items_grid(tables["items"])


def score_pairs(
    tables: dict[str, pd.DataFrame],
    pairs: PairScores,
    ks: Sequence[int] = (1, 5, 10),
    shortlist: Shortlist | None = None,
) -> pd.DataFrame:
    """The per-query table of `score_dual`, from a cross scorer's scores of the full grid, or of the
    shortlist it re-ranks (then ranks past k follow the shortlist model)."""
    items = tables["items"]
    if shortlist is not None:
        grids = rerank_caches(items, pairs, shortlist)  # each direction's queries ranked on their own grid
        frames = [score_dual(tables, grids[SHORT[d]], ks, directions=(d,)) for d in DIRECTIONS]
        return pd.concat(frames, ignore_index=True)
    grid = pairs.as_cache(
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
    )
    return score_dual(tables, grid, ks)


def _metric_columns(scores: pd.DataFrame) -> list[str]:
    """The per-query metric columns of a scores table, in a stable order."""
    out = []
    for s in SOURCES:
        out += sorted(
            (c for c in scores.columns if c.startswith(f"{s}_r") and c[len(s) + 2 :].isdigit()),
            key=lambda c: int(c[len(s) + 2 :]),
        )
        if s == "eccv":
            out += [c for c in ("eccv_r_precision", "eccv_map_at_r") if c in scores.columns]
    out += sorted(
        (c for c in scores.columns if c.startswith("coco_1k_r") and c[len("coco_1k_r") :].isdigit()),
        key=lambda c: int(c[len("coco_1k_r") :]),
    )
    if "coco_1k_rsum_part" in scores.columns:
        out.append("coco_1k_rsum_part")
    if "pmrp" in scores.columns:
        out.append("pmrp")
    return out


class _Draws:
    """The resampling indices `_bootstrap_means` draws for groups of given lengths (a generator seeded afresh per
    call, each group's draws in turn), drawn once per lengths and kept: the columns of one direction share
    their lengths, so `summarize` draws a few times instead of three times per column, with the same indices."""

    def __init__(self, n_boot: int, seed: int) -> None:
        self.n_boot, self.seed = n_boot, seed
        self._kept: dict[tuple[int, ...], list[np.ndarray]] = {}

    def __call__(self, lengths: tuple[int, ...]) -> list[np.ndarray]:
        if lengths not in self._kept:
            rng = np.random.default_rng(self.seed)
            # int32 halves the memory of the kept draws; the indices, and so the means, are the same
            self._kept[lengths] = [
                rng.integers(0, n, size=(self.n_boot, n)).astype(np.int32, copy=False) for n in lengths
            ]
        return self._kept[lengths]


def _bootstrap_means(groups: list[np.ndarray], draws: _Draws, confidence: float) -> tuple[float, float]:
    """Percentile interval of the mean of group means, each group resampled on its own (`draws`' seeded indices)."""
    n_boot = draws.n_boot
    boots = np.zeros(n_boot, dtype=np.float64)
    for g, idx in zip(groups, draws(tuple(len(g) for g in groups))):
        for start in range(0, n_boot, 64):  # each replicate's mean on its own: chunks only spare memory
            boots[start : start + 64] += g[idx[start : start + 64]].mean(axis=1)
    boots /= len(groups)
    lo, hi = np.percentile(boots, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """ECCV metrics (%) per direction and as the mean of i2t and t2i, with bootstrap intervals over queries.

    Names: <column>_i2t, <column>_t2i and <column> (the mean), for the columns eccv_r1/5/10,
    eccv_r_precision, eccv_map_at_r (ECCV queries), original_r* (COCO 5K), cxc_r* (when present),
    coco_1k_r* (COCO 1K folds) and pmrp (every query); coco_1k_rsum is RSUM (the six COCO 1K recalls
    summed, 0-600, its interval from the same bootstrap). A metric with no values in one direction is
    left out.
    """
    missing = [c for c in ("direction", "query_id") if c not in scores.columns]
    if missing:
        raise ValueError(f"ECCV scores: missing columns {missing}; expected the table score_dual writes")
    metrics: dict[str, dict[str, Any]] = {}
    draws = _Draws(n_boot, seed)
    for col in _metric_columns(scores):
        groups = []
        for direction in DIRECTIONS:
            v = scores.loc[scores["direction"] == direction, col].to_numpy(dtype=np.float64)
            groups.append(v[~np.isnan(v)])
        if any(len(g) == 0 for g in groups):
            continue
        for direction, g in zip(DIRECTIONS, groups):
            lo, hi = _bootstrap_means([g], draws, confidence)
            metrics[f"{col}_{SHORT[direction]}"] = {
                "value": 100 * float(g.mean()),
                "lo": 100 * lo,
                "hi": 100 * hi,
                "n": int(len(g)),
            }
        lo, hi = _bootstrap_means(groups, draws, confidence)
        metrics[col] = {
            "value": 100 * float(np.mean([g.mean() for g in groups])),
            "lo": 100 * lo,
            "hi": 100 * hi,
            "n": int(sum(len(g) for g in groups)),
        }
    part = metrics.pop("coco_1k_rsum_part", None)
    if part is not None:  # RSUM: the six recalls summed = 2 x the mean of directions of r1 + r5 + r10
        for short in SHORT.values():
            metrics.pop(f"coco_1k_rsum_part_{short}", None)
        metrics["coco_1k_rsum"] = {k: 2 * v if k != "n" else v for k, v in part.items()}
    n_queries = {
        SHORT[d]: int(scores.loc[(scores["direction"] == d) & scores.get("eccv_query", False), "query_id"].size)
        for d in DIRECTIONS
    }
    notes = {} if "pmrp" in scores.columns else {"notes": [PMRP_SKIPPED_NOTE]}
    return {
        **notes,
        "metrics": metrics,
        "eccv_queries": n_queries,
        "interval": "percentile bootstrap over queries (directions resampled separately)",
        "confidence": confidence,
        "n_boot": n_boot,
        "seed": seed,
        "percent": True,
        "mean_of_directions": "value = (i2t + t2i) / 2, as the paper's Table 4",
    }


# The per-query metrics a paired test over the same queries compares (`itmbench.papers.paired.gallery_records`) and
# the ranking correlations rank (`itmbench.papers.eccv.rank_tau`): the Table 4 / Table 5 columns with a per-query value.
GALLERY_METRICS: tuple[str, ...] = (
    "coco_1k_r1",
    "original_r1",
    "cxc_r1",
    "eccv_r1",
    "eccv_r_precision",
    "eccv_map_at_r",
    "pmrp",
)


def query_values(scores: pd.DataFrame, metrics: Sequence[str] = GALLERY_METRICS) -> pd.DataFrame:
    """The per-query metrics (x100) indexed by (direction, query_id), NaN where a metric does not apply (the
    ECCV metrics outside the ECCV queries): the frame `itmbench.papers.paired.query_bootstrap_means` resamples,
    each direction on its own, a metric the mean of its directions as `summarize` computes it."""
    missing = [c for c in ("direction", "query_id") if c not in scores.columns]
    if missing:
        raise ValueError(f"ECCV scores: missing columns {missing}; expected the table score_dual writes")
    present = [m for m in metrics if m in scores.columns]
    frame = scores.set_index(["direction", "query_id"])[present].astype(np.float64) * 100.0
    if frame.index.has_duplicates:
        raise ValueError("ECCV scores: a (direction, query_id) appears twice; expected one row per query")
    return frame.sort_index()
