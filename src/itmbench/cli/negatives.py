"""`itmbench train-diffusion`, `train-recognizer`, `plot-negatives`: the world's negative image generators.

The text-to-image diffusion model, the recognizer that reads scenes from its pixels, and the grid of the negatives
both generators drew; the commands that generate a benchmark's candidates with them and measure its filters are
its paper's own (`itmbench.papers.<paper>.commands`)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import (
    json_arg,
    positive_int,
    set_threads,
)
from itmbench.params import make_config

log = logging.getLogger("itmbench")


def cmd_train_diffusion(args: argparse.Namespace) -> None:
    """Train the world's text-to-image diffusion model (model.pt, history.json in --out)."""
    from itmbench.models.registry import pick_device
    from itmbench.negatives.diffusion import DiffusionConfig, train_diffusion

    set_threads(args.threads)
    cfg = make_config(DiffusionConfig, args.config)
    history = train_diffusion(args.items, cfg, args.out, str(pick_device(args.device)))
    log.info("diffusion: %s, final loss %.4f", history["timing"][-1], history["log"][-1]["loss"])


def cmd_train_recognizer(args: argparse.Namespace) -> None:
    """Train the pixel recognizer on rendered scenes (model.pt, history.json, metrics.json in --out)."""
    from itmbench.models.registry import pick_device
    from itmbench.negatives.recognizer import RecognizerConfig, train_recognizer

    set_threads(args.threads)
    cfg = make_config(RecognizerConfig, args.config)
    out = train_recognizer(args.items, cfg, args.out, str(pick_device(args.device)))
    log.info("recognizer: %s; val %s", out["history"]["timing"], {k: out["metrics"][k] for k in ("scene_exact",)})


def cmd_plot_negatives(args: argparse.Namespace) -> None:
    """The grid of sampled negatives of both generators (PNG), from the filter-rates sample."""
    import numpy as np

    from itmbench.errors import reading
    from itmbench.negatives.filter_rates import plot_generated_negatives
    from itmbench.reading import read_parquet_checked
    from itmbench.world.generate import read_world

    records = read_parquet_checked(Path(args.sample) / "records.parquet", ("image_id",), "the filter-rates sample")
    with reading(Path(args.sample) / "images.npy"):
        pixels = np.load(Path(args.sample) / "images.npy")
    world = read_world(args.items)
    positives = np.asarray(world.images[records["image_id"].to_numpy(np.int64)])
    plot_generated_negatives(records, pixels, positives, args.out, args.rows)


def _add_generator_commands(add) -> None:
    """The subcommands of the negative generators (diffusion, recognizer) and the grid of their negatives."""
    for name, func, help_ in (
        ("train-diffusion", cmd_train_diffusion, "train the world's text-to-image diffusion model"),
        ("train-recognizer", cmd_train_recognizer, "train the recognizer that reads scenes from pixels"),
    ):
        sp = add(name, func, help_)
        sp.add_argument("--items", required=True, help="the world's items folder")
        sp.add_argument("--config", type=json_arg, required=True, help="its params.yaml section as JSON")
        sp.add_argument("--out", required=True, help="folder of model.pt and history.json")
        sp.add_argument("--threads", type=positive_int, default=1)
        sp.add_argument("--device", default="auto")
    sp = add("plot-negatives", cmd_plot_negatives, "grid of both generators' sampled negatives (PNG)")
    sp.add_argument("--sample", required=True, help="the folder filter-rates wrote with --sample-out")
    sp.add_argument("--items", required=True, help="the world's items folder (positive images)")
    sp.add_argument("--rows", type=positive_int, default=8, help="negative captions shown")
    sp.add_argument("--out", required=True)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands."""
    _add_generator_commands(add)
