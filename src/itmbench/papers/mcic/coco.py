"""MCIC-COCO on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from itmbench.sources.coco_benchmarks import AddedItems, CocoItems, Released, released_path


@dataclass(frozen=True)
class McicCocoConfig:
    """MCIC from its released files: which splits, and the first id of the added option texts."""

    SECTION: ClassVar[str] = "coco_benchmarks.mcic"

    splits: tuple[str, ...]
    id_offset: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "splits", tuple(self.splits))
        bad = [s for s in self.splits if s not in ("dev", "test", "train")]
        if bad or not self.splits or len(set(self.splits)) != len(self.splits):
            raise ValueError(f"coco_benchmarks.mcic: splits {list(self.splits)}; expected distinct dev, test, train")
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.mcic: id_offset {self.id_offset}; expected a positive integer")


def from_released(raw_dir: str | Path, items: CocoItems, cfg: McicCocoConfig) -> Released:
    """MCIC examples of the released splits; images -> COCO ids, option texts -> added captions."""
    from itmbench.papers.mcic import canonical as mcic
    from itmbench.papers.mcic.released import read_mcic_txt

    added = AddedItems(cfg.id_offset)
    frames, positions, construction = [], [], []
    names = items.images.set_index("image_id")["file_name"].astype(str)
    for split in cfg.splits:
        path = released_path(f"mcic_{split}", raw_dir)
        ex = read_mcic_txt(path, split)
        lines = ex["line"].to_numpy()

        def record(i: int, lines: np.ndarray = lines) -> str:
            return f"line {int(lines[i])} key image"

        # MCIC names every image COCO_train2014_<id>.jpg, val2014 ones too: map by the id, count the others
        ex["image_id"] = items.require_image_ids(ex["image_id"].to_numpy(), path, record)
        renamed = ex.loc[ex["image"].to_numpy() != names.loc[ex["image_id"]].to_numpy(), "image_id"].nunique()
        construction += [
            {"split": split, "stage": "examples", "value": float(len(ex))},
            {"split": split, "stage": "images", "value": float(ex["image_id"].nunique())},
            {"split": split, "stage": "images whose file name is not COCO's (mapped by id)", "value": float(renamed)},
        ]
        ids = [[added.caption(text, split) for text in options] for options in ex["options"]]
        ex["option_caption_ids"] = ids
        ex["caption_id"] = [row[j] for row, j in zip(ids, ex["answer_index"].to_numpy())]
        frames.append(ex)
        counts = np.bincount(ex["answer_index"].to_numpy(np.int64), minlength=mcic.N_OPTIONS)
        for j in range(mcic.N_OPTIONS):
            share = counts[j] / len(ex) if len(ex) else float("nan")
            positions.append({"split": split, "position": j, "n": int(counts[j]), "share": float(share)})
    columns = [c for c in mcic.TABLE_COLUMNS["examples"] if c not in mcic.WORLD_ONLY_COLUMNS]
    examples = pd.concat(frames, ignore_index=True)[columns]
    dtypes = {c: t for c, t in mcic._DTYPES["examples"].items() if c in columns}
    examples = examples.astype(dtypes)
    tables = {
        "examples": examples,
        "answer_positions": pd.DataFrame(positions, columns=mcic.TABLE_COLUMNS["answer_positions"]).astype(
            mcic._DTYPES["positions"]
        ),
        "construction": pd.DataFrame(construction, columns=mcic.TABLE_COLUMNS["construction"]).astype(
            mcic._DTYPES["construction"]
        ),
        "items": mcic.items_of(examples),
    }
    log = {"construction": construction, "added_captions": len(added)}
    return Released(tables, added, log)
