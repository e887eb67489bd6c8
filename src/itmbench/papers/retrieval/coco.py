"""COCO 5k retrieval on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from itmbench.sources.coco_benchmarks import (
    KARPATHY_SPLITS,
    CocoItems,
    Released,
    check_gallery,
    gallery_captions,
    items_table,
    require_in,
)


@dataclass(frozen=True)
class RetrievalCocoConfig:
    """COCO retrieval: the Karpathy split and which of its captions form the gallery."""

    SECTION: ClassVar[str] = "coco_benchmarks.retrieval"

    split: str
    gallery_captions: str

    def __post_init__(self) -> None:
        if self.split not in KARPATHY_SPLITS:
            raise ValueError(f"coco_benchmarks.retrieval: split {self.split!r}; expected one of {KARPATHY_SPLITS}")
        check_gallery("retrieval", self.gallery_captions, self.split)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: RetrievalCocoConfig) -> Released:
    """COCO 5k retrieval: the Karpathy split's images, its gallery captions, the original pairs as positives."""
    caption_ids, _ = gallery_captions(items, cfg.split, cfg.gallery_captions, raw_dir)
    caption_ids = np.sort(caption_ids)
    image_ids = items.split_images(cfg.split)
    owners = items.image_of_caption(caption_ids)
    require_in(
        owners,
        image_ids,
        items.captions_path,
        lambda i: f"caption {int(caption_ids[i])}",
        "image id",
        f"an image of the Karpathy {cfg.split!r} split",
    )
    positives = pd.DataFrame({"image_id": owners, "caption_id": caption_ids, "positive_set": "original"})
    positives = positives.sort_values(["positive_set", "image_id", "caption_id"], kind="stable", ignore_index=True)
    table = items_table(("image", image_ids), ("caption", caption_ids), dtype="str")
    log = {"images": len(image_ids), "captions": len(caption_ids)}
    return Released({"items": table, "positives": positives}, log=log)
