"""Crisscrossed Captions: the aggregated STS / SIS / SITS rating CSVs -> canonical tables.

Released files `{sts,sis,sits}_{val,test}.csv`, one rated pair per line:
`caption1,caption2` (STS) | `image1,image2` (SIS) | `caption,image` (SITS), then `agg_score`
(mean of 5 ratings on a 0-5 scale) and `sampling_method`. Captions are `COCO_val2014:sentid:N`
(N is the COCO caption annotation id, the id ECCV Caption uses); images are COCO file names.

Canonical tables, columns in this order (`a`, `b` are the file's two item columns):
- raw (`read_cxc_csv`, one row per file line): split: string, a: string, b: string,
  a_id: int64, b_id: int64, agg_score: float64, sampling_method: string, line: int64
  e.g. STS: split, caption1, caption2, caption1_id, caption2_id, agg_score, sampling_method, line.
- pairs (`load_cxc`): the raw columns (line = first line of the pair), then n_rows: int64 (file
  rows averaged into the pair: 2 for the SIS (a,b)/(b,a) duplicates) and positive: bool.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.sources._common import (
    BOOL,
    FLOAT,
    INT,
    INT64_MAX,
    STRING,
    SourceFormatError,
    apply_schema,
    check_unique,
    coco_image_id,
    iter_csv_rows,
    parse_float,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

TASKS = ("sts", "sis", "sits")
SPLITS = ("val", "test")
ITEM_COLUMNS: dict[str, tuple[str, str]] = {
    "sts": ("caption1", "caption2"),
    "sis": ("image1", "image2"),
    "sits": ("caption", "image"),
}
SAMPLING_METHODS: dict[str, tuple[str, ...]] = {
    "sts": ("c2c_cocaption", "c2c_isim"),
    "sis": ("i2i_csim",),
    "sits": ("c2i_intrasim", "c2i_original"),
}
# Which sampling methods are the original MS-COCO pairs ("Same Example" in the paper's Fig. 3).
SAME_EXAMPLE_METHODS = frozenset({"c2c_cocaption", "c2i_original"})
SYMMETRIC_TASKS = frozenset({"sts", "sis"})
SCORE_RANGE = (0.0, 5.0)
_CAPTION_ID = re.compile(r"^COCO_val2014:sentid:(\d+)$")


@dataclass(frozen=True)
class CxcThresholds:
    """Positive thresholds on the mean rating (paper: STS >= 3, SITS >= 3, SIS >= 2.5)."""

    sts: float = 3.0
    sis: float = 2.5
    sits: float = 3.0

    def for_task(self, task: str) -> float:
        """The threshold of one task."""
        return float(getattr(self, _check_task(task)))


def _check_task(task: str) -> str:
    """Validate a task name."""
    if task not in TASKS:
        raise ValueError(f"unknown CxC task {task!r}; expected one of {TASKS}")
    return task


def raw_schema(task: str) -> dict[str, str]:
    """Column -> dtype of the raw table of a task."""
    a, b = ITEM_COLUMNS[_check_task(task)]
    return {
        "split": STRING,
        a: STRING,
        b: STRING,
        f"{a}_id": INT,
        f"{b}_id": INT,
        "agg_score": FLOAT,
        "sampling_method": STRING,
        "line": INT,
    }


def pairs_schema(task: str) -> dict[str, str]:
    """Column -> dtype of the canonical (deduplicated, thresholded) pairs table of a task."""
    return {**raw_schema(task), "n_rows": INT, "positive": BOOL}


def infer_task_split(path: str | os.PathLike) -> tuple[str, str]:
    """(task, split) from a released file name such as sis_val.csv."""
    match = re.fullmatch(r"(sts|sis|sits)_(val|test)\.csv", Path(path).name)
    if match is None:
        raise ValueError(f"{path}: cannot infer the CxC task and split; expected a name like sts_val.csv")
    return match.group(1), match.group(2)


def _caption_id(value: str, path: str | os.PathLike, where: str) -> int:
    """Caption annotation id of 'COCO_val2014:sentid:N'."""
    match = _CAPTION_ID.match(value)
    if match is None or int(match.group(1)) > INT64_MAX:
        raise SourceFormatError(path, where, "a caption id like COCO_val2014:sentid:732091 (within int64)", value)
    return int(match.group(1))


def read_cxc_csv(path: str | os.PathLike, task: str | None = None, split: str | None = None) -> pd.DataFrame:
    """Read one CxC rating CSV into the raw table, one row per line, validating every field.

    A declared file must have its md5 and row count; a pair rated twice in the same order is an
    error naming both lines (STS and SIS list a pair once per order, which `load_cxc` averages).
    """
    check_released(path)
    if task is None or split is None:
        inferred_task, inferred_split = infer_task_split(path)
        task = task or inferred_task
        split = split or inferred_split
    a, b = ITEM_COLUMNS[_check_task(task)]
    header = (a, b, "agg_score", "sampling_method")
    parse_a = _caption_id if a.startswith("caption") else coco_image_id
    parse_b = _caption_id if b.startswith("caption") else coco_image_id
    methods = SAMPLING_METHODS[task]
    low, high = SCORE_RANGE
    cols: dict[str, list] = {name: [] for name in raw_schema(task)}
    seen: dict = {}
    for line, (item_a, item_b, score_text, method) in iter_csv_rows(path, header):
        where = f"line {line}"
        score = parse_float(score_text, path, f"{where} column agg_score", f"a mean rating in [{low:g}, {high:g}]")
        if not low <= score <= high:
            raise SourceFormatError(
                path, f"{where} column agg_score", f"a mean rating in [{low:g}, {high:g}]", score_text
            )
        if method not in methods:
            raise SourceFormatError(path, f"{where} column sampling_method", f"one of {methods}", method)
        cols[f"{a}_id"].append(parse_a(item_a, path, f"{where} column {a}"))
        cols[f"{b}_id"].append(parse_b(item_b, path, f"{where} column {b}"))
        check_unique(path, (item_a, item_b), where, seen, f"one row per ({a}, {b})")
        cols[a].append(item_a)
        cols[b].append(item_b)
        cols["agg_score"].append(score)
        cols["sampling_method"].append(method)
        cols["line"].append(line)
        cols["split"].append(split)
    check_count(path, len(cols["line"]), "rows")
    return typed_frame(cols, raw_schema(task))


def merge_duplicate_pairs(raw: pd.DataFrame, task: str) -> pd.DataFrame:
    """Average the ratings of repeated pairs ((a,b)/(b,a) for the symmetric STS and SIS)."""
    a, b = ITEM_COLUMNS[_check_task(task)]
    frame = raw.copy()
    ids_a = frame[f"{a}_id"].to_numpy()
    ids_b = frame[f"{b}_id"].to_numpy()
    if task in SYMMETRIC_TASKS:
        frame["_k1"], frame["_k2"] = np.minimum(ids_a, ids_b), np.maximum(ids_a, ids_b)
    else:
        frame["_k1"], frame["_k2"] = ids_a, ids_b
    grouped = frame.groupby(["_k1", "_k2"], sort=False)
    keep = frame.loc[grouped.cumcount().to_numpy() == 0].copy()
    keep["agg_score"] = grouped["agg_score"].transform("mean").loc[keep.index].to_numpy()
    keep["n_rows"] = grouped["agg_score"].transform("size").loc[keep.index].to_numpy()
    methods = grouped["sampling_method"].nunique()
    if (methods > 1).any():
        k1, k2 = methods[methods > 1].index[0]
        raise ValueError(f"CxC {task}: pair ({k1}, {k2}) is listed with different sampling methods")
    keep = keep.drop(columns=["_k1", "_k2"]).reset_index(drop=True)
    return keep


def mark_positives(pairs: pd.DataFrame, task: str, thresholds: CxcThresholds = CxcThresholds()) -> pd.Series:
    """Boolean Series: the pair's mean rating reaches the task's positive threshold."""
    return pairs["agg_score"] >= thresholds.for_task(task)


def pairs_from_raw(
    raw: pd.DataFrame,
    task: str,
    thresholds: CxcThresholds = CxcThresholds(),
    average_duplicates: bool = True,
) -> pd.DataFrame:
    """Canonical pairs of a raw table: duplicates averaged (optional), `positive` by the task's threshold."""
    pairs = merge_duplicate_pairs(raw, task) if average_duplicates else raw.assign(n_rows=1)
    pairs["positive"] = mark_positives(pairs, task, thresholds).to_numpy()
    return apply_schema(pairs, pairs_schema(task))


