"""SugarCrepe's audit against the world's truth: every positive and negative caption's truth, per subtype."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.negatives.edits import _rate_row, _value_row
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits


def audit(world: World, tables: Mapping[str, pd.DataFrame], cfg: SugarCrepeConfig) -> pd.DataFrame:
    """What only the world can check: the truth of every positive and negative caption, recomputed per subtype."""
    margin = cfg.relation_margin
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = dict(zip(world.caption_table["caption_id"].to_numpy().tolist(), world.caption_table["structure"]))
    inst, edits = tables["instances"], tables["edits"]
    image = inst["image_id"].to_numpy(np.int64)
    pos_fits = np.array(
        [caption_fits(CaptionStructure.from_json(positive[int(c)]), scenes[int(i)], margin)
         for c, i in zip(inst["caption_id"], image)],
        dtype=bool,
    )  # fmt: skip
    neg_fits = np.array(
        [caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
         for s, i in zip(inst["negative_structure"], image)],
        dtype=bool,
    )  # fmt: skip
    edit_true = np.array(
        [caption_fits(CaptionStructure.from_json(s), scenes[int(i)], margin)
         for s, i in zip(edits["negative_structure"], edits["image_id"])],
        dtype=bool,
    )  # fmt: skip
    same_text = (inst["caption"] == inst["negative_caption"]).to_numpy(bool)
    rows: list[dict[str, Any]] = []
    for subset in (*cfg.subsets, "overall"):
        i = np.ones(len(inst), bool) if subset == "overall" else (inst["subset"] == subset).to_numpy(bool)
        e = np.ones(len(edits), bool) if subset == "overall" else (edits["subset"] == subset).to_numpy(bool)
        n = int(i.sum())
        rows += [
            _value_row(subset, "edits proposed", e.sum()),
            _rate_row(subset, "edits true of the image, rejected (%)", int(edit_true[e].sum()), int(e.sum())),
            _value_row(subset, "instances", n),
            _rate_row(subset, "positive caption fits the image (%)", int(pos_fits[i].sum()), n),
            _rate_row(subset, "negative caption fits the image (%)", int(neg_fits[i].sum()), n),
            _rate_row(subset, "negative text equals the positive (%)", int(same_text[i].sum()), n),
        ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )
