"""The unimodal baselines CxC reports (section 5.1): a text-only bag-of-words and an image-only feature model.

- `bag_of_words` (CxC's BoW: averaged GloVe vectors): TF-IDF vectors over a vocabulary fitted on
  the world's train captions (smooth idf, L2 rows; words seen fewer than `min_count` times and
  words never seen are dropped). No word vectors: the world's 51-word grammar has no corpus to
  learn them from that the train captions are not already. It embeds captions only.
- `pixel_features` (CxC's InceptionV3 / ResNet-152 / SimCLRv2 image features: off-the-shelf,
  never trained on captions): a colour histogram of the saturated (non-background) pixels
  (`colour_bins` per channel, square-rooted, L2) and a `grid` x `grid` thumbnail of mean colours
  (weight `thumbnail_weight`), concatenated and L2-normalised. Nothing is fitted. It embeds images
  only. (CxC's construction samples caption pairs with a different pixel feature, its
  colour-and-layout histogram, as the paper samples with its own encoders.)
Both score by dot product, the same-modality tasks only: t2t and STS, or i2i and SIS.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from itmbench.io import atomic_path, write_json
from itmbench.models.spec import ModelSpec, load_checkpoint

log = logging.getLogger(__name__)

BOW_OPTIONS = {"min_count": 1, "sublinear_tf": False}
PIXEL_OPTIONS = {"colour_bins": 4, "grid": 4, "saturation_min": 40, "thumbnail_weight": 0.5}


def _options(spec: ModelSpec, defaults: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(spec.options) - set(defaults))
    if unknown:
        raise ValueError(f"models.{spec.name}.options: unknown keys {unknown}; expected some of {sorted(defaults)}")
    return {**defaults, **spec.options}


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _unit_rows(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


class BagOfWords:
    """TF-IDF caption vectors (unit norm); a text-only model."""

    item_kinds = ("caption",)

    def __init__(self, vocab: list[str], idf: np.ndarray, sublinear_tf: bool = False) -> None:
        if len(vocab) != len(idf):
            raise ValueError(f"bag of words: {len(vocab)} words but {len(idf)} idf values")
        self.vocab, self.idf, self.sublinear_tf = list(vocab), np.asarray(idf, np.float64), bool(sublinear_tf)
        self.index = {w: i for i, w in enumerate(self.vocab)}

    @staticmethod
    def fit(texts: list[str], min_count: int = 1, sublinear_tf: bool = False) -> BagOfWords:
        """Vocabulary (words seen >= min_count times, sorted) and smooth idf from these captions."""
        docs = [tokens(t) for t in texts]
        counts = Counter(w for d in docs for w in d)
        vocab = sorted(w for w, c in counts.items() if c >= min_count)
        index = {w: i for i, w in enumerate(vocab)}
        df = np.zeros(len(vocab))
        for d in docs:
            for w in set(d):
                if w in index:
                    df[index[w]] += 1
        idf = np.log((1.0 + len(docs)) / (1.0 + df)) + 1.0
        return BagOfWords(vocab, idf, sublinear_tf)

    def vectors(self, texts: list[str]) -> np.ndarray:
        """Unit TF-IDF vectors [N, V] (float64; a caption of unknown words only is the zero vector)."""
        tf = np.zeros((len(texts), len(self.vocab)), dtype=np.float64)
        for r, t in enumerate(texts):
            for w in tokens(t):
                j = self.index.get(w)
                if j is not None:
                    tf[r, j] += 1.0
        if self.sublinear_tf:
            tf = np.where(tf > 0, 1.0 + np.log(np.maximum(tf, 1.0)), 0.0)
        return _unit_rows(tf * self.idf)

    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        """Unit TF-IDF vectors as a float tensor."""
        return torch.from_numpy(self.vectors(list(texts))).float()

    def state(self) -> dict[str, Any]:
        """What the checkpoint stores."""
        return {"vocab": list(self.vocab), "idf": torch.from_numpy(self.idf), "sublinear_tf": self.sublinear_tf}


def pixel_features(images: np.ndarray, colour_bins: int, grid: int, saturation_min: int, thumbnail_weight: float):
    """Colour histogram of saturated pixels + a grid thumbnail of mean colours, unit norm [N, bins^3 + 3 grid^2]."""
    px = np.asarray(images)
    n, h, w, _ = px.shape
    p16 = px.astype(np.int16)
    mask = (p16.max(axis=-1) - p16.min(axis=-1)) > saturation_min
    q = np.clip(px.astype(np.int64) * colour_bins // 256, 0, colour_bins - 1)
    code = (q[..., 0] * colour_bins + q[..., 1]) * colour_bins + q[..., 2]
    hist = np.zeros((n, colour_bins**3), dtype=np.float64)
    rows = np.broadcast_to(np.arange(n)[:, None, None], mask.shape)
    np.add.at(hist, (rows[mask], code[mask]), 1.0)
    cell_r = np.minimum(np.arange(h) * grid // h, grid - 1)
    cell_c = np.minimum(np.arange(w) * grid // w, grid - 1)
    thumb = np.zeros((n, grid, grid, 3), dtype=np.float64)
    count = np.zeros((grid, grid), dtype=np.float64)
    np.add.at(count, (cell_r[:, None].repeat(w, 1), cell_c[None, :].repeat(h, 0)), 1.0)
    for r in range(grid):
        for c in range(grid):
            block = px[:, cell_r == r][:, :, cell_c == c]
            thumb[:, r, c] = block.reshape(n, -1, 3).mean(axis=1) / 255.0
    thumb = thumb.reshape(n, -1)
    thumb = thumb - thumb.mean(axis=1, keepdims=True)
    feats = np.concatenate([_unit_rows(np.sqrt(hist)), thumbnail_weight * _unit_rows(thumb)], axis=1)
    return _unit_rows(feats)


class PixelFeatures:
    """Fixed pixel features of images (unit norm); an image-only model."""

    item_kinds = ("image",)

    def __init__(self, colour_bins: int, grid: int, saturation_min: int, thumbnail_weight: float) -> None:
        self.settings = {
            "colour_bins": int(colour_bins),
            "grid": int(grid),
            "saturation_min": int(saturation_min),
            "thumbnail_weight": float(thumbnail_weight),
        }

    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        """Unit pixel features as a float tensor."""
        return torch.from_numpy(pixel_features(images, **self.settings)).float()


def build_bag_of_words(spec: ModelSpec, checkpoint: str | Path | None) -> BagOfWords:
    """The fitted bag of words from its checkpoint (it is fitted by the `bow_tfidf` trainer)."""
    _options(spec, BOW_OPTIONS)
    if checkpoint is None:
        raise ValueError(f"models.{spec.name}: a bag of words needs its fitted checkpoint (trainer bow_tfidf)")
    state = load_checkpoint(checkpoint)["state_dict"]
    if not {"vocab", "idf"} <= set(state):
        raise ValueError(f"{checkpoint}: expected a bag-of-words state with 'vocab' and 'idf'")
    return BagOfWords(list(state["vocab"]), state["idf"].numpy(), bool(state.get("sublinear_tf", False)))


def build_pixel_features(spec: ModelSpec) -> PixelFeatures:
    """The pixel feature model with the spec's settings."""
    opts = _options(spec, PIXEL_OPTIONS)
    bad = [k for k in ("colour_bins", "grid") if int(opts[k]) < 1]
    if bad:
        raise ValueError(f"models.{spec.name}.options: {bad} must be >= 1, got {opts}")
    return PixelFeatures(**opts)


def train_bag_of_words(
    spec: ModelSpec, cfg: Any, items_dir: str | Path, out_path: str | Path, history_path: str | Path, device: Any
) -> dict[str, Any]:
    """Fit the bag of words on the world's train captions (trainer `bow_tfidf`); write its checkpoint."""
    from itmbench.world.generate import read_world

    t0 = time.time()
    opts = _options(spec, BOW_OPTIONS)
    caps = read_world(items_dir).caption_table
    train = caps.loc[caps["split"] == "train"].sort_values("caption_id", kind="stable")
    if train.empty:
        raise ValueError(f"{items_dir}: no train captions to fit the bag of words on")
    bow = BagOfWords.fit(train["text"].tolist(), int(opts["min_count"]), bool(opts["sublinear_tf"]))
    with atomic_path(out_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
        torch.save({"state_dict": bow.state(), "spec": asdict(spec), "trainer": "bow_tfidf"}, fh)
    summary = {
        "model": spec.name,
        "trainer": "bow_tfidf",
        "best_epoch": None,
        "vocabulary": len(bow.vocab),
        "train_captions": len(train),
        "seconds": round(time.time() - t0, 2),
    }
    write_json(history_path, summary)
    return summary
