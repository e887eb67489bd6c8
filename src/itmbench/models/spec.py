"""A model's spec (a params.yaml `models.<name>` entry) and what every family's module shares.

The families (the open_clip dual encoders: models/openclip.py; the captioner, the FFNN option
scorer, the unimodal baselines) build from a `ModelSpec`, load the checkpoints the trainers write
with `load_checkpoint` and run under `autocast`; `models/registry.py` is the one factory over them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

# The model families; models/registry.py's FAMILIES builds each (tests/models check they agree).
FAMILY_NAMES = ("open_clip", "random", "coca", "ffnn", "bag_of_words", "pixel_features")


@dataclass(frozen=True)
class ModelSpec:
    """One model: its family, architecture, weights and how it is trained (None: not trained)."""

    name: str
    family: str
    arch: str | None = None
    pretrained: str | None = None
    quick_gelu: bool = False
    trainer: str | None = None
    dim: int = 64
    seed: int = 0
    init: str | None = None  # another model whose trained checkpoint this one starts from (fine-tuning)
    train: dict[str, Any] = field(default_factory=dict)  # this model's overrides of the params `train` section
    upstream: str | None = None  # the model whose item embeddings this one's features are (ffnn)
    options: dict[str, Any] = field(default_factory=dict)  # family-specific settings (see the family's module)

    @staticmethod
    def from_dict(name: str, d: dict[str, Any]) -> ModelSpec:
        """Build from a params.yaml `models.<name>` entry, naming unknown keys and families."""
        known = {f.name for f in fields(ModelSpec)} - {"name"}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"models.{name}: unknown keys {sorted(unknown)}; expected some of {sorted(known)}")
        spec = ModelSpec(name=name, **d)
        if spec.family not in FAMILY_NAMES:
            raise ValueError(f"models.{name}: unknown family {spec.family!r}; expected one of {sorted(FAMILY_NAMES)}")
        if spec.init is not None and spec.trainer is None:
            raise ValueError(f"models.{name}: `init: {spec.init}` needs a `trainer` (init is where training starts)")
        if spec.init == name:
            raise ValueError(f"models.{name}: `init` names the model itself; expected another trained model")
        return spec


def autocast(device: torch.device) -> Any:
    """bf16 autocast on CUDA, a no-op on CPU (CPU results stay exact and deterministic)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load a checkpoint written by the trainers, naming the file when it is not one."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a readable checkpoint ({err})") from err
    if not isinstance(state, dict) or "state_dict" not in state:
        raise ValueError(f"{path}: expected a dict with key 'state_dict' (an itmbench checkpoint)")
    return state
