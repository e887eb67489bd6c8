"""The baseline families' trainers as recipes: a batch source and a loss each, run by `loop.run_training`.

- contrastive (BiVLC CLIP_COCO): P image-caption pairs; CLIP InfoNCE with in-batch negatives.
- negclip (BiVLC CLIP_TROHN-Text, NegCLIP-style): P pairs + up to k hard-negative captions each,
  extra columns of the text side (image->text only).
- negclip_aro (ARO's NegCLIP, as its authors' open_clip fork trains it): P pairs, each with a nearest-neighbour
  train image and one of its captions (more pairs: 2P images, 2P captions), then a swap of each of the 2P
  captions as a hard negative on the text side (image->text only: the authors' loss, `negclip_loss` on 2P
  images and 4P captions).
- trohn_img (BiVLC CLIP_TROHN-Img): P instances, each a pair + up to k (caption-, image-) pairs
  appended to both sides; CLIP InfoNCE over all pairs.
- vse_hinge (VSE++): P pairs; max-violation hinge at a margin, after `hinge_warmup_epochs` of the
  sum of hinges over all in-batch negatives.
- de_i2t (CxC DE_I2T): P pairs; in-batch softmax both ways.
- de_t2t (CxC DE_T2T): P captions + a co-caption each, text tower only; in-batch softmax both ways.
- de_t2t_i2t (CxC DE_T2T+I2T): P pairs + a co-caption of each caption; L_i2t + L_t2i + c * L_t2t.

A sample is a train caption (with its image), except for trohn_img where it is a TROHN-Img
instance (a train caption with its hard-negative pairs). The co-caption of a caption is another
caption of its image, drawn anew each epoch. The hard negatives are made once per run
(`train.negatives`); in-batch false negatives (two captions of one image in a batch) are left in,
as in CLIP and CxC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from itmbench.train.config import TrainConfig
from itmbench.train.loop import Batch, Embedded, Recipe, TrainData
from itmbench.train.losses import (
    clip_loss,
    in_batch_softmax_loss,
    multitask_loss,
    negclip_loss,
    vse_hinge_loss,
)
from itmbench.train.negatives import (
    caption_negatives,
    image_generator,
    image_negatives,
    nearest_images,
    negatives_table,
    swap_negatives,
)

# --- batch sources --------------------------------------------------------------------------------


@dataclass
class PairSource:
    """Train captions with their images (in-batch negatives only)."""

    data: TrainData

    @property
    def n_samples(self) -> int:
        """One sample per train caption."""
        return len(self.data)

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The captions `idx` and their images."""
        return Batch(
            n_positive=len(idx),
            texts=self.data.tokens[idx],
            images=self.data.images[self.data.image_row[idx]],
            rows=np.asarray(idx, dtype=np.int64),
        )

    def stats(self) -> dict[str, Any]:
        """Sample count."""
        return {"samples": self.n_samples}


def co_caption_lists(image_ids: np.ndarray, source: str) -> list[np.ndarray]:
    """For each caption row, the rows of the other captions of its image; an image with one caption is an error."""
    members: dict[int, list[int]] = {}
    for row, image_id in enumerate(image_ids):
        members.setdefault(int(image_id), []).append(row)
    lonely = sorted(i for i, rows in members.items() if len(rows) < 2)
    if lonely:
        raise ValueError(f"{source}: train images {lonely[:5]} have a single caption; co-caption pairs need 2 or more")
    groups = {i: np.array(rows, dtype=np.int64) for i, rows in members.items()}
    return [groups[int(i)][groups[int(i)] != row] for row, i in enumerate(image_ids)]


