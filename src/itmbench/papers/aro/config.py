"""ARO built in the world: its parameters (params.yaml section `aro`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(AroConfig, values)`); the world's truth
settings (relation_margin, max_objects) come from the world section, never twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

DATASETS: tuple[str, ...] = ("vg_relation", "vg_attribution", "coco_order", "flickr30k_order")


@dataclass(frozen=True)
class AroConfig:
    """The aro section of params.yaml (the decisions behind its defaults: `itmbench.papers.aro.build`)."""

    SECTION: ClassVar[str] = "aro"
    OUTSIDE: ClassVar[dict[str, str]] = {"relation_margin": "world.relation_margin", "max_objects": "world.max_objects"}

    seed: int
    vg_split: str
    coco_order_split: str
    flickr30k_order_split: str
    relations_per_image: int
    attributions_per_image: int
    vg_sizes: bool
    max_images: int
    max_words: int
    relation_margin: float
    max_objects: int
    id_offset: int
