"""BiVLC: the Hugging Face layout and the released per-instance result files -> canonical tables.

Canonical instances table (`read_bivlc_table`: parquet, CSV or JSON lines with the Hugging Face
columns image, caption, negative_caption, negative_image, type, subtype), columns in this order:
id: int64 (row position), image: object (as stored: a path string, or a {bytes, path} dict from
parquet), caption: string, negative_caption: string, negative_image: object, type: string,
subtype: string.

Released result files of IMirandaM/BiVLC (every table keeps the file's columns, typed, plus id,
the 0-based row, and model, taken from the file name):
- `results/BiVLC_<model>.csv` (`read_bivlc_results`): image, caption, negative_caption,
  negative_image (the images are printed PIL reprs, not files), type, subtype, text_score_i0,
  text_score_i1, image_score_c0, image_score_c1, text_score, image_score, group_score (bool):
  text_score_i0 = s(C0,I0) > s(C1,I0), text_score_i1 = s(C1,I1) > s(C0,I1) (I2T = both),
  image_score_c0 = s(C0,I0) > s(C0,I1), image_score_c1 = s(C1,I1) > s(C1,I0) (T2I = both),
  group_score = text_score and image_score. The loader checks these identities.
- `results/SUGARCREPE_CORRECT_<model>.csv` (`read_sugarcrepe_correct`): filename, caption,
  negative_caption, type, subtype, correct (bool), plus image_id.
- `source_data/SugarCrepe/test_SugarCrepe.csv` (`read_sugarcrepe_csv`): the SugarCrepe instances
  table of itmbench.papers.sugarcrepe.released (id = row).
- `src/BiVLC_Generation/BiVLC_negative_imgs.csv` (`read_negative_image_list`): the instances table
  plus negative_images: object (list of the 4 generated file names); id is the file's index column.
- `src/Detectors/results/*_Classifier_*.csv` (`read_detector_results`): text_pred: float64,
  img_pred: float64 (NaN where the file has no image classifier), label: bool.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Hashable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from itmbench.papers.sugarcrepe.released import INSTANCE_SCHEMA, SUBSETS
from itmbench.reading import parse_json, read_parquet_file, read_text
from itmbench.sources._common import (
    BOOL,
    FLOAT,
    INT,
    OBJECT,
    STRING,
    SourceFormatError,
    check_unique,
    coco_image_id,
    csv_header,
    iter_csv_rows,
    parse_bool,
    parse_float,
    parse_int,
    parse_text,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

HF_COLUMNS = ("image", "caption", "negative_caption", "negative_image", "type", "subtype")
TABLE_SCHEMA: dict[str, str] = {
    "id": INT,
    "image": OBJECT,
    "caption": STRING,
    "negative_caption": STRING,
    "negative_image": OBJECT,
    "type": STRING,
    "subtype": STRING,
}
COMPARISONS = ("text_score_i0", "text_score_i1", "image_score_c0", "image_score_c1")
SCORES = ("text_score", "image_score", "group_score")
RESULT_COLUMNS = (*HF_COLUMNS, *COMPARISONS, *SCORES)
RESULTS_SCHEMA: dict[str, str] = {
    "id": INT,
    "model": STRING,
    "image": STRING,
    "caption": STRING,
    "negative_caption": STRING,
    "negative_image": STRING,
    "type": STRING,
    "subtype": STRING,
    **{name: BOOL for name in (*COMPARISONS, *SCORES)},
}
CORRECT_COLUMNS = ("filename", "caption", "negative_caption", "type", "subtype", "correct")
CORRECT_SCHEMA: dict[str, str] = {
    "id": INT,
    "model": STRING,
    "filename": STRING,
    "image_id": INT,
    "caption": STRING,
    "negative_caption": STRING,
    "type": STRING,
    "subtype": STRING,
    "correct": BOOL,
}
NEGATIVE_IMAGE_COLUMNS = (
    "filename",
    "caption",
    "negative_caption",
    "type",
    "subtype",
    "index",
    "hn_img_0",
    "hn_img_1",
    "hn_img_2",
    "hn_img_3",
)
NEGATIVE_IMAGE_SCHEMA: dict[str, str] = {**INSTANCE_SCHEMA, "negative_images": OBJECT}
DETECTOR_SCHEMA: dict[str, str] = {"id": INT, "model": STRING, "text_pred": FLOAT, "img_pred": FLOAT, "label": BOOL}


def _check_type(kind: Any, subtype: Any, path: str | os.PathLike, where: str) -> tuple[str, str]:
    """Validate a (type, subtype) pair against the 7 SugarCrepe subsets."""
    if f"{kind}_{subtype}" not in SUBSETS:
        raise SourceFormatError(path, where, f"type/subtype among {', '.join(SUBSETS)}", f"{kind}/{subtype}")
    return str(kind), str(subtype)


def _model_from_name(path: str | os.PathLike, pattern: str) -> str:
    """Model name captured by `pattern` from the file name."""
    match = re.fullmatch(pattern, Path(path).name)
    if match is None:
        raise ValueError(f"{path}: cannot infer the model name from the file name (pattern {pattern})")
    return match.group(1)


# --- the Hugging Face layout -------------------------------------------------------------------


def _iter_table_records(path: str | os.PathLike, fmt: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(location, record) of each row of a parquet, CSV or JSON-lines file."""
    if fmt == "parquet":
        frame = read_parquet_file(path)
        missing = [name for name in HF_COLUMNS if name not in frame.columns]
        if missing:
            raise SourceFormatError(path, "schema", f"columns {', '.join(HF_COLUMNS)}; missing {', '.join(missing)}")
        for position, record in enumerate(frame[list(HF_COLUMNS)].to_dict("records")):
            yield f"row {position}", record
    elif fmt == "csv":
        header = csv_header(path)
        missing = [name for name in HF_COLUMNS if name not in header]
        if missing:
            raise SourceFormatError(
                path, "line 1", f"header columns {', '.join(HF_COLUMNS)}; missing {', '.join(missing)}"
            )
        for line, fields in iter_csv_rows(path, header):
            yield f"line {line}", dict(zip(header, fields, strict=True))
    elif fmt == "jsonl":
        for line, text in enumerate(read_text(path).split("\n"), start=1):
            if not text.strip():
                continue
            record = parse_json(text, path, allow_nan=False, first_line=line)
            if not isinstance(record, Mapping):
                raise SourceFormatError(path, f"line {line}", "a JSON object", record)
            missing = [name for name in HF_COLUMNS if name not in record]
            if missing:
                raise SourceFormatError(
                    path, f"line {line}", f"keys {', '.join(HF_COLUMNS)}; missing {', '.join(missing)}"
                )
            yield f"line {line}", record
    else:
        raise ValueError(f"{path}: unknown format {fmt!r}; expected parquet, csv or jsonl")


