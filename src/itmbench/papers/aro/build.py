"""ARO (Yuksekgonul et al., ICLR 2023) built in the world by the paper's procedure: four image-to-text sets.

An instance is an image and its caption options, the true caption first; a model is right when it scores
the true caption above every other option for the image (the authors' `evaluate_scores`: `argmax` over the
options, so a tie goes to the first option among the tied ones: on VG-Relation/VG-Attribution, whose
options the authors order [false, true], a tie is wrong; on the Order sets, [true, perturbed...], a tie is
right; `score.correct_of` keeps both rules).

- VG-Relation (`vg_relation`): the paper's "the X is R the Y" against "the Y is R the X", the two objects
  swapped. In the world: for each image of `vg_split`, every ordered pair of objects (a, b) and relation R
  of the world's four (left of, right of, above, below) with `a R b` holding at the world's margin is a
  candidate; the objects are named as the world grammar names them, by size, colour and shape ("a large red
  circle is above a small blue square", the grammar's own template and first phrase of R; by colour and shape
  alone with `vg_sizes` false: the world's captions always name the size, and its models bind a colour to its
  object on captions without one at about chance, so such a set tests the phrasing, not the binding:
  docs/aro.md); a candidate whose swapped caption is still true of the
  image by the world's truth function is dropped (the authors drop relations that can be symmetric, a list
  in their notebook; the world's truth checks each caption instead); `relations_per_image` are kept per
  image in a seeded random order. Label: the relation.
- VG-Attribution (`vg_attribution`): "the A1 X and the A2 Y" against the two attributes swapped. In the
  world the attribute is the colour: each unordered pair of objects of different shapes and colours is a
  candidate, named in a seeded random order and as for VG-Relation ("a large red circle and a small blue
  square" against "a large blue circle and a small red square": the colours swapped, the sizes kept); a
  candidate whose swapped caption is true of the image is dropped; `attributions_per_image`
  are kept per image. Label: 'A1_A2' (the authors' `f"{attributes[0]}_{attributes[1]}"`).
- COCO-Order and Flickr30k-Order (`coco_order`, `flickr30k_order`): every caption of the split's images
  (`coco_order_split`, `flickr30k_order_split`) against its four perturbations (`perturb.PERTURBATIONS`, the
  authors' functions and order), each option passed through `pre_caption` with `max_words`. The world has
  one caption distribution, so the two sets differ only by split (docs/aro.md, deviations).

New caption ids: `id_offset` + a running index over the options that are no caption of the world (every VG
option; the Order sets' perturbations), in instance order. Random streams: one generator per (seed, set,
image) for the VG sets and per (seed, caption, perturbation) for the Order sets, so one instance regenerates
alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.papers.aro.canonical import EXTRA_CAPTION_COLUMNS, TABLES
from itmbench.papers.aro.config import DATASETS, AroConfig
from itmbench.papers.aro.perturb import PERTURBATIONS, perturb, pre_caption
from itmbench.world.captions import RELATION_WORDS, CaptionStructure, Mention, noun_phrase
from itmbench.world.generate import World
from itmbench.world.scene import RELATIONS, Scene, WorldObject, relation_holds
from itmbench.world.truth import caption_fits

STREAM_RELATION, STREAM_ATTRIBUTION, STREAM_ORDER = range(3)


def _rng(seed: int, stream: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, stream, *[int(k) for k in keys]]))


def _mention(obj: WorldObject, sizes: bool, colour: str | None = None) -> Mention:
    return Mention(shape=obj.shape, colour=obj.colour if colour is None else colour, size=obj.size if sizes else None)


def _np(m: Mention) -> str:
    return noun_phrase(m, np.random.default_rng(0))  # the shape is named: the generator draws nothing


def relation_caption(m0: Mention, m1: Mention, relation: str) -> tuple[str, CaptionStructure]:
    """'<a m0> is <R> <a m1>' and its structure (the world grammar's template, R's first phrase)."""
    structure = CaptionStructure((m0, m1), relation=relation, kind="relation")
    return f"{_np(m0)} is {RELATION_WORDS[relation][0]} {_np(m1)}", structure


def attribution_caption(m0: Mention, m1: Mention) -> tuple[str, CaptionStructure]:
    """'<a m0> and <a m1>' and its structure (the world grammar's pair template)."""
    return f"{_np(m0)} and {_np(m1)}", CaptionStructure((m0, m1), kind="pair")


def relation_candidates(scene: Scene, margin: float, sizes: bool) -> list[dict[str, Any]]:
    """Every (a, R, b) of the scene with a R b holding, its caption and its swapped caption, and whether the
    swapped caption is true of the scene."""
    out = []
    objs = scene.objects
    for i, a in enumerate(objs):
        for j, b in enumerate(objs):
            for r in RELATIONS:
                if i == j or not relation_holds(a, b, r, margin):
                    continue
                true_text, true_s = relation_caption(_mention(a, sizes), _mention(b, sizes), r)
                false_text, false_s = relation_caption(_mention(b, sizes), _mention(a, sizes), r)
                out.append(
                    {
                        "label": r,
                        "true": (true_text, true_s),
                        "false": (false_text, false_s),
                        "false_fits": caption_fits(false_s, scene, margin),
                        "true_fits": caption_fits(true_s, scene, margin),
                    }
                )
    return out


def attribution_candidates(scene: Scene, margin: float, rng: np.random.Generator, sizes: bool) -> list[dict[str, Any]]:
    """Every pair of objects of different shapes and colours (named in a random order), its caption, the caption
    with the two colours swapped, and whether the swapped caption is true of the scene."""
    out = []
    objs = scene.objects
    for i in range(len(objs)):
        for j in range(i + 1, len(objs)):
            a, b = (objs[i], objs[j]) if rng.random() < 0.5 else (objs[j], objs[i])
            if a.shape == b.shape or a.colour == b.colour:
                continue
            true_text, true_s = attribution_caption(_mention(a, sizes), _mention(b, sizes))
            false_text, false_s = attribution_caption(_mention(a, sizes, b.colour), _mention(b, sizes, a.colour))
            out.append(
                {
                    "label": f"{a.colour}_{b.colour}",
                    "true": (true_text, true_s),
                    "false": (false_text, false_s),
                    "false_fits": caption_fits(false_s, scene, margin),
                    "true_fits": caption_fits(true_s, scene, margin),
                }
            )
    return out


class _Tables:
    """Rows of the tables under construction, with the running instance and new-caption ids."""

    def __init__(self, cfg: AroConfig):
        self.cfg = cfg
        self.instances: list[tuple[Any, ...]] = []
        self.options: list[tuple[Any, ...]] = []
        self.extra: list[tuple[Any, ...]] = []
        self.candidates: list[tuple[Any, ...]] = []

    def new_caption(self, text: str, split: str, structure: str) -> int:
        caption_id = self.cfg.id_offset + len(self.extra)
        self.extra.append((caption_id, -1, split, text, structure))
        return caption_id

    def add(self, dataset: str, label: str, image_id: int, options: list[tuple[str, int, str]]) -> None:
        """One instance: its options (kind, caption id, text), the true caption first."""
        iid = len(self.instances)
        self.instances.append((iid, dataset, label, image_id, options[0][1], options[0][2], len(options)))
        self.options += [(iid, k, kind, cid, text) for k, (kind, cid, text) in enumerate(options)]


def _vg(tables: _Tables, world: World, dataset: str) -> None:
    cfg = tables.cfg
    images = world.image_table
    ids = sorted(images.loc[images["split"] == cfg.vg_split, "image_id"].to_numpy().tolist())
    scene_json = dict(zip(world.scene_table["image_id"].to_numpy().tolist(), world.scene_table["scene"]))
    per_image = cfg.relations_per_image if dataset == "vg_relation" else cfg.attributions_per_image
    stream = STREAM_RELATION if dataset == "vg_relation" else STREAM_ATTRIBUTION
    for image_id in ids[: cfg.max_images] if cfg.max_images else ids:
        scene = Scene.from_json(scene_json[image_id])
        rng = _rng(cfg.seed, stream, image_id)
        if dataset == "vg_relation":
            cands = relation_candidates(scene, cfg.relation_margin, cfg.vg_sizes)
        else:
            cands = attribution_candidates(scene, cfg.relation_margin, rng, cfg.vg_sizes)
        kept = 0
        for k in rng.permutation(len(cands)).tolist():
            c = cands[k]
            usable = c["true_fits"] and not c["false_fits"]
            keep = usable and kept < per_image
            tables.candidates.append((dataset, image_id, c["label"], bool(c["false_fits"]), keep))
            if not keep:
                continue
            kept += 1
            options = []
            for kind in ("true", "false"):
                text, structure = c[kind]
                options.append((kind, tables.new_caption(text, cfg.vg_split, structure.to_json()), text))
            tables.add(dataset, c["label"], image_id, options)


def _order(tables: _Tables, world: World, dataset: str) -> None:
    cfg = tables.cfg
    split = cfg.coco_order_split if dataset == "coco_order" else cfg.flickr30k_order_split
    images = world.image_table
    ids = sorted(images.loc[images["split"] == split, "image_id"].to_numpy().tolist())
    chosen = set(ids[: cfg.max_images] if cfg.max_images else ids)
    caps = world.caption_table.sort_values("caption_id")
    for cid, image_id, text in zip(
        caps["caption_id"].to_numpy().tolist(), caps["image_id"].to_numpy().tolist(), caps["text"]
    ):
        if image_id not in chosen:
            continue
        options = [("true", int(cid), pre_caption(text, cfg.max_words))]
        for p, name in enumerate(PERTURBATIONS):
            new = perturb(text, name, _rng(cfg.seed, STREAM_ORDER, cid, p), cfg.max_words)
            options.append((name, tables.new_caption(new, split, ""), new))
        tables.add(dataset, "", int(image_id), options)


def build(world: World, cfg: AroConfig, **inputs: Any) -> dict[str, pd.DataFrame]:
    """Build ARO's four sets in the world; every table, items last."""
    if inputs:
        raise TypeError(f"aro build: unexpected inputs {sorted(inputs)}; expected none")
    tables = _Tables(cfg)
    for dataset in DATASETS:
        (_vg if dataset.startswith("vg_") else _order)(tables, world, dataset)
    frames = {
        "instances": pd.DataFrame(tables.instances, columns=list(TABLES["instances"])),
        "options": pd.DataFrame(tables.options, columns=list(TABLES["options"])),
        "candidates": pd.DataFrame(tables.candidates, columns=list(TABLES["candidates"])),
        "extra_captions": pd.DataFrame(tables.extra, columns=list(EXTRA_CAPTION_COLUMNS)),
    }
    frames = {name: f.astype({c: "int64" for c in f.columns if c in INT_COLUMNS}) for name, f in frames.items()}
    frames["items"] = _items(frames["instances"], frames["options"])
    return frames


INT_COLUMNS = ("id", "image_id", "caption_id", "n_options", "option")


def _items(instances: pd.DataFrame, options: pd.DataFrame) -> pd.DataFrame:
    """Every image and caption a model must embed, sorted, each once."""
    images = np.unique(instances["image_id"].to_numpy(np.int64))
    captions = np.unique(options["caption_id"].to_numpy(np.int64))
    return pd.DataFrame(
        {
            "kind": ["image"] * len(images) + ["caption"] * len(captions),
            "item_id": np.concatenate([images, captions]).astype(np.int64),
        }
    )
