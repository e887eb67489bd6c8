"""CxC's canonical tables, written by `build` or the coco source, read by scoring, the audit and ECCV Caption.

Canonical tables (`build`), the loader's columns (`itmbench.papers.cxc.released.pairs_schema`) first:
- `sts`, `sis`, `sits`: split, <a>, <b>, <a>_id, <b>_id, agg_score, sampling_method, line,
  n_rows, positive; world-only: similarity (noise-free, 0-5), truth (bool: similarity >= threshold
  for STS/SIS, the truth function for SITS), rating_0..rating_{n-1}. Items are written
  'world:caption:<id>' / 'world:image:<id>'; `line` is the row's line in a CSV of the split (2..).
- `positives`: split, task ('sts' | 'sis' | 'sits' | 'original'), a_id, b_id (the task's column
  order: caption, image for 'sits' and 'original'), every positive rated pair and every COCO pair.
- `stages`: split, task, sampling_method, n_candidates, n_pairs, n_positive, mean_score.
- `config`: key, value (JSON), the construction parameters (scoring reads `score_split` and
  `sits_query` from it).
- `items`: the `score_split` images then captions (kind, item_id): the 5k/25k-like gallery.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import write_parquet_folder
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.cxc.released import TASKS, pairs_schema
from itmbench.params import make_config
from itmbench.reading import read_parquet_checked, read_parquet_file

POSITIVE_COLUMNS = {"split": "string", "task": "string", "a_id": "int64", "b_id": "int64"}
ITEM_TABLE_COLUMNS = ["kind", "item_id"]


# Tables only the world's construction has (absent when CxC comes from the released files).
CONSTRUCTION_TABLES = ("stages",)
REQUIRED_COLUMNS: dict[str, list[str]] = {
    **{t: list(pairs_schema(t)) for t in TASKS},
    "positives": list(POSITIVE_COLUMNS),
    "items": ITEM_TABLE_COLUMNS,
}


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as <name>.parquet atomically; items.parquet last (it marks completion)."""
    missing = [name for name in REQUIRED_COLUMNS if name not in tables]
    if missing:
        raise ValueError(f"cxc.write: tables {missing} are missing; expected {sorted(REQUIRED_COLUMNS)}")
    write_parquet_folder(out_dir, tables)


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read every table of a CxC folder, checking the required tables and their columns."""
    d = Path(out_dir)
    tables: dict[str, pd.DataFrame] = {}
    for name, columns in REQUIRED_COLUMNS.items():
        path = d / f"{name}.parquet"
        tables[name] = read_parquet_checked(path, columns, "a CxC benchmark folder (run the cxc build rule)")
    for path in sorted(d.glob("*.parquet")):
        if path.stem not in tables:
            tables[path.stem] = read_parquet_file(path)
    return tables


def cxc_positives(tables: dict[str, pd.DataFrame], split: str = "test") -> pd.DataFrame:
    """SITS positives (agg_score >= threshold) of a split as (image_id, caption_id): ECCV Caption unions them."""
    sits = tables["sits"]
    pos = sits[(sits["split"] == split) & sits["positive"]]
    out = pd.DataFrame({"image_id": pos["image_id"].to_numpy(np.int64), "caption_id": pos["caption_id"].to_numpy()})
    out = out.astype({"caption_id": "int64"}).drop_duplicates()
    return out.sort_values(["image_id", "caption_id"], kind="stable", ignore_index=True)


def _config_value(tables: dict[str, pd.DataFrame], key: str) -> Any:
    """A construction setting stored in the `config` table (the schema's default when absent)."""
    config = tables.get("config")
    if config is not None:
        match = config.loc[config["key"] == key, "value"]
        if len(match):
            return json.loads(match.iloc[0])
    return getattr(make_config(CxcConfig), key)
