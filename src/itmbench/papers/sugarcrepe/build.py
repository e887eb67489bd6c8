"""SugarCrepe (Hsieh et al. 2023) on its own: image-to-text hard negatives of seven edit subtypes, built in the world.

Instance: an image, its positive caption and one hard-negative caption made by one edit of a
subtype: replace-obj / replace-att / replace-rel, swap-obj / swap-att, add-obj / add-att. A model
is right when it scores the positive caption above the negative for the image (strict `>`: a tie
counts as wrong). Chance 50%.

Construction on `split` (the test split) is the shared edit stage (`itmbench.negatives.edits`):
for each image and subset its captions are tried in a seeded random order, each gets one edit of
the subset realised as a minimal text edit, and an edit still true of the image by the world's
truth function is rejected (SugarCrepe's filter of false negatives), until
`instances_per_image_subset` are kept. With the same seed and settings it is exactly BiVLC's step 0
(BiVLC adds generated negative images to these instances).

Decisions where the paper is silent (config parameters with these defaults): one instance per
(image, subset); new caption ids = `id_offset` + instance id (as BiVLC's).

The tables it makes are those of `itmbench.papers.sugarcrepe.canonical`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.negatives.captions import split_subset
from itmbench.negatives.edits import EDIT_COLUMNS, INSTANCE_COLUMNS, edit_stage
from itmbench.papers.sugarcrepe.canonical import EXTRA_CAPTION_COLUMNS, TABLES
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.world.generate import World

STAGES = ("edits_proposed", "edits_true_of_image", "instances")


def build(world: World, cfg: SugarCrepeConfig, **inputs: Any) -> dict[str, pd.DataFrame]:
    """Build SugarCrepe in the world (the shared edit stage); every table, items last."""
    if inputs:
        raise TypeError(f"sugarcrepe build: unexpected inputs {sorted(inputs)}; expected none")
    instances, edits, _ = edit_stage(world, cfg)
    extra_captions = pd.DataFrame(
        {
            "caption_id": instances["negative_caption_id"].to_numpy(np.int64),
            "image_id": np.full(len(instances), -1, dtype=np.int64),
            "split": cfg.split,
            "text": instances["negative_caption"].to_numpy(),
            "structure": instances["negative_structure"].to_numpy(),
        },
        columns=list(EXTRA_CAPTION_COLUMNS),
    ).astype({"caption_id": "int64", "image_id": "int64"})
    return {
        "instances": instances[list(INSTANCE_COLUMNS)],
        "edits": edits[list(EDIT_COLUMNS)],
        "stages": _stages(instances, edits, cfg.subsets),
        "extra_captions": extra_captions,
        "items": _items(instances),
    }


def _stages(instances: pd.DataFrame, edits: pd.DataFrame, subsets: tuple[str, ...]) -> pd.DataFrame:
    """Survivors of each stage per subset (long form)."""
    counts = {
        "edits_proposed": edits["subset"].value_counts(),
        "edits_true_of_image": edits.loc[edits["true_of_image"], "subset"].value_counts(),
        "instances": instances["subset"].value_counts(),
    }
    rows = [
        (stage, subset, *split_subset(subset), int(counts[stage].get(subset, 0)))
        for stage in STAGES
        for subset in subsets
    ]
    return pd.DataFrame(rows, columns=list(TABLES["stages"])).astype({"n": "int64"})


def _items(instances: pd.DataFrame) -> pd.DataFrame:
    """Every image and caption a model must embed, sorted, each once."""
    images = np.unique(instances["image_id"].to_numpy(np.int64))
    captions = np.unique(np.concatenate([instances["caption_id"], instances["negative_caption_id"]]).astype(np.int64))
    return pd.DataFrame(
        {
            "kind": ["image"] * len(images) + ["caption"] * len(captions),
            "item_id": np.concatenate([images, captions]).astype(np.int64),
        }
    )
