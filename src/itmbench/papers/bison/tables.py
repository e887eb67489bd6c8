"""BISON's tables filled from the world's metrics: Table 3 (accuracy and retrieval R@K), Table 1, and section 6's
caption-metric baseline (BISON accuracy of BLEU-4, CIDEr-D, METEOR and, on the world, the SPICE analogue Tuple F1
as scorers; printed in the text, table "Section 6" of published_results.csv)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from itmbench.metrics.captioning import METRIC_NAMES, NOT_POSSIBLE
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.papers.world_cells import (
    WorldMetrics,
    cell,
    entry_cell,
    long_frame,
    metric_entry,
    models_of,
)


def bison_world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    table1_model: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    feature_pairs: Sequence[Sequence[str]] | None = None,
) -> pd.DataFrame:
    """BISON Table 3 (BISON accuracy + retrieval R@1/R@5 per model), Table 1 (one model's R@1 errors) and Table 7
    (Table 3's columns for each system of `feature_pairs` on two image towers)."""
    retrieval = metrics.get("retrieval", {})
    records = [r for model in models_of(metrics, "bison") for r in table3_cells(metrics, model, rows.get(model, model))]
    records.sort(key=lambda r: r[2])  # rows by name, each row's columns in the printed order
    if table1_model:
        records += bison_table1_records(retrieval, table1_model, confidence)
    records += bison_table7_records(metrics, feature_pairs or ())
    records += bison_section6_records(metrics.get(CAPTION_METRICS, {}))
    return long_frame(records)


TABLE7_BLOCKS = ("ViT image tower", "ResNet image tower")  # the world's two feature sets (the paper's ResNet-IN and
# ResNeXt-IG-3.5B): the same recipe trained on the same data with either image tower


def table7_system(pair: Sequence[str]) -> str:
    """A Table 7 row: the system, named by its two models."""
    return f"{pair[0]} / {pair[1]}"


def bison_table7_records(metrics: WorldMetrics, pairs: Sequence[Sequence[str]]) -> list[tuple[Any, ...]]:
    """BISON Table 7 in the world: each system of `report.bison_feature_pairs` ([ViT-tower model, ResNet-tower
    model]) in one block per tower, Table 3's columns (retrieval R@1/R@5 on the original positives, BISON)."""
    records: list[tuple[Any, ...]] = []
    for pair in pairs:
        missing = [(b, m) for m in pair for b in ("bison", "retrieval") if m not in metrics.get(b, {})]
        if missing:
            raise ValueError(
                f"report.bison_feature_pairs {list(pair)}: no metrics of {missing}; expected both models scored on "
                "BISON and retrieval (params.yaml models.<name>.benchmarks)"
            )
        for block, model in zip(TABLE7_BLOCKS, pair):
            records += table3_cells(metrics, model, table7_system(pair), "Table 7", block)
    return records


# Table 3 (and 7) print their columns in this order: image R@1, R@5, caption R@1, R@5, BISON
TABLE3_COLUMNS = (
    "Image retrieval R@1",
    "Image retrieval R@5",
    "Caption retrieval R@1",
    "Caption retrieval R@5",
    "BISON",
)


def table3_cells(
    metrics: WorldMetrics, model: str, row: str, table: str = "Table 3", block: str = ""
) -> list[tuple[Any, ...]]:
    """One model's cells in Table 3's columns (retrieval R@1/R@5 on the original positives, BISON accuracy), in
    printed order, as a row of `table` (Table 3, or a block of Table 7)."""
    records = []
    original = metrics.get("retrieval", {}).get(model, {}).get("metrics", {}).get("original", {})
    for direction, label in (("t2i", "Image retrieval"), ("i2t", "Caption retrieval")):
        for k in ("R@1", "R@5"):
            cell = original.get(direction, {}).get(k)
            if cell is not None:
                records.append(entry_cell(table, block, row, f"{label} {k}", cell, model))
    entry = (
        metric_entry(metrics["bison"][model], "bison", f"bison/{model}.json")
        if model in metrics.get("bison", {})
        else None
    )
    if entry is not None:
        records.append(entry_cell(table, block, row, "BISON", entry, model))
    return records


CAPTION_METRICS = "bison_caption_metrics"  # the metrics folder (and params section) of section 6's baseline
SECTION6_BLOCK = "Caption-metric baseline"


def bison_section6_records(docs: Mapping[str, Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """Section 6 in the world: each captioning metric's BISON accuracy as a scorer, rows in the printed order."""
    records = []
    for metric in sorted(docs, key=lambda m: list(METRIC_NAMES).index(m) if m in METRIC_NAMES else len(METRIC_NAMES)):
        if metric not in METRIC_NAMES:
            raise ValueError(
                f"{CAPTION_METRICS}/{metric}.json: unknown captioning metric {metric!r}; "
                f"expected one of {list(METRIC_NAMES)}"
            )
        entry = metric_entry(docs[metric], "bison", f"{CAPTION_METRICS}/{metric}.json")
        if entry is not None:
            records.append(
                entry_cell("Section 6", SECTION6_BLOCK, METRIC_NAMES[metric], "BISON accuracy", entry, metric)
            )
    return records


def bison_table1_records(
    retrieval: Mapping[str, Mapping[str, Any]], model: str, confidence: float = DEFAULT_CONFIDENCE
) -> list[tuple[Any, ...]]:
    """BISON Table 1 in the world: of a model's t2i R@1 errors (original positives), those correct by the truth."""
    doc = retrieval.get(model)
    if doc is None:
        raise ValueError(
            f"report.bison_table1_model is {model!r}, but the retrieval metrics have no such model; "
            f"models: {sorted(retrieval)}"
        )
    t2i = doc.get("metrics", {})
    try:
        original, truth = t2i["original"]["t2i"]["R@1"], t2i["truth"]["t2i"]["R@1"]
    except KeyError as err:
        raise ValueError(
            f"retrieval/{model}.json: no t2i R@1 under {err} positives; expected original and truth"
        ) from None
    n = int(original["n"])
    if int(truth["n"]) != n:
        raise ValueError(f"retrieval/{model}.json: t2i R@1 counts differ (original n={n}, truth n={truth['n']})")
    hits_original = round(float(original["value"]) * n / 100)
    hits_truth = round(float(truth["value"]) * n / 100)
    if hits_truth < hits_original:
        raise ValueError(
            f"retrieval/{model}.json: t2i R@1 under the truth ({truth['value']}) is below the original "
            f"({original['value']}); the truth's positives should contain the original ones"
        )
    errors = n - hits_original
    correct = hits_truth - hits_original
    records: list[tuple[Any, ...]] = []
    for label, count in (("Recall@1 Incorrect, Human Incorrect", errors - correct),
                         ("Recall@1 Incorrect, Human Correct", correct)):  # fmt: skip
        lo, hi = wilson_interval(count, errors, confidence)
        share = 100.0 * count / errors if errors else math.nan
        records.append(cell("Table 1", "", label, "Number", count, math.nan, math.nan, model))
        if errors:
            records.append(cell("Table 1", "", label, "Percentage", share, 100 * lo, 100 * hi, model))
    return records


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """BISON's world cells (rows named by the mapping; Table 1 for ``report.bison_table1_model``)."""
    return bison_world_long(
        metrics, rows, options.get("bison_table1_model"), confidence, options.get("bison_feature_pairs")
    )


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    return {
        "Table 1": "Human = the world's truth: of one world model's text-to-image R@1 errors under the "
        "original (COCO-style) positives, those whose top image fits the caption; derived from R@1 under the "
        "original and the complete-truth positives, which contain them. Number: count; Percentage: Wilson interval.",
        "Table 3": "Image retrieval = text-to-image, Caption retrieval = image-to-text R@K on the world's "
        "test split with the original positives; BISON = accuracy on the world's BISON.",
        "Table 7": "Each system of report.bison_feature_pairs (its two models named in the row) trained by the "
        "same recipe on the same data with the ViT image tower and with the ResNet one (the paper: ResNet-IN and "
        "ResNeXt-IG-3.5B features); Table 3's columns.",
        "Section 6": "Each captioning metric (pycocoevalcap) scores the BISON query against each candidate "
        "image's reference captions (the true image's captions but the query; a seeded draw of the false "
        "image's, as many as bison_caption_metrics.negative_references), text tokenized as the COCO "
        "evaluation does; the higher score picks the image and a tie counts as wrong. CIDEr-D's IDF is over "
        "every reference set of the evaluation. Wilson intervals. SPICE: not possible here ("
        + NOT_POSSIBLE["spice"]
        + "); in its place, on the world only, "
        + METRIC_NAMES["tuple_f1"]
        + ": F1 of the query's object, attribute and relation tuples, read by the world's own parser, against "
        "the union of the references' (an unreadable caption has none), a stand-in for SPICE, not SPICE.",
    }