def _format_of(path: str | os.PathLike) -> str:
    """Table format from the file suffix."""
    suffix = Path(path).suffix.lower()
    formats = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}
    if suffix not in formats:
        raise ValueError(f"{path}: cannot tell the format from suffix {suffix!r}; expected .parquet, .csv or .jsonl")
    return formats[suffix]


def _image_key(value: Any) -> Hashable:
    """What identifies an image value: a path string, or a {bytes, path} struct by its path and bytes' md5."""
    if isinstance(value, Mapping):
        data = value.get("bytes")
        digest = hashlib.md5(data, usedforsecurity=False).hexdigest() if isinstance(data, bytes) else None
        return (value.get("path"), digest)
    return value if isinstance(value, Hashable) else repr(value)


def read_bivlc_table(path: str | os.PathLike, fmt: str | None = None) -> pd.DataFrame:
    """Read BiVLC instances in the Hugging Face layout (parquet, CSV or JSON lines) into the canonical table.

    Every row is checked (images present, type/subtype a SugarCrepe subset, captions non-empty); the
    same instance (images, captions, type, subtype) twice is an error naming both rows.
    """
    check_released(path)
    fmt = fmt or _format_of(path)
    cols: dict[str, list] = {name: [] for name in TABLE_SCHEMA}
    seen: dict = {}
    for position, (where, record) in enumerate(_iter_table_records(path, fmt)):
        identity = (
            _image_key(record["image"]),
            _image_key(record["negative_image"]),
            *(record[name] for name in ("caption", "negative_caption", "type", "subtype")),
        )
        check_unique(path, identity, where, seen, "one row per instance (images, captions, type, subtype)")
        for name in ("image", "negative_image"):
            value = record[name]
            if (
                value is None
                or (isinstance(value, str) and not value.strip())
                or (isinstance(value, float) and value != value)
            ):
                raise SourceFormatError(path, f"{where} column {name}", "an image (path, bytes or struct)", value)
        kind, subtype = _check_type(record["type"], record["subtype"], path, f"{where} columns type/subtype")
        cols["id"].append(position)
        cols["image"].append(record["image"])
        cols["caption"].append(parse_text(record["caption"], path, f"{where} column caption"))
        cols["negative_caption"].append(
            parse_text(record["negative_caption"], path, f"{where} column negative_caption")
        )
        cols["negative_image"].append(record["negative_image"])
        cols["type"].append(kind)
        cols["subtype"].append(subtype)
    check_count(path, len(cols["id"]), "rows")
    return typed_frame(cols, TABLE_SCHEMA)


