"""What each model family can score, and which (model, benchmark) cells that makes: the DAG plans exactly those.

A family scores some of: 'image-text', 'text-text', 'image-image' (by dot products of item
embeddings) or 'pairs' (a cross scorer: s(caption, image) of given pairs only). A benchmark's
tasks compare some of the first three, and some benchmarks rank whole galleries: the caller
passes both (for the papers' benchmarks, papers.registry's TASK_MODALITIES and GALLERY_BENCHMARKS,
which the workflow reads), so that this engine knows no paper. A cell is
- scored, when the model's embeddings cover one of the benchmark's modalities, or when the model
  is a cross scorer and the benchmark has image-text tasks, unless that benchmark ranks whole
  galleries (every caption against every image) and the model is not listed to score them;
- 'not applicable', when the model cannot score any task of the benchmark (a text-only model on
  BISON);
- 'not scored (cross scorer)', a gallery benchmark a cross scorer is not asked to rank.
Families not listed here are dual encoders (image-text, text-text, image-image).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MODALITIES = ("image-text", "text-text", "image-image", "pairs")
DUAL = frozenset({"image-text", "text-text", "image-image"})


@dataclass(frozen=True)
class Capability:
    """What a family scores, its kind in the claims, and whether its features come from an upstream model."""

    scores: frozenset[str]
    kind: str = "contrastive"
    needs_upstream: bool = False

    @property
    def cross(self) -> bool:
        """A cross scorer: scores pairs, gives no embeddings."""
        return "pairs" in self.scores


CAPABILITIES: dict[str, Capability] = {
    "open_clip": Capability(DUAL, "contrastive"),
    "random": Capability(DUAL, "chance"),
    "coca": Capability(frozenset({"pairs"}), "generative"),
    "ffnn": Capability(frozenset({"pairs"}), "other", needs_upstream=True),
    "vec2seq": Capability(frozenset({"pairs"}), "other", needs_upstream=True),
    "linear_option": Capability(frozenset({"pairs"}), "other", needs_upstream=True),
    "bag_of_words": Capability(frozenset({"text-text"}), "other"),
    "pixel_features": Capability(frozenset({"image-image"}), "other"),
}


def capability(family: str) -> Capability:
    """A family's capability (a dual encoder's when the family is not listed)."""
    return CAPABILITIES.get(family, Capability(DUAL))


def cell(
    spec: Mapping[str, Any],
    modalities: Collection[str],
    gallery: bool = False,
    gallery_models: Iterable[str] = (),
    name: str = "",
) -> str:
    """'scored', 'not_applicable' or 'not_scored' for a model (its params.yaml spec) on a benchmark whose tasks
    compare `modalities` (some of DUAL) and which ranks whole galleries when `gallery`."""
    needs = frozenset(modalities)
    if not needs or not needs <= DUAL:
        raise ValueError(f"a benchmark's tasks compare some of {sorted(DUAL)}; got {sorted(needs)}")
    cap = capability(spec["family"])
    if cap.scores & needs:
        return "scored"
    if cap.cross and "image-text" in needs:
        if gallery and name not in set(gallery_models):
            return "not_scored"
        return "scored"
    return "not_applicable"


def absent_reason(
    spec: Mapping[str, Any],
    modalities: Collection[str],
    gallery: bool = False,
    gallery_models: Iterable[str] = (),
    name: str = "",
) -> str:
    """The words a table shows in a cell that is not scored (empty when it is scored); arguments as `cell`'s."""
    state = cell(spec, modalities, gallery, gallery_models, name)
    scores = ", ".join(sorted(capability(spec["family"]).scores))
    if state == "not_applicable":
        return f"not applicable ({spec['family']} scores {scores} only)"
    if state == "not_scored":
        return "not scored (cross scorer; every caption x image pair: cost {pairs})"
    return ""
