"""ECCV Caption in the world: the world's graded truth of a caption against a scene, and the test split's items.

`claim_matrix` counts the claims of each caption (each attribute a mention names, a count, the relation) that
each scene satisfies over the best assignment of mentions to objects: the simulated humans' answers and the
graded-truth machine annotators of `build` read it. `split_data` is the split's ids, scenes, caption structures
and truth (`world.truth.truth_matrix`), checked against the captions' own images.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import World, WorldConfig
from itmbench.world.scene import COLOURS, SHAPES, SIZES, Scene, scene_arrays
from itmbench.world.truth import relation_tensor, truth_matrix

CLAIM_KINDS: tuple[str, ...] = ("shape", "colour", "size", "count", "relation")
# A caption is generated on exact positions and judged on the scene JSON (positions to 4 decimals), so
# a relation at the margin can flip. More than this share of misfits means the margin is not the world's.
MAX_OWN_MISFIT = 0.01
_NEG = -1000  # attribute hits of a padding object: below any real count


# --- the world's graded truth ----------------------------------------------------------------------


def _attribute_hits(m: Mention, arrays: dict[str, np.ndarray], ignore: frozenset[str]) -> tuple[np.ndarray, int]:
    """Per (scene, object) the number of the mention's attribute claims the object satisfies, and their number."""
    hits = np.zeros(arrays["valid"].shape, dtype=np.int64)
    n = 0
    for attr, values in (("shape", SHAPES), ("colour", COLOURS), ("size", SIZES)):
        value = getattr(m, attr)
        if value is None or attr in ignore:
            continue
        hits += arrays[attr] == values.index(value)
        n += 1
    return np.where(arrays["valid"], hits, _NEG), n


def claim_matrix(
    structures: Sequence[CaptionStructure],
    scenes: Sequence[Scene],
    margin: float,
    ignore: frozenset[str] = frozenset(),
    max_objects: int = 4,
) -> tuple[np.ndarray, np.ndarray]:
    """Graded truth: satisfied claims [C, S] over the best object assignment, and each caption's claim count [C].

    Claims: each attribute a mention names, the count of a count mention (exactly k objects fit it),
    and the relation; kinds in `ignore` are dropped (a count mention then claims 'at least one', a
    relation caption becomes a pair). With nothing ignored, satisfied == total iff the caption fits.
    """
    bad = set(ignore) - set(CLAIM_KINDS)
    if bad:
        raise ValueError(f"unknown claim kinds {sorted(bad)}; expected some of {CLAIM_KINDS}")
    arrays = scene_arrays(list(scenes), max_objects=max_objects)
    valid = arrays["valid"]
    pair_ok = valid[:, :, None] & valid[:, None, :] & ~np.eye(max_objects, dtype=bool)[None]
    relations: dict[str, np.ndarray] = {}
    satisfied = np.zeros((len(structures), len(scenes)), dtype=np.int64)
    total = np.zeros(len(structures), dtype=np.int64)
    cache: dict[str, tuple[np.ndarray, int]] = {}
    for ci, c in enumerate(structures):
        key = c.to_json()
        if key not in cache:
            if len(c.mentions) == 1:
                m = c.mentions[0]
                hits, n = _attribute_hits(m, arrays, ignore)
                row = np.maximum(hits.max(axis=1), 0)
                if m.count > 1 and "count" not in ignore:
                    found = ((hits == n) & valid).sum(axis=1)
                    row = row + (found == m.count)
                    n += 1
            else:
                h0, n0 = _attribute_hits(c.mentions[0], arrays, ignore)
                h1, n1 = _attribute_hits(c.mentions[1], arrays, ignore)
                combined = h0[:, :, None] + h1[:, None, :]
                n = n0 + n1
                if c.relation is not None and "relation" not in ignore:
                    if c.relation not in relations:
                        relations[c.relation] = relation_tensor(arrays, c.relation, margin)
                    combined = combined + relations[c.relation]
                    n += 1
                best = np.where(pair_ok, combined, _NEG).max(axis=(1, 2))
                # fewer than two objects: at best one mention is satisfied
                single = np.maximum(np.maximum(h0.max(axis=1), h1.max(axis=1)), 0)
                row = np.where(pair_ok.any(axis=(1, 2)), best, single)
            cache[key] = (row, n)
        satisfied[ci], total[ci] = cache[key]
    return satisfied, total


