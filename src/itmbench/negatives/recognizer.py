"""A recognizer that reads world scenes from pixels: BiVLC's simulated annotator for images without a scene graph.

BiVLC's steps 3 and 4 ask people whether a generated image fits a caption. The world's simulated
annotators read the candidate's scene graph (`benchmarks.bivlc`), which a text-to-image model
(`negatives.diffusion`, SDXL) does not give. This module trains a small CNN on RENDERED world
scenes, with labels from their scene graphs, that reads the objects back from pixels; its
`judge(caption_structure, image)` is the probability that the caption fits the image, and its
`read_scene(image)` is the scene graph it sees (the most probable reading), which can stand in for
the graph where the construction and its audit need one.

Model (every size a `RecognizerConfig` field): a grid detector in the manner of YOLO. Three
stride-2 convolutions (the first one the stem: a 64 px world image is simple enough to read at
32 px, and it costs a third) bring the image to an 8 x 8 grid of 8 px cells (`image_size` / 8),
followed by 3x3 convolutions (receptive field 60 px at the grid, more than a large object); per cell it
predicts whether an object's centre lies in the cell, the object's shape (5), colour (7) and size
(2), and the centre's offset within the cell. World objects are at least 0.2 of the side apart
(1.6 cells), so a cell never holds two centres and the reading is a set prediction without
matching. Loss: binary cross-entropy of objectness on every cell, cross-entropy of each attribute
and squared error of the offsets on the cells that hold an object.

Training: the world's `split` (train) images as rendered, with their scene graphs; AdamW (lr 2e-3,
wd 1e-4), cosine decay, `epochs` = 24 of batches of 64. Augmentation: with `p_lowres` = 0.5 an
image is area-downsampled to `lowres_size` = 32 px and bilinearly upsampled back, exactly the path
of the diffusion generator's outputs, so that the recognizer reads generated images as well as
rendered ones. No flips (they would be harmless for the labels, but the world's renderer never
produces mirrored jitter patterns and it is not needed). Validation: `evaluate_recognizer` on the
rendered `val_split` images: per-cell detection precision/recall, attribute accuracy on true
objects, the fraction of scenes read exactly, and the accuracy of `judge` > 1/2 against the
world's truth on (caption, image) pairs: each caption with its own image (true), with a SugarCrepe
hard-negative edit of it (false by truth, the annotator's hard case) and with a random other image
(either).

`judge` is exact in the world's semantics: it samples `n_samples` = 256 scenes from the per-cell
posterior (objects present independently per cell, attributes independently per object, positions
at the predicted centres) and returns the fraction of sampled scenes the caption fits by the
world's truth (`world.truth`: counts are exact, pairs need two distinct objects, relations use the
margin). The uniforms are common to every image and caption (seeded by `seed`), so judgements are
deterministic and comparisons between candidates are not blurred by independent sampling noise.
`read_scene` keeps the cells with objectness > 1/2 (at most `max_objects`, the most confident).

`RecognizedGenerator` wraps a scene-less generator (`negatives.diffusion`, `negatives.sdxl`) so
that each candidate carries the recognizer's reading as its scene graph: BiVLC's construction,
its simulated annotators (steps 3-4) and its audit then run unchanged, and what they call the
truth of a generated image is the recognizer's reading of it (the val metrics say how far to
trust it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from itmbench.io import output_set, write_json
from itmbench.negatives.diffusion import write_torch
from itmbench.negatives.generator import GeneratedImage, ImageGenerator
from itmbench.params import make_config
from itmbench.reading import load_torch
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import World, read_world
from itmbench.world.scene import COLOURS, SHAPES, SIZES, Scene, WorldObject, relation_between
from itmbench.world.truth import caption_fits

MODEL_FILE, HISTORY_FILE, METRICS_FILE = "model.pt", "history.json", "metrics.json"
N_SHAPE, N_COLOUR, N_SIZE = len(SHAPES), len(COLOURS), len(SIZES)
N_OUT = 1 + N_SHAPE + N_COLOUR + N_SIZE + 2  # objectness, attributes, centre offset (x, y)


@dataclass(frozen=True)
class RecognizerConfig:
    """The recognizer section of params (defaults: the module docstring's decisions)."""

    SECTION: ClassVar[str] = "recognizer"
    OUTSIDE: ClassVar[dict[str, str]] = {"margin": "world.relation_margin", "max_objects": "world.max_objects"}

    seed: int
    split: str
    val_split: str
    image_size: int
    channels: tuple[int, ...]
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    p_lowres: float
    lowres_size: int
    n_samples: int
    margin: float
    max_objects: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "channels", tuple(int(c) for c in self.channels))
        # The ranges and counts are the schema's (checked when a section is read: make_config); it cannot say this:
        if self.image_size % 8:
            raise ValueError(f"recognizer params: image_size {self.image_size}; expected a multiple of 8")

    @property
    def grid(self) -> int:
        """Cells per side of the detection grid."""
        return self.image_size // 8

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        d = asdict(self)
        d["channels"] = list(self.channels)
        return d


