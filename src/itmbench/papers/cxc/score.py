"""CxC's scoring: retrieval ranks and rated-pair similarities of a dual encoder or a cross scorer, and the metrics.

Scoring (`score_dual`, on `score_split`): i2t / t2i with positive sets 'coco' (original pairs) and
'cxc' (original union SITS positives); t2t 'coco' (co-captions) and 'cxc' (STS positives), i2i
'cxc' (SIS positives), the query excluded from its own gallery in t2t and i2i, queries without a
positive left out; first-positive ranks with pessimistic ties. Correlation: the dot product of
every rated pair against agg_score; the bootstrap query is caption1 (STS), image1 (SIS) and the
`sits_query` side of SITS (default image: an image has 5+ rated captions, a caption 1-2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from itmbench.metrics.correlation import spearman_bootstrap
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.metrics.retrieval import retrieval_summary
from itmbench.papers.cxc.canonical import _config_value
from itmbench.papers.cxc.released import ITEM_COLUMNS, TASKS
from itmbench.scoring.embed import EmbeddingCache, row_dots
from itmbench.scoring.pairs import (
    PairScores,
    Shortlist,
    by_direction,
    items_grid,
    pair_frame,
    rerank_caches,
    shortlist_pairs,
)
from itmbench.scoring.retrieval import first_positive_ranks

if TYPE_CHECKING:
    from itmbench.scoring.retrieval import Matrix

SCORE_COLUMNS = [
    "part",
    "task",
    "positive_set",
    "query_id",
    "item_id",
    "n_positives",
    "rank",
    "agg_score",
    "model_score",
]


def first_positive_ranks_excluding(
    queries: Matrix,
    gallery: Matrix,
    positives: list[np.ndarray],
    exclude: np.ndarray,
    chunk_size: int = 1024,
) -> np.ndarray:
    """Like scoring.retrieval.first_positive_ranks, with gallery row exclude[q] removed for query q (t2t, i2i).

    numpy arrays are ranked with numpy, torch tensors with torch on their device (the same code)."""
    if not (len(positives) == len(queries) == len(exclude)):
        raise ValueError(f"{len(positives)} positive sets, {len(exclude)} exclusions for {len(queries)} queries")
    clash = [i for i, p in enumerate(positives) if int(exclude[i]) in set(np.asarray(p).tolist())]
    if clash:
        raise ValueError(f"queries at rows {clash[:5]} list themselves as a positive")
    return first_positive_ranks(queries, gallery, positives, chunk_size, exclude=exclude)


def _positive_lists(
    query_ids: np.ndarray, gallery_ids: np.ndarray, pairs: pd.DataFrame, query_col: str, gallery_col: str
) -> list[np.ndarray]:
    """For each query id, the sorted gallery rows of its positives (vectorised scoring.retrieval.positive_lists)."""
    q = pd.Index(query_ids).get_indexer(pairs[query_col].to_numpy(np.int64))
    g = pd.Index(gallery_ids).get_indexer(pairs[gallery_col].to_numpy(np.int64))
    keep = (q >= 0) & (g >= 0)
    key = np.unique(q[keep].astype(np.int64) * len(gallery_ids) + g[keep])
    rows, cols = key // len(gallery_ids), key % len(gallery_ids)
    counts = np.bincount(rows, minlength=len(query_ids))
    return np.split(cols, np.cumsum(counts)[:-1])


def _symmetric(pairs: pd.DataFrame) -> pd.DataFrame:
    """Both orientations of undirected (a_id, b_id) pairs, deduplicated."""
    both = pd.concat(
        [pairs[["a_id", "b_id"]], pairs.rename(columns={"a_id": "b_id", "b_id": "a_id"})[["a_id", "b_id"]]],
        ignore_index=True,
    )
    return both[both["a_id"] != both["b_id"]].drop_duplicates(ignore_index=True)


def _retrieval_frame(task: str, positive_set: str, query_ids: np.ndarray, pos: list, ranks: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "part": "retrieval",
            "task": task,
            "positive_set": positive_set,
            "query_id": np.asarray(query_ids, dtype=np.int64),
            "item_id": np.full(len(query_ids), -1, dtype=np.int64),
            "n_positives": np.array([len(p) for p in pos], dtype=np.int64),
            "rank": np.asarray(ranks, dtype=np.int64),
            "agg_score": np.nan,
            "model_score": np.nan,
        }
    )


# The modality each task compares: a model is scored on the tasks its embeddings cover.
TASK_MODALITY = {
    "t2t": "text-text",
    "sts": "text-text",
    "i2i": "image-image",
    "sis": "image-image",
    "sits": "image-text",
}


def score_dual(
    tables: dict[str, pd.DataFrame],
    cache: EmbeddingCache,
    chunk_size: int = 1024,
    ranked: Sequence[str] = ("i2t", "t2i"),
) -> pd.DataFrame:
    """Per-instance scores of a dual encoder on the scored split: retrieval ranks and rated-pair similarities.

    Rows with part='retrieval': task i2t/t2i/t2t/i2i, positive_set coco/cxc, query_id, n_positives,
    rank (1-based first positive; item_id -1). Rows with part='correlation': task sts/sis/sits,
    query_id (the bootstrap's query side), item_id (the rated partner), agg_score, model_score (dot
    product; rank -1). An image-text task not in `ranked` keeps its rows with rank -1 (a re-ranking
    grid's other direction, which `pairs.by_direction` drops).
    """
    split = _config_value(tables, "score_split")
    sits_query = _config_value(tables, "sits_query")
    items = tables["items"]
    image_ids = items.loc[items["kind"] == "image", "item_id"].to_numpy(dtype=np.int64)
    caption_ids = items.loc[items["kind"] == "caption", "item_id"].to_numpy(dtype=np.int64)
    modalities = cache.modalities()  # a unimodal model's cache: its own modality's tasks only
    img = cache.get("image", image_ids) if modalities & {"image-text", "image-image"} else None
    cap = cache.get("caption", caption_ids) if modalities & {"image-text", "text-text"} else None
    pos = tables["positives"]
    pos = pos[pos["split"] == split]
    original = pos.loc[pos["task"] == "original", ["a_id", "b_id"]]
    sits_pos = pos.loc[pos["task"] == "sits", ["a_id", "b_id"]]
    cross = {
        "coco": original,
        "cxc": pd.concat([original, sits_pos], ignore_index=True).drop_duplicates(ignore_index=True),
    }
    frames = []
    for positive_set, pairs in cross.items() if "image-text" in modalities else ():
        pairs = pairs.rename(columns={"a_id": "caption_id", "b_id": "image_id"})
        for task, q_ids, g_ids, q_emb, g_emb, q_col, g_col in (
            ("i2t", image_ids, caption_ids, img, cap, "image_id", "caption_id"),
            ("t2i", caption_ids, image_ids, cap, img, "caption_id", "image_id"),
        ):
            lists = _positive_lists(q_ids, g_ids, pairs, q_col, g_col)
            keep = np.array([len(p) > 0 for p in lists], dtype=bool)
            if task in ranked:
                ranks = first_positive_ranks(q_emb[keep], g_emb, [p for p, k in zip(lists, keep) if k], chunk_size)
            else:
                ranks = np.full(int(keep.sum()), -1, dtype=np.int64)
            frames.append(_retrieval_frame(task, positive_set, q_ids[keep], [p for p in lists if len(p)], ranks))
    co = original.merge(original, on="b_id", suffixes=("_1", "_2"))
    cocaptions = pd.DataFrame({"a_id": co["a_id_1"].to_numpy(), "b_id": co["a_id_2"].to_numpy()})
    intra = {
        ("t2t", "coco"): (cocaptions, caption_ids, cap),
        ("t2t", "cxc"): (pos.loc[pos["task"] == "sts", ["a_id", "b_id"]], caption_ids, cap),
        ("i2i", "cxc"): (pos.loc[pos["task"] == "sis", ["a_id", "b_id"]], image_ids, img),
    }
    for (task, positive_set), (pairs, ids, emb) in intra.items():
        if TASK_MODALITY[task] not in modalities:
            continue
        pairs = _symmetric(pairs)
        lists = _positive_lists(ids, ids, pairs, "a_id", "b_id")
        keep = np.flatnonzero([len(p) > 0 for p in lists])
        if len(keep) == 0:
            continue
        ranks = first_positive_ranks_excluding(emb[keep], emb, [lists[k] for k in keep], keep, chunk_size)
        frames.append(_retrieval_frame(task, positive_set, ids[keep], [lists[k] for k in keep], ranks))
    for task in TASKS:
        if TASK_MODALITY[task] not in modalities:
            continue
        frame = tables[task][tables[task]["split"] == split]
        a, b = ITEM_COLUMNS[task]
        kind_a = "caption" if a.startswith("caption") else "image"
        kind_b = "caption" if b.startswith("caption") else "image"
        a_ids = frame[f"{a}_id"].to_numpy(np.int64)
        b_ids = frame[f"{b}_id"].to_numpy(np.int64)
        ea, eb = cache.get(kind_a, a_ids), cache.get(kind_b, b_ids)
        model = row_dots(ea, eb) if len(a_ids) else np.zeros(0)
        query, partner = (b_ids, a_ids) if task == "sits" and sits_query == "image" else (a_ids, b_ids)
        frames.append(
            pd.DataFrame(
                {
                    "part": "correlation",
                    "task": task,
                    "positive_set": "",
                    "query_id": query,
                    "item_id": partner,
                    "n_positives": np.zeros(len(a_ids), dtype=np.int64),
                    "rank": np.full(len(a_ids), -1, dtype=np.int64),
                    "agg_score": frame["agg_score"].to_numpy(np.float64),
                    "model_score": model.astype(np.float64),
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)[SCORE_COLUMNS]
    return out.astype({"part": "string", "task": "string", "positive_set": "string"})


def rated_pairs(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The SITS-rated (caption, image) pairs of the scored split: a cross scorer scores each of them."""
    split = _config_value(tables, "score_split")
    sits = tables["sits"][tables["sits"]["split"] == split]
    a, b = ITEM_COLUMNS["sits"]
    return pair_frame(sits[f"{a}_id"].to_numpy(np.int64), sits[f"{b}_id"].to_numpy(np.int64))


def pairs_needed(tables: dict[str, pd.DataFrame], shortlist: Shortlist | None = None) -> pd.DataFrame:
    """The pairs a cross scorer must score for the image-text tasks: every caption with every image (a
    gallery), or, with a shortlist, each query's top-k by the shortlist model and every SITS-rated pair."""
    if shortlist is None:
        return items_grid(tables["items"])
    both = pd.concat([shortlist_pairs(tables["items"], shortlist), rated_pairs(tables)], ignore_index=True)
    return pair_frame(both["caption_id"].to_numpy(), both["image_id"].to_numpy())


def score_pairs(
    tables: dict[str, pd.DataFrame], pairs: PairScores, chunk_size: int = 1024, shortlist: Shortlist | None = None
) -> pd.DataFrame:
    """The image-text rows of `score_dual` (i2t, t2i, SITS) from a cross scorer's scores of the full
    grid, or of the shortlist it re-ranks (ranks past k follow the shortlist model; SITS rows read
    the pair scores themselves)."""
    items = tables["items"]
    if shortlist is None:
        grid = pairs.as_cache(
            items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
        )
        return score_dual(tables, grid, chunk_size)
    grids = rerank_caches(items, pairs, shortlist)
    out = by_direction({d: score_dual(tables, grids[d], chunk_size, ranked=(d,)) for d in grids}, "task")
    sits = (out["task"] == "sits").to_numpy()
    query, partner = out.loc[sits, "query_id"].to_numpy(np.int64), out.loc[sits, "item_id"].to_numpy(np.int64)
    caption, image = (partner, query) if _config_value(tables, "sits_query") == "image" else (query, partner)
    out.loc[sits, "model_score"] = pairs.get(caption, image)
    return out


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """CxC metrics: R@1/5/10 (%, Wilson) and MedR (bootstrap) per task and positive set; Spearman x100 (bootstrap)."""
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise ValueError(f"cxc scores: missing columns {missing}; expected {SCORE_COLUMNS}")
    metrics: dict[str, dict[str, float]] = {}
    retrieval = scores[scores["part"] == "retrieval"]
    for (task, positive_set), group in retrieval.groupby(["task", "positive_set"], sort=True):
        summary = retrieval_summary(group["rank"].to_numpy(), n_boot=n_boot, seed=seed, confidence=confidence)
        for name, cell in summary.items():
            metrics[f"{task}/{positive_set}/{name}"] = dict(cell)
    correlation = scores[scores["part"] == "correlation"]
    alpha = 100.0 * (1.0 - confidence) / 2.0
    for task in TASKS:
        group = correlation[correlation["task"] == task]
        if group["query_id"].nunique() < 4:
            continue
        boot = spearman_bootstrap(
            group["query_id"].to_numpy(),
            group["agg_score"].to_numpy(),
            group["model_score"].to_numpy(),
            n_boot=n_boot,
            seed=seed,
        )
        samples = boot.samples[~np.isnan(boot.samples)]
        lo, hi = np.percentile(100.0 * samples, [alpha, 100.0 - alpha]) if len(samples) else (math.nan, math.nan)
        metrics[f"{task}/spearman"] = {
            "value": boot.mean_x100,
            "lo": float(lo),
            "hi": float(hi),
            "n": float(len(group)),
            "std": boot.std_x100,
            "n_queries": float(group["query_id"].nunique()),
        }
    return {
        "metrics": metrics,
        "n_boot": n_boot,
        "seed": seed,
        "confidence": confidence,
        "notes": "R@K and MedR from the first positive (queries without positives left out); "
        "Spearman: mean of n_boot samples of half the queries x one rated partner, x100; lo/hi its percentiles.",
    }


# The per-query metrics a paired test over the same queries compares (`itmbench.papers.paired.gallery_records`).
GALLERY_KS: tuple[int, ...] = (1, 5, 10)
GALLERY_METRICS: tuple[str, ...] = tuple(f"{t}/cxc/R@{k}" for t in ("i2t", "t2i", "t2t", "i2i") for k in GALLERY_KS)


def query_values(scores: pd.DataFrame, ks: tuple[int, ...] = GALLERY_KS) -> pd.DataFrame:
    """Each retrieval query's hit in the top k (x100: its mean is `summarize`'s R@k) per task and positive set, as
    columns '<task>/<positive_set>/R@<k>', indexed by (task, query_id) (the group a bootstrap resamples on its own);
    NaN where a query has no positive in a set or the column is another task's."""
    retrieval = scores[scores["part"] == "retrieval"]
    columns: dict[str, pd.Series] = {}
    for (task, positive_set), group in retrieval.groupby(["task", "positive_set"], sort=True):
        index = pd.MultiIndex.from_arrays(
            [np.full(len(group), task, dtype=object), group["query_id"].to_numpy(np.int64)], names=["task", "query_id"]
        )
        if index.has_duplicates:
            raise ValueError(f"cxc scores: a {task}/{positive_set} query appears twice; expected one row per query")
        ranks = group["rank"].to_numpy(np.int64)
        for k in ks:
            columns[f"{task}/{positive_set}/R@{k}"] = pd.Series(100.0 * (ranks <= k), index=index)
    if not columns:
        raise ValueError("cxc scores: no retrieval rows; expected the table score_dual writes")
    return pd.DataFrame(columns).sort_index()


def paired_correlations(
    scores: dict[str, pd.DataFrame],
    pairs: list[tuple[str, str]],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Each pair's STS / SIS / SITS correlations (x100, as `summarize`) and A - B with the percentile interval of
    the per-sample differences: both models' Spearman from the same samples of the same rated pairs
    (`metrics.correlation.paired_spearman_bootstrap`). Records of `papers.paired.GALLERY_COLUMNS`, metric
    '<task>/spearman', n the rated pairs; a task one model of a pair does not score is left out."""
    from itmbench.metrics.correlation import SpearmanBootstraps, paired_spearman_bootstrap
    from itmbench.papers.paired import GALLERY_COLUMNS, gallery_direction, percentile_interval

    key = ["query_id", "item_id"]
    records = []
    bootstraps = SpearmanBootstraps(n_boot, seed=seed)  # a model in several pairs: its samples drawn once
    for a, b in pairs:
        for task in TASKS:
            ga, gb = (scores[m][(scores[m]["part"] == "correlation") & (scores[m]["task"] == task)] for m in (a, b))
            if ga.empty or gb.empty or ga["query_id"].nunique() < 4:
                continue
            merged = ga.merge(gb[[*key, "model_score"]], on=key, how="left", suffixes=("_a", "_b"), validate="1:1")
            if len(gb) != len(ga) or merged["model_score_b"].isna().any():
                raise ValueError(f"cxc {task}: {a} and {b} scored different rated pairs; expected the same build")
            ra, rb, diff = paired_spearman_bootstrap(
                merged["query_id"].to_numpy(),
                merged["agg_score"].to_numpy(),
                merged["model_score_a"].to_numpy(),
                merged["model_score_b"].to_numpy(),
                n_boot=n_boot,
                seed=seed,
                bootstraps=bootstraps,
            )
            lo, hi = percentile_interval(100.0 * diff, confidence)
            record = {"benchmark": "cxc", "model_a": a, "model_b": b, "metric": f"{task}/spearman", "n": len(merged)}
            record |= {"value_a": ra.mean_x100, "value_b": rb.mean_x100, "difference": ra.mean_x100 - rb.mean_x100}
            record |= {"lo": lo, "hi": hi, "confidence": confidence, "n_boot": n_boot, "seed": seed}
            records.append(record | {"direction": gallery_direction(lo, hi)})
    return pd.DataFrame.from_records(records, columns=GALLERY_COLUMNS)
