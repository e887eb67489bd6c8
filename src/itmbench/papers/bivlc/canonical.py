"""BiVLC's canonical tables, written by `build` or the coco source, read by scoring and the audit.

Canonical tables (the same columns as the released files, `itmbench.papers.bivlc.released` and
`itmbench.papers.sugarcrepe.released`, plus world-only columns):
- `sugarcrepe`: id, subset, type, subtype, filename, image_id, caption, negative_caption, then
  caption_id, negative_caption_id, negative_structure, edit, chosen_candidate (-1: none chosen
  in step 3), judged_ambiguous (step 4), in_bivlc, bivlc_id (-1 where not in BiVLC);
- `instances` (BiVLC): id, image, caption, negative_caption, negative_image, type, subtype, then
  caption_id, negative_caption_id, sugarcrepe_id. In the world `image` and `negative_image` hold
  image ids (int64).
Construction-stage tables: `edits` (every proposed hard-negative caption and whether it was true
of its image), `candidates` (every generated image: its scene graph, mistakes, truth of both
captions, whether step 3 chose it), `stages` (survivors per stage and subset), and the new items
`extra_images` (image_id, split, n_objects, scene, image_size, pixels) and `extra_captions`
(caption_id, image_id, split, text, structure), written as an items folder `extra_items/` with the
layout of the world's. `items` lists every item a model must embed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import atomic_path, write_parquet
from itmbench.negatives.edits import EDIT_COLUMNS, INSTANCE_COLUMNS
from itmbench.negatives.images import MISTAKES
from itmbench.reading import read_parquet_checked

TABLES: dict[str, tuple[str, ...]] = {
    "sugarcrepe": (
        *INSTANCE_COLUMNS,
        "chosen_candidate",
        "judged_ambiguous",
        "in_bivlc",
        "bivlc_id",
    ),
    "instances": (
        "id",
        "image",
        "caption",
        "negative_caption",
        "negative_image",
        "type",
        "subtype",
        "caption_id",
        "negative_caption_id",
        "sugarcrepe_id",
    ),
    "edits": EDIT_COLUMNS,
    "candidates": (
        "sugarcrepe_id",
        "candidate",
        "scene",
        *MISTAKES,
        "fits_negative",
        "fits_positive",
        "chosen",
    ),
    "stages": ("stage", "subset", "type", "subtype", "n"),
}
# Tables that only the world's construction has (absent when BiVLC comes from the released files:
# the coco source, whose added items are written by itmbench.sources.coco_benchmarks in the file layout).
CONSTRUCTION_TABLES = ("edits", "candidates", "stages")
WORLD_EXTRA_TABLES = ("extra_images", "extra_captions")
WORLD_ONLY_COLUMNS = {"sugarcrepe": ("negative_structure", "edit", "chosen_candidate", "judged_ambiguous")}
EXTRA_DIR = "extra_items"
EXTRA_IMAGE_COLUMNS = ("image_id", "split", "n_objects", "scene", "image_size", "pixels")
EXTRA_CAPTION_COLUMNS = ("caption_id", "image_id", "split", "text", "structure")
ITEM_COLUMNS = ("kind", "item_id")


# --- files -------------------------------------------------------------------------------------------


def write(tables: Mapping[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write every table as parquet and the new items as `extra_items/`, atomically; items.parquet last."""
    out = Path(out_dir)
    missing = [n for n in (*TABLES, "items") if n not in tables and n not in CONSTRUCTION_TABLES]
    if sum(n in tables for n in WORLD_EXTRA_TABLES) == 1:
        missing += [n for n in WORLD_EXTRA_TABLES if n not in tables]
    if missing:
        raise ValueError(f"bivlc write to {out}: missing tables {missing}")
    for name in TABLES:
        if name in tables:
            write_parquet(out / f"{name}.parquet", tables[name])
    if "extra_images" in tables:
        _write_world_extra(tables, out)
    write_parquet(out / "items.parquet", tables["items"][list(ITEM_COLUMNS)])


def _write_world_extra(tables: Mapping[str, pd.DataFrame], out: Path) -> None:
    """The world's added items as an items folder `extra_items/` (pixels in images.npy, scenes)."""
    extra = tables["extra_images"]
    side = int(extra["image_size"].iloc[0]) if len(extra) else 0
    pixels = np.zeros((len(extra), side, side, 3), dtype=np.uint8)
    for k, (size, raw) in enumerate(zip(extra["image_size"], extra["pixels"])):
        if int(size) != side or len(raw) != side * side * 3:
            raise ValueError(
                f"bivlc extra image {extra['image_id'].iloc[k]}: {len(raw)} bytes; expected {side}x{side}x3"
            )
        pixels[k] = np.frombuffer(raw, dtype=np.uint8).reshape(side, side, 3)
    d = out / EXTRA_DIR
    d.mkdir(parents=True, exist_ok=True)
    with atomic_path(d / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, pixels)
    write_parquet(d / "scenes.parquet", extra[["image_id", "scene"]])
    write_parquet(d / "captions.parquet", tables["extra_captions"][list(EXTRA_CAPTION_COLUMNS)])
    write_parquet(d / "images.parquet", extra[["image_id", "split", "n_objects"]])


def _required_columns(name: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The columns a table must have: its columns less the world-only ones."""
    return tuple(c for c in columns if c not in WORLD_ONLY_COLUMNS.get(name, ()))


# What `read` names when a file of the folder is absent.
FOLDER = "a BiVLC benchmark folder (run the bivlc rule)"


def read(out_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate a folder written by `write` (extra images come back with their pixels)."""
    d = Path(out_dir)
    tables = {
        name: read_parquet_checked(d / f"{name}.parquet", _required_columns(name, cols), FOLDER)
        for name, cols in TABLES.items()
        if name not in CONSTRUCTION_TABLES or (d / f"{name}.parquet").exists()
    }
    tables["items"] = read_parquet_checked(d / "items.parquet", ITEM_COLUMNS, FOLDER)
    e = d / EXTRA_DIR
    if not (e / "scenes.parquet").exists() and not (e / "images.npy").exists():
        return tables  # not the world's layout: added items are files (the coco source), read by ItemStore
    images = read_parquet_checked(e / "images.parquet", ("image_id", "split", "n_objects"), FOLDER)
    scenes = read_parquet_checked(e / "scenes.parquet", ("image_id", "scene"), FOLDER)
    if not (e / "images.npy").exists():
        raise FileNotFoundError(f"{e / 'images.npy'}: missing; expected the pixels of the extra images")
    pixels = np.load(e / "images.npy")
    if pixels.shape[0] != len(images) or not images["image_id"].equals(scenes["image_id"]):
        raise ValueError(
            f"{e}: images.npy has {pixels.shape[0]} images, images.parquet {len(images)} rows; expected equal"
        )
    extra = images.assign(
        scene=scenes["scene"].to_numpy(),
        image_size=np.full(len(images), pixels.shape[1] if pixels.ndim == 4 else 0, dtype=np.int64),
        pixels=[p.tobytes() for p in pixels],
    )
    tables["extra_images"] = extra[list(EXTRA_IMAGE_COLUMNS)]
    tables["extra_captions"] = read_parquet_checked(e / "captions.parquet", EXTRA_CAPTION_COLUMNS, FOLDER)
    return tables