@dataclass
class CoCaptionSource:
    """Train captions, each with a co-caption of its image drawn per epoch; with or without the image."""

    data: TrainData
    with_images: bool
    siblings: list[np.ndarray]

    @property
    def n_samples(self) -> int:
        """One sample per train caption."""
        return len(self.data)

    def partner_rows(self, idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A random co-caption row for each caption row in `idx`."""
        draws = rng.random(len(idx))
        return np.array([s[int(u * len(s))] for s, u in zip((self.siblings[i] for i in idx), draws)], dtype=np.int64)

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The captions `idx`, a co-caption of each and (for the multitask model) their images."""
        partners = self.partner_rows(idx, rng)
        return Batch(
            n_positive=len(idx),
            texts=self.data.tokens[idx],
            images=self.data.images[self.data.image_row[idx]] if self.with_images else None,
            partners=self.data.tokens[partners],
            rows=np.asarray(idx, dtype=np.int64),
            negative_rows=partners,
        )

    def stats(self) -> dict[str, Any]:
        """Sample count and co-captions per caption."""
        return {"samples": self.n_samples, "mean_co_captions": float(np.mean([len(s) for s in self.siblings]))}


def _negative_stats(negatives: pd.DataFrame, n_positives: int, samples: int) -> dict[str, Any]:
    """Counts of hard negatives by subset, for the training summary."""
    return {
        "samples": samples,
        "negatives": len(negatives),
        "positives_with_negatives": int(negatives["positive_row"].nunique()) if len(negatives) else 0,
        "positives": n_positives,
        "by_subset": {k: int(v) for k, v in sorted(Counter(negatives["subset"]).items())},
    }


def _rows_by_positive(negatives: pd.DataFrame, n: int) -> list[np.ndarray]:
    """For each positive row 0..n-1, the rows of its negatives in the table (rows are sorted by positive)."""
    positive = negatives["positive_row"].to_numpy(np.int64)
    bounds = np.searchsorted(positive, np.arange(n + 1))
    return [np.arange(bounds[i], bounds[i + 1], dtype=np.int64) for i in range(n)]


@dataclass
class NegativeCaptionSource:
    """TROHN-Text: train captions with their images, plus their hard-negative captions on the text side."""

    data: TrainData
    negatives: pd.DataFrame  # NEGATIVE_COLUMNS, index 0..n-1
    negative_tokens: torch.Tensor
    by_positive: list[np.ndarray]

    @property
    def n_samples(self) -> int:
        """One sample per train caption (those without a negative still count: in-batch negatives)."""
        return len(self.data)

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The pairs `idx`, then every hard-negative caption of theirs."""
        neg = np.concatenate([self.by_positive[i] for i in idx]) if len(idx) else np.zeros(0, dtype=np.int64)
        return Batch(
            n_positive=len(idx),
            texts=torch.cat([self.data.tokens[idx], self.negative_tokens[neg]]),
            images=self.data.images[self.data.image_row[idx]],
            rows=np.asarray(idx, dtype=np.int64),
            negative_rows=neg,
        )

    def stats(self) -> dict[str, Any]:
        """Counts of negatives by subset."""
        return _negative_stats(self.negatives, len(self.data), self.n_samples)


@dataclass
class NegativePairSource:
    """TROHN-Img: instances (a train pair and its hard-negative pairs), both appended to the batch."""

    data: TrainData
    pairs: pd.DataFrame  # NEGATIVE_COLUMNS + scene, mistakes; index 0..n-1
    pair_images: np.ndarray  # [n, H, W, 3]
    pair_tokens: torch.Tensor
    instances: np.ndarray  # train caption rows with at least one negative pair
    by_instance: list[np.ndarray]  # per instance, its rows in `pairs`

    @property
    def n_samples(self) -> int:
        """One sample per instance."""
        return len(self.instances)

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The instances `idx`: their positive pairs first, then their negative pairs (caption-, image-)."""
        rows = self.instances[idx]
        neg = np.concatenate([self.by_instance[i] for i in idx]) if len(idx) else np.zeros(0, dtype=np.int64)
        return Batch(
            n_positive=len(idx),
            texts=torch.cat([self.data.tokens[rows], self.pair_tokens[neg]]),
            images=np.concatenate([self.data.images[self.data.image_row[rows]], self.pair_images[neg]]),
            rows=rows,
            negative_rows=neg,
        )

    def stats(self) -> dict[str, Any]:
        """Counts of negative pairs by subset, and of the generator's mistakes among them."""
        out = _negative_stats(self.pairs, len(self.data), self.n_samples)
        mistakes = Counter(m for ms in self.pairs["mistakes"] for m in ms.split(",") if m)
        out["mistakes"] = {k: int(v) for k, v in sorted(mistakes.items())}
        return out


@dataclass
class NegClipSource:
    """ARO's NegCLIP (the authors' `CsvDataset` and training step): each sample is a train caption with a swap
    of it; its batch adds a nearest image of the caption's image, one of that image's captions and a swap of
    that caption, each drawn anew per epoch as the authors' `random.choice` draws them."""

    data: TrainData
    samples: np.ndarray  # train caption rows that have a swap (the authors' rows each list their swaps)
    swap_tokens: torch.Tensor  # every sample's swaps, tokenized, sample by sample
    swaps_of: list[np.ndarray]  # per sample: its rows in swap_tokens
    neighbour_samples: list[list[np.ndarray]]  # per sample: per nearest image, the samples (captions) of that image
    swap_texts: list[str]

    @property
    def n_samples(self) -> int:
        """One sample per train caption with a swap."""
        return len(self.samples)

    @staticmethod
    def _pick(options: list, draws: np.ndarray) -> list:
        """One element of each option list, by a uniform draw in [0, 1) each."""
        return [o[int(u * len(o))] for o, u in zip(options, draws)]

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The samples `idx` and their neighbours' pairs (2P pairs), then a swap of each of the 2P captions."""
        idx = np.asarray(idx, dtype=np.int64)
        images = self._pick([self.neighbour_samples[i] for i in idx], rng.random(len(idx)))  # a nearest image each
        neighbours = np.array(self._pick(images, rng.random(len(idx))), dtype=np.int64)  # one of its captions
        both = np.concatenate([idx, neighbours])
        swaps = np.array(self._pick([self.swaps_of[i] for i in both], rng.random(len(both))), dtype=np.int64)
        rows = self.samples[both]
        return Batch(
            n_positive=len(both),
            texts=torch.cat([self.data.tokens[rows], self.swap_tokens[swaps]]),
            images=self.data.images[self.data.image_row[rows]],
            rows=rows,
            negative_rows=swaps,
        )

    def stats(self) -> dict[str, Any]:
        """Samples, swaps and neighbours."""
        return {
            "samples": self.n_samples,
            "positives": len(self.data),
            "swaps": len(self.swap_texts),
            "mean_swaps_per_sample": float(np.mean([len(s) for s in self.swaps_of])) if self.n_samples else 0.0,
            "neighbour_images": len(self.neighbour_samples[0]) if self.n_samples else 0,
        }


# --- builders -------------------------------------------------------------------------------------


def build_pairs(data: TrainData, cfg: TrainConfig) -> PairSource:
    """In-batch training: the train pairs as they are."""
    return PairSource(data)


def build_co_captions(with_images: bool):
    """A builder of caption-caption samples (with the images for the multitask model)."""

    def build(data: TrainData, cfg: TrainConfig) -> CoCaptionSource:
        """Co-caption lists of the train captions."""
        return CoCaptionSource(data, with_images, co_caption_lists(data.image_ids, "train split"))

    return build


def build_negative_captions(data: TrainData, cfg: TrainConfig) -> NegativeCaptionSource:
    """TROHN-Text: hard-negative captions of every train caption, made once."""
    made = caption_negatives(data.caption_ids, data.image_ids, data.texts, data.structures, data.scenes, cfg)
    negatives = negatives_table(made)
    tokens = data.tokenize(negatives["text"].tolist()) if len(negatives) else data.tokens[:0]
    return NegativeCaptionSource(data, negatives, tokens, _rows_by_positive(negatives, len(data)))


def build_negative_pairs(data: TrainData, cfg: TrainConfig) -> NegativePairSource:
    """TROHN-Img: hard-negative captions and an image of each, for a fraction of the train captions, made once."""
    generator = image_generator(cfg, int(data.images.shape[1]), data.max_objects)
    made = image_negatives(data.caption_ids, data.image_ids, data.texts, data.structures, data.scenes, cfg, generator)
    pairs = negatives_table([p.caption for p in made]).assign(
        scene=[p.scene.to_json() if p.scene is not None else "" for p in made],
        mistakes=[",".join(p.mistakes) for p in made],
    )
    shape = (0, *data.images.shape[1:])
    images = np.stack([p.image for p in made]) if made else np.zeros(shape, dtype=np.uint8)
    instances = np.unique(pairs["positive_row"].to_numpy(np.int64))
    by_row = _rows_by_positive(pairs, len(data))
    tokens = data.tokenize(pairs["text"].tolist()) if len(pairs) else data.tokens[:0]
    return NegativePairSource(data, pairs, images, tokens, instances, [by_row[r] for r in instances])


def build_negclip(
    data: TrainData, cfg: TrainConfig, swaps_of_text: Callable[[str], list[str]] = swap_negatives
) -> NegClipSource:
    """ARO's NegCLIP: every train caption's swaps, and each train image's `negclip_neighbours` nearest train images
    by the starting model (the captions of a neighbour that have swaps are its samples), made once. `swaps_of_text`
    makes a caption's swaps (NegCLIP's own by default; `benchmarks/relation_probe.py` passes VG-Relation's edit
    alone)."""
    if data.encode_images is None:
        raise ValueError("trainer negclip_aro: nearest images need the starting model's image encoder")
    swaps = [swaps_of_text(t) for t in data.texts]
    samples = np.array([row for row, s in enumerate(swaps) if s], dtype=np.int64)
    if not len(samples):
        return NegClipSource(data, samples, data.tokens[:0], [], [], [])
    texts = [t for row in samples for t in swaps[row]]
    bounds = np.cumsum([0, *(len(swaps[row]) for row in samples)])
    swaps_of = [np.arange(bounds[i], bounds[i + 1], dtype=np.int64) for i in range(len(samples))]
    image_rows = np.unique(data.image_row[samples])  # the train images with a sample
    if len(image_rows) <= cfg.negclip_neighbours:
        raise ValueError(
            f"trainer negclip_aro: {len(image_rows)} train images with a swappable caption; "
            f"negclip_neighbours={cfg.negclip_neighbours} needs more"
        )
    nearest = nearest_images(data.encode_images, data.images[image_rows], cfg.negclip_neighbours)
    local = {int(r): k for k, r in enumerate(image_rows)}
    of_image: list[list[int]] = [[] for _ in image_rows]
    for i, row in enumerate(samples):
        of_image[local[int(data.image_row[row])]].append(i)
    per_image = [np.array(s, dtype=np.int64) for s in of_image]
    neighbours = [[per_image[j] for j in nearest[local[int(data.image_row[row])]]] for row in samples]
    return NegClipSource(data, samples, data.tokenize(texts), swaps_of, neighbours, texts)


# --- losses ---------------------------------------------------------------------------------------


def _clip(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return clip_loss(emb.img, emb.txt, logit_scale)


def _negclip(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return negclip_loss(emb.img, emb.txt, logit_scale)


def _vse(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return vse_hinge_loss(emb.img, emb.txt, cfg.hinge_margin, hardest=epoch >= cfg.hinge_warmup_epochs)


def _de_i2t(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return in_batch_softmax_loss(emb.img, emb.txt, logit_scale)


def _de_t2t(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return in_batch_softmax_loss(emb.txt, emb.partner, logit_scale)


def _de_multitask(emb: Embedded, logit_scale: torch.Tensor, cfg: TrainConfig, epoch: int) -> torch.Tensor:
    return multitask_loss(emb.img, emb.txt, emb.partner, logit_scale, cfg.t2t_weight)


RECIPES: dict[str, Recipe] = {
    r.name: r
    for r in (
        Recipe("contrastive", build_pairs, _clip),
        Recipe("negclip", build_negative_captions, _negclip),
        Recipe("negclip_aro", build_negclip, _negclip),
        Recipe("trohn_img", build_negative_pairs, _clip),
        Recipe("vse_hinge", build_pairs, _vse),
        Recipe("de_i2t", build_pairs, _de_i2t),
        Recipe("de_t2t", build_co_captions(with_images=False), _de_t2t, tasks=("t2t",)),
        Recipe("de_t2t_i2t", build_co_captions(with_images=True), _de_multitask, tasks=("i2t", "t2i", "t2t")),
    )
}
