"""MCIC's scoring: per-instance scores of the five options (dual encoder or cross scorer) and the accuracy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import constant_answer_accuracy, mcic_accuracy, multiple_choice_correct
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.mcic.config import N_OPTIONS
from itmbench.scoring.pairs import PairScores, pair_frame

if TYPE_CHECKING:
    from itmbench.scoring.embed import EmbeddingCache

SCORE_COLUMNS = [f"score_{j}" for j in range(N_OPTIONS)]


def score_dual(tables: dict[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """Per-instance dual-encoder scores s(option, image) of the 5 options, from the embedding cache."""
    ex = tables["examples"]
    n = len(ex)
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(n, N_OPTIONS)
    image_ids = ex["image_id"].to_numpy(dtype=np.int64)
    img = cache.get("image", image_ids).astype(np.float64)
    cap = cache.get("caption", option_ids.ravel()).astype(np.float64).reshape(n, N_OPTIONS, -1)
    scores = (cap @ img[:, :, None])[:, :, 0] if n else np.zeros((0, N_OPTIONS))
    return _score_frame(ex, option_ids, scores)


def pairs_needed(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: each instance's image with its 5 options."""
    ex = tables["examples"]
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(len(ex), N_OPTIONS)
    return pair_frame(option_ids.ravel(), np.repeat(ex["image_id"].to_numpy(dtype=np.int64), N_OPTIONS))


def score_pairs(tables: dict[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    ex = tables["examples"]
    n = len(ex)
    option_ids = np.array([list(v) for v in ex["option_caption_ids"]], dtype=np.int64).reshape(n, N_OPTIONS)
    images = np.repeat(ex["image_id"].to_numpy(dtype=np.int64), N_OPTIONS)
    return _score_frame(ex, option_ids, pairs.get(option_ids.ravel(), images).reshape(n, N_OPTIONS))


def _score_frame(ex: pd.DataFrame, option_ids: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    """One row per instance: its options' scores, the argmax and whether it is the answer."""
    n = len(ex)
    image_ids = ex["image_id"].to_numpy(dtype=np.int64)
    answer = ex["answer_index"].to_numpy(dtype=np.int64)
    out = pd.DataFrame(
        {
            "split": ex["split"].astype("string").to_numpy(),
            "example_id": ex["example_id"].astype("string").to_numpy(),
            "image_id": image_ids,
            "answer_index": answer,
        }
    )
    for j in range(N_OPTIONS):
        out[f"caption_id_{j}"] = option_ids[:, j]
    for j in range(N_OPTIONS):
        out[f"score_{j}"] = scores[:, j].astype(np.float64)
    out["predicted"] = np.argmax(scores, axis=1).astype(np.int64) if n else np.zeros(0, np.int64)
    out["correct"] = multiple_choice_correct(scores, answer) if n else np.zeros(0, bool)
    return out


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """Accuracy (%) per split with Wilson interval and the paper's '±' (binomial SE), plus the priors.

    The intervals are binomial (Wilson), so n_boot and seed are unused; they keep the shared signature.
    """
    missing = [c for c in ["split", "answer_index", *SCORE_COLUMNS] if c not in scores.columns]
    if missing:
        raise ValueError(f"mcic summarize: scores lack columns {missing}")
    metrics: dict[str, dict[str, float]] = {}
    se: dict[str, float] = {}
    prior: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    ties: dict[str, int] = {}
    for split in dict.fromkeys(scores["split"]):
        part = scores[scores["split"] == split]
        s = part[SCORE_COLUMNS].to_numpy(dtype=np.float64)
        answer = part["answer_index"].to_numpy(dtype=np.int64)
        acc = mcic_accuracy(s, answer, confidence)
        lo, hi = acc.ci_percent
        metrics[f"accuracy_{split}"] = {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n}
        se[f"accuracy_{split}"] = acc.standard_error_percent
        prior[split] = [100.0 * float(v) for v in constant_answer_accuracy(answer, N_OPTIONS)]
        pred = np.argmax(s, axis=1)
        predicted[split] = [100.0 * float(v) for v in constant_answer_accuracy(pred, N_OPTIONS)]
        true = s[np.arange(len(s)), answer]
        others = s.copy()
        others[np.arange(len(s)), answer] = -np.inf
        ties[split] = int((true == others.max(axis=1)).sum()) if len(s) else 0
    return {
        "metrics": metrics,
        "standard_error": se,
        "chance": 100.0 / N_OPTIONS,
        "answer_position_prior": prior,
        "predicted_position_share": predicted,
        "ties_counted_wrong": ties,
        "confidence": confidence,
    }


PAIRED_METRICS = ("accuracy_test",)
OUTCOME_COLUMNS = ("split", "example_id", "correct")


def instance_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """Per test instance (index: example_id, sorted), whether the model picks the true caption (`correct`, a tie
    wrong): what a paired test of two models reads (`itmbench.papers.paired`). The paper compares its models on
    the test split (Table 3), so the dev split is left out."""
    test = scores[scores["split"].astype(str) == "test"]
    ids = test["example_id"].astype(str).to_numpy()
    if len(np.unique(ids)) != len(ids):
        raise ValueError(
            "MCIC per-instance scores: an example_id appears twice in the test split; expected one row each"
        )
    correct = test["correct"].to_numpy(bool)
    return pd.DataFrame({"accuracy_test": correct}, index=pd.Index(ids, name="example_id")).sort_index()
