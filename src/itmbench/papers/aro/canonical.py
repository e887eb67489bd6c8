"""ARO's canonical tables, made by `build`, read by scoring and the audit.

- `instances`: id, dataset (vg_relation, vg_attribution, coco_order, flickr30k_order), label (the relation,
  the attribute pair 'A1_A2', '' on the Order sets), image_id, caption_id and caption (the true caption),
  n_options;
- `options`: id, option (0 = the true caption), kind ('true', 'false', or the perturbation's name),
  caption_id, text: every caption a model scores against the instance's image;
- construction only: `candidates` (dataset, image_id, label, false_fits: the swapped caption is true of the
  image, kept) of the VG sets;
- new items: `extra_captions` (caption_id, image_id = -1, split, text, structure; '' for a perturbation,
  which the world's grammar does not read), written as an items folder `extra_items/` with no image;
  `items` lists every item a model must embed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from itmbench.io import write_parquet
from itmbench.papers.sugarcrepe.canonical import EXTRA_CAPTION_COLUMNS, EXTRA_DIR, ITEM_COLUMNS, _write_extra
from itmbench.reading import read_parquet_checked

TABLES: dict[str, tuple[str, ...]] = {
    "instances": ("id", "dataset", "label", "image_id", "caption_id", "caption", "n_options"),
    "options": ("id", "option", "kind", "caption_id", "text"),
    "candidates": ("dataset", "image_id", "label", "false_fits", "kept"),
}
CONSTRUCTION_TABLES = ("candidates",)
FOLDER = "an ARO benchmark folder (run the aro rule)"

__all__ = ["EXTRA_CAPTION_COLUMNS", "TABLES", "read", "write"]


def write(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet and the new captions as `extra_items/`, atomically; items.parquet last."""
    out = Path(out_dir)
    absent = sorted({"instances", "options", "items"} - set(tables))
    if absent:
        raise ValueError(f"aro write to {out}: missing tables {absent}")
    for name in [n for n in TABLES if n in tables]:
        write_parquet(out / f"{name}.parquet", tables[name])
    if "extra_captions" in tables:  # the new captions' items folder, before the list that names them
        _write_extra(tables["extra_captions"], out / EXTRA_DIR)
    write_parquet(out / "items.parquet", tables["items"][list(ITEM_COLUMNS)])


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate a folder written by `write` (construction tables and new captions when present)."""
    d = Path(out_dir)
    tables = {
        name: read_parquet_checked(d / f"{name}.parquet", TABLES[name], FOLDER)
        for name in TABLES
        if name not in CONSTRUCTION_TABLES or (d / f"{name}.parquet").exists()
    }
    tables["items"] = read_parquet_checked(d / "items.parquet", ITEM_COLUMNS, FOLDER)
    if (d / EXTRA_DIR / "images.npy").exists():
        tables["extra_captions"] = read_parquet_checked(
            d / EXTRA_DIR / "captions.parquet", EXTRA_CAPTION_COLUMNS, FOLDER
        )
    return tables
