"""BISON: the annotation JSON and prediction JSONs -> canonical tables.

Annotation file `{"info": {...}, "data": [{"bison_id", "caption_id", "image_candidates":
[{"image_id", "image_filename"}, {...}], "true_image_id"}, ...]}` (COCO val2014 ids); predictions
`[{"bison_id", "predicted_image_id"}, ...]`.

Canonical annotation table (`read_bison_annotations`), one row per triple, columns in this order:
bison_id: int64, caption_id: int64, image_id_0: int64, image_filename_0: string, image_id_1: int64,
image_filename_1: string, true_image_id: int64, true_index: int64 (0 or 1: which candidate is true),
false_image_id: int64. `attrs["info"]` keeps the file's info object.
Canonical predictions table (`read_bison_predictions`): bison_id: int64, predicted_image_id: int64.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pandas as pd

from itmbench.sources._common import (
    INT,
    STRING,
    SourceFormatError,
    parse_int,
    parse_text,
    read_json_file,
    require_keys,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

ANNOTATION_SCHEMA: dict[str, str] = {
    "bison_id": INT,
    "caption_id": INT,
    "image_id_0": INT,
    "image_filename_0": STRING,
    "image_id_1": INT,
    "image_filename_1": STRING,
    "true_image_id": INT,
    "true_index": INT,
    "false_image_id": INT,
}
PREDICTION_SCHEMA: dict[str, str] = {"bison_id": INT, "predicted_image_id": INT}


def read_bison_annotations(path: str | os.PathLike) -> pd.DataFrame:
    """Read the BISON annotation JSON into one row per (caption, two images) triple.

    Strict JSON; a declared file must have its md5 (and count, where declared); no triple, or a
    bison_id twice, is an error.
    """
    check_released(path)
    document = read_json_file(path)
    if not isinstance(document, Mapping) or not isinstance(document.get("data"), list):
        raise SourceFormatError(path, "top level", 'an object with a list "data" of triples')
    cols: dict[str, list] = {name: [] for name in ANNOTATION_SCHEMA}
    seen: dict[int, int] = {}
    for index, record in enumerate(document["data"]):
        where = f"data[{index}]"
        require_keys(record, ("bison_id", "caption_id", "image_candidates", "true_image_id"), path, where)
        bison_id = parse_int(record["bison_id"], path, f"{where}.bison_id", "an integer bison_id")
        if bison_id in seen:
            raise SourceFormatError(
                path, f"{where}.bison_id", f"a unique bison_id (also at data[{seen[bison_id]}])", bison_id
            )
        seen[bison_id] = index
        candidates = record["image_candidates"]
        if not isinstance(candidates, list) or len(candidates) != 2:
            raise SourceFormatError(
                path, f"{where}.image_candidates", "a list of exactly 2 image candidates", candidates
            )
        ids: list[int] = []
        for position, candidate in enumerate(candidates):
            at = f"{where}.image_candidates[{position}]"
            require_keys(candidate, ("image_id", "image_filename"), path, at)
            ids.append(parse_int(candidate["image_id"], path, f"{at}.image_id", "an integer COCO image id"))
            cols[f"image_filename_{position}"].append(
                parse_text(candidate["image_filename"], path, f"{at}.image_filename", "an image file name")
            )
            cols[f"image_id_{position}"].append(ids[-1])
        if ids[0] == ids[1]:
            raise SourceFormatError(path, f"{where}.image_candidates", "two different images", ids)
        true_id = parse_int(record["true_image_id"], path, f"{where}.true_image_id", "an integer image id")
        if true_id not in ids:
            raise SourceFormatError(path, f"{where}.true_image_id", f"one of the candidates {ids}", true_id)
        true_index = ids.index(true_id)
        cols["bison_id"].append(bison_id)
        cols["caption_id"].append(parse_int(record["caption_id"], path, f"{where}.caption_id", "an integer caption id"))
        cols["true_image_id"].append(true_id)
        cols["true_index"].append(true_index)
        cols["false_image_id"].append(ids[1 - true_index])
    check_count(path, len(cols["bison_id"]), "triples")
    frame = typed_frame(cols, ANNOTATION_SCHEMA)
    frame.attrs["info"] = dict(document.get("info") or {})
    return frame


def read_bison_predictions(path: str | os.PathLike) -> pd.DataFrame:
    """Read a BISON prediction JSON ([{bison_id, predicted_image_id}]), one prediction per bison_id.

    Strict JSON; a declared file (the released fake predictions) must have its md5 and item count;
    an empty list, or a bison_id twice (both positions named), is an error.
    """
    check_released(path)
    document = read_json_file(path)
    if not isinstance(document, list):
        raise SourceFormatError(
            path, "top level", "a list of {bison_id, predicted_image_id} objects", type(document).__name__
        )
    cols: dict[str, list] = {name: [] for name in PREDICTION_SCHEMA}
    seen: dict[int, int] = {}
    for index, record in enumerate(document):
        where = f"[{index}]"
        require_keys(record, ("bison_id", "predicted_image_id"), path, where)
        bison_id = parse_int(record["bison_id"], path, f"{where}.bison_id", "an integer bison_id")
        if bison_id in seen:
            raise SourceFormatError(
                path, f"{where}.bison_id", f"one prediction per bison_id (also at [{seen[bison_id]}])", bison_id
            )
        seen[bison_id] = index
        cols["bison_id"].append(bison_id)
        cols["predicted_image_id"].append(
            parse_int(record["predicted_image_id"], path, f"{where}.predicted_image_id", "an integer image id")
        )
    check_count(path, len(cols["bison_id"]), "items")
    return typed_frame(cols, PREDICTION_SCHEMA)


def bison_counts(annotations: pd.DataFrame) -> dict[str, int]:
    """BISON Table 2 counts of an annotation table: examples, unique images, unique captions."""
    images = pd.concat([annotations["image_id_0"], annotations["image_id_1"]])
    return {
        "Number of examples": len(annotations),
        "Unique images": int(images.nunique()),
        "Unique captions": int(annotations["caption_id"].nunique()),
    }
