"""ECCV Caption's audit against the world's truth: precision and recall of each positive set, the simulated answers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.audit_rows import rate_row, value_row
from itmbench.papers.eccv.canonical import I2T, SHORT
from itmbench.papers.eccv.config import ANSWERS, EccvConfig
from itmbench.papers.eccv.graded import SplitData, claim_matrix, split_data
from itmbench.papers.eccv.released import DIRECTIONS
from itmbench.world.generate import World, WorldConfig


def _pair_keys(image_ids: np.ndarray, caption_ids: np.ndarray) -> np.ndarray:
    return np.asarray(image_ids, dtype=np.int64) * (1 << 31) + np.asarray(caption_ids, dtype=np.int64)


def _truth_pairs(data: SplitData, direction: str, query_ids: np.ndarray) -> np.ndarray:
    """Keys of every (image, caption) pair that fits, for the queries of a direction."""
    if direction == I2T:
        sub = data.fits[:, data.image_rows(query_ids)]
        ci, qi = np.nonzero(sub)
        return _pair_keys(query_ids[qi], data.caption_ids[ci])
    sub = data.fits[data.caption_rows(query_ids)]
    qi, ii = np.nonzero(sub)
    return _pair_keys(data.image_ids[ii], query_ids[qi])


def audit(
    world: World,
    tables: dict[str, pd.DataFrame],
    cfg: EccvConfig,
    *,
    world_cfg: WorldConfig | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Precision and recall (%) of each positive set against the complete truth, per direction, on the ECCV queries.

    Long form (row, column, value, lo, hi). Rows: the original pairs, CxC ∪ original (when built with
    CxC), the human-verified pairs, the final ECCV Caption positives, the PM positives, the proposed
    candidates (the ceiling of human-verified recall) and the truth itself. Precision = |S ∩ T| / |S|
    and recall = |S ∩ T| / |T| over all (query, item) pairs of the direction (micro), with Wilson
    intervals; 'positives per query' has no interval. Also the simulated answers' distribution by
    number of violated claims (% of pairs, Wilson). The truth is recomputed from the scene graphs.
    """
    data = split_data(world, cfg.split, world_cfg)
    pos, queries, ann = tables["positives"], tables["queries"], tables["annotations"]
    rows: list[dict[str, Any]] = []
    for direction in DIRECTIONS:
        short = SHORT[direction]
        q_ids = queries.loc[queries["direction"] == direction, "query_id"].to_numpy(dtype=np.int64)
        qcol = "image_id" if direction == I2T else "caption_id"
        truth = np.unique(_truth_pairs(data, direction, q_ids))
        sub = pos[(pos["direction"] == direction) & pos[qcol].isin(q_ids)]
        sets: dict[str, np.ndarray] = {}
        for label, source in (("Original (COCO)", "original"), ("CxC ∪ original", "cxc")):
            part = sub[sub["source"] == source]
            if source == "original" or len(part):
                sets[label] = _pair_keys(part["image_id"], part["caption_id"])
        a = ann[ann["direction"] == direction]
        verified = a[a["answer"].isin(cfg.positive_answers)]
        sets["ECCV human-verified"] = _pair_keys(verified["image_id"], verified["caption_id"])
        final = sub[sub["source"] == "eccv"]
        sets["ECCV Caption"] = _pair_keys(final["image_id"], final["caption_id"])
        pm = tables["pm_positives"]
        pm = pm[(pm["direction"] == direction) & pm[qcol].isin(q_ids)]
        sets[f"PM (zeta={cfg.pm_zeta})"] = _pair_keys(pm["image_id"], pm["caption_id"])
        sets["Proposed (annotators' top-k)"] = _pair_keys(a["image_id"], a["caption_id"])
        for label, keys in sets.items():
            keys = np.unique(keys)
            hits = int(np.isin(keys, truth).sum())
            rows.append(rate_row(label, f"{short} precision", hits, len(keys), confidence))
            rows.append(rate_row(label, f"{short} recall", hits, len(truth), confidence))
            rows.append(value_row(label, f"{short} positives per query", len(keys) / max(len(q_ids), 1)))
        rows.append(
            value_row("Truth (every fitting pair)", f"{short} positives per query", len(truth) / max(len(q_ids), 1))
        )
    # the simulated humans, by number of violated claims (recomputed from the scene graphs)
    judged = ann.drop_duplicates(["direction", "query_id", "candidate_id"])
    satisfied, total = claim_matrix(data.structures, data.scenes, data.margin, frozenset(), data.max_objects)
    violated = (total[:, None] - satisfied)[
        data.caption_rows(judged["caption_id"]), data.image_rows(judged["image_id"])
    ]
    level = np.minimum(violated, 2)
    answers = judged["answer"].to_numpy()
    for lvl, label in ((0, "answers: pair fits"), (1, "answers: 1 claim violated"), (2, "answers: 2+ claims violated")):
        mask = level == lvl
        for answer in ANSWERS:
            rows.append(rate_row(label, answer, int((answers[mask] == answer).sum()), int(mask.sum()), confidence))
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])
