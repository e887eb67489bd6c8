"""The captioner's trainer (recipe `coca`): open_clip's CoCa with its CoCaLoss, caption + contrastive.

The optimisation is the dual encoders' (the `train` section: AdamW, cosine with warm-up, epochs,
batch size, seed), so the captioner costs about what a dual encoder costs. The loss is open_clip's
`CoCaLoss`: `caption_loss_weight` x token cross-entropy (teacher forcing) + `contrastive_loss_weight`
x CLIP InfoNCE (open_clip's CoCa defaults 2 and 1, from the model's spec `options`). The checkpoint
kept is the epoch with the best validation score: the mean length-normalised log-likelihood of the
val captions given their own images (the score the captioner is evaluated with). A killed run
resumes from the state saved after its last finished epoch, as the dual encoders' loop does (the
epoch's order comes from (seed, epoch); model, optimiser and torch RNG states are saved).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from itmbench.io import atomic_path, write_json
from itmbench.models.captioner import WordTokenizer, build_captioner
from itmbench.models.spec import ModelSpec, autocast
from itmbench.reading import load_torch
from itmbench.train.config import TrainConfig
from itmbench.train.loop import TrainData, ValidationSet, _config_hash, adamw, cosine_lr, epoch_rng
from itmbench.world.generate import read_world

log = logging.getLogger(__name__)

COCA_OPTIONS = {"caption_loss_weight": 2.0, "contrastive_loss_weight": 1.0}


def coca_options(spec: ModelSpec) -> dict[str, float]:
    """The captioner's loss weights from the spec's options (defaults: open_clip's), naming unknown keys."""
    unknown = sorted(set(spec.options) - set(COCA_OPTIONS))
    if unknown:
        raise ValueError(f"models.{spec.name}.options: unknown keys {unknown}; expected some of {sorted(COCA_OPTIONS)}")
    out = {**COCA_OPTIONS, **spec.options}
    bad = [k for k, v in out.items() if not float(v) >= 0]
    if bad or out["caption_loss_weight"] <= 0:
        raise ValueError(f"models.{spec.name}.options: weights must be >= 0 (caption weight > 0), got {out}")
    return {k: float(v) for k, v in out.items()}


def validation_log_likelihood(scorer: Any, val: ValidationSet) -> float:
    """Mean s(caption, its image) over the val captions."""
    images = val.images[val.caption_image_row]
    return float(np.mean(scorer.log_likelihoods(images, val.texts)))


def train_coca(
    spec: ModelSpec,
    cfg: TrainConfig,
    items_dir: str | Path,
    out_path: str | Path,
    history_path: str | Path,
    device: torch.device,
) -> dict[str, Any]:
    """Train a CoCa captioner on the world's train split; write the best-on-val checkpoint and the history."""
    from open_clip.loss import CoCaLoss

    items_dir, out_path = Path(items_dir), Path(out_path)
    weights = coca_options(spec)
    torch.manual_seed(cfg.seed)
    world = read_world(items_dir)
    train_texts = world.caption_table.loc[world.caption_table["split"] == "train", "text"].tolist()
    import open_clip

    from itmbench.models.openclip import register_local_configs

    register_local_configs()
    cfg_json = open_clip.get_model_config(spec.arch or "")
    if cfg_json is None or "multimodal_cfg" not in cfg_json:
        raise ValueError(f"models.{spec.name}: arch {spec.arch!r} is not a CoCa architecture")
    tokenizer = WordTokenizer.fit(
        train_texts, cfg_json["text_cfg"]["context_length"], cfg_json["text_cfg"]["vocab_size"], str(items_dir)
    )
    scorer = build_captioner(spec, device, tokenizer=tokenizer)
    model = scorer.model
    data = TrainData.from_world(world, lambda texts: tokenizer(texts), str(items_dir))
    val = ValidationSet.from_world(world, str(items_dir))
    loss_fn = CoCaLoss(
        caption_loss_weight=weights["caption_loss_weight"],
        clip_loss_weight=weights["contrastive_loss_weight"],
        pad_id=0,
    )
    steps_per_epoch = max(1, len(data) // cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    opt = adamw(model, cfg)
    history: list[dict[str, Any]] = []
    best: dict[str, Any] = {"score": -np.inf, "state": None, "epoch": None}
    resume_path, key = out_path.parent / ".resume.pt", _config_hash(spec, cfg, items_dir)
    first_epoch = 0
    if resume_path.exists():
        saved = load_torch(resume_path, weights_only=False)
        if saved.get("key") == key:  # a resume file of another run (spec, params, data) is ignored
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            torch.set_rng_state(saved["torch_rng"])
            first_epoch, history, best = saved["epoch"], saved["history"], saved["best"]
            log.info("resumed %s from epoch %d", spec.name, first_epoch)
    for epoch in range(first_epoch, cfg.epochs):
        t0 = time.time()
        model.train()
        order = epoch_rng(cfg, epoch).permutation(len(data))
        losses, caption_losses = [], []
        for b in range(steps_per_epoch):
            for group in opt.param_groups:
                group["lr"] = cosine_lr(epoch * steps_per_epoch + b, total, cfg.lr, cfg.warmup_steps)
            idx = order[b * cfg.batch_size : (b + 1) * cfg.batch_size]
            tokens = data.tokens[idx]
            tokens = tokens[:, : max(2, int((tokens != 0).sum(dim=1).max()))].to(device)
            with autocast(device):
                out = model(scorer.image_tensor(data.images[data.image_row[idx]]), tokens)
                clip_loss, caption_loss = loss_fn(
                    out["image_features"], out["text_features"], out["logits"], out["labels"], out["logit_scale"]
                )
                loss = clip_loss + caption_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            caption_losses.append(float(caption_loss.detach()) / weights["caption_loss_weight"])
        score = validation_log_likelihood(scorer, val)
        seconds = time.time() - t0
        history.append(
            {
                "epoch": epoch + 1,
                "train_loss": float(np.mean(losses)),
                "train_caption_nll": float(np.mean(caption_losses)),
                "val_log_likelihood": score,
                "seconds": round(seconds, 2),
                "pairs_per_s": round(steps_per_epoch * cfg.batch_size / seconds, 1),
            }
        )
        log.info(
            "epoch %d loss %.4f val log-likelihood %.4f (%.1f s)", epoch + 1, history[-1]["train_loss"], score, seconds
        )
        if score > best["score"]:
            best = {
                "score": score,
                "epoch": epoch + 1,
                "state": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            }
        with atomic_path(resume_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
            torch.save(
                {
                    "key": key,
                    "epoch": epoch + 1,
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "history": history,
                    "best": best,
                },
                fh,
            )
    with atomic_path(out_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
        torch.save(
            {
                "state_dict": best["state"],
                "tokenizer": tokenizer.state(),
                "spec": asdict(spec),
                "train": asdict(cfg),
                "trainer": "coca",
                "best_epoch": best["epoch"],
                "val_log_likelihood": best["score"],
            },
            fh,
        )
    summary = {
        "model": spec.name,
        "trainer": "coca",
        "best_epoch": best["epoch"],
        "val_log_likelihood": best["score"],
        "loss_weights": weights,
        "vocabulary": len(tokenizer.vocab),
        "history": history,
    }
    write_json(history_path, summary)
    resume_path.unlink(missing_ok=True)
    return summary
