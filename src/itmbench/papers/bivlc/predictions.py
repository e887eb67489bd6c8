"""BiVLC's released per-instance results as a predictions format: I2T, T2I, Group recomputed from the comparisons."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from itmbench.papers.predictions import (
    PathLike,
    ScoreOptions,
)
from itmbench.sources._common import SourceFormatError


def _csv_header(path: PathLike) -> list[str]:
    """The first row of a CSV file."""
    import csv

    with open(path, encoding="utf-8", newline="") as handle:
        return next(csv.reader(handle), [])


def score_bivlc(paths: Sequence[PathLike], options: ScoreOptions) -> dict[str, Any]:
    """BiVLC (and SugarCrepe) metrics of released-format per-instance files, one system per model."""
    from itmbench.papers.bivlc.released import read_bivlc_results, read_sugarcrepe_correct
    from itmbench.papers.bivlc.tables import metrics_from_released

    grouped: dict[str, dict[str, Any]] = {}
    for path in paths:
        header = [h.lstrip("\ufeff") for h in _csv_header(path)]
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
