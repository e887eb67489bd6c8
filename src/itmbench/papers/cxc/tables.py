"""CxC's Tables 2-5 filled from the world's metrics: R@K and median rank per direction and positive set, Spearman;
and the appendix's Table 3, DE_I2T beside its one-off ablations (report.cxc.ablations: printed ablation -> model)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
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
# The appendix's Table 3: its rows (printed ablation names, in print order) and each block's positives and directions
# (MS-COCO has no Image → Image: no original image-image pairs), R@1 and R@10 each.
ABLATIONS: tuple[str, ...] = ("baseline", "small batch size", "no pretraining", "ResNet-152")
ABLATION_BLOCKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("MS-COCO", "coco", ("i2t", "t2i", "t2t")),
    ("CxC", "cxc", ("i2t", "t2i", "t2t", "i2i")),
)
ABLATION_RECALLS: tuple[str, ...] = ("R@1", "R@10")


def ablation_row(ablation: str) -> str:
    """The printed row of an ablation of DE_I2T (as transcribed: 'DE_I2T (small batch size)')."""
    return f"DE_I2T ({ablation})"


def ablation_models(options: Mapping[str, Any]) -> dict[str, str]:
    """report.cxc.ablations from the table options (printed ablation -> world model), checked: the printed ones only,
    each model once."""
    given = dict(options.get("ablations") or {})
    unknown = sorted(set(given) - set(ABLATIONS))
    if unknown:
        raise ValueError(f"report.cxc.ablations: unknown ablations {unknown}; expected some of {list(ABLATIONS)}")
    models = list(given.values())
    twice = sorted({m for m in models if models.count(m) > 1})
    if twice:
        raise ValueError(f"report.cxc.ablations: models {twice} stand for more than one ablation")
    return given


def ablation_long(metrics: WorldMetrics, ablations: Mapping[str, str]) -> pd.DataFrame:
    """The appendix's Table 3: each ablation's world model (when it scored CxC) under the MS-COCO and the CxC
    positives, R@1 and R@10 per direction, with the metrics' intervals."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("cxc", {})
    for ablation in ABLATIONS:
        model = ablations.get(ablation)
        if model is None or model not in docs:
            continue  # not scored in this source (the coco source has no ablations): the printed row alone
        for block, positives, directions in ABLATION_BLOCKS:
            for direction in directions:
                for k in ABLATION_RECALLS:
                    entry = metric_entry(docs[model], f"{direction}/{positives}/{k}", f"cxc/{model}.json")
                    if entry is None:
                        raise ValueError(
                            f"cxc/{model}.json: no {direction}/{positives}/{k} (appendix Table 3 needs it)"
                        )
                    column = f"{CXC_DIRECTIONS[direction]} {k}"
                    records.append(entry_cell("Appendix Table 3", block, ablation_row(ablation), column, entry, model))
    return long_frame(records)


def cxc_world_long(metrics: WorldMetrics, rows: Mapping[str, str], skip: Collection[str] = ()) -> pd.DataFrame:
    """CxC Tables 2-5: R@K and median rank per direction and positive set, and the Spearman correlations (every
    model that scored CxC but those in `skip`)."""
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
    for model in (m for m in models_of(metrics, "cxc") if m not in skip):
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
    """CxC's world cells (rows named by the mapping): Tables 2-5 without the ablations of DE_I2T (all but the
    baseline), which fill the appendix's Table 3."""
    ablations = ablation_models(options)
    skip = {m for name, m in ablations.items() if name != "baseline"}
    main, appendix = cxc_world_long(metrics, rows, skip), ablation_long(metrics, ablations)
    return pd.concat([main, appendix], ignore_index=True) if len(appendix) else main


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    return {
        "Table 2": "MS-COCO = the original positives, CxC = the original positives with SITS >= 3 pairs, on "
        "the world's test split; med r = median rank of the first positive.",
        "Table 5": "Spearman x100 between model similarity and the mean rating: mean and ± std over the "
        "bootstrap samples (half the queries, one rated partner each), as printed; interval: bootstrap percentiles.",
        "Appendix Table 3": "DE_I2T and its one-off ablations (report.cxc.ablations names the world model of each "
        "row): small batch size = its batch x 128/2048; no pretraining = its fine-tune from a random init instead "
        "of from clip; ResNet-152 = a ModifiedResNet image tower (itm-clip-tiny-rn), pretrained as clip, then its "
        "fine-tune. MS-COCO and CxC positives as in "
        "Table 2 (and Tables 3-4), on the world's test split.",
    }
