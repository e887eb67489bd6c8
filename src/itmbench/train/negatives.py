"""Hard negatives for training (TROHN-Text, TROHN-Img in the world), made once per run, seeded.

Captions (TROHN-Text): for each train caption, SugarCrepe-style edits of its structure
(`itmbench.negatives.captions.propose_edit`), at most one per edit type as TROHN-Text makes one
per SugarCrepe category, types tried in a random order, until `hard_negatives_per_sample` are
found. An edit is kept only where the world's truth says it is false of the caption's image (the
filter SugarCrepe and TROHN apply with models and people) and its text differs from the positive
and from the caption's other negatives. Every draw of a caption comes from a generator seeded by
(seed, caption_id), so a caption's negatives do not depend on which others are made.

Swaps (ARO's NegCLIP): every caption its words can make by swapping two noun phrases, two nouns or two
adjectives (the linguistic elements NegCLIP swaps that the world's grammar has: it has no verb or adverb),
found in the text by the grammar's parts of speech as NegCLIP's tagger finds them, without a truth check
(NegCLIP keeps its swaps unchecked). Nearest images (NegCLIP's hard-negative images): for each train image,
the `negclip_neighbours` other train images nearest to it by the starting model's image embeddings (cosine;
ties to the lower row).

Images (TROHN-Img): a seeded `trohn_img_fraction` of the train captions with a negative caption,
in a seeded random order, becomes instances; each negative caption gets `image_candidates` images
from the image generator (`RenderGenerator` by default: the smallest edit of the source scene
that fits the caption, with diffusion-like mistakes), seeded by (seed, caption_id, negative
index). With `filter_negative_images` the first candidate that the negative caption fits and the
positive caption does not is kept (the negative is dropped if none does); otherwise the first
candidate. An instance keeps the negatives that got an image; captions are drawn until the target
number of instances is reached or none is left. Only kept candidates are rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from itmbench.negatives.captions import propose_edit
from itmbench.negatives.generator import ImageGenerator
from itmbench.negatives.images import make_generator
from itmbench.train.config import TrainConfig
from itmbench.world.captions import CaptionStructure, noun_phrase_spans, word_tag
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

STREAM_CAPTIONS = 11
STREAM_IMAGES = 12
STREAM_INSTANCES = 13
NEGATIVE_COLUMNS = ("positive_row", "caption_id", "image_id", "subset", "text", "structure", "detail")


@dataclass(frozen=True)
class NegativeCaption:
    """A hard-negative caption of a train caption (its row in the train split), false of its image."""

    positive_row: int
    caption_id: int
    image_id: int
    subset: str
    text: str
    structure: CaptionStructure
    detail: str


@dataclass(frozen=True)
class NegativePair:
    """A TROHN-Img negative pair: a negative caption and a generated image (its scene graph, its mistakes)."""

    caption: NegativeCaption
    image: np.ndarray
    scene: Scene | None
    mistakes: tuple[str, ...]


def negatives_of_caption(
    row: int, caption_id: int, image_id: int, text: str, structure: CaptionStructure, scene: Scene, cfg: TrainConfig
) -> list[NegativeCaption]:
    """Up to `hard_negatives_per_sample` edits of one caption, one per subset, false of its scene, seeded by its id."""
    subsets = cfg.negative_subsets
    rng = np.random.default_rng([cfg.seed, STREAM_CAPTIONS, int(caption_id)])
    seen = {text}
    out: list[NegativeCaption] = []
    for k in rng.permutation(len(subsets)):
        edit = propose_edit(structure, text, subsets[k], rng)
        if edit is None or edit.text in seen or caption_fits(edit.structure, scene, cfg.relation_margin):
            continue
        negative = NegativeCaption(
            row, int(caption_id), int(image_id), edit.subset, edit.text, edit.structure, edit.detail
        )
        out.append(negative)
        seen.add(edit.text)
        if len(out) == cfg.hard_negatives_per_sample:
            break
    return out


def caption_negatives(
    caption_ids: np.ndarray,
    image_ids: np.ndarray,
    texts: Sequence[str],
    structures: Sequence[CaptionStructure],
    scenes: dict[int, Scene],
    cfg: TrainConfig,
) -> list[NegativeCaption]:
    """Hard-negative captions of every train caption, in row order (TROHN-Text)."""
    out: list[NegativeCaption] = []
    for row, (caption_id, image_id) in enumerate(zip(caption_ids, image_ids)):
        scene = scenes[int(image_id)]
        out += negatives_of_caption(row, caption_id, image_id, texts[row], structures[row], scene, cfg)
    return out


def negatives_table(negatives: Sequence[NegativeCaption]) -> pd.DataFrame:
    """The negatives as a table (NEGATIVE_COLUMNS; structure as canonical JSON), one row per negative."""
    rows = [
        (n.positive_row, n.caption_id, n.image_id, n.subset, n.text, n.structure.to_json(), n.detail) for n in negatives
    ]
    table = pd.DataFrame(rows, columns=list(NEGATIVE_COLUMNS))
    return table.astype({"positive_row": "int64", "caption_id": "int64", "image_id": "int64"})


def image_generator(cfg: TrainConfig, image_size: int, max_objects: int) -> ImageGenerator:
    """The world's RenderGenerator at the world's image size, margin and object limit, with cfg.generator overrides."""
    params = {"image_size": image_size, "margin": cfg.relation_margin, "max_objects": max_objects, **cfg.generator}
    try:
        return make_generator("render", **params)
    except TypeError as err:
        raise ValueError(f"train params: generator {cfg.generator!r}: {err}") from err


def negative_image(
    negative: NegativeCaption,
    index: int,
    positive: CaptionStructure,
    scene: Scene,
    cfg: TrainConfig,
    generator: ImageGenerator,
) -> NegativePair | None:
    """The negative caption's image: the first candidate it fits and the positive does not (or the first), or None."""
    rng = np.random.default_rng([cfg.seed, STREAM_IMAGES, negative.caption_id, index])
    for candidate in generator.generate(negative.structure, scene, cfg.image_candidates, rng, text=negative.text):
        if cfg.filter_negative_images:
            if candidate.scene is None:
                raise ValueError("train params: filter_negative_images needs a generator that returns scene graphs")
            if not caption_fits(negative.structure, candidate.scene, cfg.relation_margin) or caption_fits(
                positive, candidate.scene, cfg.relation_margin
            ):
                continue
        return NegativePair(negative, candidate.image, candidate.scene, candidate.mistakes)
    return None


