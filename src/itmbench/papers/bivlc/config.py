"""BiVLC built in the world: its parameters (params.yaml section `bivlc`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(BiVLCConfig, values)`); the decisions behind
them are in itmbench.papers.bivlc.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

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
        # Every range, enum and count is the schema's (checked when a section is read: make_config); the
        # schema's enums are the code's names (tests/test_params_checks.py).
        object.__setattr__(self, "subsets", tuple(self.subsets))

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
