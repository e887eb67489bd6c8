"""BISON's predictions format: which of two images a caption describes, scored against the annotations."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.papers.predictions import (
    PathLike,
    ScoreOptions,
    accuracy_json,
)
from itmbench.sources._common import SourceFormatError

BISON_ANNOTATION_COLUMNS = ("bison_id", "image_id_0", "image_id_1", "true_image_id")


def read_bison_annotation_table(path: PathLike) -> pd.DataFrame:
    """BISON annotations from the released JSON or a canonical table (parquet/CSV), checked."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        from itmbench.papers.bison.released import read_bison_annotations

        return read_bison_annotations(path)
    if path.suffix.lower() == ".parquet":
        table = pd.read_parquet(path)
    elif path.suffix.lower() == ".csv":
        table = pd.read_csv(path)
    else:
        raise ValueError(f"{path}: BISON annotations must be the released .json or a canonical .parquet/.csv table")
    missing = [c for c in BISON_ANNOTATION_COLUMNS if c not in table.columns]
    if missing:
        raise SourceFormatError(path, "columns", f"columns {', '.join(BISON_ANNOTATION_COLUMNS)}; missing {missing}")
    table = table.reset_index(drop=True)
    for i, (bid, a, b, t) in enumerate(table[list(BISON_ANNOTATION_COLUMNS)].itertuples(index=False)):
        if t not in (a, b):
            raise SourceFormatError(
                path, f"row {i} (bison_id {bid}) true_image_id", f"one of the candidates {a}, {b}", t
            )
    dup = table["bison_id"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise SourceFormatError(path, f"row {i} bison_id", "a unique bison_id", int(table["bison_id"].iloc[i]))
    return table


def bison_correct(
    predictions_path: PathLike, annotations: pd.DataFrame, annotations_path: PathLike = "", missing: str = "error"
) -> np.ndarray:
    """Per-annotation correctness of one BISON prediction file (annotation order); bad records raise.

    missing = "error": an annotated triple without a prediction raises; "wrong": it counts as wrong.
    """
    from itmbench.papers.bison.released import read_bison_predictions

    predictions = read_bison_predictions(predictions_path)
    row_of = {int(b): i for i, b in enumerate(annotations["bison_id"].to_numpy())}
    cand0 = annotations["image_id_0"].to_numpy(dtype=np.int64)
    cand1 = annotations["image_id_1"].to_numpy(dtype=np.int64)
    predicted = np.full(len(annotations), -1, dtype=np.int64)
    seen = np.zeros(len(annotations), dtype=bool)
    ann_name = f" ({annotations_path})" if annotations_path else ""
    for index, (bid, pred) in enumerate(predictions[["bison_id", "predicted_image_id"]].itertuples(index=False)):
        row = row_of.get(int(bid))
        if row is None:
            raise SourceFormatError(
                predictions_path, f"[{index}].bison_id", f"a bison_id of the annotations{ann_name}", int(bid)
            )
        if pred not in (cand0[row], cand1[row]):
            raise SourceFormatError(
                predictions_path,
                f"[{index}].predicted_image_id",
                f"one of the candidates {cand0[row]}, {cand1[row]} of bison_id {int(bid)}",
                int(pred),
            )
        predicted[row] = pred
        seen[row] = True
    if not seen.all() and missing == "error":
        absent = annotations["bison_id"].to_numpy()[~seen]
        raise SourceFormatError(
            predictions_path,
            "top level",
            f"one prediction per annotated triple{ann_name}; no prediction for bison_id {int(absent[0])} "
            f"({len(absent)} of {len(annotations)} missing)",
        )
    return predicted == annotations["true_image_id"].to_numpy(dtype=np.int64)


def score_bison(paths: Sequence[PathLike], annotations: PathLike, options: ScoreOptions) -> dict[str, Any]:
    """BISON accuracy of each prediction file against the annotations."""
    from itmbench.papers.bison.released import read_bison_predictions

    table = read_bison_annotation_table(annotations)
    systems: dict[str, Any] = {}
    for path in paths:
        correct = bison_correct(path, table, annotations, options.bison_missing)
        n_predicted = len(read_bison_predictions(path))
        systems[Path(path).stem] = {
            "files": [str(path)],
            "metrics": {"bison": accuracy_json(accuracy_from_correct(correct, options.confidence))},
            "n_missing": len(table) - n_predicted,
            "chance": 50.0,
        }
    return systems


def score(
    kind: str,
    files: Sequence[PathLike],
    options: ScoreOptions,
    annotations: PathLike | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """`itmbench score-predictions bison`: one system per prediction file."""
    if annotations is None:
        raise ValueError("BISON predictions need the annotations (--annotations): the released JSON or a table")
    return score_bison(files, annotations, options)
