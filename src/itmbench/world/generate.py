"""Generate the world's items: scenes, rendered images, 5 captions each, Karpathy-like splits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from itmbench.errors import reading
from itmbench.io import atomic_path, write_parquet
from itmbench.reading import read_parquet_file
from itmbench.world.captions import CaptionStructure, caption_scene
from itmbench.world.render import render_scene
from itmbench.world.scene import Scene, sample_scene

SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class WorldConfig:
    """The world's parameters (params.yaml section `world`)."""

    SECTION: ClassVar[str] = "world"

    seed: int
    n_train: int
    n_val: int
    n_test: int
    image_size: int
    captions_per_image: int
    min_objects: int
    max_objects: int
    relation_margin: float
    p_colour: float
    p_size: float
    noise: float
    caption_kinds: dict[str, float]


def split_of(image_id: int, cfg: WorldConfig) -> str:
    """The split of an image id: ids are laid out train, then val, then test."""
    if image_id < cfg.n_train:
        return "train"
    if image_id < cfg.n_train + cfg.n_val:
        return "val"
    return "test"


def image_rng(seed: int, image_id: int, stream: int) -> np.random.Generator:
    """An independent generator per (seed, image, stream): any image regenerates alone."""
    return np.random.default_rng(np.random.SeedSequence([seed, image_id, stream]))


@dataclass
class World:
    """The generated items: images [N,H,W,3] and tables of images, captions and scenes."""

    images: np.ndarray
    image_table: pd.DataFrame
    caption_table: pd.DataFrame
    scene_table: pd.DataFrame

    def scenes(self) -> list[Scene]:
        """Scene graphs in image-id order."""
        return [Scene.from_json(s) for s in self.scene_table["scene"]]

    def structures(self) -> list[CaptionStructure]:
        """Caption structures in caption-table order."""
        return [CaptionStructure.from_json(s) for s in self.caption_table["structure"]]


def generate_world(cfg: WorldConfig) -> World:
    """Generate every item deterministically from cfg.seed."""
    n = cfg.n_train + cfg.n_val + cfg.n_test
    images = np.zeros((n, cfg.image_size, cfg.image_size, 3), dtype=np.uint8)
    img_rows, cap_rows, scene_rows = [], [], []
    for image_id in range(n):
        scene = sample_scene(image_id, image_rng(cfg.seed, image_id, 0), cfg.min_objects, cfg.max_objects)
        images[image_id] = render_scene(scene, cfg.image_size, image_rng(cfg.seed, image_id, 1), cfg.noise)
        split = split_of(image_id, cfg)
        img_rows.append((image_id, split, len(scene.objects)))
        scene_rows.append((image_id, scene.to_json()))
        caps = caption_scene(
            scene,
            image_rng(cfg.seed, image_id, 2),
            cfg.captions_per_image,
            cfg.caption_kinds,
            cfg.p_colour,
            cfg.p_size,
            cfg.relation_margin,
        )
        for k, (text, structure) in enumerate(caps):
            cap_rows.append((image_id * cfg.captions_per_image + k, image_id, split, text, structure.to_json()))
    return World(
        images=images,
        image_table=pd.DataFrame(img_rows, columns=["image_id", "split", "n_objects"]).astype(
            {"image_id": "int64", "n_objects": "int64"}
        ),
        caption_table=pd.DataFrame(cap_rows, columns=["caption_id", "image_id", "split", "text", "structure"]).astype(
            {"caption_id": "int64", "image_id": "int64"}
        ),
        scene_table=pd.DataFrame(scene_rows, columns=["image_id", "scene"]).astype({"image_id": "int64"}),
    )


def write_world(world: World, out_dir: str | Path) -> None:
    """Write the items folder: images.npy, images/captions/scenes parquet, each atomically."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, world.images)
    write_parquet(out / "scenes.parquet", world.scene_table)
    write_parquet(out / "captions.parquet", world.caption_table)
    # images.parquet last: it is the rule's declared output and marks the folder complete.
    write_parquet(out / "images.parquet", world.image_table)


def read_world(items_dir: str | Path) -> World:
    """Read an items folder written by write_world."""
    d = Path(items_dir)
    missing = [
        f for f in ("images.npy", "images.parquet", "captions.parquet", "scenes.parquet") if not (d / f).exists()
    ]
    if missing:
        raise FileNotFoundError(f"{d}: missing {missing}; expected a world items folder (run the world rule)")
    with reading(d / "images.npy"):
        images = np.load(d / "images.npy", mmap_mode="r")
    return World(
        images=images,
        image_table=read_parquet_file(d / "images.parquet"),
        caption_table=read_parquet_file(d / "captions.parquet"),
        scene_table=read_parquet_file(d / "scenes.parquet"),
    )
