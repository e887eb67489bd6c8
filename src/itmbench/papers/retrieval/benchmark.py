"""COCO-style retrieval: i2t and t2i over a split, under several positive sets.

Canonical files (the same for the world and for COCO 5k / CxC / ECCV):
- `items.parquet`: kind ('image' | 'caption'), item_id — the gallery, in order;
- `positives.parquet`: image_id, caption_id, positive_set — which pairs count as matches.
In the world the positive sets are `original` (an image's own captions, what COCO evaluates)
and `truth` (every caption that fits the scene): the gap between the two is the false-negative
problem that ECCV Caption and CxC address.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.io import write_parquet
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import truth_matrix

POSITIVE_SETS = ("original", "truth")


def build_world_retrieval(
    world: World, split: str, margin: float, max_objects: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Items and positives of retrieval on one split of the world."""
    images = world.image_table[world.image_table["split"] == split]
    captions = world.caption_table[world.caption_table["split"] == split]
    if images.empty:
        raise ValueError(f"world has no images in split {split!r}")
    scenes_by_id = dict(zip(world.scene_table["image_id"], world.scene_table["scene"]))
    scenes = [Scene.from_json(scenes_by_id[i]) for i in images["image_id"]]
    structures = [CaptionStructure.from_json(s) for s in captions["structure"]]
    fits = truth_matrix(structures, scenes, margin, max_objects)  # [captions, images]
    image_ids = images["image_id"].to_numpy()
    caption_ids = captions["caption_id"].to_numpy()
    original = pd.DataFrame(
        {"image_id": captions["image_id"].to_numpy(), "caption_id": caption_ids, "positive_set": "original"}
    )
    ci, ii = np.nonzero(fits)
    truth = pd.DataFrame({"image_id": image_ids[ii], "caption_id": caption_ids[ci], "positive_set": "truth"})
    positives = pd.concat([original, truth], ignore_index=True).sort_values(
        ["positive_set", "image_id", "caption_id"], kind="stable", ignore_index=True
    )
    items = pd.concat(
        [
            pd.DataFrame({"kind": "image", "item_id": image_ids}),
            pd.DataFrame({"kind": "caption", "item_id": caption_ids}),
        ],
        ignore_index=True,
    )
    return items, positives


def write_retrieval(items: pd.DataFrame, positives: pd.DataFrame, out_dir: str | Path) -> None:
    """Write the canonical retrieval files (positives first; items.parquet marks completion)."""
    out = Path(out_dir)
    write_parquet(out / "positives.parquet", positives.astype({"image_id": "int64", "caption_id": "int64"}))
    write_parquet(out / "items.parquet", items.astype({"item_id": "int64"}))


def read_retrieval(bench_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read and validate the canonical retrieval files."""
    d = Path(bench_dir)
    items = pd.read_parquet(d / "items.parquet")
    positives = pd.read_parquet(d / "positives.parquet")
    for name, df, cols in (
        ("items.parquet", items, ["kind", "item_id"]),
        ("positives.parquet", positives, ["image_id", "caption_id", "positive_set"]),
    ):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{d / name}: missing columns {missing}; expected {cols}")
    return items, positives
