"""Model registry: a typed spec per model (from params.yaml), one factory, one encoder interface.

Where an open_clip model's weights come from (`ModelSpec.pretrained`, resolved by `resolve_weights`):
- None: random initialisation (the world's models, before training);
- an open_clip pretrained tag of `arch` ('openai', 'laion2b_s34b_b79k'): open_clip downloads it;
- 'hf-hub:OWNER/REPO/FILE' (or 'hf-hub:OWNER/REPO' when the repo holds one checkpoint file): a
  checkpoint file in a Hugging Face repository, fetched with huggingface_hub (BiVLC's CLIP_COCO,
  CLIP_TROHN-Text, CLIP_TROHN-Img under imirandam/);
- an http(s):// or file:// URL: downloaded once into the checkpoint cache (`ITMBENCH_CHECKPOINTS`,
  default ~/.cache/itmbench/checkpoints);
- a local file: an open_clip state dict, or a training checkpoint holding one under 'state_dict'
  (open_clip's trainer, NegCLIP) or 'model_state_dict' (BiVLC's fine-tuning script), with or
  without DistributedDataParallel's 'module.' prefixes.
An `arch` of 'hf-hub:OWNER/REPO' or 'local-dir:PATH' is an open_clip model folder (its
open_clip_config.json and weights), which open_clip itself reads. `quick_gelu` forces QuickGELU:
OpenAI's weights and every model fine-tuned from them (NegCLIP, BiVLC's) need it (SugarCrepe
issue #7: GELU silently changes every score).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np
import torch

from itmbench.params import config_from_section

CONFIG_DIR = Path(__file__).parent / "configs"


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
    upstream: str | None = None  # the model whose item embeddings this one's features are (ffnn)
    options: dict[str, Any] = field(default_factory=dict)  # family-specific settings (see the family's module)

    def __post_init__(self) -> None:
        name = self.name
        if self.family not in FAMILIES:
            raise ValueError(f"models.{name}: unknown family {self.family!r}; expected one of {sorted(FAMILIES)}")
        if self.init is not None and self.trainer is None:
            raise ValueError(f"models.{name}: `init: {self.init}` needs a `trainer` (init is where training starts)")
        if self.init == name:
            raise ValueError(f"models.{name}: `init` names the model itself; expected another trained model")


def model_spec(name: str, entry: Mapping[str, Any]) -> ModelSpec:
    """The spec of a params.yaml `models.<name>` entry, naming unknown keys and families."""
    return config_from_section(ModelSpec, ModelSpec.SECTION, entry, label=f"models.{name}", given={"name": name})


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


CHECKPOINT_KEYS = ("state_dict", "model_state_dict")  # open_clip's trainer / NegCLIP; BiVLC's fine-tuning
HF_FILE = re.compile(r"^hf-hub:(?P<repo>[^/]+/[^/]+)(?:/(?P<file>.+))?$")
WEIGHT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors")


def checkpoint_cache() -> Path:
    """Where downloaded checkpoint files are kept: $ITMBENCH_CHECKPOINTS, else ~/.cache/itmbench/checkpoints."""
    return Path(os.environ.get("ITMBENCH_CHECKPOINTS", Path.home() / ".cache" / "itmbench" / "checkpoints"))


def fetch_url(url: str, cache: Path | None = None) -> Path:
    """Download a URL once into the checkpoint cache (atomically: a killed download leaves nothing)."""
    from torch.hub import download_url_to_file

    from itmbench.io import atomic_path

    cache = cache or checkpoint_cache()
    name = Path(url.split("?")[0]).name or "checkpoint.pt"
    dest = cache / hashlib.sha256(url.encode()).hexdigest()[:16] / name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(dest) as tmp:
            download_url_to_file(url, str(tmp), progress=False)
    return dest


def fetch_hf_file(repo: str, filename: str | None) -> Path:
    """A checkpoint file of a Hugging Face repository (the only weights file there when no name is given)."""
    import huggingface_hub

    if filename is None:
        files = [f for f in huggingface_hub.list_repo_files(repo) if f.endswith(WEIGHT_SUFFIXES)]
        if len(files) != 1:
            raise ValueError(f"hf-hub:{repo}: {len(files)} checkpoint files {files}; expected one, or name it")
        filename = files[0]
    return Path(huggingface_hub.hf_hub_download(repo_id=repo, filename=filename))


def resolve_weights(spec: ModelSpec) -> tuple[str | None, Path | None]:
    """(open_clip pretrained tag, local checkpoint file) of a spec's `pretrained` (at most one is set)."""
    import open_clip

    p = spec.pretrained
    if p is None or spec.arch is None or spec.arch.startswith(("hf-hub:", "local-dir:")):
        return None, None
    if p in open_clip.list_pretrained_tags_by_model(spec.arch):
        return p, None
    hf = HF_FILE.match(p)
    if hf:
        return None, fetch_hf_file(hf["repo"], hf["file"])
    if re.match(r"^(https?|file)://", p):
        return None, fetch_url(p)
    if not Path(p).is_file():
        tags = open_clip.list_pretrained_tags_by_model(spec.arch)
        raise ValueError(
            f"models.{spec.name}: pretrained {p!r} is neither an open_clip tag of {spec.arch} ({tags}), "
            "'hf-hub:OWNER/REPO[/FILE]', a URL, nor an existing checkpoint file"
        )
    return None, Path(p)


