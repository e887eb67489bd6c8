"""CxC's Tables 2-5 filled from the world's metrics: R@K and median rank per direction and positive set, Spearman."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.papers.world_cells import (
    WorldMetrics,
    cell,
    entry_cell,
    long_frame,
    metric_entry,
    models_of,
)

CXC_DIRECTIONS: dict[str, str] = {
    "i2t": "Image → Text",
    "t2i": "Text → Image",
    "t2t": "Text → Text",
    "i2i": "Image → Image",
}
CXC_RECALLS: tuple[str, ...] = ("R@1", "R@5", "R@10")
CXC_CORRELATIONS: dict[str, str] = {"sts": "STS", "sis": "SIS", "sits": "SITS"}


def cxc_world_long(metrics: WorldMetrics, rows: Mapping[str, str]) -> pd.DataFrame:
    """CxC Tables 2-5: R@K and median rank per direction and positive set, and the Spearman correlations."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("cxc", {})
    layout: list[tuple[str, str, str, str]] = [
        ("Table 2", "MS-COCO", "i2t", "coco"),
        ("Table 2", "MS-COCO", "t2i", "coco"),
        ("Table 2", "CxC", "i2t", "cxc"),
        ("Table 2", "CxC", "t2i", "cxc"),
        ("Table 3", "", "t2t", "cxc"),
        ("Table 4", "", "i2i", "cxc"),
    ]
    for model in models_of(metrics, "cxc"):
        row, doc = rows.get(model, model), docs[model]
        for table, block, direction, positives in layout:
            for k in (*CXC_RECALLS, "MedR"):
                entry = metric_entry(doc, f"{direction}/{positives}/{k}", f"cxc/{model}.json")
                if entry is not None:
                    column = f"{CXC_DIRECTIONS[direction]} {'med r' if k == 'MedR' else k}"
                    records.append(entry_cell(table, block, row, column, entry, model))
        for name, column in CXC_CORRELATIONS.items():
            entry = metric_entry(doc, f"{name}/spearman", f"cxc/{model}.json")
            if entry is not None:
                records.append(entry_cell("Table 5", "", row, column, entry, model))
                if entry.get("std") is not None:
                    records.append(cell("Table 5", "", row, f"{column} ±", entry["std"], math.nan, math.nan, model))
    return long_frame(records)


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """CxC's world cells (rows named by the mapping)."""
    return cxc_world_long(metrics, rows)


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    return {
        "Table 2": "MS-COCO = the original positives, CxC = the original positives with SITS >= 3 pairs, on "
        "the world's test split; med r = median rank of the first positive.",
        "Table 5": "Spearman x100 between model similarity and the mean rating: mean and ± std over the "
        "bootstrap samples (half the queries, one rated partner each), as printed; interval: bootstrap percentiles.",
    }
