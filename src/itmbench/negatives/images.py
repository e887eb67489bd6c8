"""Hard-negative image generators: the world's renderer-based one, and the registry of generators.

The interface they implement (`ImageGenerator`, returning `GeneratedImage`s) is in negatives/generator.py.

RenderGenerator, per candidate:
1. builds a scene that fits the caption by the smallest edit of the source scene (`fit_scene`):
   each mention is bound to the existing object that needs the fewest attribute changes, or to a
   new object (cost `NEW_OBJECT_COST` = 2, i.e. adding an object costs as much as changing two
   attributes), ties broken at random; a relation that does not hold is made to hold by swapping
   the two objects' positions when that suffices, else by moving one of them; a count is met by
   converting, adding or altering objects. The paper's generator sees only the caption; starting
   from the source scene keeps the negative image a *hard* negative (same background, same other
   objects) and keeps the image distribution of the world.
2. makes the mistakes a diffusion model makes, each at its own rate (`MISTAKES`):
   - missing_object: each object bound to a mention is left out with p_missing_object;
   - extra_object: with p_extra_object an extra random object appears (if there is room);
   - wrong_binding: with p_wrong_binding the colour (or, when no colour is claimed, the size) of a
     bound object is exchanged with another object's (attribute leakage);
   - wrong_relation: with p_wrong_relation the two related objects exchange positions
     (relation captions only).
   A mistake is recorded only where it changed the scene. Some prompts are harder than others for
   a diffusion model: each call draws a log-normal difficulty (median 1, log-sd `difficulty_sd`)
   that multiplies the rates of all its candidates, so the candidates of one caption fail together;
   the p_* are the rates of a prompt of median difficulty.
3. renders the scene with world.render (own jitter and sensor noise per candidate), lazily: the
   pixels of a candidate are drawn when first used (the seed is fixed at generation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from itmbench.negatives.generator import GeneratedImage, ImageGenerator
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.render import render_scene
from itmbench.world.scene import COLOURS, SHAPES, SIZE_RADIUS, SIZES, Scene, WorldObject, relation_holds

MISTAKES: tuple[str, ...] = ("missing_object", "extra_object", "wrong_binding", "wrong_relation")
NEW_OBJECT_COST = 2
_NEW = -1  # marks "bind this mention to a new object"


# --- fitting a scene to a caption ------------------------------------------------------------------


def _cost(m: Mention, obj: WorldObject) -> int:
    """Number of attributes the mention claims that the object lacks."""
    return sum(getattr(m, a) is not None and getattr(m, a) != getattr(obj, a) for a in ("shape", "colour", "size"))


def _bind(m: Mention, obj: WorldObject) -> WorldObject:
    """The object with the mention's claimed attributes."""
    return replace(obj, **{a: getattr(m, a) for a in ("shape", "colour", "size") if getattr(m, a) is not None})


def _free_position(size: str, others: list[WorldObject], rng: np.random.Generator, tries: int = 200) -> tuple:
    """A position where an object of `size` overlaps none of `others` (random if none is found)."""
    r = SIZE_RADIUS[size]
    x = y = 0.5
    for _ in range(tries):
        x, y = (float(v) for v in rng.uniform(r + 0.02, 1 - r - 0.02, size=2))
        if all(np.hypot(x - o.x, y - o.y) >= r + SIZE_RADIUS[o.size] + 0.03 for o in others):
            return x, y
    return x, y


def _random_object(others: list[WorldObject], rng: np.random.Generator, m: Mention | None = None) -> WorldObject:
    """A new object with random attributes (the mention's where it claims them) at a free position."""
    size = SIZES[int(rng.integers(len(SIZES)))]
    obj = WorldObject(
        shape=SHAPES[int(rng.integers(len(SHAPES)))],
        colour=COLOURS[int(rng.integers(len(COLOURS)))],
        size=size,
        x=0.5,
        y=0.5,
    )
    if m is not None:
        obj = _bind(m, obj)
    x, y = _free_position(obj.size, others, rng)
    return replace(obj, x=x, y=y)


def _argmin_random(costs: list[tuple[int, Any]], rng: np.random.Generator) -> Any:
    """The option of least cost, ties broken at random."""
    best = min(c for c, _ in costs)
    ties = [o for c, o in costs if c == best]
    return ties[int(rng.integers(len(ties)))]


