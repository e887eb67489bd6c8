"""CLIP-style contrastive training with in-batch negatives (BiVLC's CLIP_COCO recipe, scaled down).

AdamW (no weight decay on gains, biases and the logit scale), cosine schedule with linear
warm-up, checkpoint selection on validation retrieval, seeded; bf16 autocast on CUDA. A killed
run resumes from the state saved after its last finished epoch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from itmbench.io import atomic_path, write_json
from itmbench.metrics.retrieval import recall_at_k
from itmbench.models.registry import ModelSpec, OpenClipEncoder, autocast, build_encoder
from itmbench.scoring.retrieval import first_positive_ranks
from itmbench.world.generate import read_world

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    """Training hyperparameters (params.yaml section `train`)."""

    epochs: int = 6
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.98
    eps: float = 1e-6
    warmup_steps: int = 50
    seed: int = 0

    @staticmethod
    def from_dict(d: dict[str, Any]) -> TrainConfig:
        """Build from the params section, naming unknown keys."""
        known = {f.name for f in fields(TrainConfig)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"train params: unknown keys {sorted(unknown)}; expected some of {sorted(known)}")
        return TrainConfig(**d)


def cosine_lr(step: int, total: int, base: float, warmup: int) -> float:
    """Linear warm-up to `base`, then cosine decay to zero at `total` steps."""
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base * (1.0 + math.cos(math.pi * min(1.0, progress)))


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Decay matrices only: gains, biases, embeddings-as-scales and logit_scale get none (CLIP)."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim < 2 or "logit_scale" in name or "bias" in name or name.endswith(("ln.weight", ".g")):
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def clip_loss(img: torch.Tensor, txt: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    """Symmetric InfoNCE over the batch: each image's own caption against the others, and back."""
    logits = logit_scale.exp().clamp(max=100) * img @ txt.T
    labels = torch.arange(len(img), device=img.device)
    return 0.5 * (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels))


def validation_r1(
    encoder: OpenClipEncoder, images: np.ndarray, captions: list[str], caption_image_row: np.ndarray
) -> float:
    """Mean of i2t and t2i R@1 on the validation split under original positives."""
    img = torch.cat([encoder.encode_images(images[s : s + 256]) for s in range(0, len(images), 256)])
    txt = torch.cat([encoder.encode_texts(captions[s : s + 512]) for s in range(0, len(captions), 512)])
    i2t_pos = [np.nonzero(caption_image_row == r)[0] for r in range(len(images))]
    t2i_pos = [np.array([r]) for r in caption_image_row]
    i2t = recall_at_k(first_positive_ranks(img, txt, i2t_pos), 1)
    t2i = recall_at_k(first_positive_ranks(txt, img, t2i_pos), 1)
    return 0.5 * (i2t + t2i)


def _config_hash(spec: ModelSpec, cfg: TrainConfig, items_dir: Path) -> str:
    payload = json.dumps({"spec": asdict(spec), "train": asdict(cfg), "items": str(items_dir)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def train_contrastive(
    spec: ModelSpec,
    cfg: TrainConfig,
    items_dir: str | Path,
    out_path: str | Path,
    history_path: str | Path,
    device: torch.device,
) -> dict[str, Any]:
    """Train an open_clip model on the world's train split; write the best-on-val checkpoint."""
    items_dir, out_path = Path(items_dir), Path(out_path)
    torch.manual_seed(cfg.seed)
    world = read_world(items_dir)
    encoder = build_encoder(spec, device)
    if not isinstance(encoder, OpenClipEncoder):
        raise ValueError(f"models.{spec.name}: contrastive training needs family open_clip, got {spec.family}")
    model = encoder.model
    images = np.asarray(world.images)
    caps = world.caption_table
    row_of = dict(zip(world.image_table["image_id"], range(len(world.image_table))))
    train = caps[caps["split"] == "train"]
    val = caps[caps["split"] == "val"]
    train_img_rows = np.array([row_of[i] for i in train["image_id"]])
    train_tokens = encoder.text_tensor(train["text"].tolist()).cpu()
    val_rows = np.array(sorted({row_of[i] for i in val["image_id"]}))
    val_local = {r: k for k, r in enumerate(val_rows)}
    val_caption_rows = np.array([val_local[row_of[i]] for i in val["image_id"]])

    steps_per_epoch = max(1, len(train) // cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    opt = torch.optim.AdamW(param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps)
    resume_path = out_path.parent / ".resume.pt"
    key = _config_hash(spec, cfg, items_dir)
    state = {"epoch": 0, "history": [], "best_score": -1.0, "best_state": None}
    if resume_path.exists():
        saved = torch.load(resume_path, map_location="cpu", weights_only=False)
        if saved.get("key") == key:
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            torch.set_rng_state(saved["torch_rng"])
            state = saved["state"]
            log.info("resumed %s from epoch %d", spec.name, state["epoch"])
    gen = torch.Generator().manual_seed(cfg.seed)
    for _ in range(state["epoch"]):  # replay the shuffles already consumed, so resume is exact
        torch.randperm(len(train), generator=gen)

    for epoch in range(state["epoch"], cfg.epochs):
        t0 = time.time()
        model.train()
        order = torch.randperm(len(train), generator=gen)
        losses = []
        for b in range(steps_per_epoch):
            step = epoch * steps_per_epoch + b
            for group in opt.param_groups:
                group["lr"] = cosine_lr(step, total, cfg.lr, cfg.warmup_steps)
            idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size].numpy()
            x = encoder.image_tensor(images[train_img_rows[idx]])
            t = train_tokens[idx].to(device)
            with autocast(device):
                img = model.encode_image(x, normalize=True)
                txt = model.encode_text(t, normalize=True)
                loss = clip_loss(img.float(), txt.float(), model.logit_scale)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        score = validation_r1(encoder, images[val_rows], val["text"].tolist(), val_caption_rows)
        entry = {
            "epoch": epoch + 1,
            "train_loss": float(np.mean(losses)),
            "val_r1": score,
            "seconds": round(time.time() - t0, 2),
            "pairs_per_s": round(steps_per_epoch * cfg.batch_size / (time.time() - t0), 1),
        }
        state["history"].append(entry)
        log.info(
            "epoch %d loss %.4f val R@1 %.2f (%.0f pairs/s)",
            epoch + 1,
            entry["train_loss"],
            score,
            entry["pairs_per_s"],
        )
        if score > state["best_score"]:
            state["best_score"] = score
            state["best_state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            state["best_epoch"] = epoch + 1
        state["epoch"] = epoch + 1
        with atomic_path(resume_path, suffix=".pt") as tmp:
            torch.save(
                {
                    "key": key,
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "state": state,
                },
                tmp,
            )
    with atomic_path(out_path, suffix=".pt") as tmp:
        torch.save(
            {
                "state_dict": state["best_state"],
                "spec": asdict(spec),
                "train": asdict(cfg),
                "best_epoch": state.get("best_epoch"),
                "val_r1": state["best_score"],
            },
            tmp,
        )
    summary = {
        "model": spec.name,
        "best_epoch": state.get("best_epoch"),
        "val_r1": state["best_score"],
        "history": state["history"],
    }
    write_json(history_path, summary)
    resume_path.unlink(missing_ok=True)
    return summary
