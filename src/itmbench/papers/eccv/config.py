"""ECCV Caption built in the world: its parameters (params.yaml section `eccv`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(EccvConfig, values)`); the decisions behind
them are in itmbench.papers.eccv.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from itmbench.world.generate import SPLITS

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
        if self.split not in SPLITS:
            raise ValueError(f"eccv params: split {self.split!r}; expected one of {SPLITS}")
        for name in ("image_query_fraction", "caption_query_fraction"):
            value = getattr(self, name)
            if not 0.0 < value <= 1.0:
                raise ValueError(f"eccv params: {name}={value}; expected a fraction in (0, 1]")
        unknown = [a for a in self.annotators if a not in WORLD_ANNOTATORS]
        if unknown or not self.annotators or len(set(self.annotators)) != len(self.annotators):
            raise ValueError(
                f"eccv params: annotators {list(self.annotators)}; "
                f"expected distinct names from {list(WORLD_ANNOTATORS)}"
            )
        if self.annotator_source not in ANNOTATOR_SOURCES:
            raise ValueError(
                f"eccv params: annotator_source {self.annotator_source!r}; expected one of {ANNOTATOR_SOURCES}"
            )
        if not self.annotator_models or len(set(self.annotator_models)) != len(self.annotator_models):
            raise ValueError(
                f"eccv params: annotator_models {list(self.annotator_models)}; expected distinct model names"
            )
        if self.annotator_noise < 0:
            raise ValueError(f"eccv params: annotator_noise={self.annotator_noise}; expected >= 0")
        for name in ("top_k", "pm_r_cap"):
            if getattr(self, name) < 1:
                raise ValueError(f"eccv params: {name}={getattr(self, name)}; expected an integer >= 1")
        if self.pm_zeta < 0:
            raise ValueError(f"eccv params: pm_zeta={self.pm_zeta}; expected an integer >= 0")
        for name in ("answer_probs_fit", "answer_probs_one_off", "answer_probs_worse"):
            probs = np.asarray(getattr(self, name), dtype=float)
            if probs.shape != (len(ANSWERS),) or (probs < 0).any() or abs(probs.sum() - 1.0) > 1e-6:
                raise ValueError(
                    f"eccv params: {name}={probs.tolist()}; expected {len(ANSWERS)} probabilities of {list(ANSWERS)} "
                    "summing to 1"
                )
        bad = [a for a in self.positive_answers if a not in ANSWERS]
        if bad or not self.positive_answers:
            raise ValueError(f"eccv params: positive_answers {list(self.positive_answers)}; expected some of {ANSWERS}")
        if self.pm_vector not in ("set", "multiset"):
            raise ValueError(f"eccv params: pm_vector {self.pm_vector!r}; expected 'set' or 'multiset'")
        if self.pm_caption_vector not in ("image", "mentioned"):
            raise ValueError(
                f"eccv params: pm_caption_vector {self.pm_caption_vector!r}; expected 'image' or 'mentioned'"
            )
