"""SugarCrepe's edit stage in the world, and the random streams and filters the papers built on it share.

SugarCrepe (its own paper: `itmbench.papers.sugarcrepe`) and BiVLC (`itmbench.papers.bivlc`, whose
step 0 is SugarCrepe) build the same hard-negative captions, and the negatives engine
(`negatives.candidates`, `negatives.filter_rates`) regenerates BiVLC's candidates with BiVLC's own
random streams. All of them import this module; it imports no paper.

`edit_stage(world, cfg)`: for each image of `cfg.split` and each subset, the image's captions are
tried in a random order; each gets one edit of that subset (`negatives.captions.propose_edit`),
realised as a minimal text edit; an edit still true of the image by the world's truth is rejected
(SugarCrepe's filter of false negatives) and the next caption is tried, until
`instances_per_image_subset` are kept. `cfg` is any config with the fields `seed`, `split`,
`subsets`, `max_images`, `instances_per_image_subset`, `relation_margin` and `id_offset` (negative
caption id = id_offset + instance id); with the same values the stage is the same for every paper.

Random streams: every draw comes from `_rng(seed, stream, *keys)`, an independent generator per
(seed, stream, keys), so one instance regenerates alone and a stage can change without moving the
draws of the others.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import accuracy_from_correct
from itmbench.negatives.captions import SUBSETS, propose_edit, split_subset
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

# Independent random streams: any stage can change without moving the draws of the others.
STREAM_EDIT, STREAM_GENERATE, STREAM_SELECT, STREAM_AMBIGUITY, STREAM_SECOND_ANNOTATOR = range(5)

# The columns the edit stage gives each kept instance (SugarCrepe's canonical columns, then the world's).
INSTANCE_COLUMNS: tuple[str, ...] = (
    "id",
    "subset",
    "type",
    "subtype",
    "filename",
    "image_id",
    "caption",
    "negative_caption",
    "caption_id",
    "negative_caption_id",
    "negative_structure",
    "edit",
)
# Every proposed edit and whether it was true of its image.
EDIT_COLUMNS: tuple[str, ...] = (
    "image_id",
    "caption_id",
    "subset",
    "negative_caption",
    "negative_structure",
    "edit",
    "true_of_image",
)


class EditStageConfig(Protocol):
    """The fields of a paper's config the edit stage reads."""

    seed: int
    split: str
    subsets: tuple[str, ...]
    max_images: int
    instances_per_image_subset: int
    relation_margin: float
    id_offset: int


class CandidateConfig(EditStageConfig, Protocol):
    """The fields of BiVLC's config that generating and filtering candidates read."""

    n_candidates: int
    select_noise: float
    ambiguity_noise: float


def _rng(seed: int, stream: int, *keys: int) -> np.random.Generator:
    """An independent generator per (seed, stream, keys): one instance regenerates alone."""
    return np.random.default_rng(np.random.SeedSequence([seed, stream, *[int(k) for k in keys]]))


def instance_keys(image_id: int, subset: str, caption_id: int) -> tuple[int, int, int]:
    """The random-stream keys of one SugarCrepe instance (generation, step 3, step 4)."""
    return int(image_id), SUBSETS.index(subset), int(caption_id)


def _empty(columns: tuple[str, ...]) -> dict[str, list]:
    return {c: [] for c in columns}


def edit_stage(world: World, cfg: EditStageConfig) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, Scene]]:
    """Hard-negative captions of every (image, subset), filtered by truth; (instances, edits, scenes)."""
    images = world.image_table[world.image_table["split"] == cfg.split]
    if images.empty:
        raise ValueError(f"world has no images in split {cfg.split!r}; expected one of the world's splits")
    caps = world.caption_table[world.caption_table["split"] == cfg.split]
    scene_json = dict(zip(world.scene_table["image_id"].to_numpy().tolist(), world.scene_table["scene"]))
    by_image: dict[int, list[tuple[int, str, CaptionStructure]]] = {}
    for cid, iid, text, structure in zip(
        caps["caption_id"].to_numpy().tolist(), caps["image_id"].to_numpy().tolist(), caps["text"], caps["structure"]
    ):
        by_image.setdefault(iid, []).append((cid, text, CaptionStructure.from_json(structure)))
    scenes: dict[int, Scene] = {}
    sc = _empty(INSTANCE_COLUMNS)
    ed = _empty(EDIT_COLUMNS)
    image_ids = sorted(images["image_id"].to_numpy().tolist())
    for image_id in image_ids[: cfg.max_images] if cfg.max_images else image_ids:
        if image_id not in scene_json:
            raise ValueError(f"world scene table: no scene for image {image_id}; expected one scene per image")
        scene = scenes[image_id] = Scene.from_json(scene_json[image_id])
        own = by_image.get(image_id, [])
        for subset in cfg.subsets:
            rng = _rng(cfg.seed, STREAM_EDIT, image_id, SUBSETS.index(subset))
            kept = 0
            for k in rng.permutation(len(own)).tolist():
                caption_id, text, structure = own[k]
                edit = propose_edit(structure, text, subset, rng)
                if edit is None:
                    continue
                true = caption_fits(edit.structure, scene, cfg.relation_margin)
                for name, value in zip(
                    EDIT_COLUMNS,
                    (image_id, caption_id, subset, edit.text, edit.structure.to_json(), edit.detail, true),
                ):
                    ed[name].append(value)
                if true:
                    continue
                kind, subtype = split_subset(subset)
                row = (
                    len(sc["id"]),
                    subset,
                    kind,
                    subtype,
                    f"world:{image_id}",
                    image_id,
                    text,
                    edit.text,
                    caption_id,
                    cfg.id_offset + len(sc["id"]),
                    edit.structure.to_json(),
                    edit.detail,
                )
                for name, value in zip(sc, row):
                    sc[name].append(value)
                kept += 1
                if kept >= cfg.instances_per_image_subset:
                    break
    instances = pd.DataFrame(sc).astype(
        {"id": "int64", "image_id": "int64", "caption_id": "int64", "negative_caption_id": "int64"}
    )
    edits = pd.DataFrame(ed).astype({"image_id": "int64", "caption_id": "int64", "true_of_image": "bool"})
    return instances, edits, scenes


