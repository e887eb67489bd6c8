"""Scene graphs of the world: 1-4 objects (shape, colour, size, position) and their relations."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import numpy as np

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "hexagon")
COLOURS: tuple[str, ...] = ("red", "green", "blue", "yellow", "purple", "orange", "cyan")
SIZES: tuple[str, ...] = ("small", "large")
RELATIONS: tuple[str, ...] = ("left_of", "right_of", "above", "below")

# Radius of each size as a fraction of the image side.
SIZE_RADIUS: dict[str, float] = {"small": 0.085, "large": 0.15}


@dataclass(frozen=True)
class WorldObject:
    """One object: a shape of a colour and a size, centred at (x, y) in [0, 1] (y grows downwards)."""

    shape: str
    colour: str
    size: str
    x: float
    y: float


@dataclass(frozen=True)
class Scene:
    """A scene graph: its objects and a background grey level; relations follow from positions."""

    image_id: int
    objects: tuple[WorldObject, ...]
    background: int

    def to_json(self) -> str:
        """Serialise to a canonical JSON string (sorted keys; exact positions, JSON round-trips floats)."""
        objs = [asdict(o) for o in self.objects]  # exact floats: truth must read what the captions saw
        return json.dumps(
            {"image_id": self.image_id, "objects": objs, "background": self.background},
            sort_keys=True,
        )

    @staticmethod
    def from_json(text: str) -> Scene:
        """Parse the JSON written by to_json."""
        d = json.loads(text)
        return Scene(
            image_id=int(d["image_id"]),
            objects=tuple(WorldObject(**o) for o in d["objects"]),
            background=int(d["background"]),
        )


def relation_between(ax, ay, bx, by, relation: str, margin: float):
    """Whether a <relation> b holds with at least `margin` of separation along its axis: the world's one
    definition of its relations, on numbers or on numpy arrays (element-wise, broadcast: a truth tensor over
    every pair of a scene's objects, a detector's cells)."""
    if relation == "left_of":
        return ax + margin < bx
    if relation == "right_of":
        return ax > bx + margin
    if relation == "above":
        return ay + margin < by
    if relation == "below":
        return ay > by + margin
    raise ValueError(f"unknown relation {relation!r}; expected one of {RELATIONS}")


def relation_holds(a: WorldObject, b: WorldObject, relation: str, margin: float) -> bool:
    """Whether `a <relation> b` holds with at least `margin` of separation along its axis."""
    return bool(relation_between(a.x, a.y, b.x, b.y, relation, margin))


def sample_scene(image_id: int, rng: np.random.Generator, min_objects: int, max_objects: int) -> Scene:
    """Sample a scene of min..max non-overlapping objects, uniform attributes and positions."""
    n = int(rng.integers(min_objects, max_objects + 1))
    objects: list[WorldObject] = []
    attempts = 0
    while len(objects) < n:
        attempts += 1
        if attempts > 500:  # crowded: start over with what fits
            break
        size = SIZES[int(rng.integers(len(SIZES)))]
        r = SIZE_RADIUS[size]
        x, y = (float(v) for v in rng.uniform(r + 0.02, 1 - r - 0.02, size=2))
        if any(np.hypot(x - o.x, y - o.y) < r + SIZE_RADIUS[o.size] + 0.03 for o in objects):
            continue
        objects.append(
            WorldObject(
                shape=SHAPES[int(rng.integers(len(SHAPES)))],
                colour=COLOURS[int(rng.integers(len(COLOURS)))],
                size=size,
                x=x,
                y=y,
            )
        )
    background = int(rng.integers(200, 246))
    return Scene(image_id=image_id, objects=tuple(objects), background=background)


def scene_arrays(scenes: list[Scene], max_objects: int = 4) -> dict[str, np.ndarray]:
    """Pack scenes into padded arrays (codes, positions, validity) for vectorised truth."""
    n = len(scenes)
    shape = np.full((n, max_objects), -1, dtype=np.int16)
    colour = np.full((n, max_objects), -1, dtype=np.int16)
    size = np.full((n, max_objects), -1, dtype=np.int16)
    x = np.zeros((n, max_objects), dtype=np.float64)
    y = np.zeros((n, max_objects), dtype=np.float64)
    valid = np.zeros((n, max_objects), dtype=bool)
    for i, s in enumerate(scenes):
        if len(s.objects) > max_objects:
            raise ValueError(f"scene {s.image_id} has {len(s.objects)} objects; max_objects={max_objects}")
        for j, o in enumerate(s.objects):
            shape[i, j] = SHAPES.index(o.shape)
            colour[i, j] = COLOURS.index(o.colour)
            size[i, j] = SIZES.index(o.size)
            x[i, j], y[i, j] = o.x, o.y
            valid[i, j] = True
    return {"shape": shape, "colour": colour, "size": size, "x": x, "y": y, "valid": valid}
