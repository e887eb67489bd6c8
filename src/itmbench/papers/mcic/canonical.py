"""MCIC's canonical tables, written by `build` or the coco source, read by scoring and the audit.

Canonical table `examples`: the columns of `itmbench.papers.mcic.released` (split, example_id, image,
image_id, options, answer_index, answer, line) plus world columns caption_id (the true caption) and
option_caption_ids (the 5 options' caption ids, in option order), world_split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_parquet
from itmbench.papers.mcic.config import N_OPTIONS
from itmbench.reading import read_parquet_file

TABLE_COLUMNS: dict[str, list[str]] = {
    "examples": [
        "split",
        "example_id",
        "image",
        "image_id",
        "options",
        "answer_index",
        "answer",
        "line",
        "caption_id",
        "option_caption_ids",
        "world_split",
    ],
    "decoys": [
        "split",
        "example_id",
        "rank",
        "position",
        "caption_id",
        "image_id",
        "text",
        "score",
        "bleu",
        "cos_pv",
    ],
    "construction": ["split", "stage", "value"],
    "answer_positions": ["split", "position", "n", "share"],
    "lambda_search": ["lambda", "wmgs_rank", "wmgs_rank_se", "captions", "ranked_ground_truths", "chosen"],
    "items": ["kind", "item_id"],
}
# Tables (and examples columns) that only the world's construction has: absent when the benchmark
# comes from the released files (the coco source); score_dual and summarize never need them.
CONSTRUCTION_TABLES = ("decoys", "construction", "lambda_search")
WORLD_ONLY_COLUMNS = ("world_split",)


_DTYPES: dict[str, dict[str, str]] = {
    "examples": {
        "split": "string",
        "example_id": "string",
        "image": "string",
        "image_id": "int64",
        "answer_index": "int64",
        "answer": "string",
        "line": "int64",
        "caption_id": "int64",
        "world_split": "string",
    },
    "decoys": {
        "split": "string",
        "example_id": "string",
        "rank": "int64",
        "position": "int64",
        "caption_id": "int64",
        "image_id": "int64",
        "text": "string",
        "score": "float64",
        "bleu": "float64",
        "cos_pv": "float64",
    },
    "construction": {"split": "string", "stage": "string", "value": "float64"},
    "positions": {"split": "string", "position": "int64", "n": "int64", "share": "float64"},
}


def items_of(examples: pd.DataFrame) -> pd.DataFrame:
    """Every item a model must embed: the instances' images and all their options' captions."""
    images = np.unique(examples["image_id"].to_numpy(dtype=np.int64))
    flat = [int(c) for ids in examples["option_caption_ids"] for c in ids]
    captions = np.unique(np.asarray(flat, dtype=np.int64))
    return pd.DataFrame(
        {
            "kind": ["caption"] * captions.size + ["image"] * images.size,
            "item_id": np.concatenate([captions, images]).astype(np.int64),
        }
    )


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as <name>.parquet atomically; items.parquet last (it marks completion)."""
    missing = [name for name in TABLE_COLUMNS if name not in tables and name not in CONSTRUCTION_TABLES]
    if missing:
        raise ValueError(f"mcic write: missing tables {missing}; expected {sorted(TABLE_COLUMNS)}")
    out = Path(out_dir)
    for name, df in tables.items():
        if name != "items":
            write_parquet(out / f"{name}.parquet", df)
    write_parquet(out / "items.parquet", tables["items"].astype({"item_id": "int64"}))


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read the tables written by `write`, checking each file's columns (the error names the file)."""
    d = Path(out_dir)
    tables: dict[str, pd.DataFrame] = {}
    for name, cols in TABLE_COLUMNS.items():
        path = d / f"{name}.parquet"
        if name in CONSTRUCTION_TABLES and not path.exists():
            continue  # construction tables exist only for a benchmark built in the world
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing; expected the MCIC table {name!r} (run the mcic build rule)")
        df = read_parquet_file(path)
        absent = [c for c in cols if c not in df.columns and c not in WORLD_ONLY_COLUMNS]
        if absent:
            raise ValueError(f"{path}: missing columns {absent}; expected {cols}")
        tables[name] = df
    ex = tables["examples"]
    for col in ("options", "option_caption_ids"):
        ex[col] = [list(v) for v in ex[col]]
    bad = [i for i, v in enumerate(ex["options"]) if len(v) != N_OPTIONS]
    if bad:
        raise ValueError(f"{d / 'examples.parquet'}: row {bad[0]}: expected {N_OPTIONS} options")
    ex["option_caption_ids"] = [[int(c) for c in v] for v in ex["option_caption_ids"]]
    return tables
