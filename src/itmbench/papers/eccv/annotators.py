"""ECCV Caption appendices A.2 and B.3 in the world: how alike the machine annotators are (Table A.1) and how the
simulated workers answered each annotator's proposals (Table B.2).

Table A.1 (the paper's appendix A.2): every annotator retrieves its top K (the paper: 25) gallery items for every
query of the split (the paper: the COCO captions, text-to-image; image-to-text is added here), by the dot products
of its cached embeddings (numpy, no model is run). For each pair of annotators and each query:

- (a) Kendall's tau-b between the two ranked lists. The paper names the statistic (tau-b "for the tie-breaking")
  but not how two top-K lists with different items become two rankings of the same items; here: the items are the
  union of the two lists, an item's rank is its position in a list (1..K), and an item a list lacks ranks K + 1,
  tied with the list's other absentees (the ties tau-b handles). Identical lists give 1; symmetric.
- (b) the rank, in the column annotator's list, of the row annotator's top-1 item (K + 1 when the list lacks it;
  the paper's "average ranking of the top-1 retrieved image of the row model for other column models").

Each cell is the mean over the queries, with a percentile bootstrap over queries (the same resample for every
cell of a direction).

Table B.2 (appendix B.3): for each annotator and each proposal rank (1..top_k), the share of each of the four
answers among the pairs it proposed at that rank, and over all its proposals (the paper's "Avg."), from the
build's annotations table (a pair proposed by two annotators counts for both, with its one answer), both
directions pooled as the paper pools its two annotation stages, x100. Intervals: a percentile bootstrap over the
ECCV queries, resampled within each direction.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.eccv.bias import DIRECTION_LABELS
from itmbench.papers.eccv.canonical import GALLERY_KIND, I2T, QUERY_KIND, T2I
from itmbench.papers.eccv.config import ANSWERS
from itmbench.scoring.retrieval import first_k_best

KENDALL = "(a) Kendall's τ"
AVERAGE_RANK = "(b) average ranking"
SIMILARITY_MEASURES: tuple[str, ...] = (KENDALL, AVERAGE_RANK)
SIMILARITY_DIRECTIONS: tuple[str, ...] = (T2I, I2T)  # the paper's text-to-image first
# Table B.2's column heads as printed, and the world's answers they stand for (the paper's caption: "100% YES",
# "Partially YES", "Mostly NO", "100% NO"; the world's third answer is named "Partially NO").
PRINTED_ANSWERS: dict[str, str] = dict(zip(("Yes", "Weak yes", "Weak no", "No"), ANSWERS, strict=True))
AVERAGE = "Avg."


def _percentile(reps: np.ndarray, confidence: float) -> tuple[float, float]:
    reps = reps[np.isfinite(reps)]
    if len(reps) == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(reps, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def _nanmean(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample whose every query is nan: nan
        return np.nanmean(values, axis=axis)


# --- Table A.1 -----------------------------------------------------------------------------------------------


def top_k_lists(scores: np.ndarray, k: int) -> np.ndarray:
    """Each query's top-k gallery positions [Q, k], best first (ties by lower gallery position, as `propose`)."""
    scores = np.asarray(scores)
    if scores.dtype.kind != "f":  # float32 stays: widening it is exact and keeps every order and tie
        scores = scores.astype(np.float64)
    if scores.ndim != 2 or not 1 <= k <= scores.shape[1]:
        raise ValueError(f"top-k lists: scores of shape {scores.shape}, k={k}; expected [queries, gallery >= k]")
    # the first k of a stable sort of each row, without sorting whole rows (scoring.retrieval.first_k_best)
    return np.array(first_k_best(scores, k), dtype=np.int64).reshape(len(scores), k)


def list_ranks(top: np.ndarray, n_gallery: int) -> np.ndarray:
    """[Q, n_gallery]: every gallery position's rank in the query's list (1..K), K + 1 where the list lacks it."""
    q, k = top.shape
    ranks = np.full((q, n_gallery), k + 1, dtype=np.int64)
    np.put_along_axis(ranks, top, np.arange(1, k + 1, dtype=np.int64)[None, :].repeat(q, axis=0), axis=1)
    return ranks


def rank_in(top: np.ndarray, items: np.ndarray) -> np.ndarray:
    """[Q, M]: each item's rank (1..K) in its query's top-K list `top` [Q, K], K + 1 where the list lacks it
    (what `list_ranks` gives at those items, without its [Q, n_gallery] matrix)."""
    q, k = top.shape
    out = np.empty(items.shape, dtype=np.int64)
    for s in range(0, q, 4096):
        eq = items[s : s + 4096, :, None] == top[s : s + 4096, None, :]
        out[s : s + 4096] = np.where(eq.any(axis=2), eq.argmax(axis=2) + 1, k + 1)
    return out


