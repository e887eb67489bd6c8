"""A model's spec (a params.yaml `models.<name>` entry) and what every family's module shares.

The families (the open_clip dual encoders: models/openclip.py; the captioner, the FFNN option
scorer, the unimodal baselines) build from a `ModelSpec`, load the checkpoints the trainers write
with `load_checkpoint` and run under `autocast`; `models/registry.py` is the one factory over them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch

from itmbench.params import config_from_section
from itmbench.reading import load_torch

# The model families; models/registry.py's FAMILIES builds each (tests/models check they agree).
FAMILY_NAMES = ("open_clip", "random", "coca", "ffnn", "vec2seq", "linear_option", "bag_of_words", "pixel_features")


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """One model: its family, architecture, weights and how it is trained (None: not trained).

    An entry of params.yaml's `models` map (the schema's `models.*`: its keys, defaults and descriptions;
    build one with `model_spec(name, entry)`). The fields without a default there keep theirs here:
    `arch` and `upstream` are None and `options` empty unless the entry names them.
    """

    SECTION: ClassVar[str] = "models.*"

    name: str
    family: str
    arch: str | None = None
    pretrained: str | None
    quick_gelu: bool
    trainer: str | None
    dim: int
    seed: int
    init: str | None  # another model whose trained checkpoint this one starts from (fine-tuning)
    train: dict[str, Any]  # this model's overrides of the params `train` section
    upstream: str | None = (
        None  # the model whose item embeddings this one's features are (ffnn, vec2seq, linear_option)
    )
    options: dict[str, Any] = field(default_factory=dict)  # family-specific settings (see the family's module)
    benchmarks: tuple[str, ...] | None = None  # the only benchmarks it is scored on (None: every one it can score)

    def __post_init__(self) -> None:
        name = self.name
        if self.family not in FAMILY_NAMES:
            raise ValueError(f"models.{name}: unknown family {self.family!r}; expected one of {sorted(FAMILY_NAMES)}")
        if self.init is not None and self.trainer is None:
            raise ValueError(f"models.{name}: `init: {self.init}` needs a `trainer` (init is where training starts)")
        if self.init == name:
            raise ValueError(f"models.{name}: `init` names the model itself; expected another trained model")


def model_spec(name: str, entry: Mapping[str, Any]) -> ModelSpec:
    """The spec of a params.yaml `models.<name>` entry, naming unknown keys and families."""
    return config_from_section(ModelSpec, ModelSpec.SECTION, entry, label=f"models.{name}", given={"name": name})


def autocast(device: torch.device) -> Any:
    """bf16 autocast on CUDA, a no-op on CPU (CPU results stay exact and deterministic)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load a checkpoint written by the trainers, naming the file when it is not one."""
    try:
        state = load_torch(path)
    except Exception as err:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a readable checkpoint ({err})") from err
    if not isinstance(state, dict) or "state_dict" not in state:
        raise ValueError(f"{path}: expected a dict with key 'state_dict' (an itmbench checkpoint)")
    return state
