"""CLIP-style contrastive training with in-batch negatives (BiVLC's CLIP_COCO recipe, scaled down).

The loop, its schedule, checkpoint selection and resume live in `train.loop`; this module keeps the
entry point the workflow has always called and re-exports the pieces older callers import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from itmbench.models.spec import ModelSpec
from itmbench.train.config import TrainConfig
from itmbench.train.loop import ValidationSet, cosine_lr, param_groups, run_training, validation_recalls
from itmbench.train.losses import clip_loss
from itmbench.train.recipes import RECIPES

__all__ = ["TrainConfig", "clip_loss", "cosine_lr", "param_groups", "train_contrastive", "validation_r1"]


def validation_r1(encoder: Any, images: Any, captions: list[str], caption_image_row: Any) -> float:
    """Mean of i2t and t2i R@1 on the validation split under original positives."""
    val = ValidationSet(images=images, texts=list(captions), caption_image_row=caption_image_row)
    recalls = validation_recalls(encoder, val, ("i2t", "t2i"))
    return 0.5 * (recalls["i2t"] + recalls["t2i"])


def train_contrastive(
    spec: ModelSpec,
    cfg: TrainConfig,
    items_dir: str | Path,
    out_path: str | Path,
    history_path: str | Path,
    device: torch.device,
    init: str | Path | None = None,
) -> dict[str, Any]:
    """Train an open_clip model on the world's train split with in-batch negatives; write the best-on-val checkpoint."""
    return run_training(RECIPES["contrastive"], spec, cfg, items_dir, out_path, history_path, device, init)
