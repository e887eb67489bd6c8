"""The published numbers of the five papers, transcribed once as data and loaded with validation.

Each paper folder holds ``published_results.csv``, a long table with one printed number a line:

``table``
    Source table as numbered in the paper ("Table 4", "Table D.2", "Appendix Table 3"), or the
    section for numbers quoted only in the text ("Section 6").
``block``
    Sub-table, dataset, split or row group when the table has several, else empty.
``row``
    Model or system name as printed, without citation brackets and footnote marks (a dagger is
    kept in ``note``); subscripts are written with ``_`` (``DE_I2T``, ``CLIP_COCO``).
``column``
    Metric name as printed, qualified by its spanning header where needed ("Image → Text R@1").
    A "±" half-width printed next to a value is its own column, named "<column> ±".
``value``
    The number as printed, units as printed (percent stays percent). Cells printed as "-" are absent.
``decimals``
    Digits printed after the decimal point, so regenerated values can be rounded alike.
``note``
    Empty, or what had to be interpreted to transcribe the cell.
"""

from __future__ import annotations

import csv
import math
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd

from itmbench.errors import reading
from itmbench.papers.registry import PAPERS as REGISTERED

# The papers with published numbers as data: every registered paper (itmbench.papers.registry).
PAPERS: tuple[str, ...] = tuple(REGISTERED)
COLUMNS: tuple[str, ...] = ("table", "block", "row", "column", "value", "decimals", "note")
KEY: tuple[str, ...] = ("table", "block", "row", "column")
FILENAME = "published_results.csv"


class PublishedResultsError(ValueError):
    """A published_results.csv that does not follow the format; the message names file and line."""


def published_results_path(paper: str) -> Path:
    """Where a paper's transcription lives inside the installed package."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    return Path(str(resources.files("itmbench.papers").joinpath(paper, FILENAME)))


def _printed_decimals(text: str) -> int:
    """Digits after the decimal point of a number written as text."""
    return len(text.split(".", 1)[1]) if "." in text else 0


def read_published_csv(path: Path) -> pd.DataFrame:
    """Read and validate one transcription file; every error names the file and the line."""
    path = Path(path)
    with reading(path), path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            raise PublishedResultsError(f"{path}: empty file, expected header {','.join(COLUMNS)}") from None
        if tuple(header) != COLUMNS:
            raise PublishedResultsError(f"{path}:1: header {header} != expected {list(COLUMNS)}")
        records: list[tuple[str, str, str, str, float, int, str]] = []
        seen: dict[tuple[str, str, str, str], int] = {}
        for fields in reader:
            line = reader.line_num
            if len(fields) != len(COLUMNS):
                raise PublishedResultsError(f"{path}:{line}: {len(fields)} fields, expected {len(COLUMNS)}: {fields}")
            table, block, row, column, value_text, decimals_text, note = fields
            for name, text in (("table", table), ("row", row), ("column", column)):
                if not text.strip():
                    raise PublishedResultsError(f"{path}:{line}: empty {name!r}")
                if text != text.strip():
                    raise PublishedResultsError(f"{path}:{line}: {name} {text!r} has surrounding whitespace")
            try:
                value = float(value_text)
            except ValueError:
                raise PublishedResultsError(f"{path}:{line}: value {value_text!r} is not a number") from None
            if not math.isfinite(value):
                raise PublishedResultsError(f"{path}:{line}: value {value_text!r} is not finite")
            if not decimals_text.isdigit():
                raise PublishedResultsError(f"{path}:{line}: decimals {decimals_text!r} is not a non-negative integer")
            decimals = int(decimals_text)
            if decimals != _printed_decimals(value_text):
                raise PublishedResultsError(
                    f"{path}:{line}: decimals {decimals} disagrees with value {value_text!r} "
                    f"({_printed_decimals(value_text)} digits written)"
                )
            key = (table, block, row, column)
            if key in seen:
                raise PublishedResultsError(f"{path}:{line}: duplicate key {key}, first on line {seen[key]}")
            seen[key] = line
            records.append((table, block, row, column, value, decimals, note))
    if not records:
        raise PublishedResultsError(f"{path}: no data lines")
    frame = pd.DataFrame.from_records(records, columns=list(COLUMNS))
    return frame.astype(
        {"table": str, "block": str, "row": str, "column": str, "value": "float64", "decimals": "int64", "note": str}
    )


@cache
def _load_cached(paper: str) -> pd.DataFrame:
    return read_published_csv(published_results_path(paper))


def load_published(paper: str) -> pd.DataFrame:
    """All published numbers of one paper as a validated long DataFrame (a fresh copy per call)."""
    return _load_cached(paper).copy()


def published_value(paper: str, table: str, row: str, column: str, block: str = "") -> float:
    """One printed number, looked up by its table, row, column and (if the table has several) block."""
    frame = _load_cached(paper)
    hit = frame[
        (frame["table"] == table) & (frame["block"] == block) & (frame["row"] == row) & (frame["column"] == column)
    ]
    if hit.empty:
        in_table = frame[frame["table"] == table]
        if in_table.empty:
            tables = sorted(frame["table"].unique())
            raise KeyError(f"{paper}: no {table!r}; transcribed tables: {tables}")
        raise KeyError(
            f"{paper} {table}: no cell block={block!r} row={row!r} column={column!r}; "
            f"blocks {sorted(in_table['block'].unique())}, rows {list(in_table['row'].unique())}, "
            f"columns {list(in_table['column'].unique())}"
        )
    return float(hit["value"].iloc[0])


def published_wide(paper: str, table: str, block: str = "") -> pd.DataFrame:
    """One (table, block) laid out as printed: rows x columns in printed order, NaN where printed '-'."""
    frame = _load_cached(paper)
    part = frame[(frame["table"] == table) & (frame["block"] == block)]
    if part.empty:
        raise KeyError(f"{paper}: no cells in table={table!r} block={block!r}")
    wide = part.pivot(index="row", columns="column", values="value")
    columns = _printed_column_order([list(cells["column"]) for _, cells in part.groupby("row", sort=False)])
    return wide.loc[part["row"].unique(), columns].rename_axis(index=None, columns=None)


def _printed_column_order(rows: list[list[str]]) -> list[str]:
    """Merge each row's column sequence into one order (rows may skip cells printed '-')."""
    first_seen = {c: i for i, c in enumerate(dict.fromkeys(c for row in rows for c in row))}
    after: dict[str, set[str]] = {c: set() for c in first_seen}
    before_count = dict.fromkeys(first_seen, 0)
    for row in rows:
        for earlier, later in zip(row, row[1:], strict=False):
            if later not in after[earlier]:
                after[earlier].add(later)
                before_count[later] += 1
    order: list[str] = []
    ready = [c for c, n in before_count.items() if n == 0]
    while ready:
        column = min(ready, key=first_seen.__getitem__)
        ready.remove(column)
        order.append(column)
        for later in after[column]:
            before_count[later] -= 1
            if before_count[later] == 0:
                ready.append(later)
    if len(order) != len(first_seen):  # contradictory orders: fall back to first appearance
        return list(first_seen)
    return order
