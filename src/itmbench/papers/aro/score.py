"""ARO's scoring: per-instance scores of every option (dual encoder or cross scorer) and the paper's metrics.

Correct (`correct_of`, the authors' `evaluate_scores`: `argmax` over the options in their order, the first
of tied options chosen): on the VG sets the authors order the options [false, true], so the true caption must
score strictly above the swapped one; on the Order sets, [true, perturbed x 4], the true caption must score
at least as high as every perturbation (a tie with a perturbation that equals the caption is right).

Metrics (`summarize`), as the paper reports them:
- VG-Relation: the macro accuracy, the mean over relations of each relation's accuracy (the authors'
  notebook; every relation the world builds is asymmetric, so none is left out);
- VG-Attribution: the macro accuracy over attribute pairs with at least `min_attribute_pair_items` items
  (the authors' `evaluate_scores` skips pairs of fewer than 25); left out when no pair has that many;
- COCO-Order and Flickr30k-Order: the accuracy over items (the authors' "Precision@1"), and per perturbation
  how often the true caption scores at least as high as it (what the paper's claim on order reads).
Intervals: Wilson for an accuracy over items, a percentile bootstrap resampling items within each relation
(attribute pair) for a macro accuracy (`papers.predictions.bootstrap_mean_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.aro.config import DATASETS
from itmbench.papers.aro.perturb import PERTURBATIONS
from itmbench.papers.predictions import accuracy_json, bootstrap_mean_interval
from itmbench.scoring.embed import EmbeddingCache, pair_dots
from itmbench.scoring.pairs import PairScores, pair_frame

CHANCE_PERCENT = {"vg_relation": 50.0, "vg_attribution": 50.0, "coco_order": 20.0, "flickr30k_order": 20.0}
MIN_ATTRIBUTE_PAIR_ITEMS = 25  # the authors' evaluate_scores skips attribute pairs of fewer items
MAX_OPTIONS = 1 + len(PERTURBATIONS)
SCORE_COLUMNS = ("id", "dataset", "label", "image_id", *(f"s{k}" for k in range(MAX_OPTIONS)), "correct")
SCORE_OPTIONS = ("n_boot", "seed", "confidence")


# --- scoring -----------------------------------------------------------------------------------------


def score_dual(tables: Mapping[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """One row per instance: s(option k, image) for each option (NaN past its options) and whether it is right."""
    return _score_frame(tables, lambda captions, images: pair_dots(cache, captions, images))


def pairs_needed(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: one per option."""
    opts = _option_images(tables)
    return pair_frame(opts["caption_id"].to_numpy(np.int64), opts["image_id"].to_numpy(np.int64))


