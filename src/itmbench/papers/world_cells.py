"""The cells of the world's paper tables: metrics JSONs read, checked and turned into long-table records.

A record is (table, block, row, column, value, lo, hi, model) (`LONG_COLUMNS`); each paper's
``tables.world_long`` builds its records with these helpers, and `itmbench.papers.world` compares
them with the printed cells.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, recorded_confidence
from itmbench.papers.published import PAPERS, load_published
from itmbench.papers.registry import paper as registered_paper
from itmbench.reading import read_json

LONG_COLUMNS: tuple[str, ...] = ("table", "block", "row", "column", "value", "lo", "hi", "model")

WorldMetrics = Mapping[str, Mapping[str, Mapping[str, Any]]]


def read_world_metrics(paths: Iterable[str | os.PathLike]) -> dict[str, dict[str, dict[str, Any]]]:
    """{benchmark: {model: metrics JSON}} from files named <benchmark>/<model>.json; each checked."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(Path(p) for p in paths):
        doc = read_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
            raise ValueError(f"{path}: expected a metrics JSON object with a 'metrics' mapping")
        out.setdefault(path.parent.name, {})[path.stem] = doc
    return out


def check_rows(paper: str, rows: Mapping[str, str], metrics: WorldMetrics | None = None) -> dict[str, str]:
    """The model -> printed row mapping of a paper, checked: every row printed, none filled twice by the models
    of `metrics` (one params file maps each source's models: the world's clip and the coco source's vit_b_32
    may name the same row, as only one of them is scored in a run), and only their entries kept."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    printed = set(load_published(paper)["row"])
    for model, row in rows.items():
        if row not in printed:
            raise ValueError(
                f"report.rows.{paper}: model {model!r} maps to row {row!r}, which {paper} does not print; "
                f"printed rows: {sorted(printed)}"
            )
    if metrics is not None:
        present = {model for docs in metrics.values() for model in docs}
        rows = {model: row for model, row in rows.items() if model in present}
    seen: dict[str, str] = {}
    for model, row in rows.items():
        if row in seen:
            raise ValueError(f"report.rows.{paper}: row {row!r} is filled by both {seen[row]!r} and {model!r}")
        seen[row] = model
    return dict(rows)


def metric_entry(doc: Mapping[str, Any], name: str, source: str) -> Mapping[str, Any] | None:
    """One {value, lo, hi, ...} entry of a metrics JSON (None when absent); a malformed one raises."""
    entry = doc.get("metrics", {}).get(name)
    if entry is None:
        return None
    if not isinstance(entry, Mapping) or "value" not in entry:
        raise ValueError(f"{source}: metric {name!r} is {entry!r}; expected an object with 'value' (and lo, hi)")
    return entry


def cell(
    table: str, block: str, row: str, column: str, value: float, lo: float, hi: float, model: str
) -> tuple[Any, ...]:
    """One long-table record."""
    return (table, block, row, column, float(value), float(lo), float(hi), model)


def entry_cell(table: str, block: str, row: str, column: str, entry: Mapping[str, Any], model: str) -> tuple:
    """One record from a metrics entry (NaN where it has no interval)."""
    lo, hi = entry.get("lo"), entry.get("hi")
    return cell(
        table, block, row, column, entry["value"], math.nan if lo is None else lo, math.nan if hi is None else hi, model
    )


def long_frame(records: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    """The records as a long table with float value, lo, hi."""
    frame = pd.DataFrame.from_records(list(records), columns=list(LONG_COLUMNS))
    return frame.astype({"value": float, "lo": float, "hi": float})


def models_of(metrics: WorldMetrics, benchmark: str) -> list[str]:
    """The models with metrics on a benchmark, sorted."""
    return sorted(metrics.get(benchmark, {}))


def interval_confidence(metrics: WorldMetrics, paper: str) -> float:
    """The interval confidence the metrics were computed with (DEFAULT_CONFIDENCE when they do not say)."""
    for bench in registered_paper(paper).benchmarks:
        level = recorded_confidence(metrics.get(bench, {}).values())
        if level is not None:
            return level
    return DEFAULT_CONFIDENCE
