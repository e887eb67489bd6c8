"""BISON's canonical tables, written by `build` or the coco source, read by scoring and the audit.

Canonical tables (the columns of `itmbench.papers.bison.released`, so scoring is shared with the
released file): `annotations` with bison_id, caption_id, image_id_0, image_filename_0,
image_id_1, image_filename_1, true_image_id, true_index, false_image_id (plus the world-only
column caption_fits_false); `items` (kind, item_id); construction tables `pairs` (one row per
stage-1 pair with every stage's outcome) and `stages` (stage, count, published_count:
67,564 -> 61,861 -> 54,253 on COCO).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from itmbench.io import write_parquet_folder
from itmbench.papers.bison.released import ANNOTATION_SCHEMA
from itmbench.reading import read_parquet_checked

NONE_CHOICE = -1  # stage-2 answer "none of the above"

PAIR_COLUMNS: dict[str, str] = {
    "pair_id": "int64",
    "positive_image_id": "int64",
    "negative_image_id": "int64",
    "cosine": "float64",
    "mutual": "bool",
    "n_discriminative": "int64",
    "chosen_caption_id": "int64",
    "annotator_correct": "bool",
    "caption_fits_negative": "bool",
    "verifier_answers": "string",
    "accepted": "bool",
}
STAGE_COLUMNS: dict[str, str] = {"stage": "string", "count": "int64", "published_count": "int64"}
ITEM_COLUMNS: dict[str, str] = {"kind": "string", "item_id": "int64"}
REQUIRED_COLUMNS: dict[str, list[str]] = {
    "annotations": list(ANNOTATION_SCHEMA),
    "pairs": list(PAIR_COLUMNS),
    "stages": list(STAGE_COLUMNS),
    "items": list(ITEM_COLUMNS),
}
# Tables score_dual and summarize need; the others record the world's construction (absent when the
# benchmark comes from the released files: the coco source).
SCORING_TABLES = ("annotations", "items")
CONSTRUCTION_TABLES = ("pairs", "stages")


# ----------------------------------------------------------------------------------------------
# Files


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as <name>.parquet atomically; items.parquet last (it marks completion)."""
    missing = [name for name in SCORING_TABLES if name not in tables]
    if missing:
        raise ValueError(f"bison.write: missing tables {missing}; expected at least {list(SCORING_TABLES)}")
    write_parquet_folder(out_dir, tables)


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read the tables written by `write`, checking their required columns (construction tables when present)."""
    d = Path(out_dir)
    tables: dict[str, pd.DataFrame] = {}
    for name, cols in REQUIRED_COLUMNS.items():
        path = d / f"{name}.parquet"
        if name in CONSTRUCTION_TABLES and not path.exists():
            continue  # construction tables exist only for a benchmark built in the world
        tables[name] = read_parquet_checked(path, cols, f"the BISON table {name!r} (run the bison rule)")
    return tables