# --- the world's split -----------------------------------------------------------------------------


@dataclass
class SplitData:
    """The split's ids, scenes and caption structures, with row lookups, and its truth."""

    image_ids: np.ndarray
    caption_ids: np.ndarray
    caption_image: np.ndarray  # image id of each caption
    caption_text: list[str]
    scenes: list[Scene]
    structures: list[CaptionStructure]
    margin: float
    max_objects: int
    fits: np.ndarray  # bool [captions, images]

    def image_rows(self, ids: np.ndarray) -> np.ndarray:
        """Row of each image id in the split (error names the first unknown id)."""
        return _rows(self.image_ids, ids, "image")

    def caption_rows(self, ids: np.ndarray) -> np.ndarray:
        """Row of each caption id in the split (error names the first unknown id)."""
        return _rows(self.caption_ids, ids, "caption")


def _rows(sorted_ids: np.ndarray, ids: np.ndarray, kind: str) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.int64)
    pos = np.searchsorted(sorted_ids, ids)
    pos = np.minimum(pos, len(sorted_ids) - 1)
    bad = sorted_ids[pos] != ids
    if bad.any():
        raise KeyError(f"{kind} id {int(ids[np.flatnonzero(bad)[0]])} is not in the split ({int(bad.sum())} unknown)")
    return pos


def _world_truth_params(world: World, world_cfg: WorldConfig | None) -> tuple[float, int]:
    wc = world_cfg or make_config(WorldConfig)
    return wc.relation_margin, max(wc.max_objects, int(world.image_table["n_objects"].max()))


def split_data(world: World, split: str, world_cfg: WorldConfig | None = None) -> SplitData:
    """The split's items and truth; checks that captions fit their own images (a margin mismatch raises)."""
    margin, max_objects = _world_truth_params(world, world_cfg)
    images = world.image_table[world.image_table["split"] == split].sort_values("image_id", kind="stable")
    if images.empty:
        raise ValueError(f"world has no images in split {split!r}")
    captions = world.caption_table[world.caption_table["split"] == split].sort_values("caption_id", kind="stable")
    image_ids = images["image_id"].to_numpy(dtype=np.int64)
    scenes_by_id = dict(zip(world.scene_table["image_id"].to_numpy(), world.scene_table["scene"]))
    missing = [int(i) for i in image_ids if int(i) not in scenes_by_id]
    if missing:
        raise ValueError(f"world scene table: no scene for image ids {missing[:5]}; expected one per image")
    scenes = [Scene.from_json(scenes_by_id[int(i)]) for i in image_ids]
    structures = [CaptionStructure.from_json(s) for s in captions["structure"]]
    fits = truth_matrix(structures, scenes, margin, max_objects)
    data = SplitData(
        image_ids=image_ids,
        caption_ids=captions["caption_id"].to_numpy(dtype=np.int64),
        caption_image=captions["image_id"].to_numpy(dtype=np.int64),
        caption_text=captions["text"].astype(str).tolist(),
        scenes=scenes,
        structures=structures,
        margin=margin,
        max_objects=max_objects,
        fits=fits,
    )
    own = data.image_rows(data.caption_image)
    bad = np.flatnonzero(~fits[np.arange(len(own)), own])
    if len(bad) > MAX_OWN_MISFIT * len(own):
        raise ValueError(
            f"world split {split!r}: {len(bad)} of {len(own)} captions "
            f"(first: caption {int(data.caption_ids[bad[0]])}) "
            f"do not fit their own image under relation_margin={margin}; expected at most {MAX_OWN_MISFIT:.0%} "
            "(pass the world's WorldConfig as world_cfg)"
        )
    return data
