"""Shared parsing helpers of the loaders: errors that name the file, record and expectation."""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Hashable, Iterator, Mapping, Sequence
from io import StringIO
from typing import Any

import numpy as np
import pandas as pd

from itmbench.reading import read_json, read_text

# Canonical dtypes, written once so that every loader (and its docs) uses the same names.
STRING = "string"
INT = "int64"
FLOAT = "float64"
BOOL = "bool"
OBJECT = "object"

_COCO_FILENAME = re.compile(r"^(?:COCO_(?:train|val|test)20\d\d_)?(\d{12})\.jpg$")
_TRUE = frozenset({"True", "true", "1", "1.0"})
_FALSE = frozenset({"False", "false", "0", "0.0"})
INT64_MAX = int(np.iinfo(np.int64).max)


class SourceFormatError(ValueError):
    """A released file does not have the expected format; the message names file, record and expectation."""

    def __init__(
        self, path: str | os.PathLike, where: str, expected: str, got: Any = None, problem: str | None = None
    ) -> None:
        self.path = str(path)
        self.where = where
        self.expected = expected
        self.got = got
        message = f"{self.path}: {where}: {problem}; " if problem else f"{self.path}: {where}: "
        message += f"expected {expected}"
        if got is not None:
            shown = repr(got)
            message += f", got {shown[:200]}{'...' if len(shown) > 200 else ''}"
        super().__init__(message)


def read_json_file(path: str | os.PathLike) -> Any:
    """Parse a released or predictions JSON strictly (itmbench.reading.read_json: UTF-8, unique keys, no NaN)."""
    return read_json(path, allow_nan=False)


def _csv_records(path: str | os.PathLike, text: str) -> Iterator[tuple[int, list[str]]]:
    """(line where the record starts, fields) of CSV text; malformed quoting is an error naming the line."""
    reader = csv.reader(StringIO(text, newline=""), strict=True)
    start = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise SourceFormatError(
                path, f"line {start}", "fields quoted as CSV quotes them", problem=f"malformed CSV ({err})"
            ) from None
        yield start, fields
        start = reader.line_num + 1


def csv_header(path: str | os.PathLike) -> list[str]:
    """The header row of a CSV file (a BOM dropped); an empty file is an error naming it."""
    for _, fields in _csv_records(path, read_text(path)):
        return fields
    raise SourceFormatError(path, "line 1", "a header row", "an empty file")


def iter_csv_rows(
    path: str | os.PathLike, header: Sequence[str], optional: Sequence[str] = ()
) -> Iterator[tuple[int, list[str | None]]]:
    """Yield (line number, fields in `header` order) of a CSV file after checking its header row.

    The file is UTF-8 (a BOM is dropped); its header must name each column of `header` once (in any
    order; a column in `optional` may be absent, its field then None) and no other; every row has as
    many fields as the header; a stray quote is an error naming the line. Blank lines are skipped.
    """
    records = _csv_records(path, read_text(path))
    first = next(records, None)
    if first is None:
        raise SourceFormatError(path, "line 1", f"a header row {','.join(header)}", "an empty file")
    columns = first[1]
    twice = sorted({c for c in columns if columns.count(c) > 1})
    missing = [c for c in header if c not in columns and c not in optional]
    extra = [c for c in columns if c not in header]
    if twice or missing or extra:
        problems = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("missing column(s)", missing),
                ("unexpected column(s)", extra),
                ("repeated column(s)", twice),
            )
            if names
        ]
        raise SourceFormatError(
            path, "line 1", f"header {','.join(header)}", ",".join(columns), problem="; ".join(problems)
        )
    positions = [columns.index(c) if c in columns else None for c in header]
    in_order = positions == list(range(len(columns)))
    for line, fields in records:
        if not fields:
            continue
        if len(fields) != len(columns):
            raise SourceFormatError(path, f"line {line}", f"{len(columns)} comma-separated fields", fields)
        yield line, fields if in_order else [None if i is None else fields[i] for i in positions]


def check_unique(path: str | os.PathLike, key: Hashable, where: str, seen: dict[Hashable, str], what: str) -> None:
    """Record `key` as seen at `where` ('line 7'); a key seen before is an error naming both places.

    `what` says what must be unique, e.g. 'one row per (caption1_id, caption2_id)'.
    """
    if key in seen:
        raise SourceFormatError(path, where, what, key, problem=f"duplicate of {seen[key]}")
    seen[key] = where


