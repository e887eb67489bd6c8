"""A small text-to-image diffusion model of the world, trained with diffusers: BiVLC's SDXL-DPO at world scale.

BiVLC's step 2 prompts a text-to-image model with each hard-negative caption and keeps 4 images.
In the world the model is trained here, on the world's TRAIN images and their captions, so that its
images come from the same pixels and grammar as the benchmark's, and have the failure modes of a
real generator (blur, missing or merged objects, wrong bindings) instead of the RenderGenerator's
simulated ones. A generated image has no scene graph (`GeneratedImage.scene` is None): BiVLC's
annotators then read it with `itmbench.negatives.recognizer`.

Model (every size a `DiffusionConfig` field):
- pixel-space `UNet2DConditionModel` at `resolution` = 32 px: the world's 64 px images are
  area-downsampled by 2 for training and generated images are bilinearly upsampled to the world's
  size (`to_model_space` / `to_pixels`); block channels (32, 64, 64), one layer per block,
  cross-attention at 16 and 8 px, about 1.7M parameters;
- text encoder: a word-level transformer over the world's vocabulary (the words of the training
  captions, `build_vocabulary`; 2 layers, width 64, 4 heads, learned positions, at most
  `max_tokens` = 20 tokens with the <bos> token), trained JOINTLY with the UNet from scratch. The
  project's open_clip tiny text tower was the alternative; a frozen one trained for retrieval
  would leak the evaluated models' text representation into the negatives, and joint training of
  a 0.1M-parameter encoder costs nothing at this scale;
- training: DDPM noise schedule (1000 steps, `squaredcos_cap_v2`), MSE on the UNet's prediction of
  the CLEAN image (`prediction_type` = 'sample'). Measured on the default world at the default
  budget (160 steps): epsilon prediction (the usual choice, and SDXL's) leaves visible noise in
  every sample after DDIM, v-prediction some, x0-prediction none (blurry but clean shapes): at a
  few hundred steps the error of an x0 prediction shows as blur, that of an epsilon prediction as
  noise that the last steps amplify;
  each step takes `batch_size` images in a per-epoch seeded order and one of each image's captions
  at random; the caption is dropped (replaced by the empty caption, <bos> only) with `p_uncond` =
  0.1 so the model also learns the unconditional score (classifier-free guidance); AdamW (lr 1e-3,
  wd 0.01), linear warm-up then cosine decay, gradient norm clipped at 1. No EMA: at a few hundred
  steps an EMA of the weights lags the model. No augmentation: a flip would break left/right.
- sampling: DDIM, eta 0, `num_inference_steps` = 25, classifier-free guidance `guidance_scale` = 3
  (BiVLC used 5 with SDXL; on the default model 5 adds spurious blobs and 1-3 differ little),
  x0 clipped to [-1, 1].

Default training: `train_steps` = 160 steps of 32 images (5,120 images, about 2.6 epochs of the
default world): about 3 minutes at the ~30 images/s such a UNet trains on 2 free CPU cores. That
is a smoke-scale model: it draws world-like images (clean grey background, one to four coloured
blobs of the world's sizes) that the caption barely steers yet, so nearly all of its candidates
fail the recognizer and BiVLC keeps few instances; for faithful negatives raise `train_steps` (and
the channels) on a GPU.

Determinism and resumption: the weights are initialised from `seed`; step s draws its noise,
timesteps, captions and guidance drop-outs from a generator seeded by (seed, s), and its images
from the (seed, epoch) permutation, so training is a pure function of (config, world) and a run
resumed from `checkpoint.pt` (written every `checkpoint_every` steps) continues exactly where the
interrupted one was. Generation seeds each caption's candidates from the caption text
(`prompt_seed`), so a caption gets the same images whatever else is generated, in any run; the
numpy rng that BiVLC's construction passes is unused.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from itmbench.io import output_set, write_bytes, write_json
from itmbench.negatives.generator import GeneratedImage
from itmbench.params import make_config
from itmbench.reading import load_torch
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import read_world
from itmbench.world.scene import Scene

PAD, UNK, BOS = "<pad>", "<unk>", "<bos>"
SPECIAL_TOKENS: tuple[str, ...] = (PAD, UNK, BOS)
MODEL_FILE, HISTORY_FILE, CHECKPOINT_FILE = "model.pt", "history.json", "checkpoint.pt"
_WORD = re.compile(r"[a-z]+")
PREDICTION_TYPES = ("epsilon", "v_prediction", "sample")


@dataclass(frozen=True)
class DiffusionConfig:
    """The diffusion section of params (defaults: the module docstring's decisions)."""

    SECTION: ClassVar[str] = "diffusion"

    seed: int
    split: str
    resolution: int
    block_out_channels: tuple[int, ...]
    layers_per_block: int
    attention_head_dim: int
    norm_num_groups: int
    text_width: int
    text_layers: int
    text_heads: int
    max_tokens: int
    train_steps: int
    batch_size: int
    lr: float
    weight_decay: float
    warmup_steps: int
    num_train_timesteps: int
    beta_schedule: str
    prediction_type: str
    p_uncond: float
    checkpoint_every: int
    log_every: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "block_out_channels", tuple(int(c) for c in self.block_out_channels))
        if len(self.block_out_channels) < 2:
            raise ValueError(f"diffusion params: block_out_channels {self.block_out_channels}; expected >= 2 widths")
        if self.resolution % 2 ** (len(self.block_out_channels) - 1):
            raise ValueError(
                f"diffusion params: resolution {self.resolution} must be divisible by "
                f"2**{len(self.block_out_channels) - 1} (one halving per extra block)"
            )
        bad = [c for c in self.block_out_channels if c % self.norm_num_groups]
        if bad:
            raise ValueError(f"diffusion params: widths {bad} not divisible by norm_num_groups={self.norm_num_groups}")
        if self.text_width % self.text_heads:
            raise ValueError(f"diffusion params: text_width {self.text_width} not divisible by text_heads")
        if self.prediction_type not in PREDICTION_TYPES:
            raise ValueError(
                f"diffusion params: prediction_type {self.prediction_type!r}; expected one of {PREDICTION_TYPES}"
            )
        if not 0.0 <= self.p_uncond <= 1.0:
            raise ValueError(f"diffusion params: p_uncond = {self.p_uncond}; expected a probability")
        for name in ("train_steps", "batch_size", "checkpoint_every", "log_every", "text_layers", "max_tokens"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"diffusion params: {name} = {getattr(self, name)}; expected a positive integer")

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (tuples as lists), stored in checkpoints and histories."""
        d = asdict(self)
        d["block_out_channels"] = list(self.block_out_channels)
        return d


# --- text ----------------------------------------------------------------------------------------------


def caption_words(text: str) -> list[str]:
    """The lower-case words of a caption (punctuation dropped): the tokens of the world's text encoder."""
    return _WORD.findall(text.lower())


