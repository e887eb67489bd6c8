"""Renderer: a scene graph to a small RGB image, antialiased by supersampling, with sensor noise."""

from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

from itmbench.world.scene import SIZE_RADIUS, Scene, WorldObject

COLOUR_RGB: dict[str, tuple[int, int, int]] = {
    "red": (214, 39, 40),
    "green": (44, 160, 44),
    "blue": (31, 90, 220),
    "yellow": (240, 205, 30),
    "purple": (148, 73, 189),
    "orange": (255, 127, 14),
    "cyan": (23, 200, 215),
}
SUPERSAMPLE = 4


def _polygon(shape: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    if shape == "square":
        s = r * 0.85
        return [(cx - s, cy - s), (cx + s, cy - s), (cx + s, cy + s), (cx - s, cy + s)]
    if shape == "triangle":
        return [(cx + r * math.cos(a), cy + r * math.sin(a)) for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)]
    if shape == "diamond":
        return [(cx, cy - r), (cx + r * 0.75, cy), (cx, cy + r), (cx - r * 0.75, cy)]
    if shape == "hexagon":
        return [(cx + r * math.cos(k * math.pi / 3), cy + r * math.sin(k * math.pi / 3)) for k in range(6)]
    raise ValueError(f"no polygon for shape {shape!r}")


def _draw_object(draw: ImageDraw.ImageDraw, obj: WorldObject, side: int, rgb: tuple[int, int, int]) -> None:
    r = SIZE_RADIUS[obj.size] * side
    cx, cy = obj.x * side, obj.y * side
    if obj.shape == "circle":
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=rgb)
    else:
        draw.polygon(_polygon(obj.shape, cx, cy, r), fill=rgb)


def render_scene(scene: Scene, image_size: int, rng: np.random.Generator, noise: float = 4.0) -> np.ndarray:
    """Render to uint8 [H, W, 3]: grey background, objects with jittered colours, Gaussian noise."""
    side = image_size * SUPERSAMPLE
    bg = scene.background
    img = Image.new("RGB", (side, side), (bg, bg, bg))
    draw = ImageDraw.Draw(img)
    for obj in scene.objects:
        jitter = rng.integers(-12, 13, size=3)
        rgb = tuple(int(np.clip(c + j, 0, 255)) for c, j in zip(COLOUR_RGB[obj.colour], jitter))
        _draw_object(draw, obj, side, rgb)
    small = img.resize((image_size, image_size), Image.Resampling.BOX)
    arr = np.asarray(small, dtype=np.float32)
    if noise > 0:
        arr = arr + rng.normal(0.0, noise, size=arr.shape)
    return np.clip(np.rint(arr), 0, 255).astype(np.uint8)
