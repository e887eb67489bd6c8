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
    check_coverage,
    int_id_column,
    read_table_file,
)
from itmbench.sources._common import SourceFormatError

BISON_ANNOTATION_COLUMNS = ("bison_id", "image_id_0", "image_id_1", "true_image_id")


def read_bison_annotation_table(path: PathLike) -> pd.DataFrame:
    """BISON annotations from the released JSON or a canonical table (parquet/CSV), checked."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        from itmbench.papers.bison.released import read_bison_annotations

        return read_bison_annotations(path)
    if path.suffix.lower() not in (".parquet", ".csv"):
        raise ValueError(f"{path}: BISON annotations must be the released .json or a canonical .parquet/.csv table")
    table = read_table_file(path)
    missing = [c for c in BISON_ANNOTATION_COLUMNS if c not in table.columns]
    if missing:
        raise SourceFormatError(path, "columns", f"columns {', '.join(BISON_ANNOTATION_COLUMNS)}; missing {missing}")
    if table.empty:
        raise SourceFormatError(path, "rows", "at least one annotated triple", "a header only")
    table = table.reset_index(drop=True)
    for name in BISON_ANNOTATION_COLUMNS:
        table[name] = int_id_column(table, name, path)
    for i, (bid, a, b, t) in enumerate(table[list(BISON_ANNOTATION_COLUMNS)].itertuples(index=False)):
        if a == b:  # a triple must offer two images: with one, any prediction is right
            raise SourceFormatError(
                path, f"row {i} (bison_id {bid}) image_id_1", f"an image other than image_id_0 {a}", b
            )
        if t not in (a, b):
            raise SourceFormatError(
                path, f"row {i} (bison_id {bid}) true_image_id", f"one of the candidates {a}, {b}", t
            )
    dup = table["bison_id"].duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        first = int(np.flatnonzero(table["bison_id"].to_numpy() == table["bison_id"].iloc[i])[0])
        raise SourceFormatError(
            path, f"row {i} bison_id", f"a unique bison_id (also row {first})", int(table["bison_id"].iloc[i])
        )
    return table


def bison_correct(
    predictions_path: PathLike,
    annotations: pd.DataFrame,
    annotations_path: PathLike = "",
    missing: str = "error",
    options: ScoreOptions | None = None,
) -> tuple[np.ndarray, int]:
    """Per-annotation correctness of one BISON prediction file (annotation order), and how many triples lack one.

    missing = "error": an annotated triple without a prediction is an error naming how many and the
    first bison_ids, unless options.allow_missing (then those triples are left out); "wrong": it counts
    as a wrong answer. An unknown bison_id, a repeated one or a non-candidate image is an error.
    """
    from itmbench.papers.bison.released import read_bison_predictions

    options = options or ScoreOptions()
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
    correct = predicted == annotations["true_image_id"].to_numpy(dtype=np.int64)
    absent = annotations["bison_id"].to_numpy()[~seen]
    if missing == "wrong" or not len(absent):
        return correct, len(absent)
    n_missing = check_coverage(
        predictions_path, len(absent), len(annotations), f"annotated triples{ann_name}", options, absent.tolist()
    )
    return correct[seen], n_missing


def score_bison(paths: Sequence[PathLike], annotations: PathLike, options: ScoreOptions) -> dict[str, Any]:
    """BISON accuracy of each prediction file against the annotations."""
    table = read_bison_annotation_table(annotations)
    systems: dict[str, Any] = {}
    for path in paths:
        name = Path(path).stem
        if name in systems:  # the system is named by its file: a second file of that name would overwrite the first
            raise ValueError(
                f"{path}: a second prediction file named {name!r} (first: {systems[name]['files'][0]}); "
                "each file is one system named by its file name: rename one of them"
            )
        correct, n_missing = bison_correct(path, table, annotations, options.paper["bison_missing"], options)
        systems[name] = {
            "files": [str(path)],
            "metrics": {"bison": accuracy_json(accuracy_from_correct(correct, options.confidence))},
            "n_missing": n_missing,
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
