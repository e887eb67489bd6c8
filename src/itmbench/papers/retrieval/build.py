"""COCO-style retrieval built in the world: i2t and t2i over one split, under two positive sets.

In the world the positive sets are `original` (an image's own captions, what COCO evaluates) and
`truth` (every caption that fits the scene by the world's truth function): the gap between the two
is the false-negative problem that ECCV Caption and CxC address. The canonical tables it builds are
`itmbench.papers.retrieval.canonical`'s (the same for the world and for COCO 5k).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World, WorldConfig
from itmbench.world.scene import Scene
from itmbench.world.truth import truth_matrix


def split_truth(world: World, split: str, margin: float, max_objects: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The split's image ids, caption ids, and the truth matrix [captions, images] (which caption fits which image)."""
    images = world.image_table[world.image_table["split"] == split]
    captions = world.caption_table[world.caption_table["split"] == split]
    if images.empty:
        raise ValueError(f"world has no images in split {split!r}")
    scenes_by_id = dict(zip(world.scene_table["image_id"], world.scene_table["scene"]))
    scenes = [Scene.from_json(scenes_by_id[i]) for i in images["image_id"]]
    structures = [CaptionStructure.from_json(s) for s in captions["structure"]]
    fits = truth_matrix(structures, scenes, margin, max_objects)
    return images["image_id"].to_numpy(), captions["caption_id"].to_numpy(), fits


def build(world: World, cfg: RetrievalConfig, *, world_cfg: WorldConfig) -> dict[str, pd.DataFrame]:
    """Items and positives of retrieval on the configured split of the world."""
    image_ids, caption_ids, fits = split_truth(world, cfg.split, world_cfg.relation_margin, world_cfg.max_objects)
    captions = world.caption_table[world.caption_table["split"] == cfg.split]
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
    return {"items": items, "positives": positives}
