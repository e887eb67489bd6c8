"""ECCV Caption built in the world: its parameters (params.yaml section `eccv`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(EccvConfig, values)`); the decisions behind
them are in itmbench.papers.eccv.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

ANSWERS: tuple[str, ...] = ("100% YES", "Partially YES", "Partially NO", "100% NO")
# Who proposes the candidates: the trained models' embeddings (the paper's MITL) or the simulated oracles.
ANNOTATOR_SOURCES: tuple[str, ...] = ("models", "world")
# World annotators: name -> the claim kinds it ignores (bag_of_words is the text-only one).
WORLD_ANNOTATORS: dict[str, tuple[str, ...]] = {
    "exact": (),
    "ignore_shape": ("shape",),
    "ignore_colour": ("colour",),
    "ignore_size": ("size",),
    "ignore_count": ("count",),
    "ignore_relation": ("relation",),
    "bag_of_words": (),
}


@dataclass(frozen=True)
class EccvConfig:
    """ECCV Caption construction in the world (params.yaml section `eccv`); defaults are the module's decisions."""

    SECTION: ClassVar[str] = "eccv"

    split: str
    seed: int
    image_query_fraction: float
    caption_query_fraction: float
    annotators: tuple[str, ...]
    annotator_source: str
    annotator_models: tuple[str, ...]
    annotator_noise: float
    top_k: int
    answer_probs_fit: tuple[float, ...]
    answer_probs_one_off: tuple[float, ...]
    answer_probs_worse: tuple[float, ...]
    positive_answers: tuple[str, ...]
    pm_vector: str
    pm_caption_vector: str
    pm_zeta: int
    pm_r_cap: int

    def __post_init__(self) -> None:
        for name in (
            "annotators",
            "annotator_models",
            "answer_probs_fit",
            "answer_probs_one_off",
            "answer_probs_worse",
            "positive_answers",
        ):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        # Every range, enum, count and sum is the schema's (its ranges and `x-constraints`, checked when a section
        # is read: make_config); the schema's enums are the code's names (tests/test_params_checks.py).
