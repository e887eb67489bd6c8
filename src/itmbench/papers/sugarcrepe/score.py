"""SugarCrepe's scoring: per-instance scores (dual encoder, cross scorer or released answers) and the metrics.

Metric (`summarize`): accuracy per subtype (Wilson interval), the mean over the subtypes present
(SugarCrepe's summary; a percentile bootstrap resampling instances within each subtype), and the
accuracy pooled over all instances (the "SugarCrepe" column BiVLC's paper prints: its 76.56 for
CLIP is the pooled accuracy of the released per-instance file, whose mean over subtypes is 73.08).
One scorer serves the world and the released files: `summarize` reads per-instance `correct` flags
(or s_pos / s_neg), e.g. GPT-4V's released answers through `gpt4v_correct`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.negatives.captions import SUBSETS
from itmbench.negatives.edits import _percent_interval
from itmbench.scoring.embed import EmbeddingCache, pair_dots
from itmbench.scoring.pairs import PairScores, pair_frame

CHANCE_PERCENT = 50.0
SCORE_COLUMNS = (
    "id",
    "subset",
    "type",
    "subtype",
    "image_id",
    "caption_id",
    "negative_caption_id",
    "s_pos",
    "s_neg",
    "correct",
)


# --- scoring -----------------------------------------------------------------------------------------


def score_dual(tables: Mapping[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """One row per instance: s(positive, image), s(negative, image) and whether the positive scores higher."""
    return _score_frame(tables["instances"], lambda captions, images: pair_dots(cache, captions, images))


def pairs_needed(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: 2 per instance."""
    inst = tables["instances"]
    image = inst["image_id"].to_numpy(np.int64)
    return pair_frame(
        np.concatenate([inst["caption_id"].to_numpy(np.int64), inst["negative_caption_id"].to_numpy(np.int64)]),
        np.concatenate([image, image]),
    )


def score_pairs(tables: Mapping[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    return _score_frame(tables["instances"], pairs.get)


def _score_frame(inst: pd.DataFrame, pair_score: Any) -> pd.DataFrame:
    image = inst["image_id"].to_numpy(np.int64)
    c0, c1 = inst["caption_id"].to_numpy(np.int64), inst["negative_caption_id"].to_numpy(np.int64)
    s_pos, s_neg = np.asarray(pair_score(c0, image), np.float64), np.asarray(pair_score(c1, image), np.float64)
    return pd.DataFrame(
        {
            "id": inst["id"].to_numpy(np.int64),
            "subset": inst["subset"].to_numpy(),
            "type": inst["type"].to_numpy(),
            "subtype": inst["subtype"].to_numpy(),
            "image_id": image,
            "caption_id": c0,
            "negative_caption_id": c1,
            "s_pos": s_pos,
            "s_neg": s_neg,
            "correct": s_pos > s_neg,  # strict: a tie counts as wrong
        },
        columns=list(SCORE_COLUMNS),
    )


def gpt4v_correct(answers: pd.DataFrame, order: str) -> pd.DataFrame:
    """GPT-4V's released answers of one order (`released.load_gpt4v_answers`) as the table `summarize` reads."""
    part = answers[answers["order"] == order]
    if part.empty:
        raise ValueError(f"GPT-4V answers: none in order {order!r}; orders present: {sorted(set(answers['order']))}")
    return part[["id", "subset", "type", "subtype", "correct"]].reset_index(drop=True)


# --- metrics -----------------------------------------------------------------------------------------


def _correct(scores: pd.DataFrame) -> np.ndarray:
    if "correct" in scores.columns:
        return scores["correct"].to_numpy(bool)
    if {"s_pos", "s_neg"} <= set(scores.columns):
        return (scores["s_pos"] > scores["s_neg"]).to_numpy(bool)
    raise ValueError("SugarCrepe scores: expected a column `correct`, or s_pos and s_neg")


def _wilson(correct: np.ndarray, confidence: float) -> dict[str, Any]:
    if len(correct) == 0:
        return {"value": None, "lo": None, "hi": None, "n": 0}
    acc = accuracy_from_correct(correct, confidence)
    lo, hi = _percent_interval(acc.percent, acc.ci_percent)
    return {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n, "n_correct": acc.successes}


def mean_over_subtypes(correct: np.ndarray, subset: np.ndarray) -> float:
    """The mean (%) of the per-subtype accuracies over the subtypes present."""
    names = [s for s in SUBSETS if (subset == s).any()]
    return float(np.mean([100.0 * correct[subset == s].mean() for s in names])) if names else float("nan")


def _stratified_interval(
    correct: np.ndarray, subset: np.ndarray, n_boot: int, seed: int, confidence: float
) -> tuple[float, float]:
    """Percentile bootstrap of the mean over subtypes, resampling instances within each subtype (seeded)."""
    names = [s for s in SUBSETS if (subset == s).any()]
    if not names:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    boots = np.zeros(n_boot)
    for s in names:
        flags = correct[subset == s].astype(float)
        draws = rng.integers(0, len(flags), size=(n_boot, len(flags)))
        boots += 100.0 * flags[draws].mean(axis=1)
    boots /= len(names)
    lo, hi = np.percentile(boots, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(lo), float(hi)


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """Accuracy (%) per subtype (Wilson), the mean over subtypes (stratified bootstrap) and the pooled accuracy."""
    correct = _correct(scores)
    subset = scores["subset"].to_numpy().astype(str)
    unknown = sorted(set(subset) - set(SUBSETS))
    if unknown:
        raise ValueError(f"SugarCrepe scores: unknown subsets {unknown}; expected some of {SUBSETS}")
    mean = mean_over_subtypes(correct, subset)
    lo, hi = _stratified_interval(correct, subset, n_boot, seed, confidence)
    metrics: dict[str, dict[str, Any]] = {
        "mean_over_subtypes": {
            "value": None if np.isnan(mean) else mean,
            "lo": None if np.isnan(lo) else min(lo, mean),
            "hi": None if np.isnan(hi) else max(hi, mean),
            "n": len(correct),
        },
        "pooled": _wilson(correct, confidence),
    }
    for s in SUBSETS:
        if (subset == s).any():
            metrics[s] = _wilson(correct[subset == s], confidence)
    return {
        "metrics": metrics,
        "chance": CHANCE_PERCENT,
        "n_instances": len(correct),
        "confidence": confidence,
        "ties_count_as_wrong": True,
        "interval": f"Wilson {confidence:.0%}; mean_over_subtypes: percentile bootstrap within each subtype "
        f"({n_boot}, seed {seed})",
    }


# --- per-instance outcomes (paired tests of two models) ----------------------------------------------

PAIRED_METRICS = ("pooled",)
OUTCOME_COLUMNS = ("id", "correct")


def instance_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """Per instance (index: id, sorted), whether the positive caption scores above the negative (`pooled`, every
    subtype): what a paired test of two models reads (`itmbench.papers.paired`)."""
    ids = scores["id"].to_numpy(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise ValueError("SugarCrepe per-instance scores: an id appears twice; expected one row per instance")
    return pd.DataFrame({"pooled": _correct(scores)}, index=pd.Index(ids, name="id")).sort_index()