def _block(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    """3x3 convolution, GroupNorm, GELU."""
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.GroupNorm(min(8, c_out), c_out), nn.GELU())


class GridDetector(nn.Module):
    """CNN: image in [-1, 1] [B, 3, S, S] -> per-cell outputs [B, N_OUT, S/8, S/8] (three stride-2 convolutions)."""

    def __init__(self, channels: Sequence[int]) -> None:
        super().__init__()
        c0, c1, c2, c3 = channels
        self.body = nn.Sequential(
            _block(3, c0, 2),
            _block(c0, c1, 1),
            _block(c1, c2, 2),
            _block(c2, c2, 1),
            _block(c2, c3, 2),
            _block(c3, c3, 1),
            _block(c3, c3, 1),
        )
        self.head = nn.Conv2d(c3, N_OUT, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw per-cell logits (objectness, shape, colour, size) and offset pre-activations."""
        return self.head(self.body(x))


def images_to_tensor(images: np.ndarray, image_size: int) -> torch.Tensor:
    """uint8 [N, H, W, 3] -> float [N, 3, S, S] in [-1, 1], resized (bilinear) to the recognizer's input side."""
    x = torch.as_tensor(np.asarray(images), dtype=torch.float32).permute(0, 3, 1, 2) / 127.5 - 1.0
    if x.shape[-1] != image_size or x.shape[-2] != image_size:
        x = F.interpolate(x, size=(image_size, image_size), mode="bilinear", align_corners=False)
    return x


def lowres(x: torch.Tensor, size: int) -> torch.Tensor:
    """The diffusion generator's pixel path: area-downsample to `size`, bilinear upsample back."""
    side = x.shape[-1]
    small = F.interpolate(x, size=(size, size), mode="area")
    return F.interpolate(small, size=(side, side), mode="bilinear", align_corners=False)


def scene_targets(scenes: Sequence[Scene], grid: int) -> dict[str, torch.Tensor]:
    """Per-cell labels of scene graphs: objectness [N, g, g], attribute codes (-1 where empty), offsets [N, 2, g, g]."""
    n = len(scenes)
    obj = torch.zeros((n, grid, grid))
    codes = {k: torch.full((n, grid, grid), -1, dtype=torch.long) for k in ("shape", "colour", "size")}
    offset = torch.zeros((n, 2, grid, grid))
    for i, scene in enumerate(scenes):
        for o in scene.objects:
            gx, gy = min(int(o.x * grid), grid - 1), min(int(o.y * grid), grid - 1)
            if obj[i, gy, gx]:
                raise ValueError(
                    f"scene {scene.image_id}: two object centres in cell ({gx}, {gy}) of a {grid}x{grid} grid; "
                    "expected world scenes (centres >= 0.2 apart)"
                )
            obj[i, gy, gx] = 1.0
            codes["shape"][i, gy, gx] = SHAPES.index(o.shape)
            codes["colour"][i, gy, gx] = COLOURS.index(o.colour)
            codes["size"][i, gy, gx] = SIZES.index(o.size)
            offset[i, 0, gy, gx] = o.x * grid - gx
            offset[i, 1, gy, gx] = o.y * grid - gy
    return {"objectness": obj, **codes, "offset": offset}


def _split_outputs(out: torch.Tensor) -> dict[str, torch.Tensor]:
    """Channel slices of the head's output."""
    a = 1
    parts = {"objectness": out[:, 0]}
    for name, k in (("shape", N_SHAPE), ("colour", N_COLOUR), ("size", N_SIZE)):
        parts[name] = out[:, a : a + k]
        a += k
    parts["offset"] = out[:, a : a + 2]
    return parts


def detection_loss(out: torch.Tensor, targets: Mapping[str, torch.Tensor]) -> torch.Tensor:
    """Objectness BCE on every cell + attribute CE and offset MSE on the cells holding an object."""
    p = _split_outputs(out)
    loss = F.binary_cross_entropy_with_logits(p["objectness"], targets["objectness"])
    mask = targets["objectness"] > 0
    if mask.any():
        for name in ("shape", "colour", "size"):
            logits = p[name].permute(0, 2, 3, 1)[mask]
            loss = loss + F.cross_entropy(logits, targets[name][mask])
        pred = torch.sigmoid(p["offset"]).permute(0, 2, 3, 1)[mask]
        loss = loss + F.mse_loss(pred, targets["offset"].permute(0, 2, 3, 1)[mask])
    return loss


@dataclass(frozen=True)
class Posterior:
    """The recognizer's per-cell beliefs about one image (C = grid * grid cells, row-major)."""

    objectness: np.ndarray  # [C] P(an object's centre is in the cell)
    shape: np.ndarray  # [C, 5] P(shape | object)
    colour: np.ndarray  # [C, 7]
    size: np.ndarray  # [C, 2]
    x: np.ndarray  # [C] predicted centre, fraction of the side
    y: np.ndarray  # [C]


class Recognizer:
    """A trained GridDetector with its config: posteriors, caption judgements and scene readings of images."""

    def __init__(self, cfg: RecognizerConfig, net: GridDetector, device: str = "cpu") -> None:
        self.cfg = cfg
        self.net = net.to(device).eval()
        self.device = device
        uniforms = np.random.default_rng([cfg.seed, 31]).random((cfg.n_samples, cfg.grid * cfg.grid, 4))
        self._uniforms = uniforms  # common random numbers of every judgement

    @staticmethod
    def load(path: str | Path, device: str = "cpu") -> Recognizer:
        """Load a recognizer written by `train_recognizer` (its model.pt, or the folder holding it)."""
        path = Path(path)
        if path.is_dir():
            path = path / MODEL_FILE
        if not path.exists():
            raise FileNotFoundError(f"{path}: missing; expected a recognizer model (run train_recognizer)")
        state = load_torch(path)
        if "config" not in state or "net" not in state:
            raise ValueError(f"{path}: missing keys config/net; expected a model.pt written by train_recognizer")
        cfg = make_config(RecognizerConfig, state["config"])
        net = GridDetector(cfg.channels)
        net.load_state_dict(state["net"])
        return Recognizer(cfg, net, device)

    @torch.no_grad()
    def posteriors(self, images: np.ndarray | Sequence[np.ndarray], batch_size: int = 256) -> list[Posterior]:
        """The per-cell beliefs of each uint8 [H, W, 3] image."""
        images = np.asarray(images)
        if images.ndim == 3:
            images = images[None]
        if images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError(f"recognizer: images of shape {images.shape}; expected [N, H, W, 3] uint8")
        g = self.cfg.grid
        centres = np.arange(g, dtype=np.float64)
        out: list[Posterior] = []
        for start in range(0, len(images), batch_size):
            x = images_to_tensor(images[start : start + batch_size], self.cfg.image_size).to(self.device)
            p = _split_outputs(self.net(x).float().cpu())
            obj = torch.sigmoid(p["objectness"]).reshape(len(x), -1).double().numpy()
            probs = {
                k: torch.softmax(p[k], dim=1).permute(0, 2, 3, 1).reshape(len(x), g * g, -1).double().numpy()
                for k in ("shape", "colour", "size")
            }
            off = torch.sigmoid(p["offset"]).double().numpy()
            xs = ((centres[None, None, :] + off[:, 0]) / g).reshape(len(x), -1)
            ys = ((centres[None, :, None] + off[:, 1]) / g).reshape(len(x), -1)
            for i in range(len(x)):
                out.append(Posterior(obj[i], probs["shape"][i], probs["colour"][i], probs["size"][i], xs[i], ys[i]))
        return out

    def _sample(self, post: Posterior) -> dict[str, np.ndarray]:
        """n_samples scenes from the posterior: presence [S, C] and attribute codes [S, C] (common uniforms)."""
        u = self._uniforms
        sample = {"present": u[:, :, 0] < post.objectness[None, :]}
        for j, name in enumerate(("shape", "colour", "size"), start=1):
            cdf = np.cumsum(getattr(post, name), axis=1)
            cdf[:, -1] = 1.0 + 1e-9
            sample[name] = (u[:, :, j, None] >= cdf[None, :, :]).sum(axis=2)
        return sample

    def _mention_mask(self, m: Mention, sample: Mapping[str, np.ndarray]) -> np.ndarray:
        """[S, C]: sampled objects that fit the mention's claimed attributes."""
        mask = sample["present"].copy()
        for name, values in (("shape", SHAPES), ("colour", COLOURS), ("size", SIZES)):
            claimed = getattr(m, name)
            if claimed is not None:
                mask &= sample[name] == values.index(claimed)
        return mask

    def judge_posterior(self, structure: CaptionStructure, post: Posterior) -> float:
        """P(caption fits | the recognizer's beliefs): the fraction of sampled scenes it fits by the world's truth."""
        sample = self._sample(post)
        ms = structure.mentions
        if len(ms) == 1:
            k = self._mention_mask(ms[0], sample).sum(axis=1)
            fits = k >= 1 if ms[0].count == 1 else k == ms[0].count
            return float(fits.mean())
        a, b = self._mention_mask(ms[0], sample), self._mention_mask(ms[1], sample)
        allowed = ~np.eye(len(post.x), dtype=bool)
        if structure.relation is not None:
            x, y, margin = post.x, post.y, self.cfg.margin  # cell a (rows) <relation> cell b (columns)
            allowed &= relation_between(x[:, None], y[:, None], x[None, :], y[None, :], structure.relation, margin)
        # exists (i, j) allowed with a[s, i] and b[s, j]  <=>  (a @ allowed) & b has a hit
        reach = (a.astype(np.float64) @ allowed.astype(np.float64)) > 0
        return float((reach & b).any(axis=1).mean())

    def judge(self, structure: CaptionStructure, image: np.ndarray) -> float:
        """Probability that the caption fits the image, as the recognizer reads it."""
        return self.judge_posterior(structure, self.posteriors(image)[0])

    def judge_pairs(self, structures: Sequence[CaptionStructure], images: np.ndarray) -> np.ndarray:
        """P(fit) of each (structure, image) pair, float64 [N]."""
        if len(structures) != len(images):
            raise ValueError(f"recognizer: {len(structures)} captions and {len(images)} images; expected pairs")
        posts = self.posteriors(images)
        return np.array([self.judge_posterior(s, p) for s, p in zip(structures, posts)], dtype=np.float64)

    def read_scene(self, image: np.ndarray, image_id: int = -1) -> Scene:
        """The most probable scene graph of an image: confident cells (<= max_objects), argmax attributes."""
        return self.read_posterior(self.posteriors(image)[0], np.asarray(image), image_id)

    def read_posterior(self, post: Posterior, image: np.ndarray, image_id: int = -1) -> Scene:
        """The scene graph of a posterior (background: median grey of the image's border pixels)."""
        cells = [int(c) for c in np.argsort(-post.objectness, kind="stable") if post.objectness[c] > 0.5]
        objects = tuple(
            WorldObject(
                shape=SHAPES[int(np.argmax(post.shape[c]))],
                colour=COLOURS[int(np.argmax(post.colour[c]))],
                size=SIZES[int(np.argmax(post.size[c]))],
                x=float(post.x[c]),
                y=float(post.y[c]),
            )
            for c in sorted(cells[: self.cfg.max_objects])
        )
        border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]]).astype(np.float64)
        return Scene(image_id=int(image_id), objects=objects, background=int(np.median(border.mean(axis=1))))