def kendall_tau_b_topk(top_a: np.ndarray, top_b: np.ndarray, n_gallery: int, chunk: int = 256) -> np.ndarray:
    """Per query, Kendall's tau-b between two top-K lists over their union (absentees tied at K + 1); nan where
    tau-b is undefined (a single item)."""
    if top_a.shape != top_b.shape:
        raise ValueError(f"Kendall top-k: lists of shapes {top_a.shape} and {top_b.shape}; expected equal shapes")
    q, k = top_a.shape
    items = np.concatenate([top_a, top_b], axis=1)  # [Q, 2K]: A's items, then B's
    x = rank_in(top_a, items)
    y = rank_in(top_b, items)
    valid = np.concatenate([np.ones((q, k), dtype=bool), x[:, k:] == k + 1], axis=1)  # B's items A lacks
    upper = np.triu(np.ones((2 * k, 2 * k), dtype=bool), 1)
    out = np.empty(q, dtype=np.float64)
    for s in range(0, q, chunk):
        xs, ys, vs = x[s : s + chunk], y[s : s + chunk], valid[s : s + chunk]
        dx = np.sign(xs[:, :, None] - xs[:, None, :])
        dy = np.sign(ys[:, :, None] - ys[:, None, :])
        pair = vs[:, :, None] & vs[:, None, :] & upper[None]
        n0 = pair.sum(axis=(1, 2)).astype(np.float64)
        n1 = (pair & (dx == 0)).sum(axis=(1, 2))
        n2 = (pair & (dy == 0)).sum(axis=(1, 2))
        s_ = (dx * dy * pair).sum(axis=(1, 2)).astype(np.float64)
        denom = np.sqrt((n0 - n1) * (n0 - n2))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s : s + chunk] = np.where(denom > 0, s_ / np.where(denom > 0, denom, 1.0), np.nan)
    return out


def top1_rank_in(top_row: np.ndarray, top_column: np.ndarray, n_gallery: int) -> np.ndarray:
    """Per query, the rank of the row annotator's top-1 item in the column annotator's list (K + 1 if absent)."""
    return rank_in(top_column, top_row[:, :1])[:, 0].astype(np.float64)


def annotator_similarity(
    scores: Mapping[str, np.ndarray],
    k: int,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    direction_index: int = 0,
) -> pd.DataFrame:
    """Table A.1's cells of one direction from each annotator's score matrix [queries, gallery] (the same queries
    and gallery for all): measure, model (row), other (column), value, lo, hi, n_queries; no diagonal."""
    shapes = {np.asarray(s).shape for s in scores.values()}
    if len(shapes) > 1:
        raise ValueError(f"annotator similarity: score matrices of shapes {sorted(shapes)}; expected one shape")
    n_gallery = shapes.pop()[1] if shapes else 0
    tops = {m: top_k_lists(scores[m], min(k, n_gallery)) for m in scores}
    return similarity_of_lists(tops, n_gallery, n_boot, seed, confidence, direction_index)


def similarity_of_lists(
    tops: Mapping[str, np.ndarray],
    n_gallery: int,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    direction_index: int = 0,
) -> pd.DataFrame:
    """`annotator_similarity` from each annotator's top-K lists [queries, K] over a gallery of n_gallery."""
    names = list(tops)
    if len(names) < 2:
        raise ValueError(f"annotator similarity: annotators {names}; expected two or more")
    shapes = sorted({t.shape for t in tops.values()})
    if len(shapes) != 1:
        raise ValueError(f"annotator similarity: lists of shapes {shapes}; expected one shape")
    n_queries = next(iter(tops.values())).shape[0]
    rng = np.random.default_rng(np.random.SeedSequence([seed, direction_index]))
    idx = rng.integers(0, n_queries, size=(n_boot, n_queries))
    rows: list[tuple[Any, ...]] = []
    taus: dict[frozenset[str], np.ndarray] = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            pair = frozenset((a, b))
            if pair not in taus:
                taus[pair] = kendall_tau_b_topk(tops[a], tops[b], n_gallery)
            for measure, per_query in (
                (KENDALL, taus[pair]),
                (AVERAGE_RANK, top1_rank_in(tops[a], tops[b], n_gallery)),
            ):
                lo, hi = _percentile(np.asarray(_nanmean(per_query[idx], axis=1)), confidence)
                rows.append((measure, a, b, float(_nanmean(per_query)), lo, hi, n_queries))
    return pd.DataFrame(rows, columns=["measure", "model", "other", "value", "lo", "hi", "n_queries"])


def split_items(items: pd.DataFrame) -> dict[str, np.ndarray]:
    """The ECCV split's item ids per kind (the build's items table), in table order."""
    return {kind: items.loc[items["kind"] == kind, "item_id"].to_numpy(dtype=np.int64) for kind in ("image", "caption")}