def parse_int(value: Any, path: str | os.PathLike, where: str, what: str = "an integer") -> int:
    """Parse a non-negative int64 (int, or a string of digits), or raise naming the record."""
    if isinstance(value, bool):
        raise SourceFormatError(path, where, what, value)
    if isinstance(value, (int, np.integer)):
        number = int(value)
    elif isinstance(value, str) and re.fullmatch(r"[+-]?\d+", value.strip()):
        number = int(value)
    else:
        raise SourceFormatError(path, where, what, value)
    if not 0 <= number <= INT64_MAX:
        raise SourceFormatError(path, where, f"{what} in [0, 2**63 - 1]", value)
    return number


def parse_float(value: Any, path: str | os.PathLike, where: str, what: str = "a number") -> float:
    """Parse a finite float, or raise naming the record."""
    if isinstance(value, bool):
        raise SourceFormatError(path, where, what, value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SourceFormatError(path, where, what, value) from None
    if not np.isfinite(number):
        raise SourceFormatError(path, where, what, value)
    return number


def parse_bool(value: Any, path: str | os.PathLike, where: str) -> bool:
    """Parse True/False/1/0 (as text or as JSON booleans), or raise naming the record."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise SourceFormatError(path, where, "a boolean (True/False or 1/0)", value)


def parse_text(value: Any, path: str | os.PathLike, where: str, what: str = "a non-empty string") -> str:
    """Return a non-empty string, or raise naming the record."""
    if not isinstance(value, str) or not value.strip():
        raise SourceFormatError(path, where, what, value)
    return value


def coco_image_id(filename: Any, path: str | os.PathLike, where: str) -> int:
    """COCO image id of a file name 'COCO_val2014_000000365325.jpg' or '000000085329.jpg'."""
    match = _COCO_FILENAME.match(filename) if isinstance(filename, str) else None
    if match is None:
        raise SourceFormatError(path, where, "a COCO image file name like COCO_val2014_000000365325.jpg", filename)
    return int(match.group(1))  # 12 digits: within int64


def require_keys(record: Any, keys: Sequence[str], path: str | os.PathLike, where: str) -> Mapping[str, Any]:
    """Check that a JSON record is an object holding `keys`, or raise naming the first missing key."""
    if not isinstance(record, Mapping):
        raise SourceFormatError(path, where, f"an object with keys {list(keys)}", record)
    for key in keys:
        if key not in record:
            raise SourceFormatError(path, f"{where}.{key}", f"key '{key}' (record has {sorted(record)})")
    return record


def typed_frame(columns: Mapping[str, Sequence[Any]], schema: Mapping[str, str]) -> pd.DataFrame:
    """Build a DataFrame with exactly the schema's columns, in its order, cast to its dtypes."""
    return pd.DataFrame({name: _typed_series(list(columns[name]), dtype) for name, dtype in schema.items()})


def apply_schema(frame: pd.DataFrame, schema: Mapping[str, str]) -> pd.DataFrame:
    """Order and cast the columns of `frame` to `schema` (name -> dtype), dropping others."""
    columns = {}
    for name, dtype in schema.items():
        column = frame[name].reset_index(drop=True)
        if dtype == OBJECT:
            columns[name] = _typed_series(list(column), dtype)
        elif str(column.dtype) == str(pd.Series([], dtype=dtype).dtype):
            columns[name] = column.copy()
        else:
            columns[name] = column.astype(dtype)
    return pd.DataFrame(columns)


def _typed_series(values: list[Any], dtype: str) -> pd.Series:
    """A Series of `values` with a canonical dtype (object columns keep Python objects such as lists)."""
    if dtype == OBJECT:
        array = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            array[i] = value
        return pd.Series(array, dtype=object)
    return pd.Series(values, dtype=dtype)


def check_schema(frame: pd.DataFrame, schema: Mapping[str, str]) -> None:
    """Raise a ValueError if `frame` does not have exactly the schema's columns and dtypes."""
    if list(frame.columns) != list(schema):
        raise ValueError(f"expected columns {list(schema)}, got {list(frame.columns)}")
    for name, dtype in schema.items():
        expected = str(pd.Series([], dtype=dtype).dtype)
        if str(frame[name].dtype) != expected:
            raise ValueError(f"column {name}: expected dtype {expected}, got {frame[name].dtype}")


def schema_doc(schema: Mapping[str, str]) -> str:
    """One-line rendering of a schema, for docstrings and reports."""
    return ", ".join(f"{name}: {dtype}" for name, dtype in schema.items())
