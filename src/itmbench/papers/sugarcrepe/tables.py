"""SugarCrepe's table filled from the world's metrics, beside the published numbers.

The SugarCrepe paper itself is not among the project's sources (shared/seeds), so its published
numbers are those BiVLC's paper prints for SugarCrepe (`published_results.csv`: BiVLC Table 2 and
Table 3, "SugarCrepe" column, and the state of the art quoted in its section 5.3): the accuracy
pooled over all 7,512 instances. The world fills BiVLC Table 3's rows (the contrastive models of
one size; params.yaml ``report.rows.sugarcrepe`` maps world models to them) with its pooled
accuracy in that column, and adds the columns the paper does not print there: the mean over the
subtypes (SugarCrepe's own summary) and each subtype's accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.negatives.captions import SUBSETS
from itmbench.papers.world_cells import WorldMetrics, long_frame

WORLD_TABLE = "BiVLC Table 3"
MEAN_COLUMN = "mean over subtypes"


def subset_column(subset: str) -> str:
    """A subset's column as BiVLC's tables name SugarCrepe's categories: 'replace_obj' -> 'Replace Obj'."""
    return " ".join(w.capitalize() for w in subset.split("_"))


def world_records(docs: Mapping[str, Mapping[str, Any]], rows: Mapping[str, str]) -> list[tuple[Any, ...]]:
    """(table, block, row, column, value, lo, hi, model) cells of each world model's SugarCrepe metrics."""
    records: list[tuple[Any, ...]] = []
    names = [("pooled", "SugarCrepe"), ("mean_over_subtypes", MEAN_COLUMN)]
    names += [(s, subset_column(s)) for s in SUBSETS]
    for model in sorted(docs):
        metrics = docs[model].get("metrics", {})
        for name, column in names:
            entry = metrics.get(name)
            if not entry or entry.get("value") is None:
                continue
            lo, hi = entry.get("lo"), entry.get("hi")
            records.append(
                (
                    WORLD_TABLE,
                    "",
                    rows.get(model, model),
                    column,
                    float(entry["value"]),
                    math.nan if lo is None else float(lo),
                    math.nan if hi is None else float(hi),
                    model,
                )
            )
    return records


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """SugarCrepe's world cells (rows named by the mapping)."""
    return long_frame(world_records(metrics.get("sugarcrepe", {}), rows))


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What the world table's cells are, for its caption (printed table -> note)."""
    return {
        WORLD_TABLE: "Published: the SugarCrepe column of BiVLC's Table 3 (accuracy pooled over the instances); the "
        "world adds the mean over subtypes and each subtype's accuracy (Wilson intervals; the mean's: a bootstrap "
        "within subtypes).",
    }


# --- the released per-instance results of BiVLC's four models on SugarCrepe ---------------------------------

SAME_INSTANCE = ("type", "subtype", "filename", "caption", "negative_caption")


def load_released_model_scores(mirror: Any) -> dict[str, pd.DataFrame]:
    """{printed row: per-instance correctness} of the four models whose SugarCrepe results BiVLC released
    (SUGARCREPE_CORRECT_<model>.csv, md5-checked), each keyed by its row id; the files must list the same
    instances in the same order (an InputError names the first model and row that differ)."""
    from itmbench.errors import InputError
    from itmbench.papers.bivlc.tables import RELEASED_MODELS
    from itmbench.sources.loading import load_released

    out: dict[str, pd.DataFrame] = {}
    first: tuple[str, pd.DataFrame] | None = None
    for suffix, (file_model, row) in RELEASED_MODELS.items():
        frame = load_released(f"bivlc_sugarcrepe_correct_{suffix}", mirror)
        if first is not None:
            name, ref = first
            keys = list(SAME_INSTANCE)
            if len(frame) != len(ref) or not (frame[keys].to_numpy() == ref[keys].to_numpy()).all():
                raise InputError(
                    f"SUGARCREPE_CORRECT_{file_model}.csv: expected the instances of SUGARCREPE_CORRECT_{name}.csv in "
                    "the same order, to pair the models over them"
                )
        else:
            first = (file_model, frame)
        subset = frame["type"].astype(str) + "_" + frame["subtype"].astype(str)
        out[row] = frame[["id", "type", "subtype", "correct"]].assign(subset=subset).reset_index(drop=True)
    return out


def released_metrics(
    scores: Mapping[str, pd.DataFrame], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, dict[str, Any]]:
    """{row: metrics JSON in the world's shape (`score.summarize`: per subtype, pooled, mean over subtypes)}."""
    from itmbench.papers.sugarcrepe.score import summarize

    return {
        row: {"benchmark": "sugarcrepe", "model": row, **summarize(f, confidence=confidence)}
        for row, f in scores.items()
    }


def released_paired(
    scores: Mapping[str, pd.DataFrame],
    pairs: Any = (
        ("CLIP_TROHN-Text", "CLIP"),
        ("CLIP_TROHN-Text", "CLIP_COCO"),
        ("CLIP_TROHN-Text", "CLIP_TROHN-Img"),
        ("CLIP_TROHN-Img", "CLIP"),
    ),  # fmt: skip
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Paired tests (`itmbench.papers.paired`) of released models over the same SugarCrepe instances (pooled)."""
    from itmbench.papers.paired import paired_records
    from itmbench.papers.sugarcrepe.score import PAIRED_METRICS, instance_outcomes

    outcomes = {row: instance_outcomes(frame) for row, frame in scores.items()}
    return paired_records("sugarcrepe", outcomes, list(pairs), PAIRED_METRICS, n_boot, seed, confidence)