def image_negatives(
    caption_ids: np.ndarray,
    image_ids: np.ndarray,
    texts: Sequence[str],
    structures: Sequence[CaptionStructure],
    scenes: dict[int, Scene],
    cfg: TrainConfig,
    generator: ImageGenerator,
) -> list[NegativePair]:
    """TROHN-Img: negative pairs of a seeded `trohn_img_fraction` of the train captions, sorted by positive row."""
    n = len(caption_ids)
    target = max(1, round(cfg.trohn_img_fraction * n))
    order = np.random.default_rng([cfg.seed, STREAM_INSTANCES]).permutation(n)
    pairs: list[NegativePair] = []
    n_instances = 0
    for row in (int(r) for r in order):
        scene = scenes[int(image_ids[row])]
        negatives = negatives_of_caption(row, caption_ids[row], image_ids[row], texts[row], structures[row], scene, cfg)
        made = [negative_image(neg, j, structures[row], scene, cfg, generator) for j, neg in enumerate(negatives)]
        made = [p for p in made if p is not None]
        pairs += made
        n_instances += bool(made)
        if n_instances == target:
            break
    return sorted(pairs, key=lambda p: p.caption.positive_row)  # stable: a row's negatives keep their order


SWAP_KINDS = ("noun phrases", "nouns", "adjectives")


def swap_kinds(text: str) -> dict[str, str]:
    """NegCLIP's swaps of a caption, each distinct text with the kind of swap that first made it: two noun phrases,
    two nouns or two adjectives that differ, in that order (`SWAP_KINDS`) and by position; never the caption
    itself."""
    words = text.split()
    out: dict[str, str] = {}
    spans = noun_phrase_spans(words)
    for (a0, a1), (b0, b1) in combinations(spans, 2):
        out.setdefault(" ".join([*words[:a0], *words[b0:b1], *words[a1:b0], *words[a0:a1], *words[b1:]]), SWAP_KINDS[0])
    for tag, kind in (("noun", SWAP_KINDS[1]), ("adj", SWAP_KINDS[2])):
        for a, b in combinations([i for i, w in enumerate(words) if word_tag(w) == tag], 2):
            swapped = list(words)
            swapped[a], swapped[b] = words[b], words[a]
            out.setdefault(" ".join(swapped), kind)
    out.pop(" ".join(words), None)
    return out


def swap_negatives(text: str) -> list[str]:
    """NegCLIP's swaps of a caption (`swap_kinds`' texts, in its order)."""
    return list(swap_kinds(text))


def nearest_images(
    encode_images: Callable[[np.ndarray], np.ndarray], images: np.ndarray, k: int, chunk: int = 256
) -> np.ndarray:
    """For each image, the rows of the `k` other images nearest to it by cosine similarity of the unit-norm
    embeddings `encode_images` gives ([N, k], nearest first; ties to the lower row)."""
    n = len(images)
    if not 1 <= k < n:
        raise ValueError(f"nearest_images: {k} neighbours of each of {n} images; expected 1 <= k < {n}")
    emb = np.concatenate([np.asarray(encode_images(images[s : s + chunk]), np.float32) for s in range(0, n, chunk)])
    out = np.empty((n, k), dtype=np.int64)
    for s in range(0, n, chunk):
        sims = emb[s : s + chunk] @ emb.T
        sims[np.arange(len(sims)), np.arange(s, s + len(sims))] = -np.inf  # never the image itself
        out[s : s + chunk] = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    return out
