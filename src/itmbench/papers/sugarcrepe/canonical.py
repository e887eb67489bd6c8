"""SugarCrepe's canonical tables, made by `build` or `from_released`, read by scoring and the audit.

Canonical tables (the released files' columns first: `itmbench.papers.sugarcrepe.released`):
- `instances`: id, subset, type, subtype, filename, image_id, caption, negative_caption, then
  caption_id, negative_caption_id (item ids the scorers embed), then the world-only
  negative_structure, edit. In the world `filename` is 'world:<image_id>'; from the released files
  (`from_released`) the item ids are -1 (SugarCrepe names no COCO caption ids) and `id` is the key
  within its subset file, so an instance is (subset, id).
- construction only: `edits` (every proposed edit and whether it was true of its image) and
  `stages` (edits proposed, edits true of the image, instances kept, per subset);
- new items: `extra_captions` (caption_id, image_id = -1, split, text, structure): the negative
  captions, written as an items folder `extra_items/` with no image; `items` lists every item a model
  must embed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import atomic_path, write_parquet
from itmbench.negatives.edits import EDIT_COLUMNS, INSTANCE_COLUMNS
from itmbench.reading import read_parquet_checked

TABLES: dict[str, tuple[str, ...]] = {
    "instances": INSTANCE_COLUMNS,
    "edits": EDIT_COLUMNS,
    "stages": ("stage", "subset", "type", "subtype", "n"),
}
CONSTRUCTION_TABLES = ("edits", "stages")
WORLD_ONLY_COLUMNS = {"instances": ("negative_structure", "edit")}
EXTRA_DIR = "extra_items"
EXTRA_CAPTION_COLUMNS = ("caption_id", "image_id", "split", "text", "structure")
ITEM_COLUMNS = ("kind", "item_id")


def from_released(released: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The canonical tables of SugarCrepe's released subset files (`released.load_sugarcrepe`): no item ids."""
    missing = [c for c in _required_columns("instances") if c not in released.columns and not c.endswith("caption_id")]
    if missing:
        raise ValueError(f"sugarcrepe released instances: missing columns {missing}; expected released.INSTANCE_SCHEMA")
    instances = released.assign(caption_id=np.int64(-1), negative_caption_id=np.int64(-1))
    return {"instances": instances[list(_required_columns("instances"))].reset_index(drop=True)}


# --- files -------------------------------------------------------------------------------------------


def write(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet and the negative captions as `extra_items/`, atomically; items.parquet last."""
    out = Path(out_dir)
    missing = [n for n in ("instances", "items") if n not in tables]
    if missing:
        raise ValueError(f"sugarcrepe write to {out}: missing tables {missing}")
    for name in TABLES:
        if name in tables:
            write_parquet(out / f"{name}.parquet", tables[name])
    if "extra_captions" in tables:
        _write_extra(tables["extra_captions"], out / EXTRA_DIR)
    write_parquet(out / "items.parquet", tables["items"][list(ITEM_COLUMNS)])


def _write_extra(captions: pd.DataFrame, d: Path) -> None:
    """The new captions as an items folder of the world's layout without images (images.npy holds none)."""
    d.mkdir(parents=True, exist_ok=True)
    with atomic_path(d / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.zeros((0, 1, 1, 3), dtype=np.uint8))
    empty = pd.DataFrame({"image_id": np.zeros(0, np.int64), "split": pd.Series([], dtype=object)})
    write_parquet(d / "images.parquet", empty.assign(n_objects=np.zeros(0, np.int64)))
    write_parquet(d / "scenes.parquet", empty[["image_id"]].assign(scene=pd.Series([], dtype=object)))
    write_parquet(d / "captions.parquet", captions[list(EXTRA_CAPTION_COLUMNS)])


def _required_columns(name: str) -> tuple[str, ...]:
    """The columns a table must have: its columns less the world-only ones."""
    return tuple(c for c in TABLES[name] if c not in WORLD_ONLY_COLUMNS.get(name, ()))


# What `read` names when a file of the folder is absent.
FOLDER = "a SugarCrepe benchmark folder (run the sugarcrepe rule)"


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate a folder written by `write` (construction tables and new captions when present)."""
    d = Path(out_dir)
    tables = {
        name: read_parquet_checked(d / f"{name}.parquet", _required_columns(name), FOLDER)
        for name in TABLES
        if name not in CONSTRUCTION_TABLES or (d / f"{name}.parquet").exists()
    }
    tables["items"] = read_parquet_checked(d / "items.parquet", ITEM_COLUMNS, FOLDER)
    if (d / EXTRA_DIR / "images.npy").exists():  # the world's layout; the coco source's added texts are ItemStore's
        tables["extra_captions"] = read_parquet_checked(
            d / EXTRA_DIR / "captions.parquet", EXTRA_CAPTION_COLUMNS, FOLDER
        )
    return tables
