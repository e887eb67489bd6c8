"""CxC on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from itmbench.sources.coco_benchmarks import (
    CocoItems,
    Released,
    Tables,
    check_gallery,
    gallery_captions,
    items_table,
    released_path,
    require_in,
)


@dataclass(frozen=True)
class CxcCocoConfig:
    """CxC from its released files: thresholds, the scored split, the SITS bootstrap side, the gallery captions."""

    SECTION: ClassVar[str] = "coco_benchmarks.cxc"

    threshold_sts: float
    threshold_sis: float
    threshold_sits: float
    score_split: str
    sits_query: str
    gallery_captions: str

    def __post_init__(self) -> None:
        if self.score_split not in ("val", "test"):
            raise ValueError(f"coco_benchmarks.cxc: score_split {self.score_split!r}; expected 'val' or 'test'")
        if self.sits_query not in ("image", "caption"):
            raise ValueError(f"coco_benchmarks.cxc: sits_query {self.sits_query!r}; expected 'image' or 'caption'")
        check_gallery("cxc", self.gallery_captions, self.score_split)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: CxcCocoConfig) -> Released:
    """CxC's rated pairs with COCO ids, its positives, the original pairs and the scored split's gallery."""
    from itmbench.papers.cxc import canonical as cxc
    from itmbench.papers.cxc.released import ITEM_COLUMNS, SPLITS, TASKS, CxcThresholds, pairs_from_raw, read_cxc_csv

    thresholds = CxcThresholds(sts=cfg.threshold_sts, sis=cfg.threshold_sis, sits=cfg.threshold_sits)
    caption_ids, _ = gallery_captions(items, cfg.score_split, cfg.gallery_captions, raw_dir)
    image_ids = items.split_images(cfg.score_split)
    require_in(
        items.image_of_caption(caption_ids),
        image_ids,
        items.captions_path,
        lambda i: f"caption {int(caption_ids[i])}",
        "image id",
        f"an image of the Karpathy {cfg.score_split!r} split",
    )
    per_task: dict[str, list[pd.DataFrame]] = {t: [] for t in TASKS}
    positive_frames = []
    for split in SPLITS:
        for task in TASKS:
            path = released_path(f"cxc_{task}_{split}", raw_dir)
            raw = read_cxc_csv(path, task, split)
            lines = raw["line"].to_numpy()
            for col in ITEM_COLUMNS[task]:

                def record(i: int, col: str = col, lines: np.ndarray = lines) -> str:
                    return f"line {int(lines[i])} column {col}"

                if col.startswith("caption"):  # `sentid:N`: COCO's annotation id, not Karpathy's
                    raw[f"{col}_id"] = items.require_caption_ids(raw[f"{col}_id"].to_numpy(), path, record)
                else:
                    raw[f"{col}_id"] = items.image_ids_of_files(raw[col].astype(str).tolist(), path, record)
                if split == cfg.score_split:
                    gallery = caption_ids if col.startswith("caption") else image_ids
                    require_in(raw[f"{col}_id"].to_numpy(), gallery, path, record, f"{col} id", "in the scored gallery")
            pairs = pairs_from_raw(raw, task, thresholds)
            per_task[task].append(pairs)
            a, b = ITEM_COLUMNS[task]
            pos = pairs[pairs["positive"]]
            positive_frames.append(
                pd.DataFrame({"split": split, "task": task, "a_id": pos[f"{a}_id"], "b_id": pos[f"{b}_id"]})
            )
        original = items.split_captions(split)
        if split == cfg.score_split:
            original = original[original["caption_id"].isin(caption_ids)]
        positive_frames.append(
            pd.DataFrame(
                {"split": split, "task": "original", "a_id": original["caption_id"], "b_id": original["image_id"]}
            )
        )
    tables: Tables = {t: pd.concat(per_task[t], ignore_index=True) for t in TASKS}
    tables["positives"] = pd.concat(positive_frames, ignore_index=True).astype(cxc.POSITIVE_COLUMNS)
    settings = asdict(cfg)
    tables["config"] = pd.DataFrame(
        {"key": list(settings), "value": [json.dumps(v) for v in settings.values()]}
    ).astype("string")
    tables["items"] = items_table(("image", image_ids), ("caption", caption_ids))
    pos = tables["positives"]
    log = {f"{t}_positives": pos[pos["task"] == t].groupby("split").size().to_dict() for t in (*TASKS, "original")}
    return Released(tables, log=log)
