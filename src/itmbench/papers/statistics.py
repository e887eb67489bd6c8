"""Dataset statistics regenerated from the released files, side by side with the published numbers.

Each paper's `statistics` module regenerates its numbers (`from_mirror`) and says what is known about
the ones the files do not reproduce (`NOTES`). Published numbers live in
`itmbench/papers/<paper>/published_statistics.csv` (long format: table,
row, column, value, source). Every comparison table has the columns

    table, row, column, regenerated_from, published, regenerated, difference, status, note, source

where `difference` = regenerated rounded to the published number's decimals minus published, and
`status` is one of: agree (difference 0), disagree (the files give another number: `note` says
what is known), not_in_files (the released files cannot give it: `note` says why),
not_published (a regenerated number the paper does not print).
"""

from __future__ import annotations

import csv
import os
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.errors import reading
from itmbench.papers.registry import PAPERS as REGISTERED
from itmbench.papers.registry import paper as registered_paper
from itmbench.sources._common import FLOAT, INT, STRING, typed_frame

# The papers whose dataset statistics the released files regenerate (each paper's `statistics` module).
PAPERS: tuple[str, ...] = tuple(name for name, p in REGISTERED.items() if p.has_statistics)
AGREE, DISAGREE, NOT_IN_FILES, NOT_PUBLISHED = "agree", "disagree", "not_in_files", "not_published"
PUBLISHED_SCHEMA: dict[str, str] = {
    "table": STRING,
    "row": STRING,
    "column": STRING,
    "value": FLOAT,
    "decimals": INT,
    "source": STRING,
}
COMPARISON_SCHEMA: dict[str, str] = {
    "table": STRING,
    "row": STRING,
    "column": STRING,
    "regenerated_from": STRING,
    "published": FLOAT,
    "regenerated": FLOAT,
    "difference": FLOAT,
    "status": STRING,
    "note": STRING,
    "source": STRING,
}

# What is known about each number the files do not reproduce, keyed (paper, table, row, column).


# --- published values and the comparison ---------------------------------------------------------


def published_path(paper: str) -> Path:
    """Path of a paper's published_statistics.csv inside the installed package."""
    if paper not in PAPERS:
        raise ValueError(f"no published statistics for {paper!r}; expected one of {PAPERS}")
    return Path(str(resources.files(f"itmbench.papers.{paper}").joinpath("published_statistics.csv")))


def _decimals(text: str) -> int:
    """Number of decimals printed in a published number ('1.42' -> 2, '267095' -> 0)."""
    return len(text.split(".", 1)[1]) if "." in text else 0


def read_published(path: str | os.PathLike) -> pd.DataFrame:
    """Read a published_statistics.csv (table,row,column,value,source), keeping each value's decimals."""
    cols: dict[str, list] = {name: [] for name in PUBLISHED_SCHEMA}
    with reading(path), open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames != ["table", "row", "column", "value", "source"]:
            raise ValueError(f"{path}: line 1: expected header table,row,column,value,source, got {reader.fieldnames}")
        seen: dict[tuple[str, str, str], int] = {}
        for record in reader:
            line = reader.line_num
            key = (record["table"], record["row"], record["column"])
            if key in seen:
                raise ValueError(f"{path}: line {line}: {key} already given on line {seen[key]}")
            seen[key] = line
            text = (record["value"] or "").strip()
            try:
                value = float(text)
            except ValueError:
                raise ValueError(
                    f"{path}: line {line}: expected a plain number in column value, got {text!r}"
                ) from None
            for name in ("table", "row", "column"):
                cols[name].append(record[name])
            cols["value"].append(value)
            cols["decimals"].append(_decimals(text))
            cols["source"].append(record["source"])
    return typed_frame(cols, PUBLISHED_SCHEMA)


def load_published(paper: str) -> pd.DataFrame:
    """A paper's published statistics (table, row, column, value, decimals, source)."""
    return read_published(published_path(paper))


def regenerated_frame(rows: list[tuple[str, str, str, float, str]]) -> pd.DataFrame:
    """Regenerated numbers from (table, row, column, value, regenerated_from) tuples."""
    names = ("table", "row", "column", "regenerated", "regenerated_from")
    return typed_frame(
        {name: [row[i] for row in rows] for i, name in enumerate(names)},
        {"table": STRING, "row": STRING, "column": STRING, "regenerated": FLOAT, "regenerated_from": STRING},
    )


def compare_with_published(
    regenerated: pd.DataFrame, published: pd.DataFrame, paper: str | None = None
) -> pd.DataFrame:
    """Outer-join regenerated and published numbers on (table, row, column); difference and status per row."""
    keys = ["table", "row", "column"]
    notes = registered_paper(paper).part("statistics").NOTES if paper else {}
    left = published.assign(_published_order=np.arange(len(published)))
    right = regenerated.assign(_regenerated_order=np.arange(len(regenerated)))
    merged = left.merge(right, on=keys, how="outer", sort=False)
    merged = merged.sort_values(["_published_order", "_regenerated_order"], na_position="last", kind="stable")
    out: dict[str, list] = {name: [] for name in COMPARISON_SCHEMA}
    for record in merged.to_dict("records"):
        value, decimals = record["value"], record["decimals"]
        regen = record["regenerated"]
        has_published = not pd.isna(value)
        has_regenerated = not pd.isna(regen)
        difference = float("nan")
        if has_published and has_regenerated:
            difference = round(float(regen), int(decimals)) - float(value)
            difference = round(difference, int(decimals) + 6)
            status = AGREE if difference == 0 else DISAGREE
        elif has_published:
            status = NOT_IN_FILES
        else:
            status = NOT_PUBLISHED
        note = notes.get((record["table"], record["row"], record["column"]), "")
        out["table"].append(record["table"])
        out["row"].append(record["row"])
        out["column"].append(record["column"])
        out["regenerated_from"].append("" if pd.isna(record["regenerated_from"]) else record["regenerated_from"])
        out["published"].append(float(value) if has_published else float("nan"))
        out["regenerated"].append(float(regen) if has_regenerated else float("nan"))
        out["difference"].append(difference)
        out["status"].append(status)
        out["note"].append(note if status != AGREE else "")
        out["source"].append("" if pd.isna(record["source"]) else record["source"])
    return typed_frame(out, COMPARISON_SCHEMA)


# --- everything from a mirror ------------------------------------------------------------------


def statistics_from_mirror(paper: str, mirror: str | os.PathLike) -> pd.DataFrame:
    """Regenerate one paper's dataset statistics from the released files in a mirror folder."""
    if paper not in PAPERS:
        raise ValueError(f"no dataset statistics for {paper!r}; expected one of {PAPERS}")
    return registered_paper(paper).part("statistics").from_mirror(mirror)