def _satisfy_relation(
    objs: list[WorldObject], a: int, b: int, relation: str, margin: float, rng: np.random.Generator
) -> None:
    """Make objs[a] <relation> objs[b] hold: swap their positions if that suffices, else move one of them."""
    if relation_holds(objs[a], objs[b], relation, margin):
        return
    pa, pb = (objs[a].x, objs[a].y), (objs[b].x, objs[b].y)
    swapped_a, swapped_b = replace(objs[a], x=pb[0], y=pb[1]), replace(objs[b], x=pa[0], y=pa[1])
    if relation_holds(swapped_a, swapped_b, relation, margin):
        objs[a], objs[b] = swapped_a, swapped_b
        return
    for moving, fixed in ((a, b), (b, a)):
        others = [o for k, o in enumerate(objs) if k != moving]
        for _ in range(200):
            x, y = _free_position(objs[moving].size, others, rng, tries=1)
            trial = replace(objs[moving], x=x, y=y)
            pair = (trial, objs[fixed]) if moving == a else (objs[fixed], trial)
            if relation_holds(pair[0], pair[1], relation, margin):
                objs[moving] = trial
                return
    # Last resort (crowded scene): place a beside b along the relation's axis, overlap allowed.
    gap = margin + SIZE_RADIUS[objs[a].size] + SIZE_RADIUS[objs[b].size]
    sign = {"left_of": -1, "right_of": 1, "above": -1, "below": 1}[relation]
    if relation in ("left_of", "right_of"):
        objs[a] = replace(objs[a], x=float(np.clip(objs[b].x + sign * gap, 0.02, 0.98)))
    else:
        objs[a] = replace(objs[a], y=float(np.clip(objs[b].y + sign * gap, 0.02, 0.98)))


def _fit_count(
    m: Mention, objs: list[WorldObject], rng: np.random.Generator, max_objects: int
) -> tuple[list[WorldObject], list[int]]:
    """Make exactly m.count objects match m: convert or add objects, or alter surplus matches."""
    matching = [k for k, o in enumerate(objs) if m.matches(o)]
    if len(matching) > m.count:
        for k in rng.permutation(matching)[: len(matching) - m.count]:
            attrs = [a for a in ("shape", "colour", "size") if getattr(m, a) is not None]
            attr = attrs[int(rng.integers(len(attrs)))]
            values = {"shape": SHAPES, "colour": COLOURS, "size": SIZES}[attr]
            other = [v for v in values if v != getattr(m, attr)]
            objs[int(k)] = replace(objs[int(k)], **{attr: other[int(rng.integers(len(other)))]})
    while len(matching) < m.count:
        options = [(_cost(m, o), k) for k, o in enumerate(objs) if k not in matching]
        if len(objs) < max_objects:
            options.append((NEW_OBJECT_COST, _NEW))
        if not options:
            break
        k = _argmin_random(options, rng)
        if k == _NEW:
            objs.append(_random_object(objs, rng, m))
            k = len(objs) - 1
        else:
            objs[k] = _bind(m, objs[k])
        matching.append(k)
    return objs, [k for k, o in enumerate(objs) if m.matches(o)]


def fit_scene(
    structure: CaptionStructure, scene: Scene, rng: np.random.Generator, margin: float, max_objects: int = 4
) -> tuple[Scene, list[int]]:
    """The smallest edit of `scene` that fits the caption, and the indices of the objects bound to its mentions."""
    objs = list(scene.objects)
    ms = structure.mentions
    if len(ms) == 1 and ms[0].count > 1:
        objs, bound = _fit_count(ms[0], objs, rng, max_objects)
        return replace(scene, objects=tuple(objs)), bound
    if len(ms) == 1:
        options = [(_cost(ms[0], o), (k,)) for k, o in enumerate(objs)]
        if len(objs) < max_objects:
            options.append((NEW_OBJECT_COST, (_NEW,)))
    else:
        slots = list(range(len(objs))) + [_NEW] * min(2, max(0, max_objects - len(objs)))
        options = []
        for i, si in enumerate(slots):
            for j, sj in enumerate(slots):
                if i == j or (si == sj and si != _NEW) or (si == _NEW and sj == _NEW and i > j):
                    continue
                cost = sum(
                    NEW_OBJECT_COST if s == _NEW else _cost(m, objs[s]) for m, s in zip(ms, (si, sj), strict=True)
                )
                if structure.relation is not None and _NEW not in (si, sj):
                    cost += not relation_holds(objs[si], objs[sj], structure.relation, margin)
                options.append((cost, (si, sj)))
    if not options:  # no object and no room: nothing to bind
        return scene, []
    choice = _argmin_random(options, rng)
    bound: list[int] = []
    for m, slot in zip(ms, choice, strict=True):
        if slot == _NEW:
            objs.append(_random_object(objs, rng, m))
            bound.append(len(objs) - 1)
        else:
            objs[slot] = _bind(m, objs[slot])
            bound.append(slot)
    if structure.relation is not None and len(bound) == 2:
        _satisfy_relation(objs, bound[0], bound[1], structure.relation, margin, rng)
    return replace(scene, objects=tuple(objs)), bound


# --- diffusion-like mistakes -------------------------------------------------------------------------


