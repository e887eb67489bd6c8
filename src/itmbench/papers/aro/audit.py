"""ARO's audit against the world's truth: each VG option's truth recomputed, the candidates the swap made true,
and on the Order sets how often a perturbation leaves the caption's text unchanged (a tie the true caption wins)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.negatives.edits import _rate_row, _value_row
from itmbench.papers.aro.config import DATASETS, AroConfig
from itmbench.papers.aro.perturb import PERTURBATIONS
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits


def audit(world: World, tables: Mapping[str, pd.DataFrame], cfg: AroConfig) -> pd.DataFrame:
    """What only the world can check, per set: the true and false captions' truth, the candidates dropped."""
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    structure = dict(
        zip(tables["extra_captions"]["caption_id"].to_numpy().tolist(), tables["extra_captions"]["structure"])
    )
    inst, cands = tables["instances"], tables["candidates"]
    opts = tables["options"].merge(inst[["id", "dataset", "image_id"]], on="id", how="left")
    rows: list[dict[str, Any]] = []
    for dataset in DATASETS:
        o = opts[opts["dataset"] == dataset]
        n = int((inst["dataset"] == dataset).sum())
        rows.append(_value_row(dataset, "instances", n))
        if dataset.startswith("vg_"):
            c = cands[cands["dataset"] == dataset]
            rows.append(_value_row(dataset, "candidates", len(c)))
            rows.append(
                _rate_row(dataset, "swapped caption true of the image, dropped (%)", int(c["false_fits"].sum()), len(c))
            )
            for kind, what in (
                ("true", "true caption fits the image (%)"),
                ("false", "false caption fits the image (%)"),
            ):
                k = o[o["kind"] == kind]
                fits = [
                    caption_fits(CaptionStructure.from_json(structure[int(cid)]), scenes[int(i)], cfg.relation_margin)
                    for cid, i in zip(k["caption_id"], k["image_id"])
                ]
                rows.append(_rate_row(dataset, what, int(np.sum(fits)), len(k)))
        else:
            true_text = dict(zip(o.loc[o["option"] == 0, "id"], o.loc[o["option"] == 0, "text"]))
            for name in PERTURBATIONS:
                p = o[o["kind"] == name]
                same = int(sum(t == true_text[i] for i, t in zip(p["id"], p["text"])))
                rows.append(_rate_row(dataset, f"{name}: text unchanged (%)", same, len(p)))
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )
