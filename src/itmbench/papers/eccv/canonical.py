"""ECCV Caption's canonical tables, written by `build` or the coco source, read by scoring and the audit.

Positives table (canonical columns of papers/eccv/released.py: source, direction, image_id, caption_id):
- source 'eccv': the final ECCV Caption positives of the ECCV queries (as the package's eccv_*.json,
  which hold the CxC and original pairs of those queries too);
- source 'cxc': CxC positives union the original pairs, for every query of the split (the package's
  cxc_*.json hold the original pairs too); present only when build gets `cxc_positives`
  (image_id, caption_id pairs with SITS >= 3 from the CxC benchmark, or the CxC module's positives
  table, whose 'sits' rows are used; pairs outside the split are dropped, ids unknown to the world
  raise). With cxc_positives=None, ECCV = human-verified ∪ original;
- source 'original': the COCO pairs (each caption and its own image), for every query of the split.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_parquet
from itmbench.papers.eccv.released import DIRECTIONS, SCHEMA, SOURCES, load_released_positives
from itmbench.reading import read_parquet_file

I2T, T2I = DIRECTIONS  # 'image_to_caption', 'caption_to_image'
SHORT = {I2T: "i2t", T2I: "t2i"}
QUERY_KIND = {I2T: "image", T2I: "caption"}
GALLERY_KIND = {I2T: "caption", T2I: "image"}


POSITIVE_COLUMNS = list(SCHEMA)
ITEM_COLUMNS = {"kind": "string", "item_id": "int64"}
QUERY_COLUMNS = {"direction": "string", "query_id": "int64"}
ANNOTATION_COLUMNS = {
    "direction": "string",
    "query_id": "int64",
    "candidate_id": "int64",
    "image_id": "int64",
    "caption_id": "int64",
    "annotator": "string",
    "proposal_rank": "int64",
    "answer": "string",
    "n_violated": "int64",
    "fits": "bool",
}
PM_VECTOR_COLUMNS = {
    "kind": "string",
    "item_id": "int64",
    "pm_vector": "string",
    "n_pm_positives": "int64",
    "pm_depth": "int64",
}
PM_POSITIVE_COLUMNS = {"direction": "string", "image_id": "int64", "caption_id": "int64"}
STAGE_COLUMNS = {"direction": "string", "stage": "string", "n": "int64"}
REQUIRED_COLUMNS: dict[str, list[str]] = {
    "positives": POSITIVE_COLUMNS,
    "queries": list(QUERY_COLUMNS),
    "annotations": list(ANNOTATION_COLUMNS),
    "pm_vectors": list(PM_VECTOR_COLUMNS),
    "pm_positives": list(PM_POSITIVE_COLUMNS),
    "stages": list(STAGE_COLUMNS),
    "items": list(ITEM_COLUMNS),
}
TABLE_ORDER = ("positives", "queries", "annotations", "pm_vectors", "pm_positives", "stages", "items")
# Tables that only the world's construction has (absent when the benchmark comes from the released
# files: the coco source), and the plausible-match tables, without which PMRP is skipped.
CONSTRUCTION_TABLES = ("annotations", "stages")
PM_TABLES = ("pm_vectors", "pm_positives")
OPTIONAL_TABLES = CONSTRUCTION_TABLES + PM_TABLES


def _sort_positives(df: pd.DataFrame) -> pd.DataFrame:
    order = df.assign(
        _s=df["source"].map({s: i for i, s in enumerate(SOURCES)}),
        _d=df["direction"].map({d: i for i, d in enumerate(DIRECTIONS)}),
    )
    order = order.drop_duplicates(["source", "direction", "image_id", "caption_id"])
    order = order.assign(
        _q=np.where(order["direction"] == I2T, order["image_id"], order["caption_id"]),
        _t=np.where(order["direction"] == I2T, order["caption_id"], order["image_id"]),
    )
    order = order.sort_values(["_s", "_d", "_q", "_t"], kind="stable", ignore_index=True)
    return order[POSITIVE_COLUMNS].astype(SCHEMA)


def released_queries(positives: pd.DataFrame) -> pd.DataFrame:
    """The queries of released ECCV positives: the query ids of source 'eccv' per direction, sorted (the keys of the
    package's eccv_*.json: 1,261 images and 1,332 captions)."""
    frames = []
    for direction in DIRECTIONS:
        sub = positives[(positives["source"] == "eccv") & (positives["direction"] == direction)]
        col = "image_id" if direction == I2T else "caption_id"
        frames.append(pd.DataFrame({"direction": direction, "query_id": np.unique(sub[col].to_numpy(np.int64))}))
    return pd.concat(frames, ignore_index=True).astype(QUERY_COLUMNS)


def read_released(folder: str | Path) -> dict[str, pd.DataFrame]:
    """The positives and queries tables of the package's association files in a folder in the mirror layout
    (`released.load_released_positives`; each file's md5 and key count checked)."""
    positives = load_released_positives(folder)
    return {"positives": positives, "queries": released_queries(positives)}


# --- files -----------------------------------------------------------------------------------------


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet, atomically; items.parquet last, since it marks the folder complete."""
    missing = [t for t in TABLE_ORDER if t not in tables and t not in OPTIONAL_TABLES]
    if missing:
        raise ValueError(f"eccv write: missing tables {missing}; expected {list(TABLE_ORDER)}")
    if sum(t in tables for t in PM_TABLES) == 1:
        raise ValueError(f"eccv write: expected both PM tables {list(PM_TABLES)} or neither")
    out = Path(out_dir)
    for name in TABLE_ORDER:
        if name in tables:
            write_parquet(out / f"{name}.parquet", tables[name])


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read the tables written by write, validating each file's required columns."""
    d = Path(out_dir)
    out = {}
    for name in TABLE_ORDER:
        path = d / f"{name}.parquet"
        if name in OPTIONAL_TABLES and not path.exists():
            continue  # construction and PM tables exist only where they were built or released
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing; expected the ECCV Caption table {name!r} (run the eccv rule)")
        df = read_parquet_file(path)
        cols = REQUIRED_COLUMNS[name]
        absent = [c for c in cols if c not in df.columns]
        if absent:
            raise ValueError(f"{path}: missing columns {absent}; expected {cols}")
        out[name] = df
    bad = sorted(set(out["positives"]["source"]) - set(SOURCES)) + sorted(
        set(out["positives"]["direction"]) - set(DIRECTIONS)
    )
    if bad:
        raise ValueError(
            f"{d / 'positives.parquet'}: unexpected values {bad}; "
            f"expected source in {SOURCES}, direction in {DIRECTIONS}"
        )
    return out