def score_pairs(tables: Mapping[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    return _score_frame(tables, pairs.get)


def _option_images(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    inst = tables["instances"][["id", "image_id"]]
    return tables["options"].merge(inst, on="id", how="left", validate="many_to_one")


def correct_of(dataset: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Whether the true caption (column 0 of `s`; NaN past an instance's options) wins, by the authors' argmax."""
    others = np.where(np.isnan(s[:, 1:]), -np.inf, s[:, 1:]).max(axis=1)
    order = np.isin(dataset, ("coco_order", "flickr30k_order"))
    return np.where(order, s[:, 0] >= others, s[:, 0] > others)


def _score_frame(tables: Mapping[str, pd.DataFrame], pair_score: Any) -> pd.DataFrame:
    inst, opts = tables["instances"], _option_images(tables)
    s = np.full((len(inst), MAX_OPTIONS), np.nan)
    row = pd.Series(np.arange(len(inst)), index=inst["id"].to_numpy(np.int64))
    values = np.asarray(
        pair_score(opts["caption_id"].to_numpy(np.int64), opts["image_id"].to_numpy(np.int64)), np.float64
    )
    s[row.loc[opts["id"].to_numpy(np.int64)].to_numpy(), opts["option"].to_numpy(np.int64)] = values
    dataset = inst["dataset"].to_numpy().astype(str)
    frame = pd.DataFrame(
        {
            "id": inst["id"].to_numpy(np.int64),
            "dataset": dataset,
            "label": inst["label"].to_numpy(),
            "image_id": inst["image_id"].to_numpy(np.int64),
            **{f"s{k}": s[:, k] for k in range(MAX_OPTIONS)},
            "correct": correct_of(dataset, s),
        }
    )
    return frame[list(SCORE_COLUMNS)]


# --- metrics -----------------------------------------------------------------------------------------


def macro_accuracy(correct: np.ndarray, label: np.ndarray, min_items: int = 1) -> tuple[float, list[str]]:
    """The mean (%) over labels with at least `min_items` items of each label's accuracy, and those labels."""
    names = [str(x) for x in np.unique(label) if (label == x).sum() >= min_items]
    if not names:
        return float("nan"), []
    return float(np.mean([100.0 * correct[label == x].mean() for x in names])), names


def _macro_json(
    correct: np.ndarray, label: np.ndarray, min_items: int, n_boot: int, seed: int, confidence: float
) -> dict[str, Any] | None:
    """The macro accuracy with its interval; None when no label has `min_items` items."""
    value, names = macro_accuracy(correct, label, min_items)
    if not names:
        return None
    lo, hi = bootstrap_mean_interval([correct[label == x] for x in names], n_boot, seed, confidence)
    n = int(np.isin(label, names).sum())
    return {"value": value, "lo": min(100 * lo, value), "hi": max(100 * hi, value), "n": n, "labels": len(names)}


def summarize(
    scores: pd.DataFrame,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    min_attribute_pair_items: int = MIN_ATTRIBUTE_PAIR_ITEMS,
) -> dict:
    """Each set's headline metric as the paper reports it (`<dataset>`), its accuracy over items
    (`<dataset>_items`), per label (`<dataset>:<label>`) and, on the Order sets, per perturbation."""
    missing = [c for c in ("dataset", "label", "correct", "s0") if c not in scores.columns]
    if missing:
        raise ValueError(f"ARO scores: missing columns {missing}; expected the table score_dual writes")
    dataset = scores["dataset"].to_numpy().astype(str)
    unknown = sorted(set(dataset) - set(DATASETS))
    if unknown:
        raise ValueError(f"ARO scores: unknown datasets {unknown}; expected some of {list(DATASETS)}")
    correct, label = scores["correct"].to_numpy(bool), scores["label"].to_numpy().astype(str)
    metrics: dict[str, dict[str, Any]] = {}
    for name in DATASETS:
        mask = dataset == name
        if not mask.any():
            continue
        c, lab = correct[mask], label[mask]
        items = accuracy_json(accuracy_from_correct(c, confidence))
        metrics[f"{name}_items"] = items
        if name.startswith("vg_"):
            min_items = min_attribute_pair_items if name == "vg_attribution" else 1
            macro = _macro_json(c, lab, min_items, n_boot, seed, confidence)
            if macro is not None:  # left out when no label has enough items (a small world's VG-Attribution)
                metrics[name] = macro
            for x in np.unique(lab):
                metrics[f"{name}:{x}"] = accuracy_json(accuracy_from_correct(c[lab == x], confidence))
        else:
            metrics[name] = items
            s = scores.loc[mask, [f"s{k}" for k in range(MAX_OPTIONS)]].to_numpy(np.float64)
            for k, pert in enumerate(PERTURBATIONS, start=1):
                metrics[f"{name}:{pert}"] = accuracy_json(accuracy_from_correct(s[:, 0] >= s[:, k], confidence))
    return {
        "metrics": metrics,
        "chance": {d: CHANCE_PERCENT[d] for d in DATASETS},
        "n_instances": int(len(scores)),
        "confidence": confidence,
        "min_attribute_pair_items": min_attribute_pair_items,
        "interval": f"Wilson {confidence:.0%}; macro accuracies: percentile bootstrap within each relation or "
        f"attribute pair ({n_boot}, seed {seed})",
    }


# --- per-instance outcomes (paired tests of two models) ----------------------------------------------

PAIRED_METRICS = DATASETS


def instance_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """Per instance (index: id, sorted), whether the model is right, one column per set (False off the set's
    rows is never read: a paired test of a set reads its own instances, `outcomes_of`)."""
    ids = scores["id"].to_numpy(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise ValueError("ARO per-instance scores: an id appears twice; expected one row per instance")
    return pd.DataFrame(
        {"dataset": scores["dataset"].to_numpy().astype(str), "correct": scores["correct"].to_numpy(bool)},
        index=pd.Index(ids, name="id"),
    ).sort_index()