# --- released result files ---------------------------------------------------------------------


def _read_csv_table(
    path: str | os.PathLike,
    header: tuple[str, ...],
    schema: Mapping[str, str],
    convert: Callable[[str, dict[str, str]], dict[str, Any]],
    identity: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Read a CSV with a fixed header, turning each row into canonical fields with `convert`.

    Checks the md5 and row count of a declared file; a header-only file is an error; two rows with
    the same `identity` columns are an error naming both lines.
    """
    check_released(path)
    cols: dict[str, list] = {name: [] for name in schema}
    seen: dict = {}
    for position, (line, fields) in enumerate(iter_csv_rows(path, header, optional)):
        record = dict(zip(header, fields, strict=True))
        if identity:
            check_unique(
                path, tuple(record[c] for c in identity), f"line {line}", seen, f"one row per ({', '.join(identity)})"
            )
        row = convert(f"line {line}", record)
        row.setdefault("id", position)
        for name in schema:
            cols[name].append(row[name])
    check_count(path, len(cols["id"]), "rows")
    return typed_frame(cols, schema)


def read_bivlc_results(path: str | os.PathLike, model: str | None = None) -> pd.DataFrame:
    """Read a released BiVLC per-instance result file (booleans per comparison) and check its identities."""
    model = model or _model_from_name(path, r"BiVLC_(.+)\.csv")

    def convert(where: str, row: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {"model": model}
        for name in ("image", "caption", "negative_caption", "negative_image"):
            out[name] = parse_text(row[name], path, f"{where} column {name}")
        out["type"], out["subtype"] = _check_type(row["type"], row["subtype"], path, f"{where} columns type/subtype")
        for name in (*COMPARISONS, *SCORES):
            out[name] = parse_bool(row[name], path, f"{where} column {name}")
        identities = {
            "text_score": out["text_score_i0"] and out["text_score_i1"],
            "image_score": out["image_score_c0"] and out["image_score_c1"],
            "group_score": out["text_score"] and out["image_score"],
        }
        for name, expected in identities.items():
            if out[name] != expected:
                raise SourceFormatError(path, f"{where} column {name}", f"{expected} (from the comparisons)", row[name])
        return out

    return _read_csv_table(path, RESULT_COLUMNS, RESULTS_SCHEMA, convert, HF_COLUMNS)


def _sugarcrepe_fields(path: str | os.PathLike, where: str, row: Mapping[str, str]) -> dict[str, Any]:
    """Canonical SugarCrepe instance fields of a CSV row (filename, captions, type, subtype)."""
    kind, subtype = _check_type(row["type"], row["subtype"], path, f"{where} columns type/subtype")
    return {
        "subset": f"{kind}_{subtype}",
        "type": kind,
        "subtype": subtype,
        "filename": row["filename"],
        "image_id": coco_image_id(row["filename"], path, f"{where} column filename"),
        "caption": parse_text(row["caption"], path, f"{where} column caption"),
        "negative_caption": parse_text(row["negative_caption"], path, f"{where} column negative_caption"),
    }


def read_sugarcrepe_correct(path: str | os.PathLike, model: str | None = None) -> pd.DataFrame:
    """Read a released SugarCrepe per-instance correctness file (SUGARCREPE_CORRECT_<model>.csv)."""
    model = model or _model_from_name(path, r"SUGARCREPE_CORRECT_(.+)\.csv")

    def convert(where: str, row: dict[str, str]) -> dict[str, Any]:
        return {
            "model": model,
            **_sugarcrepe_fields(path, where, row),
            "correct": parse_bool(row["correct"], path, f"{where} column correct"),
        }

    return _read_csv_table(path, CORRECT_COLUMNS, CORRECT_SCHEMA, convert, CORRECT_COLUMNS[:-1])


def read_sugarcrepe_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read BiVLC's copy of SugarCrepe (test_SugarCrepe.csv) into the SugarCrepe instances table."""
    header = ("filename", "caption", "negative_caption", "type", "subtype")
    return _read_csv_table(
        path, header, INSTANCE_SCHEMA, lambda where, row: _sugarcrepe_fields(path, where, row), header
    )


def read_negative_image_list(path: str | os.PathLike) -> pd.DataFrame:
    """Read BiVLC_negative_imgs.csv: each SugarCrepe instance with its 4 generated negative image names.

    The k-th name must be '<index>_<filename stem>_<k>.jpg', as every name of the released file is.
    """

    def convert(where: str, row: dict[str, str]) -> dict[str, Any]:
        out = _sugarcrepe_fields(path, where, row)
        out["id"] = parse_int(row["index"], path, f"{where} column index", "an integer instance index")
        names = [f"{row['index']}_{Path(row['filename']).stem}_{k}.jpg" for k in range(4)]
        for k, name in enumerate(names):
            if row[f"hn_img_{k}"] != name:
                raise SourceFormatError(
                    path, f"{where} column hn_img_{k}", f"the image name {name}", row[f"hn_img_{k}"]
                )
        out["negative_images"] = names
        return out

    return _read_csv_table(path, NEGATIVE_IMAGE_COLUMNS, NEGATIVE_IMAGE_SCHEMA, convert, ("index",))


def read_detector_results(path: str | os.PathLike, model: str | None = None) -> pd.DataFrame:
    """Read a released detector result file (text_pred[, img_pred], label) of BiVLC or SugarCrepe."""
    model = model or _model_from_name(path, r"(?:BiVLC|SUGARCREPE)_Classifier_(?:CORRECT_)?(.+)\.csv")

    def convert(where: str, row: dict[str, str]) -> dict[str, Any]:
        img_pred = row.get("img_pred")
        return {
            "model": model,
            "text_pred": parse_float(row["text_pred"], path, f"{where} column text_pred"),
            "img_pred": float("nan") if img_pred is None else parse_float(img_pred, path, f"{where} column img_pred"),
            "label": parse_bool(row["label"], path, f"{where} column label"),
        }

    return _read_csv_table(path, ("text_pred", "img_pred", "label"), DETECTOR_SCHEMA, convert, optional=("img_pred",))
