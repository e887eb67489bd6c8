"""The interface of hard-negative image generators (BiVLC's step 2) and the candidates they return.

`ImageGenerator.generate(structure, source_scene, n, rng, text=None)` returns n candidate images
of a (negative) caption, each a `GeneratedImage` that unpacks as `(image uint8 [H,W,3], scene or
None)`. A text-to-image model (SDXL-DPO in BiVLC) implements the same interface, reads the prompt
from `text` and returns `scene=None`; the world's `RenderGenerator` returns the scene graph it
rendered, so that simulated annotators and the audit can read the truth.

The generators: the world's renderer (negatives/images.py, with the registry `make_generator`),
the world's diffusion model (negatives/diffusion.py, annotated by negatives/recognizer.py) and
SDXL (negatives/sdxl.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from itmbench.world.captions import CaptionStructure
from itmbench.world.scene import Scene


@dataclass(frozen=True)
class GeneratedImage:
    """One generated candidate: its pixels (or a deterministic renderer of them), scene graph and mistakes.

    A text-to-image model passes `pixels` and `scene=None`; the RenderGenerator passes `render`, so that
    only the candidates someone looks at are rasterised (the draws are fixed when the candidate is made).
    """

    scene: Scene | None
    mistakes: tuple[str, ...] = ()
    pixels: np.ndarray | None = field(default=None, repr=False, compare=False)
    render: Callable[[], np.ndarray] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.pixels is None) == (self.render is None):
            raise ValueError("GeneratedImage: give exactly one of pixels and render")

    @cached_property
    def image(self) -> np.ndarray:
        """uint8 [H, W, 3] pixels, rendered on first use."""
        image = self.pixels if self.pixels is not None else self.render()
        return np.asarray(image, dtype=np.uint8)

    def __iter__(self) -> Iterator[Any]:
        """Unpack as (image, scene), the interface's pair."""
        return iter((self.image, self.scene))


class ImageGenerator(Protocol):
    """Anything that draws n candidate images of a caption (the world's renderer, or a diffusion model)."""

    def generate(
        self,
        structure: CaptionStructure,
        source_scene: Scene,
        n: int,
        rng: np.random.Generator,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """n candidates of the caption (`text` is the prompt of text-to-image models)."""
        ...
