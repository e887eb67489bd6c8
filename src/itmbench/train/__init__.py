"""Training of the baseline families: one loop (`loop`), a recipe per trainer (`recipes`), selected by name.

`TRAINERS[spec.trainer](spec, cfg, items_dir, out_path, history_path, device) -> summary` trains
a model on the world's train split and writes its best-on-validation checkpoint, which
`itmbench.models.registry.build_encoder(spec, device, checkpoint)` loads.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import torch

from itmbench.models.spec import ModelSpec
from itmbench.models.unimodal import train_bag_of_words
from itmbench.train.captioner import train_coca
from itmbench.train.config import TrainConfig
from itmbench.train.contrastive import train_contrastive
from itmbench.train.loop import run_training
from itmbench.train.recipes import RECIPES

Trainer = Callable[[ModelSpec, TrainConfig, "str | Path", "str | Path", "str | Path", torch.device], dict[str, Any]]

TRAINERS: dict[str, Trainer] = {
    name: (train_contrastive if name == "contrastive" else partial(run_training, recipe))
    for name, recipe in RECIPES.items()
}
# Families that are not dual encoders: the captioner (CoCa, caption + contrastive loss) and the
# bag of words (fitted, not trained). MCIC's FFNN is trained by `itmbench train-ffnn` (it needs
# an upstream model's embeddings and the MCIC train split), not through this registry.
TRAINERS["coca"] = train_coca
TRAINERS["bow_tfidf"] = train_bag_of_words


def trainer(name: str | None, model: str = "?") -> Trainer:
    """The trainer of a spec's `trainer` name, naming the model and the known trainers when it is unknown."""
    if name not in TRAINERS:
        raise ValueError(f"models.{model}: unknown trainer {name!r}; expected one of {sorted(TRAINERS)}")
    return TRAINERS[name]


__all__ = ["TRAINERS", "TrainConfig", "trainer"]
