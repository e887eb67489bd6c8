"""SugarCrepe built in the world: its parameters (params.yaml section `sugarcrepe`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(SugarCrepeConfig, values)`); the world's
truth settings (relation_margin, max_objects) come from the world section, never twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from itmbench.negatives.captions import SUBSETS


@dataclass(frozen=True)
class SugarCrepeConfig:
    """The sugarcrepe section of params.yaml (the decisions behind its defaults: the benchmark's docstring)."""

    SECTION: ClassVar[str] = "sugarcrepe"
    OUTSIDE: ClassVar[dict[str, str]] = {"relation_margin": "world.relation_margin", "max_objects": "world.max_objects"}

    seed: int
    split: str
    subsets: tuple[str, ...]
    instances_per_image_subset: int
    max_images: int
    relation_margin: float
    max_objects: int
    id_offset: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "subsets", tuple(self.subsets))
        unknown = [s for s in self.subsets if s not in SUBSETS]
        if unknown or not self.subsets or len(set(self.subsets)) != len(self.subsets):
            raise ValueError(
                f"sugarcrepe params: subsets {list(self.subsets)}; expected distinct names among {SUBSETS}"
            )
        for name in ("instances_per_image_subset", "max_objects", "id_offset"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"sugarcrepe params: {name} = {getattr(self, name)}; expected a positive integer")
        if self.max_images < 0 or not self.relation_margin >= 0:
            raise ValueError(
                f"sugarcrepe params: max_images = {self.max_images}, relation_margin = {self.relation_margin}; "
                "expected >= 0"
            )
