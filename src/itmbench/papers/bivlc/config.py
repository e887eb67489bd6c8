"""BiVLC built in the world: its parameters (params.yaml section `bivlc`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(BiVLCConfig, values)`); the decisions behind
them are in itmbench.papers.bivlc.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from itmbench.papers.sugarcrepe.released import SUBSETS

GENERATOR_FIELDS = ("p_missing_object", "p_extra_object", "p_wrong_binding", "p_wrong_relation", "difficulty_sd")
# Keyword arguments of each registered generator (negatives.images.GENERATORS), as data.
GENERATOR_KEYS: dict[str, tuple[str, ...]] = {
    "render": ("image_size", "noise", "margin", "max_objects", *GENERATOR_FIELDS),
    "diffusion": ("image_size", "model_path", "recognizer_path", "guidance_scale", "num_inference_steps", "seed"),
}


@dataclass(frozen=True)
class BiVLCConfig:
    """The bivlc section of params.yaml (defaults: the world-scaled decisions in the module docstring)."""

    SECTION: ClassVar[str] = "bivlc"
    OUTSIDE: ClassVar[dict[str, str]] = {
        "candidates": "$defs.bivlc_workflow.candidates",
        "relation_margin": "world.relation_margin",
        "max_objects": "world.max_objects",
    }

    seed: int
    split: str
    subsets: tuple[str, ...]
    instances_per_image_subset: int
    generator: str
    max_images: int
    guidance_scale: float
    num_inference_steps: int
    candidates: str
    n_candidates: int
    p_missing_object: float
    p_extra_object: float
    p_wrong_binding: float
    p_wrong_relation: float
    difficulty_sd: float
    render_noise: float
    select_noise: float
    ambiguity_noise: float
    relation_margin: float
    max_objects: int
    id_offset: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "subsets", tuple(self.subsets))
        unknown = [s for s in self.subsets if s not in SUBSETS]
        if unknown or not self.subsets or len(set(self.subsets)) != len(self.subsets):
            raise ValueError(f"bivlc params: subsets {list(self.subsets)}; expected distinct names among {SUBSETS}")
        for name in GENERATOR_FIELDS[:4]:
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"bivlc params: {name} = {getattr(self, name)}; expected a probability in [0, 1]")
        for name in ("difficulty_sd", "select_noise", "ambiguity_noise", "render_noise", "relation_margin"):
            if not getattr(self, name) >= 0.0:
                raise ValueError(f"bivlc params: {name} = {getattr(self, name)}; expected a number >= 0")
        for name in ("n_candidates", "instances_per_image_subset", "max_objects", "id_offset", "num_inference_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"bivlc params: {name} = {getattr(self, name)}; expected a positive integer")
        if self.max_images < 0 or self.guidance_scale < 0:
            raise ValueError(
                f"bivlc params: max_images = {self.max_images}, guidance_scale = {self.guidance_scale}; expected >= 0"
            )
        if self.generator not in GENERATOR_KEYS:
            raise ValueError(f"bivlc params: generator {self.generator!r}; expected one of {sorted(GENERATOR_KEYS)}")

    def generator_params(self, image_size: int, generator: str | None = None, **models: str) -> dict[str, Any]:
        """Keyword arguments of a registered generator (default `self.generator`); `models`: its checkpoint folders."""
        name = generator or self.generator
        every = {
            "image_size": image_size,
            "noise": self.render_noise,
            "margin": self.relation_margin,
            "max_objects": self.max_objects,
            **{field: getattr(self, field) for field in GENERATOR_FIELDS},
            "guidance_scale": self.guidance_scale,
            "num_inference_steps": self.num_inference_steps,
            "seed": self.seed,
            **models,
        }
        missing = [k for k in GENERATOR_KEYS[name] if k not in every]
        if missing:
            raise ValueError(
                f"bivlc generator {name!r}: no {missing}; expected its checkpoint folders "
                "(train them with `itmbench train-diffusion` / `train-recognizer`)"
            )
        return {k: every[k] for k in GENERATOR_KEYS[name]}