def make_mistakes(
    structure: CaptionStructure,
    scene: Scene,
    bound: list[int],
    rng: np.random.Generator,
    rates: dict[str, float],
    max_objects: int = 4,
) -> tuple[Scene, tuple[str, ...]]:
    """Apply each mistake of MISTAKES at its rate to a fitted scene; return the scene and the mistakes made."""
    objs = list(scene.objects)
    made: list[str] = []
    draws = {name: rng.random(max(1, len(bound))) for name in MISTAKES}
    if draws["wrong_binding"][0] < rates["wrong_binding"] and bound and len(objs) >= 2:
        claims_colour = any(m.colour is not None for m in structure.mentions)
        attr = "colour" if claims_colour or not any(m.size is not None for m in structure.mentions) else "size"
        a = bound[int(rng.integers(len(bound)))]
        partners = [k for k in (bound if len(bound) == 2 else range(len(objs))) if k != a]
        partners = [k for k in partners if getattr(objs[k], attr) != getattr(objs[a], attr)]
        if partners:
            b = partners[int(rng.integers(len(partners)))]
            va, vb = getattr(objs[a], attr), getattr(objs[b], attr)
            objs[a], objs[b] = replace(objs[a], **{attr: vb}), replace(objs[b], **{attr: va})
            made.append("wrong_binding")
    if draws["wrong_relation"][0] < rates["wrong_relation"] and structure.relation is not None and len(bound) == 2:
        a, b = bound
        if (objs[a].x, objs[a].y) != (objs[b].x, objs[b].y):
            objs[a], objs[b] = replace(objs[a], x=objs[b].x, y=objs[b].y), replace(objs[b], x=objs[a].x, y=objs[a].y)
            made.append("wrong_relation")
    dropped = {k for k, u in zip(bound, draws["missing_object"]) if u < rates["missing_object"]}
    if dropped:
        objs = [o for k, o in enumerate(objs) if k not in dropped]
        made.append("missing_object")
    if draws["extra_object"][0] < rates["extra_object"] and len(objs) < max_objects:
        objs.append(_random_object(objs, rng))
        made.append("extra_object")
    return replace(scene, objects=tuple(objs)), tuple(made)


@dataclass(frozen=True)
class RenderGenerator:
    """The world's image generator: fit the source scene to the caption, make diffusion-like mistakes, render."""

    image_size: int = 64
    noise: float = 4.0
    margin: float = 0.05
    max_objects: int = 4
    p_missing_object: float = 0.2
    p_extra_object: float = 0.3
    p_wrong_binding: float = 0.3
    p_wrong_relation: float = 0.35
    difficulty_sd: float = 0.0

    def __post_init__(self) -> None:
        if self.difficulty_sd < 0:
            raise ValueError(f"RenderGenerator: difficulty_sd must be >= 0, got {self.difficulty_sd}")
        for name in ("p_missing_object", "p_extra_object", "p_wrong_binding", "p_wrong_relation"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"RenderGenerator: {name} must lie in [0, 1], got {value}")

    @property
    def rates(self) -> dict[str, float]:
        """Mistake name -> rate at median difficulty."""
        return {name: getattr(self, f"p_{name}") for name in MISTAKES}

    def prompt_rates(self, rng: np.random.Generator) -> dict[str, float]:
        """This prompt's rates: the typical rates times a log-normal difficulty of median 1 (clipped at 1)."""
        difficulty = float(np.exp(rng.normal(0.0, self.difficulty_sd))) if self.difficulty_sd > 0 else 1.0
        return {name: min(1.0, rate * difficulty) for name, rate in self.rates.items()}

    def _render(self, scene: Scene, seed: int) -> np.ndarray:
        """Render a candidate's scene with its own colour jitter and sensor noise."""
        return render_scene(scene, self.image_size, np.random.default_rng(seed), self.noise)

    def generate(
        self,
        structure: CaptionStructure,
        source_scene: Scene,
        n: int,
        rng: np.random.Generator,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """n candidates: each an independent fit + mistakes + render of the source scene (text is unused)."""
        rates = self.prompt_rates(rng)
        out: list[GeneratedImage] = []
        for _ in range(n):
            fitted, bound = fit_scene(structure, source_scene, rng, self.margin, self.max_objects)
            scene, mistakes = make_mistakes(structure, fitted, bound, rng, rates, self.max_objects)
            scene = replace(scene, image_id=-1)
            render_seed = int(rng.integers(2**63))
            out.append(GeneratedImage(scene, mistakes, render=partial(self._render, scene, render_seed)))
        return out


def recognized_diffusion(**params: Any) -> ImageGenerator:
    """The world's diffusion model with the recognizer as annotator (imported on use: torch and diffusers)."""
    from itmbench.negatives.recognizer import recognized_diffusion_generator

    return recognized_diffusion_generator(**params)


GENERATORS: dict[str, Callable[..., ImageGenerator]] = {"render": RenderGenerator, "diffusion": recognized_diffusion}


def make_generator(name: str, **params: Any) -> ImageGenerator:
    """The one way to get an image generator: by registry name, with its parameters."""
    if name not in GENERATORS:
        raise ValueError(f"unknown image generator {name!r}; expected one of {sorted(GENERATORS)}")
    return GENERATORS[name](**params)