@dataclass(frozen=True)
class RecognizedGenerator:
    """An ImageGenerator whose scene-less candidates get the recognizer's reading of their pixels as scene graph."""

    generator: ImageGenerator
    recognizer: Recognizer

    def generate(
        self,
        structure: CaptionStructure,
        source_scene: Scene,
        n: int,
        rng: np.random.Generator,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """The wrapped generator's candidates; those without a scene graph are read by the recognizer."""
        made = self.generator.generate(structure, source_scene, n, rng, text=text)
        blind = [k for k, c in enumerate(made) if c.scene is None]
        if not blind:
            return list(made)
        pixels = np.stack([made[k].image for k in blind])
        out = list(made)
        for k, image, post in zip(blind, pixels, self.recognizer.posteriors(pixels)):
            out[k] = GeneratedImage(self.recognizer.read_posterior(post, image), made[k].mistakes, pixels=image)
        return out


def recognized_diffusion_generator(
    model_path: str,
    recognizer_path: str,
    image_size: int = 64,
    guidance_scale: float = 3.0,
    num_inference_steps: int = 25,
    seed: int = 0,
    device: str = "auto",
) -> RecognizedGenerator:
    """The registry's `diffusion` generator: the world's diffusion model, its images read by the recognizer.

    `device` 'auto' is CUDA when there is one, else CPU (both models go there).
    """
    from itmbench.negatives.diffusion import DiffusionGenerator

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    generator = DiffusionGenerator(str(model_path), image_size, guidance_scale, num_inference_steps, seed, device)
    return RecognizedGenerator(generator, Recognizer.load(recognizer_path, device))


# --- training ------------------------------------------------------------------------------------------------


def _split_data(world: World, split: str, source: str) -> tuple[np.ndarray, list[Scene]]:
    """The images (uint8) and scene graphs of one split, in image-id order."""
    table = world.image_table[world.image_table["split"] == split]
    if table.empty:
        raise ValueError(f"{source}: no images in split {split!r}; expected a world items folder with it")
    ids = table["image_id"].to_numpy(np.int64)
    scene_json = dict(zip(world.scene_table["image_id"].to_numpy().tolist(), world.scene_table["scene"]))
    missing = [int(i) for i in ids if int(i) not in scene_json]
    if missing:
        raise ValueError(f"{source}: images {missing[:5]} have no scene graph; expected one per image")
    return np.asarray(world.images[ids]), [Scene.from_json(scene_json[int(i)]) for i in ids]


def train_recognizer(
    items_dir: str | Path, cfg: RecognizerConfig, out_dir: str | Path, device: str = "cpu"
) -> dict[str, Any]:
    """Train on the rendered scenes of `split`, evaluate on `val_split`; write model.pt, history.json, metrics.json."""
    world = read_world(items_dir)
    images, scenes = _split_data(world, cfg.split, str(items_dir))
    x_all = images_to_tensor(images, cfg.image_size)
    targets = scene_targets(scenes, cfg.grid)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        net = GridDetector(cfg.channels)
    net.to(device).train()
    steps_per_epoch = -(-len(x_all) // cfg.batch_size)
    total = cfg.epochs * steps_per_epoch
    optimizer = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 0.5 * (1.0 + np.cos(np.pi * min(1.0, s / total))))
    history: dict[str, Any] = {"config": cfg.to_dict(), "epochs": []}
    started = time.perf_counter()
    for epoch in range(cfg.epochs):
        order = np.random.default_rng([cfg.seed, 13, epoch]).permutation(len(x_all))
        g = torch.Generator().manual_seed(int(np.random.SeedSequence([cfg.seed, 17, epoch]).generate_state(1)[0]))
        losses = []
        for start in range(0, len(order), cfg.batch_size):
            rows = torch.as_tensor(order[start : start + cfg.batch_size])
            x = x_all[rows]
            low = torch.rand(len(rows), generator=g) < cfg.p_lowres
            if low.any():
                x = x.clone()
                x[low] = lowres(x[low], cfg.lowres_size)
            batch_targets = {k: v[rows].to(device) for k, v in targets.items()}
            loss = detection_loss(net(x.to(device)), batch_targets)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(float(loss.detach()))
        history["epochs"].append({"epoch": epoch + 1, "loss": float(np.mean(losses))})
    wall = time.perf_counter() - started
    history["timing"] = {"wall_s": wall, "images_per_s": cfg.epochs * len(x_all) / wall if wall > 0 else None}
    history["n_parameters"] = sum(p.numel() for p in net.parameters())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with output_set(files=[out / MODEL_FILE, out / HISTORY_FILE, out / METRICS_FILE]):  # together or not at all
        write_torch(out / MODEL_FILE, {"config": cfg.to_dict(), "net": net.state_dict()})
        recognizer = Recognizer(cfg, net.cpu(), "cpu")
        metrics = evaluate_recognizer(recognizer, world, cfg.val_split, source=str(items_dir))
        write_json(out / HISTORY_FILE, history)
        write_json(out / METRICS_FILE, metrics)
    return {"history": history, "metrics": metrics}


def _judgement_pairs(
    world: World, split: str, seed: int, margin: float
) -> tuple[list[CaptionStructure], list[int], list[str], np.ndarray]:
    """(caption, image) pairs of a split: own image, a hard-negative edit on the own image, a random other image."""
    from itmbench.negatives.captions import SUBSETS, propose_edit

    caps = world.caption_table[world.caption_table["split"] == split]
    ids = world.image_table.loc[world.image_table["split"] == split, "image_id"].to_numpy(np.int64)
    scene_json = dict(zip(world.scene_table["image_id"].to_numpy().tolist(), world.scene_table["scene"]))
    rng = np.random.default_rng([seed, 37])
    structures: list[CaptionStructure] = []
    images: list[int] = []
    kinds: list[str] = []
    truth: list[bool] = []
    for image_id, text, js in zip(caps["image_id"].to_numpy().tolist(), caps["text"], caps["structure"]):
        s = CaptionStructure.from_json(js)
        structures.append(s)
        images.append(int(image_id))
        kinds.append("own image")
        truth.append(caption_fits(s, Scene.from_json(scene_json[int(image_id)]), margin))
        for subset in rng.permutation(SUBSETS):
            edit = propose_edit(s, str(text), str(subset), rng)
            own = Scene.from_json(scene_json[int(image_id)])
            if edit is not None and not caption_fits(edit.structure, own, margin):
                structures.append(edit.structure)
                images.append(int(image_id))
                kinds.append("hard negative caption")
                truth.append(False)
                break
        other = int(ids[int(rng.integers(len(ids)))])
        structures.append(s)
        images.append(other)
        kinds.append("random image")
        truth.append(caption_fits(s, Scene.from_json(scene_json[other]), margin))
    return structures, images, kinds, np.asarray(truth, dtype=bool)


def evaluate_recognizer(
    recognizer: Recognizer, world: World, split: str = "val", source: str = "world"
) -> dict[str, Any]:
    """Detection, attribute and scene accuracy, and judge accuracy vs the world's truth, on a split's renders."""
    images, scenes = _split_data(world, split, source)
    cfg = recognizer.cfg
    posts = recognizer.posteriors(images)
    targets = scene_targets(scenes, cfg.grid)
    obj_true = targets["objectness"].reshape(len(scenes), -1).numpy() > 0
    obj_pred = np.stack([p.objectness for p in posts]) > 0.5
    tp = int((obj_true & obj_pred).sum())
    metrics: dict[str, Any] = {
        "split": split,
        "n_images": len(scenes),
        "n_objects": int(obj_true.sum()),
        "detection_precision": tp / max(1, int(obj_pred.sum())),
        "detection_recall": tp / max(1, int(obj_true.sum())),
    }
    for name in ("shape", "colour", "size"):
        pred = np.stack([np.argmax(getattr(p, name), axis=1) for p in posts])
        true = targets[name].reshape(len(scenes), -1).numpy()
        metrics[f"{name}_accuracy"] = float((pred[obj_true] == true[obj_true]).mean()) if obj_true.any() else None

    def key(scene: Scene) -> list[tuple]:
        """The scene as a sorted list of (cell, attributes): equal keys = read exactly."""
        g = cfg.grid
        return sorted(
            (min(int(o.x * g), g - 1), min(int(o.y * g), g - 1), o.shape, o.colour, o.size) for o in scene.objects
        )

    read = [recognizer.read_posterior(p, img) for p, img in zip(posts, images)]
    metrics["scene_exact"] = float(np.mean([key(a) == key(b) for a, b in zip(read, scenes)]))
    structures, image_ids, kinds, truth = _judgement_pairs(world, split, cfg.seed, cfg.margin)
    row_of = {int(i): k for k, i in enumerate(world.image_table.loc[world.image_table["split"] == split, "image_id"])}
    p_fit = np.array(
        [recognizer.judge_posterior(s, posts[row_of[i]]) for s, i in zip(structures, image_ids)], dtype=np.float64
    )
    correct = (p_fit > 0.5) == truth
    kinds_arr = np.asarray(kinds)
    metrics["judge_accuracy"] = float(correct.mean())
    metrics["judge_pairs"] = len(correct)
    metrics["judge_true_rate"] = float(truth.mean())
    metrics["judge_by_kind"] = {
        k: {"accuracy": float(correct[kinds_arr == k].mean()), "n": int((kinds_arr == k).sum())}
        for k in ("own image", "hard negative caption", "random image")
        if (kinds_arr == k).any()
    }
    return metrics
