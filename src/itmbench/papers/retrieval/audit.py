"""What only the world can tell about retrieval: how many true matches COCO's positives (an image's own
captions) miss, recomputed from the scene graphs and checked against the `truth` positives the build wrote;
and the ceiling that binary truth puts on R@K with the original positives: a model that ranks every true
match first, in random order, expects `oracle_recall`. The world's captions fit or do not: a ranking by fit
alone cannot prefer an image's own captions to its other true ones, as COCO's graded captions let a model do."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itmbench.papers.audit_rows import COLUMNS, rate_row, value_row
from itmbench.papers.retrieval.build import split_truth
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.world.generate import World, WorldConfig

# The R@K of the truth oracle's rows: COCO retrieval's standard cut-offs (the retrieval table's).
ORACLE_KS = (1, 5, 10)


def _pairs(frame: pd.DataFrame) -> set[tuple[int, int]]:
    return set(zip(frame["caption_id"].astype(np.int64).tolist(), frame["image_id"].astype(np.int64).tolist()))


def audit(
    world: World, tables: dict[str, pd.DataFrame], cfg: RetrievalConfig, *, world_cfg: WorldConfig
) -> pd.DataFrame:
    """The false-negative share of the original positives, and per query how many true matches there are.

    Long form (row, column, value, lo, hi), column 'world' (Wilson intervals on rates, in %). The truth is
    recomputed from the scene graphs; a built `truth` positive set that differs from it is an error.
    """
    image_ids, caption_ids, fits = split_truth(world, cfg.split, world_cfg.relation_margin, world_cfg.max_objects)
    ci, ii = np.nonzero(fits)
    truth = set(zip(caption_ids[ci].astype(np.int64).tolist(), image_ids[ii].astype(np.int64).tolist()))
    positives = tables["positives"]
    built = _pairs(positives[positives["positive_set"] == "truth"])
    if built != truth:
        extra, missing = sorted(built - truth)[:3], sorted(truth - built)[:3]
        raise ValueError(
            f"retrieval audit: the built truth positives differ from the world's truth "
            f"({len(built - truth)} not true, e.g. {extra}; {len(truth - built)} missing, e.g. {missing}); "
            "expected a benchmark built from this world with these truth settings"
        )
    original = _pairs(positives[positives["positive_set"] == "original"])
    per_caption = fits.sum(axis=1)
    per_image = fits.sum(axis=0)
    n_c, n_i = len(caption_ids), len(image_ids)
    # each caption's own image (COCO-style: its original positive; -1 where it has none) against every image
    is_own = _owners(positives, caption_ids)[:, None] == image_ids[None, :].astype(np.int64)
    foreign = int((fits & ~is_own).any(axis=0).sum())  # images a caption written for another image fits
    rows = [
        value_row("images in the gallery", "world", n_i),
        value_row("captions in the gallery", "world", n_c),
        value_row("original positive pairs", "world", len(original)),
        value_row("true positive pairs", "world", len(truth)),
        rate_row("original positives that are true (%)", "world", len(original & truth), len(original)),
        rate_row("true positives the original set misses (%)", "world", len(truth - original), len(truth)),
        rate_row("captions that fit another image too (%)", "world", int((per_caption > 1).sum()), n_c),
        rate_row("images with a fitting caption of another image (%)", "world", foreign, n_i),
        value_row("mean true images per caption", "world", float(per_caption.mean()) if n_c else float("nan")),
        value_row("mean true captions per image", "world", float(per_image.mean()) if n_i else float("nan")),
    ]
    own_c = fits & is_own  # the original positives that are true
    for direction, true_k, own_k in (
        ("i2t", per_image, own_c.sum(axis=0)),
        ("t2i", per_caption, own_c.sum(axis=1)),
    ):
        for k in ORACLE_KS:
            rows.append(
                value_row(
                    f"truth oracle's {direction} R@{k}, original positives (%)",
                    "world",
                    100.0 * float(oracle_recall(true_k, own_k, k).mean()) if len(true_k) else float("nan"),
                )
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def oracle_recall(n_true: np.ndarray, n_original: np.ndarray, k: int) -> np.ndarray:
    """Per query, the expected R@k against the original positives of a ranking that puts the query's n_true
    true matches first in a uniformly random order (n_original of them original positives): the chance that
    the first k of them hold an original one, 1 - C(n_true - n_original, k) / C(n_true, k) (exact)."""
    n = np.asarray(n_true, dtype=np.int64)
    o = np.asarray(n_original, dtype=np.int64)
    if np.any(o > n) or np.any(o < 0):
        raise ValueError("oracle_recall: expected 0 <= n_original <= n_true for every query")
    miss = np.ones(len(n), dtype=np.float64)  # P(none of the first k true matches is original)
    for j in range(k):
        left = n - j
        step = np.where(left > 0, (left - o) / np.maximum(left, 1), 1.0)
        miss *= np.clip(step, 0.0, 1.0)
    return np.where(o > 0, 1.0 - miss, 0.0)


def _owners(positives: pd.DataFrame, caption_ids: np.ndarray) -> np.ndarray:
    """Each caption's original image (its own, in COCO-style retrieval), -1 where it has none."""
    original = positives[positives["positive_set"] == "original"]
    owner = dict(zip(original["caption_id"].astype(np.int64).tolist(), original["image_id"].astype(np.int64).tolist()))
    return np.array([owner.get(int(c), -1) for c in caption_ids], dtype=np.int64)
