"""SugarCrepe built in the world: its parameters (params.yaml section `sugarcrepe`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(SugarCrepeConfig, values)`); the world's
truth settings (relation_margin, max_objects) come from the world section, never twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


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
        # Every range, enum and count is the schema's (checked when a section is read: make_config); the
        # schema's enums are the code's names (tests/test_params_checks.py).
        object.__setattr__(self, "subsets", tuple(self.subsets))
