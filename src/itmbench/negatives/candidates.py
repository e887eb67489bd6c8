"""BiVLC's step 2 run ahead of its build: every negative caption's candidate images, generated once and stored.

A text-to-image generator costs about a second per image on a CPU (`negatives.diffusion`), so the
workflow runs it in its own GPU rule: `generate_candidates` prompts the generator with every
distinct negative caption of the SugarCrepe instances BiVLC builds from (`benchmarks.bivlc`, step 0),
`write_candidates` stores the images with the scene graphs the recognizer reads from them, and the
BiVLC build reads them back through `PregeneratedGenerator`. Changing BiVLC's annotators (steps 3-4)
then reruns the build without regenerating an image.

Candidates are keyed by caption text. That is exact for generators that see only the text: the
diffusion generator seeds a caption's candidates from its text (`prompt_seed`), so a caption gets
the same images wherever it occurs, and each distinct caption is generated once. (The world's
RenderGenerator edits the source scene, so it is never pregenerated: its build renders inline.)

Folder layout: `candidates.parquet` (text, candidate, scene: the candidate's scene graph as JSON,
mistakes: JSON list) and `images.npy` (uint8 [rows, S, S, 3] in the table's row order).
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.errors import reading
from itmbench.io import atomic_path, write_parquet
from itmbench.negatives.edits import STREAM_GENERATE, CandidateConfig, _rng, instance_keys, sugarcrepe_instances
from itmbench.negatives.generator import GeneratedImage, ImageGenerator
from itmbench.reading import read_parquet_file
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene

log = logging.getLogger("itmbench")

TABLE_FILE, IMAGES_FILE = "candidates.parquet", "images.npy"
COLUMNS = ("text", "candidate", "scene", "mistakes")


def generate_candidates(
    world: World, cfg: CandidateConfig, generator: ImageGenerator, log_every: int = 25
) -> tuple[pd.DataFrame, np.ndarray]:
    """`cfg.n_candidates` candidates of every distinct negative caption of BiVLC's SugarCrepe stage .

    Returns the table (COLUMNS, sorted by text then candidate) and the pixels in its row order. Every
    candidate must carry a scene graph (wrap a text-to-image model in a RecognizedGenerator).
    """
    sugarcrepe, scenes = sugarcrepe_instances(world, cfg)
    first = sugarcrepe.drop_duplicates("negative_caption").sort_values("negative_caption", kind="stable")
    rows: dict[str, list] = {c: [] for c in COLUMNS}
    pixels: list[np.ndarray] = []
    started = time.perf_counter()
    for done, row in enumerate(first.itertuples(index=False), start=1):
        keys = instance_keys(row.image_id, row.subset, row.caption_id)
        made = generator.generate(
            CaptionStructure.from_json(row.negative_structure),
            scenes[row.image_id],
            cfg.n_candidates,
            _rng(cfg.seed, STREAM_GENERATE, *keys),
            text=row.negative_caption,
        )
        if len(made) != cfg.n_candidates:
            raise ValueError(
                f"generator {type(generator).__name__}: {len(made)} images for {row.negative_caption!r}; "
                f"expected {cfg.n_candidates}"
            )
        for k, candidate in enumerate(made):
            if candidate.scene is None:
                raise ValueError(
                    f"generator {type(generator).__name__}: candidate {k} of {row.negative_caption!r} has no scene "
                    "graph; expected a generator whose images are read (RecognizedGenerator)"
                )
            rows["text"].append(str(row.negative_caption))
            rows["candidate"].append(k)
            rows["scene"].append(candidate.scene.to_json())
            rows["mistakes"].append(json.dumps(list(candidate.mistakes)))
            pixels.append(np.asarray(candidate.image, dtype=np.uint8))
        if done % log_every == 0 or done == len(first):
            wall = time.perf_counter() - started
            log.info("generated %d/%d captions, %.2f images/s", done, len(first), len(pixels) / max(wall, 1e-9))
    table = pd.DataFrame(rows, columns=list(COLUMNS)).astype({"candidate": "int64"})
    side = int(world.images.shape[1])
    images = np.stack(pixels) if pixels else np.zeros((0, side, side, 3), dtype=np.uint8)
    return table, images


def write_candidates(table: pd.DataFrame, images: np.ndarray, out_dir: str | Path) -> None:
    """Write the folder atomically (images first, the table last: its presence marks a complete folder)."""
    if len(table) != len(images):
        raise ValueError(f"candidates for {out_dir}: {len(table)} rows and {len(images)} images; expected equal")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / IMAGES_FILE) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(images, dtype=np.uint8))
    write_parquet(out / TABLE_FILE, table[list(COLUMNS)])


@dataclass(frozen=True)
class PregeneratedGenerator:
    """An ImageGenerator that returns the stored candidates of a caption (looked up by its text)."""

    rows: dict[str, tuple[int, ...]]
    table: pd.DataFrame
    images: np.ndarray
    source: str

    @staticmethod
    def load(folder: str | Path) -> PregeneratedGenerator:
        """Read a folder written by `write_candidates`, checking its files agree."""
        d = Path(folder)
        for name in (TABLE_FILE, IMAGES_FILE):
            if not (d / name).exists():
                raise FileNotFoundError(f"{d / name}: missing; expected a folder written by generate-candidates")
        table = read_parquet_file(d / TABLE_FILE)
        missing = [c for c in COLUMNS if c not in table.columns]
        if missing:
            raise ValueError(f"{d / TABLE_FILE}: missing columns {missing}; expected {list(COLUMNS)}")
        with reading(d / IMAGES_FILE):
            images = np.load(d / IMAGES_FILE, mmap_mode="r")
        if images.ndim != 4 or len(images) != len(table):
            raise ValueError(
                f"{d / IMAGES_FILE}: shape {images.shape}; expected [{len(table)}, S, S, 3] (one image per table row)"
            )
        rows: dict[str, list[int]] = {}
        for i, text in enumerate(table["text"]):
            rows.setdefault(str(text), []).append(i)
        return PregeneratedGenerator({t: tuple(v) for t, v in rows.items()}, table, images, str(d))

    def generate(
        self,
        structure: CaptionStructure,
        source_scene: Scene,
        n: int,
        rng: np.random.Generator,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """The first n stored candidates of the caption `text` (structure, scene and rng are unused)."""
        found = self.rows.get(text or "")
        if not found:
            raise ValueError(
                f"{self.source}: no candidates for caption {text!r}; expected the folder generated for this BiVLC "
                "config (rerun generate-candidates)"
            )
        if len(found) < n:
            raise ValueError(f"{self.source}: {len(found)} candidates for caption {text!r}; expected {n}")
        return [
            GeneratedImage(
                Scene.from_json(self.table["scene"].iloc[i]),
                tuple(json.loads(self.table["mistakes"].iloc[i])),
                pixels=np.array(self.images[i]),
            )
            for i in found[:n]
        ]