def build_vocabulary(texts: Sequence[str]) -> tuple[str, ...]:
    """Special tokens, then every word of `texts` in sorted order (deterministic ids)."""
    return SPECIAL_TOKENS + tuple(sorted({w for t in texts for w in caption_words(t)}))


def encode_captions(texts: Sequence[str], vocab: Sequence[str], max_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids [B, max_tokens] (<bos> first, unknown words -> <unk>, truncated) and a keep-mask [B, max_tokens]."""
    index = {w: i for i, w in enumerate(vocab)}
    ids = torch.full((len(texts), max_tokens), index[PAD], dtype=torch.long)
    for row, text in enumerate(texts):
        tokens = [index[BOS]] + [index.get(w, index[UNK]) for w in caption_words(text)][: max_tokens - 1]
        ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
    return ids, ids != index[PAD]


class CaptionEncoder(nn.Module):
    """Word-level transformer: token ids [B, L] -> states [B, L, width] that the UNet cross-attends to."""

    def __init__(self, vocab_size: int, width: int, layers: int, heads: int, max_tokens: int) -> None:
        super().__init__()
        self.token = nn.Embedding(vocab_size, width)
        self.position = nn.Parameter(torch.zeros(max_tokens, width))
        nn.init.normal_(self.position, std=0.02)
        layer = nn.TransformerEncoderLayer(
            width, heads, dim_feedforward=4 * width, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """Encode; padded positions are masked out of self-attention (and of the UNet's cross-attention)."""
        x = self.token(ids) + self.position[: ids.shape[1]]
        return self.norm(self.encoder(x, src_key_padding_mask=~keep))


# --- pixels ----------------------------------------------------------------------------------------------


def to_model_space(images: np.ndarray, resolution: int) -> torch.Tensor:
    """uint8 [N, H, W, 3] -> float [N, 3, r, r] in [-1, 1], area-downsampled to the model's resolution."""
    x = torch.as_tensor(np.asarray(images), dtype=torch.float32).permute(0, 3, 1, 2) / 127.5 - 1.0
    if x.shape[-1] != resolution:
        x = F.interpolate(x, size=(resolution, resolution), mode="area")
    return x


def to_pixels(x: torch.Tensor, image_size: int) -> np.ndarray:
    """float [N, 3, r, r] in [-1, 1] -> uint8 [N, S, S, 3], bilinearly upsampled to the world's image size."""
    x = x.detach().float().cpu().clamp(-1.0, 1.0)
    if x.shape[-1] != image_size:
        x = F.interpolate(x, size=(image_size, image_size), mode="bilinear", align_corners=False)
    return ((x + 1.0) * 127.5).round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy()


# --- model ---------------------------------------------------------------------------------------------


def unet_config(cfg: DiffusionConfig) -> dict[str, Any]:
    """Keyword arguments of the pixel-space UNet2DConditionModel: plain blocks at full size, cross-attention below."""
    n = len(cfg.block_out_channels)
    return {
        "sample_size": cfg.resolution,
        "in_channels": 3,
        "out_channels": 3,
        "block_out_channels": list(cfg.block_out_channels),
        "layers_per_block": cfg.layers_per_block,
        "down_block_types": ["DownBlock2D"] + ["CrossAttnDownBlock2D"] * (n - 1),
        "up_block_types": ["CrossAttnUpBlock2D"] * (n - 1) + ["UpBlock2D"],
        "cross_attention_dim": cfg.text_width,
        "attention_head_dim": cfg.attention_head_dim,
        "norm_num_groups": cfg.norm_num_groups,
    }


def noise_scheduler_config(cfg: DiffusionConfig) -> dict[str, Any]:
    """The DDPM training schedule (DDIM samples with the same betas)."""
    return {
        "num_train_timesteps": cfg.num_train_timesteps,
        "beta_schedule": cfg.beta_schedule,
        "prediction_type": cfg.prediction_type,
        "clip_sample": True,
    }


class WorldDiffusion(nn.Module):
    """The trained pair (text encoder, UNet) with its vocabulary: encode captions, predict noise, sample."""

    def __init__(self, cfg: DiffusionConfig, vocab: Sequence[str]) -> None:
        super().__init__()
        from diffusers import UNet2DConditionModel

        self.cfg = cfg
        self.vocab = tuple(vocab)
        self.text = CaptionEncoder(len(self.vocab), cfg.text_width, cfg.text_layers, cfg.text_heads, cfg.max_tokens)
        self.unet = UNet2DConditionModel(**unet_config(cfg))

    def encode(self, texts: Sequence[str], device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
        """Caption states [B, L, D] and keep-mask [B, L] on `device`."""
        ids, keep = encode_captions(texts, self.vocab, self.cfg.max_tokens)
        ids, keep = ids.to(device), keep.to(device)
        return self.text(ids, keep), keep

    def predict(self, x: torch.Tensor, t: torch.Tensor, states: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
        """The UNet's prediction (noise, velocity or clean image: `prediction_type`) for noisy x at timesteps t."""
        return self.unet(x, t, encoder_hidden_states=states, encoder_attention_mask=keep.float()).sample

    @torch.no_grad()
    def sample(
        self,
        text: str,
        n: int,
        seed: int,
        guidance_scale: float = 3.0,
        num_inference_steps: int = 25,
    ) -> torch.Tensor:
        """n images [n, 3, r, r] in [-1, 1] of one caption by DDIM (eta 0) from noise seeded by `seed`."""
        from diffusers import DDIMScheduler

        device = next(self.parameters()).device
        r = self.cfg.resolution
        generator = torch.Generator().manual_seed(seed)
        x = torch.randn((n, 3, r, r), generator=generator).to(device)
        scheduler = DDIMScheduler(**noise_scheduler_config(self.cfg))
        scheduler.set_timesteps(num_inference_steps)
        cond, cond_keep = self.encode([text] * n, device)
        uncond, uncond_keep = self.encode([""] * n, device)
        states, keep = torch.cat([uncond, cond]), torch.cat([uncond_keep, cond_keep])
        for t in scheduler.timesteps:
            eps = self.predict(torch.cat([x, x]), t.expand(2 * n).to(device), states, keep)
            e_uncond, e_cond = eps.chunk(2)
            eps = e_uncond + guidance_scale * (e_cond - e_uncond)
            x = scheduler.step(eps, t, x, eta=0.0).prev_sample
        return x

    def state(self) -> dict[str, Any]:
        """Everything needed to rebuild the model: config, vocabulary and weights."""
        return {
            "config": self.cfg.to_dict(),
            "vocab": list(self.vocab),
            "text": self.text.state_dict(),
            "unet": self.unet.state_dict(),
        }

    @staticmethod
    def from_state(state: Mapping[str, Any]) -> WorldDiffusion:
        """Rebuild from `state()`."""
        model = WorldDiffusion(make_config(DiffusionConfig, state["config"]), state["vocab"])
        model.text.load_state_dict(state["text"])
        model.unet.load_state_dict(state["unet"])
        return model


def load_diffusion(path: str | Path, device: str = "cpu") -> WorldDiffusion:
    """Load a model written by `train_diffusion` (its model.pt, or the folder holding it), in eval mode."""
    path = Path(path)
    if path.is_dir():
        path = path / MODEL_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; expected a world diffusion model (run train_diffusion)")
    state = load_torch(path)
    missing = [k for k in ("config", "vocab", "text", "unet") if k not in state]
    if missing:
        raise ValueError(f"{path}: missing keys {missing}; expected a model.pt written by train_diffusion")
    return WorldDiffusion.from_state(state).to(device).eval()


def write_torch(path: str | Path, obj: Any) -> None:
    """torch.save atomically with deterministic bytes (saving to the temp file would record its random name)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    write_bytes(path, buffer.getvalue())


# --- seeds -----------------------------------------------------------------------------------------------


def prompt_seed(seed: int, text: str, index: int = 0) -> int:
    """A 63-bit seed from (seed, prompt text, index): stable across runs, machines and Python hash seeds."""
    digest = hashlib.sha256(f"{int(seed)}\x1f{index}\x1f{text}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & (2**63 - 1)


def _step_generator(seed: int, step: int) -> torch.Generator:
    """The torch generator of one training step (noise, timesteps, captions, drop-outs)."""
    return torch.Generator().manual_seed(int(np.random.SeedSequence([seed, 7, step]).generate_state(1, np.uint64)[0]))


def _batch_indices(seed: int, step: int, batch_size: int, n: int) -> np.ndarray:
    """Image rows of a step: consecutive slices of per-epoch permutations seeded by (seed, epoch)."""
    start = step * batch_size
    out = []
    while len(out) < batch_size:
        epoch, offset = divmod(start + len(out), n)
        order = np.random.default_rng([seed, 11, epoch]).permutation(n)
        out.extend(order[offset : offset + batch_size - len(out)].tolist())
    return np.asarray(out, dtype=np.int64)


# --- training ----------------------------------------------------------------------------------------------


def _lr_lambda(cfg: DiffusionConfig):
    """Linear warm-up to the peak, then cosine decay to zero at train_steps."""

    def factor(step: int) -> float:
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        span = max(1, cfg.train_steps - cfg.warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, (step - cfg.warmup_steps) / span)))

    return factor


def _training_data(items_dir: str | Path, cfg: DiffusionConfig) -> tuple[np.ndarray, list[list[str]], list[str]]:
    """Images of the split (uint8), each image's caption texts, and all caption texts of the split."""
    world = read_world(items_dir)
    images = world.image_table[world.image_table["split"] == cfg.split]
    if images.empty:
        raise ValueError(f"{items_dir}: no images in split {cfg.split!r}; expected a world items folder with it")
    ids = images["image_id"].to_numpy(np.int64)
    caps = world.caption_table[world.caption_table["split"] == cfg.split]
    by_image: dict[int, list[str]] = {}
    for image_id, text in zip(caps["image_id"].to_numpy().tolist(), caps["text"]):
        by_image.setdefault(int(image_id), []).append(str(text))
    missing = [int(i) for i in ids if int(i) not in by_image]
    if missing:
        raise ValueError(f"{items_dir}: images {missing[:5]} have no caption; expected >= 1 caption per image")
    pixels = np.asarray(world.images[ids])
    return pixels, [by_image[int(i)] for i in ids], [str(t) for t in caps["text"]]


def _checkpoint_matches(state: Mapping[str, Any], cfg: DiffusionConfig, vocab: tuple[str, ...]) -> bool:
    """Whether a checkpoint was written by the same configuration and vocabulary (else it is not resumed)."""
    return state.get("config") == cfg.to_dict() and tuple(state.get("vocab", ())) == vocab


def train_diffusion(
    items_dir: str | Path,
    cfg: DiffusionConfig,
    out_dir: str | Path,
    device: str = "cpu",
    max_steps_this_run: int | None = None,
) -> dict[str, Any]:
    """Train the world diffusion model on the split's images; write model.pt and history.json; return the history.

    Resumes from `out_dir/checkpoint.pt` when it was written by the same config and vocabulary.
    `max_steps_this_run` stops after that many steps (writing a checkpoint), for time-sliced jobs; the
    model and history are written only when training reaches `train_steps`.
    """
    from diffusers import DDPMScheduler

    pixels, captions_of, all_texts = _training_data(items_dir, cfg)  # the inputs first: no folder when they fail
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = build_vocabulary(all_texts)
    x_all = to_model_space(pixels, cfg.resolution)
    tokenised = {t: i for i, t in enumerate(sorted(set(all_texts)))}
    texts = sorted(tokenised, key=tokenised.get)
    text_ids, text_keep = encode_captions(texts, vocab, cfg.max_tokens)
    caption_rows = [[tokenised[t] for t in caps] for caps in captions_of]
    empty_ids, empty_keep = encode_captions([""], vocab, cfg.max_tokens)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = WorldDiffusion(cfg, vocab)
    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    lr_schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, _lr_lambda(cfg))
    noise_scheduler = DDPMScheduler(**noise_scheduler_config(cfg))
    history: dict[str, Any] = {"config": cfg.to_dict(), "log": [], "resumed_at": []}
    step = 0
    ckpt_path = out / CHECKPOINT_FILE
    if ckpt_path.exists():
        state = load_torch(ckpt_path)
        if _checkpoint_matches(state, cfg, vocab):
            model.text.load_state_dict(state["text"])
            model.unet.load_state_dict(state["unet"])
            optimizer.load_state_dict(state["optimizer"])
            lr_schedule.load_state_dict(state["lr_schedule"])
            history = json.loads(state["history"])
            step = int(state["step"])
            history["resumed_at"].append(step)

    n_images = len(x_all)
    losses: list[float] = history.pop("pending_losses", [])  # losses since the last log line, across a resume
    started = time.perf_counter()
    steps_run = 0
    while step < cfg.train_steps and (max_steps_this_run is None or steps_run < max_steps_this_run):
        g = _step_generator(cfg.seed, step)
        rows = _batch_indices(cfg.seed, step, cfg.batch_size, n_images)
        pick = torch.randint(0, 2**31 - 1, (len(rows),), generator=g).numpy()
        cap = np.asarray([caption_rows[r][p % len(caption_rows[r])] for r, p in zip(rows, pick)], dtype=np.int64)
        drop = torch.rand(len(rows), generator=g) < cfg.p_uncond
        ids = torch.where(drop[:, None], empty_ids, text_ids[cap])
        keep = torch.where(drop[:, None], empty_keep, text_keep[cap])
        x0 = x_all[rows]
        noise = torch.randn(x0.shape, generator=g)
        t = torch.randint(0, cfg.num_train_timesteps, (len(rows),), generator=g)
        xt = noise_scheduler.add_noise(x0, noise, t)
        ids, keep, xt, t, noise = (v.to(device) for v in (ids, keep, xt, t, noise))
        target = {"epsilon": noise, "sample": x0.to(device)}.get(cfg.prediction_type)
        if target is None:
            target = noise_scheduler.get_velocity(x0.to(device), noise, t)
        pred = model.predict(xt, t, model.text(ids, keep), keep)
        loss = F.mse_loss(pred, target)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        lr_schedule.step()
        losses.append(float(loss.detach()))
        step += 1
        steps_run += 1
        if step % cfg.log_every == 0 or step == cfg.train_steps:
            history["log"].append(
                {"step": step, "loss": float(np.mean(losses)), "lr": float(lr_schedule.get_last_lr()[0])}
            )
            losses = []
        if step % cfg.checkpoint_every == 0 and step < cfg.train_steps:
            _save_checkpoint(ckpt_path, model, optimizer, lr_schedule, step, {**history, "pending_losses": losses})
    wall = time.perf_counter() - started
    history.setdefault("timing", []).append(
        {"steps": steps_run, "wall_s": wall, "images_per_s": steps_run * cfg.batch_size / wall if wall > 0 else None}
    )
    if step < cfg.train_steps:  # stopped by max_steps_this_run: leave a checkpoint to resume from
        _save_checkpoint(ckpt_path, model, optimizer, lr_schedule, step, {**history, "pending_losses": losses})
        return history
    history["n_parameters"] = {
        "unet": sum(p.numel() for p in model.unet.parameters()),
        "text": sum(p.numel() for p in model.text.parameters()),
    }
    history["train_images"] = int(n_images)
    with output_set(files=[out / MODEL_FILE, out / HISTORY_FILE]):  # together; the checkpoint goes after both
        write_torch(out / MODEL_FILE, model.state())
        write_json(out / HISTORY_FILE, history)
    ckpt_path.unlink(missing_ok=True)
    return history


def _save_checkpoint(
    path: Path,
    model: WorldDiffusion,
    optimizer: torch.optim.Optimizer,
    lr_schedule: torch.optim.lr_scheduler.LRScheduler,
    step: int,
    history: dict[str, Any],
) -> None:
    """Write the resumable state atomically (weights, optimiser, schedule, step, history so far)."""
    state = {
        **model.state(),
        "optimizer": optimizer.state_dict(),
        "lr_schedule": lr_schedule.state_dict(),
        "step": step,
        "history": json.dumps(history),
    }
    write_torch(path, state)


# --- generator -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffusionGenerator:
    """BiVLC's step-2 generator in the world: n DDIM samples of the caption, seeded by its text, scene=None."""

    model_path: str
    image_size: int = 64
    guidance_scale: float = 3.0
    num_inference_steps: int = 25
    seed: int = 0
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.num_inference_steps < 1:
            raise ValueError(f"DiffusionGenerator: num_inference_steps = {self.num_inference_steps}; expected >= 1")
        if self.guidance_scale < 0:
            raise ValueError(f"DiffusionGenerator: guidance_scale = {self.guidance_scale}; expected >= 0")

    @staticmethod
    def from_params(
        model_path: str,
        image_size: int = 64,
        guidance_scale: float = 3.0,
        num_inference_steps: int = 25,
        seed: int = 0,
        device: str = "cpu",
        **_render_params: Any,
    ) -> DiffusionGenerator:
        """Registry factory: BiVLC passes the render generator's params too (noise, p_*), which do not apply here."""
        return DiffusionGenerator(model_path, image_size, guidance_scale, num_inference_steps, seed, device)

    @cached_property
    def model(self) -> WorldDiffusion:
        """The trained model, loaded on first use."""
        return load_diffusion(self.model_path, self.device)

    def images(self, text: str, n: int) -> np.ndarray:
        """uint8 [n, S, S, 3]: the n candidates of a caption (the same in every run)."""
        x = self.model.sample(text, n, prompt_seed(self.seed, text), self.guidance_scale, self.num_inference_steps)
        return to_pixels(x, self.image_size)

    def generate(
        self,
        structure: CaptionStructure,
        source_scene: Scene,
        n: int,
        rng: np.random.Generator,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """n candidates of the caption `text` (structure, source scene and rng are unused: only the text prompts)."""
        if text is None:
            raise ValueError("DiffusionGenerator: no caption text; a text-to-image model is prompted with the text")
        return [GeneratedImage(None, pixels=image) for image in self.images(text, n)]
