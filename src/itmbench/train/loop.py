"""The one training loop of every trainer: a recipe plugs in its batch construction and its loss.

AdamW (no weight decay on gains, biases and the logit scale), cosine schedule with linear
warm-up, checkpoint selection on validation retrieval (or, with `select_on:
hard_negative_accuracy`, on validation hard-negative accuracy as BiVLC selects), seeded; bf16 autocast on CUDA. A killed
run resumes from the state saved after its last finished epoch, exactly: the samples' order and
every draw of an epoch come from a generator seeded by (seed, epoch), and the model, optimiser and
torch RNG states are saved.

A `Recipe` is data: `build(data, cfg) -> BatchSource` makes whatever the trainer needs once per
run (hard negatives, co-caption lists) and then yields batches of sample indices; `loss(emb,
logit_scale, cfg, epoch)` maps the embedded batch to a scalar (the 0-based epoch lets a loss change
with training, e.g. VSE++'s warm-up); `tasks` name the validation retrievals
whose mean R@1 selects the checkpoint (i2t/t2i for image-text trainers, t2t for caption-caption
ones: the tasks the trainer trains).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from itmbench.io import atomic_path, output_set, write_json
from itmbench.metrics.retrieval import recall_at_k
from itmbench.models.registry import build_encoder
from itmbench.models.spec import ModelSpec, autocast
from itmbench.reading import load_torch
from itmbench.scoring.retrieval import first_positive_ranks
from itmbench.train.config import TrainConfig
from itmbench.train.negatives import caption_negatives
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World, read_world
from itmbench.world.scene import Scene

log = logging.getLogger(__name__)

STREAM_EPOCH = 21
TASKS = ("i2t", "t2i", "t2t")


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


def adamw(model: torch.nn.Module, cfg: TrainConfig, fused: bool = True) -> torch.optim.AdamW:
    """The trainers' AdamW over `param_groups`, fused by default: one kernel per step instead of a dozen
    passes over every tensor, the same update rounded differently. `benchmarks/train_step.py` times it
    against `fused=False` (PyTorch's default implementation)."""
    return torch.optim.AdamW(
        param_groups(model, cfg.weight_decay),
        lr=cfg.lr,
        betas=(cfg.beta1, cfg.beta2),
        eps=cfg.eps,
        fused=fused,
    )


# --- data -----------------------------------------------------------------------------------------


@dataclass
class TrainData:
    """The train split as a trainer sees it: one row per train caption, with its image, structure and tokens."""

    images: np.ndarray  # uint8 [N_images, H, W, 3], the world's images (rows of image_table)
    image_row: np.ndarray  # per train caption: its image's row in `images`
    caption_ids: np.ndarray
    image_ids: np.ndarray
    texts: list[str]
    structures: list[CaptionStructure]
    scenes: dict[int, Scene]  # image_id -> scene graph (train images)
    tokens: torch.Tensor  # [N_captions, L] on the CPU
    tokenize: Callable[[list[str]], torch.Tensor]  # the model's tokenizer, CPU tensors out
    max_objects: int  # most objects in a world scene (the image generator's limit)
    # the starting model's unit-norm image embeddings (numpy, CPU) of uint8 images, for a trainer that mines its
    # negatives with it (negclip_aro's nearest images); None where no model is at hand
    encode_images: Callable[[np.ndarray], np.ndarray] | None = None

    @staticmethod
    def from_world(
        world: World, tokenize: Callable[[list[str]], torch.Tensor], source: str, split: str = "train"
    ) -> TrainData:
        """Read a split of a world (the train split; val for its hard negatives); `source` names it in errors."""
        caps = world.caption_table
        train = caps[caps["split"] == split].sort_values("caption_id", kind="stable")
        if len(train) < 2:
            raise ValueError(f"{source}: {len(train)} {split} captions; expected at least 2 (a batch with a negative)")
        row_of = dict(zip(world.image_table["image_id"], range(len(world.image_table))))
        missing = sorted(set(train["image_id"]) - set(row_of))
        if missing:
            raise ValueError(f"{source}: captions of image ids {missing[:5]} that are not in images.parquet")
        scene_rows = world.scene_table[world.scene_table["image_id"].isin(set(train["image_id"]))]
        scenes = {int(i): Scene.from_json(s) for i, s in zip(scene_rows["image_id"], scene_rows["scene"])}
        lacking = sorted(set(train["image_id"]) - set(scenes))
        if lacking:
            raise ValueError(f"{source}: no scene graph for {split} image ids {lacking[:5]} in scenes.parquet")
        structures = []
        for caption_id, text in zip(train["caption_id"], train["structure"]):
            try:
                structures.append(CaptionStructure.from_json(text))
            except (ValueError, KeyError, TypeError) as err:
                raise ValueError(f"{source}: caption {caption_id}: malformed structure JSON ({err})") from err
        texts = train["text"].tolist()
        return TrainData(
            images=np.asarray(world.images),
            image_row=np.array([row_of[i] for i in train["image_id"]], dtype=np.int64),
            caption_ids=train["caption_id"].to_numpy(np.int64),
            image_ids=train["image_id"].to_numpy(np.int64),
            texts=texts,
            structures=structures,
            scenes=scenes,
            tokens=tokenize(texts),
            tokenize=tokenize,
            max_objects=int(world.image_table["n_objects"].max()),
        )

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class HardNegatives:
    """Validation hard negatives: per negative, its positive caption's image (row in `images`), both captions."""

    image_row: np.ndarray
    positives: list[str]
    negatives: list[str]


@dataclass
class ValidationSet:
    """The validation split: its images, its captions and each caption's image (row in `images`)."""

    images: np.ndarray
    texts: list[str]
    caption_image_row: np.ndarray
    hard_negatives: HardNegatives | None = None  # made for `select_on: hard_negative_accuracy`

    def with_hard_negatives(self, world: World, cfg: TrainConfig, source: str) -> ValidationSet:
        """This set plus hard-negative captions of its captions, made as the train negatives (TROHN-Text's recipe)."""
        val = TrainData.from_world(world, lambda texts: torch.zeros(len(texts), 1), source, split="val")
        made = caption_negatives(val.caption_ids, val.image_ids, val.texts, val.structures, val.scenes, cfg)
        if not made:
            raise ValueError(f"{source}: no hard-negative caption of any val caption; select_on: val_r1 instead")
        rows = np.array([n.positive_row for n in made], dtype=np.int64)
        negatives = HardNegatives(self.caption_image_row[rows], [val.texts[r] for r in rows], [n.text for n in made])
        return ValidationSet(self.images, self.texts, self.caption_image_row, negatives)

    @staticmethod
    def from_world(world: World, source: str) -> ValidationSet:
        """Read the val split of a world; `source` names it in errors."""
        caps = world.caption_table
        val = caps[caps["split"] == "val"].sort_values("caption_id", kind="stable")
        if val.empty:
            raise ValueError(f"{source}: no val captions; expected a val split for checkpoint selection")
        row_of = dict(zip(world.image_table["image_id"], range(len(world.image_table))))
        rows = np.array(sorted({row_of[i] for i in val["image_id"]}))
        local = {r: k for k, r in enumerate(rows)}
        return ValidationSet(
            images=np.asarray(world.images)[rows],
            texts=val["text"].tolist(),
            caption_image_row=np.array([local[row_of[i]] for i in val["image_id"]], dtype=np.int64),
        )


@dataclass
class Batch:
    """One step's inputs: the first `n_positive` images and captions are the positive pairs, then extras."""

    n_positive: int
    texts: torch.Tensor  # tokens [T, L]: the positives' captions, then hard-negative captions
    images: np.ndarray | None = None  # uint8 [I, H, W, 3]: the positives' images, then hard-negative images
    partners: torch.Tensor | None = None  # tokens [P, L]: a co-caption of each positive (caption-caption)
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # train caption rows
    negative_rows: np.ndarray | None = None  # rows of the source's negative table, in batch order


@dataclass
class Embedded:
    """A batch's unit-norm embeddings (float32): images, captions and co-captions (None where absent)."""

    n_positive: int
    txt: torch.Tensor
    img: torch.Tensor | None = None
    partner: torch.Tensor | None = None


class BatchSource(Protocol):
    """A trainer's samples, made once per run: how many there are and the batch of any of them."""

    n_samples: int

    def batch(self, idx: np.ndarray, rng: np.random.Generator) -> Batch:
        """The batch of samples `idx` (draws, e.g. a co-caption, come from `rng`)."""
        ...

    def stats(self) -> dict[str, Any]:
        """What was made (counts of negatives by subset...), for the training summary."""
        ...


@dataclass(frozen=True)
class Recipe:
    """A trainer: its batch construction, its loss and the validation tasks that select its checkpoint."""

    name: str
    build: Callable[[TrainData, TrainConfig], BatchSource]
    loss: Callable[[Embedded, torch.Tensor, TrainConfig, int], torch.Tensor]
    tasks: tuple[str, ...] = ("i2t", "t2i")

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown or not self.tasks:
            raise ValueError(f"trainer {self.name}: validation tasks {list(self.tasks)}; expected some of {TASKS}")


# --- validation -----------------------------------------------------------------------------------


def _embed_validation(encoder: Any, val: ValidationSet, images: bool) -> tuple[torch.Tensor | None, torch.Tensor]:
    txt = torch.cat([encoder.encode_texts(val.texts[s : s + 512]) for s in range(0, len(val.texts), 512)])
    if not images:
        return None, txt
    img = torch.cat([encoder.encode_images(val.images[s : s + 256]) for s in range(0, len(val.images), 256)])
    return img, txt


def caption_caption_ranks(txt: torch.Tensor, caption_image_row: np.ndarray) -> np.ndarray:
    """1-based rank of each caption's best co-caption among the other captions (itself excluded; ties pessimistic)."""
    sims = txt @ txt.T
    same = torch.from_numpy(caption_image_row[:, None] == caption_image_row[None, :]).to(sims.device)
    eye = torch.eye(len(txt), dtype=torch.bool, device=sims.device)
    positive = same & ~eye
    if not bool(positive.any(dim=1).all()):
        raise ValueError("caption-caption validation needs at least 2 captions per val image")
    best = sims.masked_fill(~positive, float("-inf")).max(dim=1).values
    above = ((sims >= best[:, None]) & ~positive & ~eye).sum(dim=1)
    return (above + 1).cpu().numpy()


def validation_recalls(encoder: Any, val: ValidationSet, tasks: tuple[str, ...]) -> dict[str, float]:
    """R@1 (%) of each task on the validation split under the original positives (co-captions for t2t)."""
    img, txt = _embed_validation(encoder, val, images=bool({"i2t", "t2i"} & set(tasks)))
    out: dict[str, float] = {}
    if "i2t" in tasks:
        i2t_pos = [np.nonzero(val.caption_image_row == r)[0] for r in range(len(val.images))]
        out["i2t"] = recall_at_k(first_positive_ranks(img, txt, i2t_pos), 1)
    if "t2i" in tasks:
        t2i_pos = [np.array([r]) for r in val.caption_image_row]
        out["t2i"] = recall_at_k(first_positive_ranks(txt, img, t2i_pos), 1)
    if "t2t" in tasks:
        out["t2t"] = recall_at_k(caption_caption_ranks(txt, val.caption_image_row), 1)
    return out


def hard_negative_accuracy(encoder: Any, negatives: HardNegatives, images: np.ndarray) -> float:
    """Share (%) of validation hard negatives whose image scores its caption strictly above the negative caption."""

    def texts(items: list[str]) -> torch.Tensor:
        return torch.cat([encoder.encode_texts(items[s : s + 512]) for s in range(0, len(items), 512)])

    img = torch.cat([encoder.encode_images(images[s : s + 256]) for s in range(0, len(images), 256)])
    img = img[torch.from_numpy(negatives.image_row).to(img.device)]
    margin = (img * texts(negatives.positives)).sum(dim=1) - (img * texts(negatives.negatives)).sum(dim=1)
    return 100.0 * int((margin > 0).sum()) / len(margin)


def validate(
    encoder: Any, val: ValidationSet, tasks: tuple[str, ...], select_on: str
) -> tuple[float, dict[str, float]]:
    """The selection score of a checkpoint and the figures behind it (per-task R@1; hard-negative accuracy)."""
    figures = {f"val_{t}_r1": v for t, v in validation_recalls(encoder, val, tasks).items()}
    mean_r1 = float(np.mean(list(figures.values())))
    if select_on == "val_r1":
        return mean_r1, {"val_r1": mean_r1, **figures}
    if val.hard_negatives is None:
        raise ValueError(f"select_on {select_on!r} needs a validation set with hard negatives")
    accuracy = hard_negative_accuracy(encoder, val.hard_negatives, val.images)
    return accuracy, {"val_r1": mean_r1, **figures, "val_hard_negative_accuracy": accuracy}


# --- the loop -------------------------------------------------------------------------------------


def trainable_model(encoder: Any, spec: ModelSpec) -> torch.nn.Module:
    """The torch module behind an encoder, checked to have what the loop needs (open_clip's interface)."""
    model = getattr(encoder, "model", None)
    needs = ("encode_image", "encode_text", "logit_scale")
    if (
        not isinstance(model, torch.nn.Module)
        or not all(hasattr(model, n) for n in needs)
        or not all(hasattr(encoder, n) for n in ("image_tensor", "text_tensor"))
    ):
        raise ValueError(
            f"models.{spec.name}: trainer {spec.trainer!r} needs a trainable encoder (family open_clip: a torch "
            f"model with {', '.join(needs)}), got family {spec.family!r}"
        )
    return model


def embed_batch(encoder: Any, model: torch.nn.Module, batch: Batch, device: torch.device) -> Embedded:
    """Encode a batch in train mode: images once, captions and co-captions in one text pass."""
    with autocast(device):
        img = None
        if batch.images is not None:
            img = model.encode_image(encoder.image_tensor(batch.images), normalize=True).float()
        tokens = batch.texts if batch.partners is None else torch.cat([batch.texts, batch.partners])
        txt = model.encode_text(tokens.to(device), normalize=True).float()
    partner = None
    if batch.partners is not None:
        txt, partner = txt[: len(batch.texts)], txt[len(batch.texts) :]
    return Embedded(n_positive=batch.n_positive, txt=txt, img=img, partner=partner)


def _config_hash(spec: ModelSpec, cfg: TrainConfig, items_dir: Path, init: str | Path | None = None) -> str:
    """What a resume state must match: the spec, the config, the data and the starting weights (by content)."""
    init_md5 = hashlib.md5(Path(init).read_bytes()).hexdigest() if init is not None else None
    payload = json.dumps(
        {"spec": asdict(spec), "train": asdict(cfg), "items": str(items_dir), "init": init_md5}, sort_keys=True
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def epoch_rng(cfg: TrainConfig, epoch: int) -> np.random.Generator:
    """The generator of an epoch's order and draws: a function of (seed, epoch) only, so resume needs no replay."""
    return np.random.default_rng([cfg.seed, STREAM_EPOCH, epoch])


def run_training(
    recipe: Recipe,
    spec: ModelSpec,
    cfg: TrainConfig,
    items_dir: str | Path,
    out_path: str | Path,
    history_path: str | Path,
    device: torch.device,
    init: str | Path | None = None,
) -> dict[str, Any]:
    """Train a model by a recipe on the world's train split; write the best-on-val checkpoint and the history.

    `init` is a checkpoint to start from (fine-tuning, as TROHN fine-tunes CLIP_COCO); None: random init.
    """
    items_dir, out_path = Path(items_dir), Path(out_path)
    if spec.trainer is not None and spec.trainer != recipe.name:
        raise ValueError(f"models.{spec.name}: trainer {spec.trainer!r} run with the {recipe.name!r} trainer")
    torch.manual_seed(cfg.seed)
    world = read_world(items_dir)
    encoder = build_encoder(spec, device, init)
    model = trainable_model(encoder, spec)
    data = TrainData.from_world(world, lambda texts: encoder.text_tensor(texts).cpu(), str(items_dir))
    data.encode_images = lambda images: encoder.encode_images(images).cpu().numpy()  # the starting weights
    val = ValidationSet.from_world(world, str(items_dir))
    if cfg.select_on == "hard_negative_accuracy":
        val = val.with_hard_negatives(world, cfg, str(items_dir))
    t_build = time.time()
    source = recipe.build(data, cfg)
    build_seconds = round(time.time() - t_build, 2)
    if source.n_samples < 1:
        raise ValueError(f"models.{spec.name}: trainer {recipe.name} made no training samples from {items_dir}")
    key = _config_hash(spec, cfg, items_dir, init)
    return fit(recipe, source, val, encoder, model, spec, cfg, out_path, history_path, device, key, build_seconds)


def fit(
    recipe: Recipe,
    source: BatchSource,
    val: ValidationSet,
    encoder: Any,
    model: torch.nn.Module,
    spec: ModelSpec,
    cfg: TrainConfig,
    out_path: str | Path,
    history_path: str | Path,
    device: torch.device,
    key: str,
    build_seconds: float = 0.0,
) -> dict[str, Any]:
    """The loop of every source: AdamW, cosine with warm-up, best-on-val checkpoint, resume from the last epoch.

    `key` identifies the run (spec, train params, data): a resume file of another run is ignored.
    """
    out_path = Path(out_path)
    steps_per_epoch = max(1, source.n_samples // cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    opt = adamw(model, cfg)
    resume_path = out_path.parent / ".resume.pt"
    state: dict[str, Any] = {"epoch": 0, "history": [], "best_score": -1.0, "best_state": None}
    if resume_path.exists():
        saved = load_torch(resume_path, weights_only=False)
        if saved.get("key") == key:
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            torch.set_rng_state(saved["torch_rng"])
            state = saved["state"]
            log.info("resumed %s from epoch %d", spec.name, state["epoch"])

    if source.n_samples == 0:  # nothing to learn from (TROHN-Img when the LLM kept no negative caption)
        log.warning(
            "%s: no training sample %s; the checkpoint is the starting model, unchanged", spec.name, source.stats()
        )
        score, figures = validate(encoder, val, recipe.tasks, cfg.select_on)
        state.update(best_score=score, best_val_r1=figures["val_r1"], best_epoch=0)
        state["best_state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    for epoch in range(state["epoch"], cfg.epochs if source.n_samples else 0):
        t0 = time.time()
        model.train()
        rng = epoch_rng(cfg, epoch)
        order = rng.permutation(source.n_samples)
        losses, n_pairs = [], 0
        for b in range(steps_per_epoch):
            step = epoch * steps_per_epoch + b
            for group in opt.param_groups:
                group["lr"] = cosine_lr(step, total, cfg.lr, cfg.warmup_steps)
            batch = source.batch(order[b * cfg.batch_size : (b + 1) * cfg.batch_size], rng)
            loss = recipe.loss(embed_batch(encoder, model, batch, device), model.logit_scale, cfg, epoch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            n_pairs += batch.n_positive
        score, figures = validate(encoder, val, recipe.tasks, cfg.select_on)
        seconds = time.time() - t0
        entry = {
            "epoch": epoch + 1,
            "train_loss": float(np.mean(losses)),
            **figures,
            "seconds": round(seconds, 2),
            "pairs_per_s": round(n_pairs / seconds, 1),
        }
        state["history"].append(entry)
        log.info(
            "epoch %d loss %.4f val %s %.2f (%.0f pairs/s)",
            epoch + 1,
            entry["train_loss"],
            cfg.select_on,
            score,
            entry["pairs_per_s"],
        )
        if score > state["best_score"]:
            state["best_score"] = score
            state["best_val_r1"] = figures["val_r1"]
            state["best_state"] = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            state["best_epoch"] = epoch + 1
        state["epoch"] = epoch + 1
        with atomic_path(resume_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
            torch.save(
                {
                    "key": key,
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "state": state,
                },
                fh,
            )
    # the checkpoint and its history appear together or not at all; the resume state goes only after both
    with output_set(files=[out_path, history_path]):
        # saved through a file object, torch names the archive inside "archive": the same training gives the
        # same bytes (saved to a path, it would record the random name of the temp file)
        with atomic_path(out_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
            torch.save(
                {
                    "state_dict": state["best_state"],
                    "spec": asdict(spec),
                    "train": asdict(cfg),
                    "trainer": recipe.name,
                    "best_epoch": state.get("best_epoch"),
                    "val_r1": state.get("best_val_r1"),
                    "val_tasks": list(recipe.tasks),
                    "select_on": cfg.select_on,
                    "val_score": state["best_score"],
                },
                fh,
            )
        summary = {
            "model": spec.name,
            "trainer": recipe.name,
            "best_epoch": state.get("best_epoch"),
            "val_r1": state.get("best_val_r1"),
            "val_tasks": list(recipe.tasks),
            "select_on": cfg.select_on,
            "val_score": state["best_score"],
            "samples": source.stats(),
            "build_seconds": build_seconds,
            "history": state["history"],
        }
        write_json(history_path, summary)
    resume_path.unlink(missing_ok=True)
    return summary
