"""BISON's scoring: per-instance scores of a dual encoder, a cross scorer or released predictions, and the metrics.

s(q, I) is the dot product of the cached unit embeddings; an instance is correct if
s(q, I_true) > s(q, I_false) strictly (a tie counts as wrong). Accuracy with a Wilson interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct, bison_accuracy
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval
from itmbench.papers.bison.released import PREDICTION_SCHEMA
from itmbench.scoring.embed import EmbeddingCache
from itmbench.scoring.pairs import PairScores, pair_frame

SCORE_COLUMNS = ["bison_id", "caption_id", "true_image_id", "false_image_id", "score_true", "score_false", "correct"]


def score_dual(tables: dict[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """Per-instance dual-encoder scores s(q, I_true), s(q, I_false) from the cache; correct is strict '>'."""
    ann = tables["annotations"]
    q = cache.get("caption", ann["caption_id"].to_numpy()).astype(np.float32, copy=False)
    it = cache.get("image", ann["true_image_id"].to_numpy()).astype(np.float32, copy=False)
    ifalse = cache.get("image", ann["false_image_id"].to_numpy()).astype(np.float32, copy=False)
    s_true = (q * it).sum(axis=1).astype(np.float64)
    s_false = (q * ifalse).sum(axis=1).astype(np.float64)
    return score_frame(ann, s_true, s_false)


def pairs_needed(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: the query with each of its 2 images."""
    ann = tables["annotations"]
    q = ann["caption_id"].to_numpy(np.int64)
    return pair_frame(
        np.concatenate([q, q]), np.concatenate([ann["true_image_id"].to_numpy(), ann["false_image_id"].to_numpy()])
    )


def score_pairs(tables: dict[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    ann = tables["annotations"]
    q = ann["caption_id"].to_numpy(np.int64)
    s_true = pairs.get(q, ann["true_image_id"].to_numpy())
    return score_frame(ann, s_true, pairs.get(q, ann["false_image_id"].to_numpy()))


def score_frame(ann: pd.DataFrame, s_true: np.ndarray, s_false: np.ndarray) -> pd.DataFrame:
    """One row per instance: its two scores and whether the true image scores strictly higher."""
    correct = bison_accuracy(s_true, s_false).correct
    return pd.DataFrame(
        {
            "bison_id": ann["bison_id"].to_numpy(dtype=np.int64),
            "caption_id": ann["caption_id"].to_numpy(dtype=np.int64),
            "true_image_id": ann["true_image_id"].to_numpy(dtype=np.int64),
            "false_image_id": ann["false_image_id"].to_numpy(dtype=np.int64),
            "score_true": s_true,
            "score_false": s_false,
            "correct": correct,
        }
    )


def score_predictions(tables: dict[str, pd.DataFrame], predictions: pd.DataFrame) -> pd.DataFrame:
    """Per-instance correctness of released-format predictions (bison_id, predicted_image_id).

    Every annotation needs exactly one prediction, naming one of its two candidates; anything else
    raises, naming the bison_id.
    """
    missing_cols = [c for c in PREDICTION_SCHEMA if c not in predictions.columns]
    if missing_cols:
        raise ValueError(f"BISON predictions: missing columns {missing_cols}; expected {list(PREDICTION_SCHEMA)}")
    ann = tables["annotations"]
    dup = predictions["bison_id"][predictions["bison_id"].duplicated()]
    if len(dup):
        raise ValueError(f"BISON predictions: bison_id {int(dup.iloc[0])} predicted more than once")
    unknown = sorted(set(predictions["bison_id"].astype("int64")) - set(ann["bison_id"]))
    if unknown:
        raise ValueError(f"BISON predictions: bison_id {unknown[0]} is not in the annotations ({len(unknown)} unknown)")
    merged = ann.merge(predictions[list(PREDICTION_SCHEMA)].astype(PREDICTION_SCHEMA), on="bison_id", how="left")
    absent = merged["predicted_image_id"].isna()
    if absent.any():
        raise ValueError(
            f"BISON predictions: no prediction for bison_id {int(merged.loc[absent, 'bison_id'].iloc[0])} "
            f"({int(absent.sum())} missing); expected one per annotation"
        )
    pred = merged["predicted_image_id"].to_numpy(dtype=np.int64)
    off = (pred != merged["image_id_0"].to_numpy()) & (pred != merged["image_id_1"].to_numpy())
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise ValueError(
            f"BISON predictions: bison_id {int(merged['bison_id'].iloc[i])} predicts image {int(pred[i])}; "
            f"expected one of {int(merged['image_id_0'].iloc[i])}, {int(merged['image_id_1'].iloc[i])}"
        )
    return pd.DataFrame(
        {
            "bison_id": merged["bison_id"].to_numpy(dtype=np.int64),
            "caption_id": merged["caption_id"].to_numpy(dtype=np.int64),
            "true_image_id": merged["true_image_id"].to_numpy(dtype=np.int64),
            "predicted_image_id": pred,
            "correct": pred == merged["true_image_id"].to_numpy(),
        }
    )


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """BISON accuracy (%) with a Wilson interval; from scores (strict '>', ties wrong) or from `correct`."""
    if {"score_true", "score_false"} <= set(scores.columns):
        acc = bison_accuracy(scores["score_true"].to_numpy(), scores["score_false"].to_numpy(), confidence)
        margin = (scores["score_true"] - scores["score_false"]).to_numpy(dtype=np.float64)
        ties = int((margin == 0).sum())
    elif "correct" in scores.columns:
        acc = accuracy_from_correct(scores["correct"].to_numpy(), confidence)
        margin, ties = None, None
    else:
        raise ValueError("BISON scores: expected columns score_true and score_false, or correct")
    out: dict[str, Any] = {
        "metrics": {
            "bison": {"value": acc.percent, "lo": acc.ci_percent[0], "hi": acc.ci_percent[1], "n": acc.n},
        },
        "n_correct": acc.successes,
        "chance": 50.0,
        "interval": "wilson",
        "confidence": confidence,
        "ties_count_as_wrong": True,
    }
    if margin is not None:
        lo, hi = bootstrap_interval(margin, np.mean, n_boot=n_boot, seed=seed, confidence=confidence)
        out["ties"] = ties
        out["mean_score_margin"] = {
            "value": float(margin.mean()) if len(margin) else float("nan"),
            "lo": lo,
            "hi": hi,
            "n": int(len(margin)),
        }
    return out


PAIRED_METRICS = ("bison",)
OUTCOME_COLUMNS = ("bison_id", "correct")


def instance_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """Per BISON instance (index: bison_id, sorted), whether the model picks the true image: what a paired test
    of two models reads (`itmbench.papers.paired`)."""
    ids = scores["bison_id"].to_numpy(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise ValueError("BISON per-instance scores: a bison_id appears twice; expected one row per instance")
    correct = scores["correct"].to_numpy(bool)
    return pd.DataFrame({"bison": correct}, index=pd.Index(ids, name="bison_id")).sort_index()
