"""Retrieval scoring: per-query first-positive ranks (i2t and t2i, every positive set), R@K and MedR with
intervals, and the retrieval table's long form (one row per model and positive set)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.scoring.embed import EmbeddingCache
from itmbench.scoring.retrieval import score_retrieval

if TYPE_CHECKING:
    from itmbench.scoring.pairs import PairScores, Shortlist

ROW_HEADER = "model [positives]"  # the table's rows: one per model and positive set
SCORE_OPTIONS = ("n_boot", "seed", "confidence", "ks")  # the params `score` keys `summarize` takes


def score_dual(tables: dict[str, pd.DataFrame], cache: EmbeddingCache, chunk_size: int = 1024) -> pd.DataFrame:
    """Per-query first-positive ranks of a dual encoder, from its embedding cache."""
    return score_retrieval(tables["items"], tables["positives"], cache, chunk_size)


def pairs_needed(tables: dict[str, pd.DataFrame], shortlist: Shortlist | None = None) -> pd.DataFrame:
    """The (caption, image) pairs a cross scorer scores: the full gallery grid, or each query's shortlist."""
    from itmbench.scoring.pairs import items_grid, shortlist_pairs

    items = tables["items"]
    return items_grid(items) if shortlist is None else shortlist_pairs(items, shortlist)


def score_pairs(
    tables: dict[str, pd.DataFrame], pairs: PairScores, shortlist: Shortlist | None = None, chunk_size: int = 1024
) -> pd.DataFrame:
    """Per-query ranks of a cross scorer: over the full grid, or re-ranking each query's shortlist."""
    from itmbench.scoring.pairs import by_direction, rerank_caches

    items, positives = tables["items"], tables["positives"]
    if shortlist is not None:
        grids = rerank_caches(items, pairs, shortlist)
        frames = {d: score_retrieval(items, positives, grids[d], chunk_size, ranked=(d,)) for d in grids}
        return by_direction(frames, "direction")  # each grid ranks only the direction taken from it
    cache = pairs.as_cache(
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
    )
    return score_retrieval(items, positives, cache, chunk_size)


def summarize(
    scores: pd.DataFrame,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    ks: Sequence[int] = (1, 5, 10),
) -> dict[str, Any]:
    """R@K and MedR with intervals per positive set and direction, from per-query ranks."""
    from itmbench.metrics.retrieval import retrieval_summary

    metrics: dict[str, dict[str, Any]] = {}
    for (positive_set, direction), group in scores.groupby(["positive_set", "direction"], sort=True):
        summary = retrieval_summary(group["rank"].to_numpy(), ks=ks, n_boot=n_boot, seed=seed, confidence=confidence)
        metrics.setdefault(positive_set, {})[direction] = summary
    return {"metrics": metrics}


def _metric_order(cells: dict[str, Any]) -> list[str]:
    """R@K by increasing K (params `score.ks`), then MedR."""
    recalls = sorted((name for name in cells if name.startswith("R@")), key=lambda name: int(name[2:]))
    return [*recalls, "MedR"]


def long_table(metrics: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi) from metrics JSONs, rows 'model [positive set]'."""
    rows = []
    for m in metrics:
        for positive_set, by_direction in sorted(m["metrics"].items()):
            for direction in ("i2t", "t2i"):
                for name in _metric_order(by_direction[direction]):
                    cell = by_direction[direction][name]
                    rows.append(
                        {
                            "row": f"{m['model']} [{positive_set}]",
                            "model": m["model"],
                            "positive_set": positive_set,
                            "column": f"{direction} {name}",
                            "value": cell["value"],
                            "lo": cell["lo"],
                            "hi": cell["hi"],
                            "n": cell["n"],
                        }
                    )
    return pd.DataFrame(rows)
