"""The truth function: whether a caption fits a scene, by reading its structure against the graph.

Semantics (the same in the naive and the vectorised form):
- one mention, count 1: at least one object fits it;
- one mention, count k > 1: exactly k objects fit it;
- two mentions ('pair'): two distinct objects fit them, one each;
- two mentions with a relation: two distinct objects a, b fit them and a <relation> b holds with
  the world's margin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.scene import COLOURS, SHAPES, SIZES, Scene, relation_between, relation_holds, scene_arrays


def caption_fits(caption: CaptionStructure, scene: Scene, margin: float) -> bool:
    """Naive reference: whether `caption` is true of `scene` (loops over objects)."""
    objs = scene.objects
    if len(caption.mentions) == 1:
        m = caption.mentions[0]
        k = sum(m.matches(o) for o in objs)
        return k >= 1 if m.count == 1 else k == m.count
    m0, m1 = caption.mentions
    for i, a in enumerate(objs):
        for j, b in enumerate(objs):
            if i == j or not (m0.matches(a) and m1.matches(b)):
                continue
            if caption.relation is None or relation_holds(a, b, caption.relation, margin):
                return True
    return False


def _mention_mask(m: Mention, arrays: dict[str, np.ndarray]) -> np.ndarray:
    mask = arrays["valid"].copy()
    if m.shape is not None:
        mask &= arrays["shape"] == SHAPES.index(m.shape)
    if m.colour is not None:
        mask &= arrays["colour"] == COLOURS.index(m.colour)
    if m.size is not None:
        mask &= arrays["size"] == SIZES.index(m.size)
    return mask


def relation_tensor(arrays: dict[str, np.ndarray], relation: str, margin: float) -> np.ndarray:
    """bool [S, O, O]: object a <relation> object b of each scene (`scene.relation_between`)."""
    x, y = arrays["x"], arrays["y"]
    return relation_between(x[:, :, None], y[:, :, None], x[:, None, :], y[:, None, :], relation, margin)


def truth_matrix(
    captions: Sequence[CaptionStructure], scenes: Sequence[Scene], margin: float, max_objects: int = 4
) -> np.ndarray:
    """Vectorised truth: bool [n_captions, n_scenes], True where the caption fits the scene."""
    arrays = scene_arrays(list(scenes), max_objects=max_objects)
    distinct = ~np.eye(max_objects, dtype=bool)[None]
    relations = {}
    out = np.zeros((len(captions), len(scenes)), dtype=bool)
    cache: dict[str, np.ndarray] = {}
    for ci, c in enumerate(captions):
        key = c.to_json()
        if key in cache:
            out[ci] = cache[key]
            continue
        if len(c.mentions) == 1:
            m = c.mentions[0]
            k = _mention_mask(m, arrays).sum(axis=1)
            row = k >= 1 if m.count == 1 else k == m.count
        else:
            pair = _mention_mask(c.mentions[0], arrays)[:, :, None] & _mention_mask(c.mentions[1], arrays)[:, None, :]
            pair &= distinct
            if c.relation is not None:
                if c.relation not in relations:
                    relations[c.relation] = relation_tensor(arrays, c.relation, margin)
                pair &= relations[c.relation]
            row = pair.any(axis=(1, 2))
        cache[key] = row
        out[ci] = row
    return out