def load_cxc(
    path: str | os.PathLike,
    task: str | None = None,
    split: str | None = None,
    thresholds: CxcThresholds = CxcThresholds(),
    average_duplicates: bool = True,
) -> pd.DataFrame:
    """Canonical CxC pairs of one file: duplicates averaged, `positive` by the task's threshold."""
    if task is None or split is None:
        inferred_task, inferred_split = infer_task_split(path)
        task = task or inferred_task
        split = split or inferred_split
    return pairs_from_raw(read_cxc_csv(path, task, split), task, thresholds, average_duplicates)


def load_cxc_dir(
    folder: str | os.PathLike,
    thresholds: CxcThresholds = CxcThresholds(),
    raw: bool = False,
) -> dict[tuple[str, str], pd.DataFrame]:
    """All six CxC files of a folder, as {(task, split): table} (raw rows, or canonical pairs)."""
    tables: dict[tuple[str, str], pd.DataFrame] = {}
    for task in TASKS:
        for split in SPLITS:
            path = Path(folder) / f"{task}_{split}.csv"
            tables[task, split] = read_cxc_csv(path, task, split) if raw else load_cxc(path, task, split, thresholds)
    return tables


def positives(tables: Mapping[tuple[str, str], pd.DataFrame], task: str) -> pd.DataFrame:
    """The positive pairs of one task over all splits given (canonical pairs tables)."""
    frames = [table[table["positive"]] for (name, _), table in tables.items() if name == task]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(pairs_schema(task)))
