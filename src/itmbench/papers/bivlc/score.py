"""BiVLC's scoring: per-instance scores of both halves (dual encoder or cross scorer), and the metrics."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import BIVLC_SCORE_NAMES, accuracy_from_correct, bivlc_scores
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval
from itmbench.negatives.captions import SUBSETS, TYPES
from itmbench.negatives.edits import _percent_interval
from itmbench.scoring.embed import EmbeddingCache, pair_dots
from itmbench.scoring.pairs import PairScores, pair_frame

CHANCE_PERCENT = {"sugarcrepe": 50.0, "i2t": 25.0, "t2i": 25.0, "group": 100.0 / 6.0}


def score_dual(tables: Mapping[str, pd.DataFrame], cache: EmbeddingCache) -> pd.DataFrame:
    """One row per SugarCrepe instance: s(C0,I0), s(C1,I0), and for BiVLC members s(C0,I1), s(C1,I1) (else NaN).

    A BiVLC instance linked to a SugarCrepe row (sugarcrepe_id >= 0: the world, where BiVLC is built
    from its own SugarCrepe) is scored on that row's items. An unlinked one (sugarcrepe_id = -1: the
    released BiVLC, whose captions were reformatted and whose images come with the dataset) gets a
    row of its own, with sugarcrepe_id -1, scored on its own items; it does not count in SugarCrepe.
    """
    return _score_frame(tables, lambda captions, images: pair_dots(cache, captions, images))


def _linked(tables: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The BiVLC instances linked to a SugarCrepe row (indexed by it), and the unlinked ones (released BiVLC)."""
    all_inst = tables["instances"]
    linked = all_inst["sugarcrepe_id"].to_numpy(np.int64) >= 0
    return all_inst[linked].set_index("sugarcrepe_id"), all_inst[~linked]


def _quadruples(tables: Mapping[str, pd.DataFrame]) -> tuple[np.ndarray, ...]:
    """Per SugarCrepe row: I0, C0, C1, I1 (-1 outside BiVLC) and BiVLC membership."""
    sc = tables["sugarcrepe"]
    inst, _ = _linked(tables)
    member = sc["in_bivlc"].to_numpy(bool)
    i1 = np.full(len(sc), -1, dtype=np.int64)
    i1[member] = inst.loc[sc["id"].to_numpy()[member], "negative_image"].to_numpy(np.int64)
    c0, c1 = sc["caption_id"].to_numpy(np.int64), sc["negative_caption_id"].to_numpy(np.int64)
    return sc["image_id"].to_numpy(np.int64), c0, c1, i1, member


