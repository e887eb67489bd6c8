"""Model registry: one factory over the model families, one encoder interface.

`build_encoder(spec, device, checkpoint)` builds a `ModelSpec` (models/spec.py, from params.yaml)
with its family's module: open_clip (models/openclip.py, which also says where pretrained weights
come from), random (the chance floor, here), coca (models/captioner.py), ffnn
(models/option_scorer.py), vec2seq (models/vec2seq.py), bag_of_words and pixel_features (models/unimodal.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from itmbench.models.openclip import build_open_clip
from itmbench.models.spec import ModelSpec


class DualEncoder(Protocol):
    """What every dual-encoder family gives: L2-normalised embeddings of images and texts."""

    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        """Embed uint8 images [N, H, W, 3] -> float [N, D], unit norm."""
        ...

    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        """Embed texts -> float [N, D], unit norm."""
        ...


class RandomEncoder:
    """The chance floor: a fixed random unit vector per item, seeded by the item's content."""

    def __init__(self, dim: int, seed: int) -> None:
        self.dim, self.seed = dim, seed

    def _vector(self, payload: bytes) -> np.ndarray:
        digest = hashlib.sha256(payload).digest()
        rng = np.random.default_rng([self.seed, int.from_bytes(digest[:8], "little")])
        v = rng.standard_normal(self.dim)
        return v / np.linalg.norm(v)

    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        """One random vector per image, from a hash of its pixels."""
        return torch.from_numpy(
            np.stack([self._vector(b"I" + np.ascontiguousarray(im).tobytes()) for im in images])
        ).float()

    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        """One random vector per text, from a hash of its characters."""
        return torch.from_numpy(np.stack([self._vector(b"T" + t.encode()) for t in texts])).float()


def pick_device(requested: str = "auto") -> torch.device:
    """CUDA when there is one (or when asked), else CPU."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def _build_captioner(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.captioner import build_captioner

    return build_captioner(spec, device, checkpoint)


def _build_option_scorer(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.option_scorer import build_option_scorer

    return build_option_scorer(spec, device, checkpoint)


def _build_vec2seq(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.vec2seq import build_vec2seq

    return build_vec2seq(spec, device, checkpoint)


def _build_linear_option(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.linear_option import build_linear_option

    return build_linear_option(spec, device, checkpoint)


def _build_bag_of_words(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.unimodal import build_bag_of_words

    return build_bag_of_words(spec, checkpoint)


def _build_pixel_features(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.unimodal import build_pixel_features

    return build_pixel_features(spec)


FAMILIES = {
    "open_clip": lambda spec, device, ckpt: build_open_clip(spec, device, ckpt),
    "random": lambda spec, device, ckpt: RandomEncoder(spec.dim, spec.seed),
    "coca": _build_captioner,
    "ffnn": _build_option_scorer,
    "vec2seq": _build_vec2seq,
    "linear_option": _build_linear_option,
    "bag_of_words": _build_bag_of_words,
    "pixel_features": _build_pixel_features,
}


def build_encoder(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None) -> DualEncoder:
    """The one factory: a dual encoder for a spec, with trained weights when given."""
    return FAMILIES[spec.family](spec, device, checkpoint)


def _train_ffnn(*args: Any) -> Any:
    from itmbench.models.option_scorer import train_ffnn

    return train_ffnn(*args)


def _train_vec2seq(*args: Any) -> Any:
    from itmbench.models.vec2seq import train_vec2seq

    return train_vec2seq(*args)


def _train_linear_option(*args: Any) -> Any:
    from itmbench.models.linear_option import train_linear_option

    return train_linear_option(*args)


# MCIC's option scorers trained on its train split over an upstream model's features (`itmbench train-ffnn`)
OPTION_TRAINERS = {"ffnn": _train_ffnn, "vec2seq": _train_vec2seq, "linear_option": _train_linear_option}


def option_trainer(spec: ModelSpec) -> Any:
    """The trainer of an MCIC option scorer's family, naming the known ones when the family has none."""
    if spec.family not in OPTION_TRAINERS:
        known = sorted(OPTION_TRAINERS)
        raise ValueError(
            f"models.{spec.name}: family {spec.family!r} is not an MCIC option scorer; expected one of {known}"
        )
    return OPTION_TRAINERS[spec.family]