def sugarcrepe_instances(world: World, cfg: EditStageConfig) -> tuple[pd.DataFrame, dict[int, Scene]]:
    """The edit stage alone: the SugarCrepe instances (negative captions), and the scenes of their images."""
    instances, _, scenes = edit_stage(world, cfg)
    return instances, scenes


# --- BiVLC's annotators (steps 3-4), shared with the negatives engine's filter rates ------------------


def perceives_fit(fits: bool, noise: float, rng: np.random.Generator) -> bool:
    """A simulated annotator's yes/no: truth (1 or 0) plus Gaussian perception noise, above 1/2."""
    return bool(float(fits) + rng.normal(0.0, noise) > 0.5) if noise > 0 else bool(fits)


def select_best(fits: np.ndarray, noise: float, rng: np.random.Generator) -> int:
    """Step 3: index of the candidate perceived to fit best (truth + noise), or -1 if none is perceived to fit."""
    perceived = fits.astype(float) + (rng.normal(0.0, noise, size=len(fits)) if noise > 0 else 0.0)
    best = int(np.argmax(perceived))
    return best if perceived[best] > 0.5 else -1


def filter_candidates(
    negative: CaptionStructure,
    positive: CaptionStructure,
    scenes: list[Scene],
    cfg: CandidateConfig,
    keys: tuple[int, int, int],
) -> tuple[list[bool], list[bool], int, bool]:
    """Steps 3-4 on one instance's candidates: fits of both captions, the chosen candidate (-1: none), ambiguous.

    `cfg`: BiVLC's config (seed, relation_margin, select_noise, ambiguity_noise). The simulated
    annotators read each candidate's scene graph (the render's own, or a recognizer's reading).
    """
    fits_neg = [caption_fits(negative, s, cfg.relation_margin) for s in scenes]
    fits_pos = [caption_fits(positive, s, cfg.relation_margin) for s in scenes]
    # Step 3: the annotator perceives each candidate's fit (truth + noise) and picks the best, or none.
    chosen = select_best(np.array(fits_neg), cfg.select_noise, _rng(cfg.seed, STREAM_SELECT, *keys))
    # Step 4: drop the instance if the chosen image is perceived to fit the positive caption too.
    ambiguous = False
    if chosen >= 0:
        ambiguous = perceives_fit(fits_pos[chosen], cfg.ambiguity_noise, _rng(cfg.seed, STREAM_AMBIGUITY, *keys))
    return fits_neg, fits_pos, chosen, ambiguous


# --- rows of the audit and filter-rate tables --------------------------------------------------------


def _percent_interval(value: float, interval: tuple[float, float]) -> tuple[float, float]:
    """A Wilson interval in percent that contains its value (rounding can put lo 1e-15 above a 0 rate)."""
    return min(interval[0], value), max(interval[1], value)


def _rate_row(row: str, column: str, successes: int, n: int) -> dict[str, Any]:
    """A percentage with its Wilson interval (NaN when n = 0)."""
    if n == 0:
        return {"row": row, "column": column, "value": np.nan, "lo": np.nan, "hi": np.nan}
    acc = accuracy_from_correct(np.arange(n) < successes)
    lo, hi = _percent_interval(acc.percent, acc.ci_percent)
    return {"row": row, "column": column, "value": acc.percent, "lo": lo, "hi": hi}


def _value_row(row: str, column: str, value: float) -> dict[str, Any]:
    return {"row": row, "column": column, "value": float(value), "lo": np.nan, "hi": np.nan}
