"""ARO's tables filled from the world's metrics.

No printed number of the paper is transcribed (`published_results.csv` holds none): the paper's text could be
retrieved only as its abstract and introduction, so its results tables could not be read (docs/aro.md). The
world's tables are laid out as the authors' code reports the sets: one row per model with each set's headline
metric (`Results`: VG-Relation and VG-Attribution macro accuracy, COCO-Order and Flickr30k-Order accuracy
over items), and VG-Relation's accuracy per relation (`VG-Relation per relation`, the records the authors'
`evaluate_scores` returns).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.papers.aro.config import DATASETS
from itmbench.papers.world_cells import WorldMetrics, entry_cell, long_frame, metric_entry
from itmbench.world.captions import RELATION_WORDS

RESULTS_TABLE = "Results"
RELATION_TABLE = "VG-Relation per relation"
COLUMNS = {
    "vg_relation": "VG-Relation",
    "vg_attribution": "VG-Attribution",
    "coco_order": "COCO-Order",
    "flickr30k_order": "Flickr30k-Order",
}


def world_records(docs: Mapping[str, Mapping[str, Any]], rows: Mapping[str, str]) -> list[tuple[Any, ...]]:
    """(table, block, row, column, value, lo, hi, model) cells of each world model's ARO metrics."""
    records: list[tuple[Any, ...]] = []
    for model in sorted(docs):
        row = rows.get(model, model)
        for dataset in DATASETS:
            entry = metric_entry(docs[model], dataset, f"aro/{model}.json")
            if entry is not None and entry.get("value") is not None:
                records.append(entry_cell(RESULTS_TABLE, "", row, COLUMNS[dataset], entry, model))
        for relation, words in RELATION_WORDS.items():
            entry = metric_entry(docs[model], f"vg_relation:{relation}", f"aro/{model}.json")
            if entry is not None and entry.get("value") is not None:
                records.append(entry_cell(RELATION_TABLE, "", row, words[0], entry, model))
    return records


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """ARO's world cells (rows named by the mapping)."""
    return long_frame(world_records(metrics.get("aro", {}), rows))


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What the world tables' cells are, for their captions (printed table -> note)."""
    return {
        RESULTS_TABLE: "Accuracy (%): VG-Relation and VG-Attribution as macro accuracy (the mean over relations; over "
        "attribute pairs of at least 25 items), COCO-Order and Flickr30k-Order over items (the true caption against "
        "its four word-order perturbations); chance 50, 50, 20, 20. Macro intervals: a bootstrap within relations "
        "or attribute pairs; others Wilson. No printed number is transcribed (docs/aro.md).",
        RELATION_TABLE: "Accuracy (%, Wilson) per relation of the world's four: the true caption against the one with "
        "the two objects swapped; chance 50.",
    }
