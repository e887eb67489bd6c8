"""How BiVLC's two filters treat each image generator: the filter-rate table on one sample of negative captions.

BiVLC keeps a generated negative in two filters (`benchmarks.bivlc` steps 3-4): an annotator picks
the best of the n candidates or none (filter 1), and a second pass drops the instance when the
chosen image also fits the positive caption (filter 2). The paper's SDXL-DPO keeps 71.6% of
SugarCrepe after filter 1 and 39% after both. Which generator the world's BiVLC uses is a
parameter (`bivlc.generator`); this module runs BOTH registered generators (`render`, and the
trained `diffusion` model read by the recognizer) through the same filters, on the same sample of
SugarCrepe instances and with the same random streams as the BiVLC build, so that:
- the rates of the generator the build uses are those of its own instances (the same candidates,
  the same annotator draws), and the other generator's rates are what it would have kept;
- the cost is the sample's, not the whole benchmark's: `sample` instances x n candidates (the
  diffusion model generates about one image per second on a CPU thread).

Sample: `sample` SugarCrepe instances drawn without replacement from BiVLC's step 0 by a generator
seeded with `seed` (all of them when there are fewer), sorted by id. Every rate carries its Wilson
interval; per-subset rows come from the same sample (a few instances each at the default size: read
their intervals). "Fits" is the annotators' reading: the render's own scene graph, or the
recognizer's reading of a diffusion image.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from itmbench.negatives.edits import (
    STREAM_GENERATE,
    CandidateConfig,
    _rate_row,
    _rng,
    filter_candidates,
    instance_keys,
)
from itmbench.negatives.generator import ImageGenerator
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World
from itmbench.world.scene import Scene

if TYPE_CHECKING:
    pass


log = logging.getLogger("itmbench")
GENERATOR_ORDER = ("render", "diffusion")
RECORD_COLUMNS = (
    "generator",
    "sugarcrepe_id",
    "subset",
    "image_id",
    "caption",
    "negative_caption",
    "candidate",
    "fits_negative",
    "fits_positive",
    "chosen",
    "ambiguous",
    "kept",
)


@dataclass(frozen=True)
class FilterRateConfig:
    """The filter_rates section of params."""

    SECTION: ClassVar[str] = "filter_rates"

    sample: int
    seed: int
    in_report: bool


def sample_instances(sugarcrepe: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """n SugarCrepe instances drawn without replacement (seeded), sorted by id."""
    order = np.random.default_rng([seed, 41]).permutation(len(sugarcrepe))[: min(n, len(sugarcrepe))]
    return sugarcrepe.iloc[np.sort(order)].reset_index(drop=True)


def run_filters(
    world: World, cfg: CandidateConfig, generators: Mapping[str, ImageGenerator], sample: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every generator's candidates of the sampled instances through filters 1-2.

    Returns one record per (generator, instance, candidate) (RECORD_COLUMNS) and the candidates' pixels.
    """
    scenes = {int(i): s for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = dict(zip(world.caption_table["caption_id"].to_numpy().tolist(), world.caption_table["structure"]))
    records: dict[str, list] = {c: [] for c in RECORD_COLUMNS}
    pixels: list[np.ndarray] = []
    for name, generator in generators.items():
        started, before = time.perf_counter(), len(pixels)
        for row in sample.itertuples(index=False):
            keys = instance_keys(row.image_id, row.subset, row.caption_id)
            negative = CaptionStructure.from_json(row.negative_structure)
            made = generator.generate(
                negative,
                Scene.from_json(scenes[int(row.image_id)]),
                cfg.n_candidates,
                _rng(cfg.seed, STREAM_GENERATE, *keys),
                text=row.negative_caption,
            )
            if any(c.scene is None for c in made):
                raise ValueError(f"generator {name}: a candidate without a scene graph; expected a read one")
            pos = CaptionStructure.from_json(positive[int(row.caption_id)])
            fits_neg, fits_pos, chosen, ambiguous = filter_candidates(negative, pos, [c.scene for c in made], cfg, keys)
            for k, candidate in enumerate(made):
                values = (
                    name,
                    int(row.id),
                    row.subset,
                    int(row.image_id),
                    row.caption,
                    row.negative_caption,
                    k,
                    fits_neg[k],
                    fits_pos[k],
                    k == chosen,
                    ambiguous,
                    chosen >= 0 and not ambiguous,
                )
                for column, value in zip(RECORD_COLUMNS, values):
                    records[column].append(value)
                pixels.append(np.asarray(candidate.image, dtype=np.uint8))
        wall = time.perf_counter() - started
        made_here = len(pixels) - before
        log.info("%s: %d candidates in %.1f s (%.2f images/s, read included)", name, made_here, wall, made_here / wall)
    table = pd.DataFrame(records, columns=list(RECORD_COLUMNS)).astype(
        {"sugarcrepe_id": "int64", "image_id": "int64", "candidate": "int64"}
    )
    side = int(world.images.shape[1])
    return table, (np.stack(pixels) if pixels else np.zeros((0, side, side, 3), dtype=np.uint8))


def _rate(row: str, column: str, successes: int, n: int) -> dict[str, Any]:
    """A percentage with its Wilson interval (NaN when n = 0)."""
    return _rate_row(row, column, successes, n)


def _count(row: str, column: str, n: int) -> dict[str, Any]:
    return {"row": row, "column": column, "value": float(n), "lo": np.nan, "hi": np.nan}


COLUMNS = (
    "negative captions",
    "candidates",
    "candidates fitting the negative caption (%)",
    "filter 1 (best of n) kept (%)",
    "filter 2 (not ambiguous) kept (% of filter 1)",
    "kept by both (%)",
)


def filter_rate_table(
    records: pd.DataFrame, subsets: tuple[str, ...], published: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi): per generator overall and per subset, then the paper's rates
    (`published`: BiVLC's survival figures, `itmbench.papers.bivlc.statistics.published_survival_rates`)."""
    rows: list[dict[str, Any]] = []
    present = [g for g in GENERATOR_ORDER if g in set(records["generator"])]
    present += sorted(set(records["generator"]) - set(present))
    for generator in present:
        mine = records[records["generator"] == generator]
        for subset in ("overall", *subsets):
            part = mine if subset == "overall" else mine[mine["subset"] == subset]
            if part.empty:
                continue
            per = part.groupby("sugarcrepe_id", sort=True).agg(
                chosen=("chosen", "any"), ambiguous=("ambiguous", "first"), kept=("kept", "first")
            )
            label = generator if subset == "overall" else f"{generator}: {subset}"
            n, n1, n2 = len(per), int(per["chosen"].sum()), int(per["kept"].sum())
            rows += [
                _count(label, COLUMNS[0], n),
                _count(label, COLUMNS[1], len(part)),
                _rate(label, COLUMNS[2], int(part["fits_negative"].sum()), len(part)),
                _rate(label, COLUMNS[3], n1, n),
                _rate(label, COLUMNS[4], n2, n1),
                _rate(label, COLUMNS[5], n2, n),
            ]
    if published is not None:
        pub = published
        label = "paper (SDXL-DPO, COCO)"
        step1 = 100.0 - pub["step3"]
        step2 = 100.0 - pub["step4"]
        rows += [
            {"row": label, "column": COLUMNS[3], "value": step1, "lo": np.nan, "hi": np.nan},
            {"row": label, "column": COLUMNS[4], "value": step2, "lo": np.nan, "hi": np.nan},
            {"row": label, "column": COLUMNS[5], "value": step1 * step2 / 100.0, "lo": np.nan, "hi": np.nan},
        ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"]).astype(
        {"value": "float64", "lo": "float64", "hi": "float64"}
    )


def plot_generated_negatives(
    records: pd.DataFrame, pixels: np.ndarray, positives: np.ndarray, out_png: str, n_rows: int = 8
) -> None:
    """A grid: per sampled negative caption, its positive image, then each generator's candidates.

    Frames: green = chosen and kept by both filters, orange = chosen but dropped by filter 2, none = not chosen.
    `positives` holds the positive image of each record's image_id row (uint8 [N, S, S, 3] aligned to records).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from itmbench.io import atomic_path

    generators = [g for g in GENERATOR_ORDER if g in set(records["generator"])]
    ids = sorted(set(records["sugarcrepe_id"]))[:n_rows]
    n_cand = int(records["candidate"].max()) + 1 if len(records) else 0
    n_cols = 1 + n_cand * len(generators)
    fig, axes = plt.subplots(max(1, len(ids)), n_cols, figsize=(1.3 * n_cols, 1.55 * max(1, len(ids))), squeeze=False)
    index = {
        (g, int(s), int(k)): i
        for i, (g, s, k) in enumerate(zip(records["generator"], records["sugarcrepe_id"], records["candidate"]))
    }
    for r, sid in enumerate(ids):
        first = index[(generators[0], sid, 0)]
        axes[r][0].imshow(positives[first])
        if r == 0:
            axes[r][0].set_title("positive image", fontsize=6)
        axes[r][0].set_ylabel(_wrap(records["negative_caption"].iloc[first]), fontsize=6, rotation=0, ha="right")
        for gi, g in enumerate(generators):
            for k in range(n_cand):
                ax = axes[r][1 + gi * n_cand + k]
                i = index[(g, sid, k)]
                ax.imshow(pixels[i])
                if r == 0:
                    ax.set_title(f"{g} {k}", fontsize=6)
                if records["chosen"].iloc[i]:
                    colour = "tab:green" if records["kept"].iloc[i] else "tab:orange"
                    for side in ax.spines.values():
                        side.set_edgecolor(colour)
                        side.set_linewidth(3)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle("BiVLC negatives per generator (green: kept; orange: dropped by filter 2)", fontsize=8)
    fig.tight_layout()
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)


def _wrap(text: str, width: int = 28) -> str:
    """Break a caption over lines of about `width` characters."""
    words, lines, line = str(text).split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join([*lines, line])
