"""ARO's released VG-Relation and VG-Attribution files -> one table per set (what the authors' `dataset_zoo` reads).

`visual_genome_relation.json` and `visual_genome_attribution.json` (mertyg/vision-language-models-are-bows,
`dataset_zoo/aro_datasets.py`, downloaded from Google Drive by `VG_Relation` and `VG_Attribution`) are JSON
lists, one object per test case; the fields the authors' code reads are the ones read here (others are
ignored):
- `image_path`: the image's file name inside `images/` of `vgr_vga_images.zip`;
- `bbox_x`, `bbox_y`, `bbox_w`, `bbox_h`: the box the image is cropped to (`__getitem__`: "the bounding box
  that contains the relation", PIL's `crop((x, y, x + w, y + h))`);
- `true_caption`, `false_caption`: the caption and its swap (the authors score [false, true]);
- VG-Relation: `relation_name` (the label `evaluate_scores` groups by); VG-Attribution: `attributes`, the two
  attributes, grouped by `"<first>_<second>"` as `evaluate_scores` does.

Canonical table (`read_aro_vg_json`), columns in this order: id: int64 (the test case's index in the list),
dataset: string (vg_relation | vg_attribution), label: string, image_path: string, bbox_x, bbox_y, bbox_w,
bbox_h: float64, true_caption: string, false_caption: string.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.sources._common import (
    FLOAT,
    INT,
    STRING,
    SourceFormatError,
    parse_float,
    parse_text,
    read_json_file,
    require_keys,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

VG_DATASETS = ("vg_relation", "vg_attribution")
LABEL_FIELD = {"vg_relation": "relation_name", "vg_attribution": "attributes"}
BOX = ("bbox_x", "bbox_y", "bbox_w", "bbox_h")
SCHEMA: dict[str, str] = {
    "id": INT,
    "dataset": STRING,
    "label": STRING,
    "image_path": STRING,
    **dict.fromkeys(BOX, FLOAT),
    "true_caption": STRING,
    "false_caption": STRING,
}


def _label(dataset: str, value: Any, path: str | os.PathLike, where: str) -> str:
    if dataset == "vg_relation":
        return parse_text(value, path, where, "a relation name")
    if not isinstance(value, list) or len(value) != 2:
        raise SourceFormatError(path, where, "a list of the two swapped attributes", value)
    return "_".join(parse_text(v, path, f"{where}[{k}]", "an attribute") for k, v in enumerate(value))


def _box(record: Mapping[str, Any], path: str | os.PathLike, where: str) -> list[float]:
    box = [parse_float(record[name], path, f"{where}.{name}") for name in BOX]
    for name, value in zip(BOX[2:], box[2:]):
        if value <= 0:
            raise SourceFormatError(path, f"{where}.{name}", "a positive box size", value)
    return box


def read_aro_vg_json(path: str | os.PathLike, dataset: str) -> pd.DataFrame:
    """Read VG-Relation's or VG-Attribution's JSON list into the canonical table (md5 and count checked)."""
    if dataset not in VG_DATASETS:
        raise ValueError(f"{path}: unknown ARO set {dataset!r}; expected one of {VG_DATASETS}")
    check_released(path)
    document = read_json_file(path)
    if not isinstance(document, list):
        raise SourceFormatError(path, "top level", "a list of test cases [{...}, ...]", type(document).__name__)
    check_count(path, len(document), "items")
    cols: dict[str, list] = {name: [] for name in SCHEMA}
    field = LABEL_FIELD[dataset]
    for index, record in enumerate(document):
        where = f"item {index}"
        require_keys(record, ("image_path", *BOX, "true_caption", "false_caption", field), path, where)
        values = {
            "id": index,
            "dataset": dataset,
            "label": _label(dataset, record[field], path, f"{where}.{field}"),
            "image_path": parse_text(record["image_path"], path, f"{where}.image_path", "an image file name"),
            **dict(zip(BOX, _box(record, path, where))),
            "true_caption": parse_text(record["true_caption"], path, f"{where}.true_caption", "a non-empty caption"),
            "false_caption": parse_text(record["false_caption"], path, f"{where}.false_caption", "a non-empty caption"),
        }
        for name in SCHEMA:
            cols[name].append(values[name])
    return typed_frame(cols, SCHEMA)
