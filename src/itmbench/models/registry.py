"""Model registry: a typed spec per model (from params.yaml), one factory, one encoder interface."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

CONFIG_DIR = Path(__file__).parent / "configs"


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
        if spec.family not in FAMILIES:
            raise ValueError(f"models.{name}: unknown family {spec.family!r}; expected one of {sorted(FAMILIES)}")
        return spec


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


class OpenClipEncoder:
    """An open_clip model behind the encoder interface; images arrive as uint8 arrays."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, device: torch.device) -> None:
        self.model, self.tokenizer, self.device = model, tokenizer, device
        cfg = getattr(model.visual, "preprocess_cfg", {}) or {}
        mean = cfg.get("mean", (0.48145466, 0.4578275, 0.40821073))
        std = cfg.get("std", (0.26862954, 0.26130258, 0.27577711))
        self.mean = torch.tensor(mean, device=device).view(1, 3, 1, 1)
        self.std = torch.tensor(std, device=device).view(1, 3, 1, 1)
        size = model.visual.image_size
        self.image_size = size[0] if isinstance(size, (tuple, list)) else int(size)

    def image_tensor(self, images: np.ndarray) -> torch.Tensor:
        """uint8 [N,H,W,3] -> normalised float [N,3,S,S] on the device (bicubic resize if needed)."""
        x = torch.from_numpy(np.ascontiguousarray(images)).to(self.device).permute(0, 3, 1, 2).float() / 255.0
        if x.shape[-1] != self.image_size or x.shape[-2] != self.image_size:
            x = torch.nn.functional.interpolate(
                x, size=(self.image_size, self.image_size), mode="bicubic", align_corners=False
            )
        return (x - self.mean) / self.std

    def text_tensor(self, texts: list[str]) -> torch.Tensor:
        """Tokenise with the model's own tokenizer and context length."""
        return self.tokenizer(texts).to(self.device)

    @torch.no_grad()
    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        """Unit-norm image embeddings."""
        self.model.eval()
        with autocast(self.device):
            out = self.model.encode_image(self.image_tensor(images), normalize=True)
        return out.float()

    @torch.no_grad()
    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        """Unit-norm text embeddings."""
        self.model.eval()
        with autocast(self.device):
            out = self.model.encode_text(self.text_tensor(texts), normalize=True)
        return out.float()


def autocast(device: torch.device) -> Any:
    """bf16 autocast on CUDA, a no-op on CPU (CPU results stay exact and deterministic)."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cpu", enabled=False)


def pick_device(requested: str = "auto") -> torch.device:
    """CUDA when there is one (or when asked), else CPU."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(requested)


def register_local_configs() -> None:
    """Make the project's small architectures known to open_clip's own factory."""
    import open_clip

    if "itm-clip-tiny" not in open_clip.list_models():
        open_clip.add_model_config(CONFIG_DIR)


def build_open_clip(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None) -> OpenClipEncoder:
    """open_clip by architecture name: pretrained tag or local weights, else random init.

    `spec.pretrained` is an open_clip tag ('openai', 'laion2b_s34b_b79k') or a path to a
    checkpoint; `checkpoint` (a file this project trained) overrides it. QuickGELU is forced when
    the spec says so: OpenAI's ViT-B-32 weights need it (SugarCrepe issue #7).
    """
    import open_clip

    register_local_configs()
    if spec.arch is None:
        raise ValueError(f"models.{spec.name}: family open_clip needs an `arch`")
    pretrained = None if checkpoint is not None else spec.pretrained
    model, _, _ = open_clip.create_model_and_transforms(
        spec.arch, pretrained=pretrained, force_quick_gelu=spec.quick_gelu, device=device
    )
    if checkpoint is not None:
        state = load_checkpoint(checkpoint)
        model.load_state_dict(state["state_dict"])
    tokenizer = open_clip.get_tokenizer(spec.arch)
    return OpenClipEncoder(model, tokenizer, device)


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load a checkpoint written by the trainers, naming the file when it is not one."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a readable checkpoint ({err})") from err
    if not isinstance(state, dict) or "state_dict" not in state:
        raise ValueError(f"{path}: expected a dict with key 'state_dict' (an itmbench checkpoint)")
    return state


def _build_captioner(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.captioner import build_captioner

    return build_captioner(spec, device, checkpoint)


def _build_option_scorer(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None) -> Any:
    from itmbench.models.option_scorer import build_option_scorer

    return build_option_scorer(spec, device, checkpoint)


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
    "bag_of_words": _build_bag_of_words,
    "pixel_features": _build_pixel_features,
}


def build_encoder(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None) -> DualEncoder:
    """The one factory: a dual encoder for a spec, with trained weights when given."""
    return FAMILIES[spec.family](spec, device, checkpoint)