def _query_gallery_vectors(
    caches: Mapping[str, Any], items: pd.DataFrame, direction: str
) -> tuple[list[tuple[str, np.ndarray, np.ndarray]], int]:
    """Per annotator, its query and gallery embeddings [queries, d], [gallery, d] (float32) of one direction over
    every item of the split; and the gallery size."""
    ids = split_items(items)
    q_ids, g_ids = ids[QUERY_KIND[direction]], ids[GALLERY_KIND[direction]]
    if len(q_ids) == 0 or len(g_ids) == 0:
        raise ValueError(f"annotator similarity ({direction}): the split has no {QUERY_KIND[direction]} or gallery")
    vectors = [
        (
            name,
            np.asarray(cache.get(QUERY_KIND[direction], q_ids), dtype=np.float32),
            np.asarray(cache.get(GALLERY_KIND[direction], g_ids), dtype=np.float32),
        )
        for name, cache in caches.items()
    ]
    return vectors, len(g_ids)


def annotator_scores(caches: Mapping[str, Any], items: pd.DataFrame, direction: str) -> dict[str, np.ndarray]:
    """Each annotator's dot products [queries, gallery] of one direction over every item of the split
    (`caches[name]` an `EmbeddingCache`, or anything with its `get(kind, ids)`)."""
    vectors, _ = _query_gallery_vectors(caches, items, direction)
    return {name: (q @ g.T).astype(np.float64) for name, q, g in vectors}


def annotator_top_lists(
    caches: Mapping[str, Any], items: pd.DataFrame, direction: str, k: int, chunk: int = 2048
) -> tuple[dict[str, np.ndarray], int]:
    """Each annotator's top-k lists [queries, k] of one direction (as `top_k_lists` of `annotator_scores`'s
    matrices: the float32 products rank as their float64 copies), computed over query chunks so that no
    [queries, gallery] matrix is held; and the gallery size."""
    vectors, n_gallery = _query_gallery_vectors(caches, items, direction)
    k = min(k, n_gallery)
    tops = {
        name: np.concatenate([top_k_lists(q[s : s + chunk] @ g.T, k) for s in range(0, len(q), chunk)])
        for name, q, g in vectors
    }
    return tops, n_gallery


def table_a1_long(cells: Mapping[str, pd.DataFrame], published: pd.DataFrame | None) -> pd.DataFrame:
    """Table A.1 as a long table: per direction (text-to-image, the paper's, first) and measure a row per annotator
    and a column per annotator (the diagonal '–', as printed), then the printed Table A.1 (the paper's five
    annotators, at its printed precision) as rows of its own; a printed cell the extraction lost stays empty."""
    records = []
    for direction, part in cells.items():
        names = list(dict.fromkeys([*part["model"], *part["other"]]))
        for measure in SIMILARITY_MEASURES:
            block = part[part["measure"] == measure].set_index(["model", "other"])
            for model in names:
                label = f"{measure}, {DIRECTION_LABELS[direction]}: {model}"
                for other in names:
                    if other == model:
                        records.append((label, other, np.nan, np.nan, np.nan, "world", direction, measure, 0, ""))
                        continue
                    r = block.loc[(model, other)]
                    records.append(
                        (
                            label,
                            other,
                            r["value"],
                            r["lo"],
                            r["hi"],
                            "world",
                            direction,
                            measure,
                            int(r["n_queries"]),
                            "",
                        )
                    )
    if published is not None:
        printed = published[published["table"] == "Table A.1"]
        names = list(dict.fromkeys(printed["row"].astype(str)))
        for measure in dict.fromkeys(printed["block"].astype(str)):
            block = printed[printed["block"] == measure].set_index(["row", "column"])
            for model in names:
                label = f"published {measure}: {model}"
                for other in names:
                    if other == model:
                        records.append((label, other, np.nan, np.nan, np.nan, "published", T2I, measure, 0, ""))
                    elif (model, other) in block.index:
                        r = block.loc[(model, other)]
                        value = float(r["value"])
                        note = f"{value:.{int(r['decimals'])}f}"
                        records.append((label, other, value, np.nan, np.nan, "published", T2I, measure, 0, note))
    columns = ["row", "column", "value", "lo", "hi", "source", "direction", "measure", "n_queries", "note"]
    return pd.DataFrame.from_records(records, columns=columns).astype({"n_queries": "int64"})


# --- Table B.2 -----------------------------------------------------------------------------------------------


