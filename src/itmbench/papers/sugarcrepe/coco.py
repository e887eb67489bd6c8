"""SugarCrepe on the coco source: its seven released subset files mapped onto the COCO items (texts added).

The shared machinery is `itmbench.sources.coco_benchmarks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.registry import SUGARCREPE_KEYS
from itmbench.papers.sugarcrepe import canonical
from itmbench.papers.sugarcrepe.released import read_sugarcrepe_json
from itmbench.sources.coco_benchmarks import AddedItems, CocoItems, Released, items_table, released_path


@dataclass(frozen=True)
class SugarCrepeCocoConfig:
    """SugarCrepe from its released files: the first id of its caption texts, added as new items."""

    SECTION: ClassVar[str] = "coco_benchmarks.sugarcrepe"

    id_offset: int

    def __post_init__(self) -> None:
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.sugarcrepe: id_offset {self.id_offset}; expected a positive integer")


def from_released(raw_dir: str | Path, items: CocoItems, cfg: SugarCrepeCocoConfig) -> Released:
    """The 7 released subset files on the COCO items: `from_released`'s tables with item ids (texts added).

    SugarCrepe names no COCO caption id (its positives are COCO captions as text, its negatives new
    texts), so both captions are added items with ids from `cfg.id_offset`, each distinct text once;
    every image must be a COCO image of the items (`items`: `sources.coco_benchmarks.CocoItems`, `cfg`:
    its SugarCrepeCocoConfig).
    """
    added = AddedItems(cfg.id_offset)
    frames = []
    for subset in SUBSETS:
        path = released_path(SUGARCREPE_KEYS[subset], raw_dir)
        frame = read_sugarcrepe_json(path, subset)
        keys = frame["id"].to_numpy()
        items.require_image_ids(frame["image_id"].to_numpy(), path, lambda i, keys=keys: f"key {keys[i]!r}")
        frames.append(frame)
    instances = canonical.from_released(pd.concat(frames, ignore_index=True))["instances"]
    instances["caption_id"] = np.array([added.caption(t, "test") for t in instances["caption"]], dtype=np.int64)
    instances["negative_caption_id"] = np.array(
        [added.caption(t, "test") for t in instances["negative_caption"]], dtype=np.int64
    )
    captions = np.concatenate([instances["caption_id"], instances["negative_caption_id"]])
    tables = {
        "instances": instances,
        "items": items_table(("image", instances["image_id"].to_numpy()), ("caption", captions), dtype="str"),
    }
    log = {"instances": len(instances), "added_captions": len(added.caption_table())}
    return Released(tables, added, log)