def pairs_needed(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The (caption_id, image_id) pairs a cross scorer must score: 2 per SugarCrepe instance, 4 per BiVLC one."""
    i0, c0, c1, i1, member = _quadruples(tables)
    _, own = _linked(tables)  # unlinked BiVLC instances (released BiVLC): 4 pairs each on their own items
    o0, o1 = own["caption_id"].to_numpy(np.int64), own["negative_caption_id"].to_numpy(np.int64)
    oi0, oi1 = own["image"].to_numpy(np.int64), own["negative_image"].to_numpy(np.int64)
    return pair_frame(
        np.concatenate([c0, c1, c0[member], c1[member], o0, o1, o0, o1]),
        np.concatenate([i0, i0, i1[member], i1[member], oi0, oi0, oi1, oi1]),
    )


def score_pairs(tables: Mapping[str, pd.DataFrame], pairs: PairScores) -> pd.DataFrame:
    """The per-instance table of `score_dual`, from a cross scorer's pair scores."""
    return _score_frame(tables, pairs.get)


def _score_frame(tables: Mapping[str, pd.DataFrame], pair_score: Any) -> pd.DataFrame:
    """The per-instance table, with s(caption, image) of row pairs given by `pair_score(captions, images)`."""
    sc = tables["sugarcrepe"]
    image, c0, c1, i1, member = _quadruples(tables)
    s01 = np.full(len(sc), np.nan)
    s11 = np.full(len(sc), np.nan)
    s01[member] = pair_score(c0[member], i1[member])
    s11[member] = pair_score(c1[member], i1[member])
    out = pd.DataFrame(
        {
            "sugarcrepe_id": sc["id"].to_numpy(np.int64),
            "bivlc_id": sc["bivlc_id"].to_numpy(np.int64),
            "in_bivlc": member,
            "subset": sc["subset"].to_numpy(),
            "type": sc["type"].to_numpy(),
            "subtype": sc["subtype"].to_numpy(),
            "image_id": image,
            "caption_id": c0,
            "negative_caption_id": c1,
            "negative_image_id": i1,
            "s_c0_i0": pair_score(c0, image),
            "s_c1_i0": pair_score(c1, image),
            "s_c0_i1": s01,
            "s_c1_i1": s11,
        }
    )
    _, own = _linked(tables)
    if len(own) == 0:
        return out
    c0, c1 = own["caption_id"].to_numpy(np.int64), own["negative_caption_id"].to_numpy(np.int64)
    i0, i1 = own["image"].to_numpy(np.int64), own["negative_image"].to_numpy(np.int64)
    rows = pd.DataFrame(
        {
            "sugarcrepe_id": np.full(len(own), -1, dtype=np.int64),
            "bivlc_id": own["id"].to_numpy(np.int64),
            "in_bivlc": np.ones(len(own), dtype=bool),
            "subset": (own["type"] + "_" + own["subtype"]).to_numpy(),
            "type": own["type"].to_numpy(),
            "subtype": own["subtype"].to_numpy(),
            "image_id": i0,
            "caption_id": c0,
            "negative_caption_id": c1,
            "negative_image_id": i1,
            "s_c0_i0": pair_score(c0, i0),
            "s_c1_i0": pair_score(c1, i0),
            "s_c0_i1": pair_score(c0, i1),
            "s_c1_i1": pair_score(c1, i1),
        }
    )
    return pd.concat([out, rows], ignore_index=True)


def _metric(correct: np.ndarray, confidence: float) -> dict[str, Any]:
    """{value, lo, hi, n} in percent with a Wilson interval; None values where there are no instances."""
    if len(correct) == 0:
        return {"value": None, "lo": None, "hi": None, "n": 0}
    acc = accuracy_from_correct(correct, confidence)
    lo, hi = _percent_interval(acc.percent, acc.ci_percent)
    return {"value": acc.percent, "lo": lo, "hi": hi, "n": acc.n}


def _sugarcrepe_rows(scores: pd.DataFrame) -> pd.DataFrame:
    """The rows that are SugarCrepe instances (not BiVLC instances scored on their own items)."""
    return scores[scores["sugarcrepe_id"].to_numpy(np.int64) >= 0]


def _group_metrics(scores: pd.DataFrame, confidence: float) -> dict[str, dict[str, Any]]:
    """SugarCrepe accuracy over all rows and the seven BiVLC scores over BiVLC rows."""
    sugarcrepe = _sugarcrepe_rows(scores)
    out = {"sugarcrepe": _metric((sugarcrepe["s_c0_i0"] > sugarcrepe["s_c1_i0"]).to_numpy(), confidence)}
    b = scores[scores["in_bivlc"]]
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    for name in BIVLC_SCORE_NAMES:
        out[name] = _metric(getattr(per, name), confidence)
    return out


def summarize(scores: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """SugarCrepe accuracy and BiVLC I2T/T2I/Group (+ the four comparisons), overall, per type and subtype, in %."""
    metrics = _group_metrics(scores, confidence)
    b = scores[scores["in_bivlc"]]
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    gap = np.stack([per.i2t, per.t2i], axis=1).astype(float)
    lo, hi = bootstrap_interval(gap, lambda x: 100.0 * float(x[:, 0].mean() - x[:, 1].mean()), n_boot, seed, confidence)
    metrics["i2t_minus_t2i"] = {
        "value": 100.0 * float(gap[:, 0].mean() - gap[:, 1].mean()) if len(gap) else None,
        "lo": None if np.isnan(lo) else lo,
        "hi": None if np.isnan(hi) else hi,
        "n": len(gap),
    }
    by_type = {t: _group_metrics(scores[scores["type"] == t], confidence) for t in TYPES}
    by_subtype = {s: _group_metrics(scores[scores["subset"] == s], confidence) for s in SUBSETS}
    return {
        "metrics": metrics,
        "by_type": by_type,
        "by_subtype": by_subtype,
        "chance": CHANCE_PERCENT,
        "n_sugarcrepe": len(_sugarcrepe_rows(scores)),
        "n_bivlc": len(b),
        "confidence": confidence,
        "interval": f"Wilson {confidence:.0%}; i2t_minus_t2i: paired percentile bootstrap ({n_boot}, seed {seed})",
    }


PAIRED_METRICS = ("i2t", "t2i", "group")
OUTCOME_COLUMNS = ("bivlc_id", "in_bivlc", "s_c0_i0", "s_c0_i1", "s_c1_i0", "s_c1_i1")


def instance_outcomes(scores: pd.DataFrame) -> pd.DataFrame:
    """Per BiVLC instance (index: bivlc_id, sorted), whether the model gets I2T, T2I and Group right: what
    a paired test of two models reads (`itmbench.papers.paired`)."""
    b = scores[scores["in_bivlc"].to_numpy(bool)]
    ids = b["bivlc_id"].to_numpy(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise ValueError("BiVLC per-instance scores: a bivlc_id appears twice; expected one row per instance")
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    out = pd.DataFrame({name: getattr(per, name) for name in PAIRED_METRICS}, index=pd.Index(ids, name="bivlc_id"))
    return out.sort_index()
