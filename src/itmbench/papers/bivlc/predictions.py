"""BiVLC's released per-instance results as a predictions format: I2T, T2I, Group recomputed from the comparisons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itmbench.papers.predictions import (
    PathLike,
    ScoreOptions,
    check_coverage,
)
from itmbench.sources._common import SourceFormatError, csv_header
from itmbench.sources.released import RecordCountError, declared_records

# The loader of each kind of file, whose declared row count (released.yaml) is the benchmark's size.
LOADERS = {"results": "bivlc:read_bivlc_results", "sugarcrepe": "bivlc:read_sugarcrepe_correct"}


def check_rows(path: PathLike, kind: str, n: int, options: ScoreOptions) -> int:
    """Coverage of one file: its rows against the released files' count (more: error; fewer: unless allow_missing)."""
    declared = declared_records(LOADERS[kind])
    if declared is None:
        return 0
    expected, key = declared
    if n > expected:
        raise RecordCountError(path, n, "rows", expected, f"sources/released.yaml: {key}; a row per instance")
    message = f"{path}: {n:,} rows; expected {expected:,} (sources/released.yaml: {key})"
    return check_coverage(path, expected - n, expected, "instances", options, message=message)


def score_bivlc(paths: Sequence[PathLike], options: ScoreOptions) -> dict[str, Any]:
    """BiVLC (and SugarCrepe) metrics of released-format per-instance files, one system per model.

    Each file must hold one row per instance of the benchmark (the readers refuse a repeated row):
    fewer rows than the released files' declared count is an error unless options.allow_missing
    (then n_missing records how many), more is an error.
    """
    from itmbench.papers.bivlc.released import read_bivlc_results, read_sugarcrepe_correct
    from itmbench.papers.bivlc.tables import metrics_from_released

    grouped: dict[str, dict[str, Any]] = {}
    for path in paths:
        header = csv_header(path)
        if "text_score_i0" in header:
            kind, pattern, reader = "results", r"BiVLC_(.+)\.csv", read_bivlc_results
        elif "correct" in header:
            kind, pattern, reader = "sugarcrepe", r"SUGARCREPE_CORRECT_(.+)\.csv", read_sugarcrepe_correct
        else:
            raise SourceFormatError(
                path,
                "line 1",
                "the header of a released BiVLC_<model>.csv or SUGARCREPE_CORRECT_<model>.csv",
                ",".join(header),
            )
        match = re.fullmatch(pattern, Path(path).name)
        model = match.group(1) if match else Path(path).stem
        entry = grouped.setdefault(model, {"files": []})
        if kind in entry:
            raise ValueError(f"{path}: a second {kind} file for model {model!r} (first: {entry[kind + '_path']})")
        entry[kind] = reader(path, model=model)
        entry.setdefault("n_missing", {})[kind] = check_rows(path, kind, len(entry[kind]), options)
        entry[kind + "_path"] = str(path)
        entry["files"].append(str(path))
    systems: dict[str, Any] = {}
    for model, entry in grouped.items():
        doc = metrics_from_released(
            entry.get("results"), entry.get("sugarcrepe"), model, options.confidence, entry.get("results_path", model)
        )
        systems[model] = {
            "files": entry["files"],
            **{k: doc[k] for k in ("metrics", "by_type", "n_bivlc", "n_sugarcrepe")},
            "n_missing": {
                "bivlc": entry["n_missing"].get("results", 0),
                "sugarcrepe": entry["n_missing"].get("sugarcrepe", 0),
            },
        }
        systems[model]["chance"] = {"i2t": 25.0, "t2i": 25.0, "group": 100 / 6, "sugarcrepe": 50.0}
    return systems


def score(
    kind: str,
    files: Sequence[PathLike],
    options: ScoreOptions,
    annotations: PathLike | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """`itmbench score-predictions bivlc`: one system per released model."""
    return score_bivlc(files, options)