def checkpoint_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """The model weights in a checkpoint file: a bare state dict or one under 'state_dict'/'model_state_dict',
    'module.' prefixes (DistributedDataParallel) removed; .safetensors read with safetensors."""
    try:
        if str(path).endswith(".safetensors"):
            from safetensors.torch import load_file

            obj: Any = load_file(str(path))
        else:
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a readable checkpoint ({err})") from err
    if isinstance(obj, dict):
        for key in CHECKPOINT_KEYS:
            if isinstance(obj.get(key), dict):
                obj = obj[key]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(f"{path}: expected a state dict of tensors, bare or under one of {list(CHECKPOINT_KEYS)}")
    if all(k.startswith("module.") for k in obj):
        obj = {k[len("module.") :]: v for k, v in obj.items()}
    return obj


def load_weights(model: torch.nn.Module, path: str | Path, name: str) -> None:
    """Load a checkpoint file's weights into an open_clip model, strictly, naming the file and the mismatch."""
    state = checkpoint_state_dict(path)
    own = model.state_dict()
    if "logit_scale" in state and state["logit_scale"].ndim != own["logit_scale"].ndim:
        state["logit_scale"] = state["logit_scale"].reshape(own["logit_scale"].shape)
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    shapes = [k for k in set(own) & set(state) if own[k].shape != state[k].shape]
    if missing or unexpected or shapes:
        raise ValueError(
            f"models.{name}: {path} does not fit the architecture: missing {missing[:5]}, unexpected "
            f"{unexpected[:5]}, shape mismatch {sorted(shapes)[:5]} (is `arch` the checkpoint's?)"
        )
    model.load_state_dict(state)


def build_open_clip(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None) -> OpenClipEncoder:
    """open_clip by architecture name: weights from `spec.pretrained` (module docstring), else random init.

    `checkpoint` (a file this project trained, or the starting point of a fine-tuning) overrides
    `spec.pretrained`. QuickGELU is forced when the spec says so.
    """
    import open_clip

    register_local_configs()
    if spec.arch is None:
        raise ValueError(f"models.{spec.name}: family open_clip needs an `arch`")
    tag, weights = (None, Path(checkpoint)) if checkpoint is not None else resolve_weights(spec)
    model, _, _ = open_clip.create_model_and_transforms(
        spec.arch, pretrained=tag, force_quick_gelu=spec.quick_gelu, device=device
    )
    if weights is not None:
        load_weights(model, weights, spec.name)
        model.to(device)
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
