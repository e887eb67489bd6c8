"""SugarCrepe: the 7 subset JSONs and GPT-4V's per-instance answers -> canonical tables.

Subset files `<type>_<subtype>.json` ({add, replace, swap} x {obj, att, rel}, 7 exist) hold
{"<id>": {"filename", "caption", "negative_caption"}}; `filename` is a COCO val2017 image name.
GPT-4V answers (`gpt-4v-results/<order>/gpt4v-<subset>.json`, order positive-first or
negative-first: which caption was shown as option (1)) add {"answer": {"free_form_answer",
"multiple_choice_answer"}, "correct"}. A non-record entry such as "accuracy": 0.8577 is a summary
and goes to DataFrame.attrs["summary"].

Canonical instances table (`read_sugarcrepe_json`, `load_sugarcrepe`), columns in this order:
id: int64 (key in the subset file), subset: string ('swap_obj'), type: string (add | replace | swap),
subtype: string (obj | att | rel), filename: string, image_id: int64, caption: string (positive),
negative_caption: string.
GPT-4V answers table (`read_gpt4v_answers`, `load_gpt4v_answers`): the same columns, then
order: string, free_form_answer: string, multiple_choice_answer: string, correct: bool.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from itmbench.negatives.captions import SUBSETS, split_subset
from itmbench.sources._common import (
    BOOL,
    INT,
    STRING,
    SourceFormatError,
    check_unique,
    coco_image_id,
    parse_bool,
    parse_int,
    parse_text,
    read_json_file,
    require_keys,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

ORDERS = ("positive-first", "negative-first")
INSTANCE_SCHEMA: dict[str, str] = {
    "id": INT,
    "subset": STRING,
    "type": STRING,
    "subtype": STRING,
    "filename": STRING,
    "image_id": INT,
    "caption": STRING,
    "negative_caption": STRING,
}
GPT4V_SCHEMA: dict[str, str] = {
    **INSTANCE_SCHEMA,
    "order": STRING,
    "free_form_answer": STRING,
    "multiple_choice_answer": STRING,
    "correct": BOOL,
}


def infer_subset(path: str | os.PathLike) -> str:
    """Subset name of 'add_att.json' or 'gpt4v-add_att.json'."""
    match = re.fullmatch(r"(?:gpt4v-)?([a-z]+_[a-z]+)\.json", Path(path).name)
    if match is None or match.group(1) not in SUBSETS:
        raise ValueError(f"{path}: cannot infer the SugarCrepe subset; expected a name like swap_obj.json")
    return match.group(1)


def infer_order(path: str | os.PathLike) -> str:
    """Answer order of a GPT-4V file from its folder (positive-first / negative-first)."""
    order = Path(path).parent.name
    if order not in ORDERS:
        raise ValueError(
            f"{path}: cannot infer the answer order; expected the file inside {ORDERS[0]}/ or {ORDERS[1]}/"
        )
    return order


def _records(path: str | os.PathLike) -> tuple[list[tuple[int, str, Mapping[str, Any]]], dict[str, Any]]:
    """(id, key, record) of every per-instance entry of a SugarCrepe-style JSON, and its summary entries.

    Checks the md5 and record count of a declared file; strict JSON (a repeated key is an error);
    two keys naming one id ('7', '07') are an error; no record at all is an error.
    """
    check_released(path)
    document = read_json_file(path)
    if not isinstance(document, Mapping):
        raise SourceFormatError(path, "top level", 'an object {"<id>": {...}, ...}', type(document).__name__)
    records: list[tuple[int, str, Mapping[str, Any]]] = []
    summary: dict[str, Any] = {}
    seen: dict = {}
    for key, value in document.items():
        if not key.isdigit() and isinstance(value, (int, float)) and not isinstance(value, bool):
            summary[key] = value
            continue
        instance_id = parse_int(key, path, f"key {key!r}", "an instance id (digits)")
        check_unique(path, instance_id, f"key {key!r}", seen, "one key per instance id")
        records.append((instance_id, key, value))
    check_count(path, len(records), "keys")
    return records, summary


def _instance_fields(
    path: str | os.PathLike, key: str, record: Any, subset: str, extra_keys: Iterable[str] = ()
) -> dict[str, Any]:
    """Validated canonical instance fields of one JSON record."""
    where = f"key {key!r}"
    require_keys(record, ("filename", "caption", "negative_caption", *extra_keys), path, where)
    kind, subtype = split_subset(subset)
    filename = record["filename"]
    return {
        "subset": subset,
        "type": kind,
        "subtype": subtype,
        "filename": filename,
        "image_id": coco_image_id(filename, path, f"{where}.filename"),
        "caption": parse_text(record["caption"], path, f"{where}.caption", "a non-empty positive caption"),
        "negative_caption": parse_text(
            record["negative_caption"], path, f"{where}.negative_caption", "a non-empty negative caption"
        ),
    }


def read_sugarcrepe_json(path: str | os.PathLike, subset: str | None = None) -> pd.DataFrame:
    """Read one SugarCrepe subset file into the canonical instances table."""
    subset = subset or infer_subset(path)
    records, _ = _records(path)
    cols: dict[str, list] = {name: [] for name in INSTANCE_SCHEMA}
    for instance_id, key, record in records:
        fields = {"id": instance_id, **_instance_fields(path, key, record, subset)}
        for name in INSTANCE_SCHEMA:
            cols[name].append(fields[name])
    return typed_frame(cols, INSTANCE_SCHEMA)


def load_sugarcrepe(folder: str | os.PathLike, subsets: Iterable[str] = SUBSETS) -> pd.DataFrame:
    """All subset files of a folder (the repository's data/), concatenated."""
    frames = [read_sugarcrepe_json(Path(folder) / f"{subset}.json", subset) for subset in subsets]
    return pd.concat(frames, ignore_index=True)


def read_gpt4v_answers(path: str | os.PathLike, subset: str | None = None, order: str | None = None) -> pd.DataFrame:
    """Read one GPT-4V answer file into the answers table (summary entries go to attrs['summary'])."""
    subset = subset or infer_subset(path)
    order = order or infer_order(path)
    if order not in ORDERS:
        raise ValueError(f"{path}: order must be one of {ORDERS}, got {order!r}")
    records, summary = _records(path)
    cols: dict[str, list] = {name: [] for name in GPT4V_SCHEMA}
    for instance_id, key, record in records:
        fields = {
            "id": instance_id,
            "order": order,
            **_instance_fields(path, key, record, subset, ("answer", "correct")),
        }
        answer = require_keys(
            record["answer"], ("free_form_answer", "multiple_choice_answer"), path, f"key {key!r}.answer"
        )
        for name in ("free_form_answer", "multiple_choice_answer"):
            value = answer[name]
            if not isinstance(value, str):
                raise SourceFormatError(path, f"key {key!r}.answer.{name}", "a string", value)
            fields[name] = value
        if not isinstance(record["correct"], bool):
            raise SourceFormatError(path, f"key {key!r}.correct", "a JSON boolean", record["correct"])
        fields["correct"] = parse_bool(record["correct"], path, f"key {key!r}.correct")
        for name in GPT4V_SCHEMA:
            cols[name].append(fields[name])
    frame = typed_frame(cols, GPT4V_SCHEMA)
    frame.attrs["summary"] = summary
    return frame


def load_gpt4v_answers(folder: str | os.PathLike, subsets: Iterable[str] = SUBSETS) -> pd.DataFrame:
    """All GPT-4V answer files under `folder` (gpt-4v-results/), both orders, concatenated."""
    frames = [
        read_gpt4v_answers(Path(folder) / order / f"gpt4v-{subset}.json", subset, order)
        for order in ORDERS
        for subset in subsets
    ]
    return pd.concat(frames, ignore_index=True)


def gpt4v_accuracy(answers: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) of GPT-4V per answer order, and the mean of the orders' accuracies (the paper's figure)."""
    by_order = answers.groupby("order", sort=True)["correct"].agg(["sum", "size"])
    orders = [str(order) for order in by_order.index]
    n_correct = [int(value) for value in by_order["sum"]]
    n = [int(value) for value in by_order["size"]]
    accuracy = [100.0 * c / t for c, t in zip(n_correct, n, strict=True)]
    return typed_frame(
        {
            "order": [*orders, "mean of orders"],
            "n_correct": [*n_correct, sum(n_correct)],
            "n": [*n, sum(n)],
            "accuracy": [*accuracy, sum(accuracy) / len(accuracy) if accuracy else float("nan")],
        },
        {"order": STRING, "n_correct": INT, "n": INT, "accuracy": "float64"},
    )