def answer_counts(annotations: pd.DataFrame, annotators: Sequence[str]) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """Per ECCV query (direction, query_id), the counts [queries, annotators, ranks, answers] of its proposals'
    answers, and the (direction, query_id) of each row."""
    names = list(annotators)
    unknown = sorted(set(annotations["annotator"].astype(str)) - set(names))
    bad = sorted(set(annotations["answer"].astype(str)) - set(ANSWERS))
    if unknown or bad:
        raise ValueError(
            f"eccv annotations: annotators {unknown} or answers {bad} unexpected; expected annotators {names} and "
            f"answers {list(ANSWERS)}"
        )
    ranks = annotations["proposal_rank"].to_numpy(dtype=np.int64)
    if len(ranks) == 0 or ranks.min() < 1:
        raise ValueError("eccv annotations: no proposals, or a proposal_rank below 1; expected ranks 1..top_k")
    keys = list(dict.fromkeys(zip(annotations["direction"].astype(str), annotations["query_id"].astype(int))))
    q_index = {key: i for i, key in enumerate(keys)}
    counts = np.zeros((len(keys), len(names), int(ranks.max()), len(ANSWERS)), dtype=np.int64)
    a_index = {n: i for i, n in enumerate(names)}
    ans_index = {a: i for i, a in enumerate(ANSWERS)}
    rows = zip(
        annotations["direction"].astype(str),
        annotations["query_id"].astype(int),
        annotations["annotator"].astype(str),
        ranks,
        annotations["answer"].astype(str),
        strict=True,
    )
    for d, q, who, rank, answer in rows:
        counts[q_index[(d, q)], a_index[who], rank - 1, ans_index[answer]] += 1
    return counts, keys


def _shares(counts: np.ndarray) -> np.ndarray:
    """[annotators, ranks + 1, answers] x100: each rank's answer shares, then all ranks pooled (the Avg. row)."""
    pooled = np.concatenate([counts, counts.sum(axis=1, keepdims=True)], axis=1).astype(np.float64)
    total = pooled.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, 100 * pooled / np.where(total > 0, total, 1), np.nan)


def answer_shares(
    annotations: pd.DataFrame,
    annotators: Sequence[str],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Table B.2's cells: model, rank (1..top_k or 'Avg.'), answer, value (x100), lo, hi, n (proposals)."""
    names = list(annotators)
    counts, keys = answer_counts(annotations, names)
    point = _shares(counts.sum(axis=0))
    directions = np.array([d for d, _ in keys])
    rng = np.random.default_rng(np.random.SeedSequence([seed]))
    weights = np.zeros((n_boot, len(keys)), dtype=np.float64)
    for d in dict.fromkeys(directions.tolist()):  # resample each direction's queries on their own
        members = np.flatnonzero(directions == d)
        draws = rng.integers(0, len(members), size=(n_boot, len(members)))
        for b in range(n_boot):
            weights[b, members] += np.bincount(draws[b], minlength=len(members))
    boot_counts = (weights @ counts.reshape(len(keys), -1)).reshape(n_boot, *counts.shape[1:])
    reps = np.stack([_shares(c) for c in boot_counts])  # [n_boot, annotators, ranks + 1, answers]
    totals = counts.sum(axis=(0, 3))  # [annotators, ranks]
    rank_labels = [str(r) for r in range(1, counts.shape[2] + 1)] + [AVERAGE]
    rows = []
    for i, model in enumerate(names):
        for j, rank in enumerate(rank_labels):
            n_pairs = int(totals[i].sum() if rank == AVERAGE else totals[i, j])
            for a, answer in enumerate(ANSWERS):
                lo, hi = _percentile(reps[:, i, j, a], confidence)
                rows.append((model, rank, answer, float(point[i, j, a]), lo, hi, n_pairs))
    return pd.DataFrame(rows, columns=["model", "rank", "answer", "value", "lo", "hi", "n"]).astype({"n": "int64"})


def table_b2_long(cells: pd.DataFrame, published: pd.DataFrame | None) -> pd.DataFrame:
    """Table B.2 as a long table: a row per (annotator, rank) and a column per answer, then the printed Table B.2
    (the paper's five annotators, at its printed precision; its column heads mapped onto the world's answers) as
    rows of its own."""

    def label(model: str, rank: str) -> str:
        return f"{model}: {rank if rank == AVERAGE else f'rank {rank}'}"

    records = [
        (label(r.model, r.rank), r.answer, r.value, r.lo, r.hi, "world", r.model, r.rank, int(r.n), "")
        for r in cells.itertuples(index=False)
    ]
    if published is not None:
        printed = published[published["table"] == "Table B.2"]
        for r in printed.itertuples(index=False):
            row = f"published {label(str(r.block), str(r.row))}"
            answer, value = PRINTED_ANSWERS[str(r.column)], float(r.value)
            note = f"{value:.{int(r.decimals)}f}"  # as printed
            records.append((row, answer, value, np.nan, np.nan, "published", str(r.block), str(r.row), 0, note))
    columns = ["row", "column", "value", "lo", "hi", "source", "model", "rank", "n", "note"]
    return pd.DataFrame.from_records(records, columns=columns).astype({"n": "int64"})
