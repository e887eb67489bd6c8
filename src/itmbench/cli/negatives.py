"""`itmbench train-diffusion`, `train-recognizer`, `generate-candidates`, `filter-rates`, `plot-negatives`.

BiVLC's negative generators in the world."""

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


def _bivlc_config(section: dict, world: dict):
    """BiVLC's typed config with the world's truth settings (as the benchmark registry makes it)."""
    from itmbench.papers.registry import benchmark
    from itmbench.world.generate import WorldConfig

    return benchmark("bivlc").config(section, make_config(WorldConfig, world))


def _diffusion_generator(cfg, image_size: int, args: argparse.Namespace):
    """The registry's diffusion generator (read by the recognizer) from the checkpoint folders of the flags."""
    from itmbench.negatives.images import make_generator

    params = cfg.generator_params(image_size, "diffusion", model_path=args.diffusion, recognizer_path=args.recognizer)
    return make_generator("diffusion", **params, device=args.device)


def cmd_generate_candidates(args: argparse.Namespace) -> None:
    """BiVLC's step 2 with a text-to-image generator: every negative caption's candidates, stored for the build."""
    from itmbench.io import output_set
    from itmbench.negatives.candidates import generate_candidates, write_candidates
    from itmbench.world.generate import read_world

    set_threads(args.threads)
    cfg = _bivlc_config(args.config, args.world)
    if cfg.generator == "render":
        raise ValueError("generate-candidates: bivlc generator 'render' renders inside the build; expected diffusion")
    world = read_world(args.items)
    table, images = generate_candidates(world, cfg, _diffusion_generator(cfg, int(world.images.shape[1]), args))
    with output_set(folders=[args.out]):  # images and table together or not at all
        write_candidates(table, images, args.out)
    log.info("candidates: %d images of %d captions -> %s", len(table), table["text"].nunique(), args.out)


def cmd_filter_rates(args: argparse.Namespace) -> None:
    """BiVLC's two filters on both generators over one sample: the filter-rate table and the sampled candidates."""
    import numpy as np

    from itmbench.io import atomic_path, output_set, write_parquet
    from itmbench.negatives.filter_rates import FilterRateConfig, filter_rate_table, run_filters, sample_instances
    from itmbench.negatives.images import make_generator
    from itmbench.papers.bivlc.build import sugarcrepe_instances
    from itmbench.papers.bivlc.statistics import published_survival_rates
    from itmbench.report.tables import write_table
    from itmbench.world.generate import read_world

    set_threads(args.threads)
    cfg = _bivlc_config(args.config, args.world)
    rates = make_config(FilterRateConfig, args.filter)
    world = read_world(args.items)
    size = int(world.images.shape[1])
    sample = sample_instances(sugarcrepe_instances(world, cfg)[0], rates.sample, rates.seed)
    generators = {
        "render": make_generator("render", **cfg.generator_params(size, "render")),
        "diffusion": _diffusion_generator(cfg, size, args),
    }
    records, pixels = run_filters(world, cfg, generators, sample)
    title = (
        f"BiVLC's filters on {len(sample)} sampled negative captions x {cfg.n_candidates} candidates per generator "
        "(%, 95% intervals; diffusion images read by the recognizer)"
    )
    table = filter_rate_table(records, cfg.subsets, published_survival_rates())
    out = Path(args.sample_out)
    with output_set(folders=[Path(args.out_csv).parent, out]):  # the table and the sample together or not at all
        write_table(table, Path(args.out_csv).with_suffix(""), title, "generator")
        write_parquet(out / "records.parquet", records)
        with atomic_path(out / "images.npy") as tmp:
            with open(tmp, "wb") as fh:
                np.save(fh, pixels)
    log.info("filter rates: %s", records.groupby("generator")["kept"].mean().to_dict())


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
    """The subcommands of the negative generators (diffusion, recognizer, candidates, filter rates)."""
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
    parsers = {}
    for name, func, help_ in (
        ("generate-candidates", cmd_generate_candidates, "BiVLC's candidate images from the diffusion model"),
        ("filter-rates", cmd_filter_rates, "BiVLC's two filters on both generators over a sample"),
    ):
        sp = parsers[name] = add(name, func, help_)
        sp.add_argument("--items", required=True)
        sp.add_argument("--world", type=json_arg, required=True, help="params.yaml `world` section as JSON")
        sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `bivlc` section as JSON")
        sp.add_argument("--diffusion", required=True, help="folder of the diffusion model (train-diffusion)")
        sp.add_argument("--recognizer", required=True, help="folder of the recognizer (train-recognizer)")
        sp.add_argument("--threads", type=positive_int, default=1)
        sp.add_argument("--device", default="auto")
    parsers["generate-candidates"].add_argument("--out", required=True, help="the candidates folder")
    sp = parsers["filter-rates"]
    sp.add_argument("--filter", type=json_arg, required=True, help="params.yaml `filter_rates` section as JSON")
    sp.add_argument("--out-csv", required=True, help="the .csv path; .md and .tex are written beside it")
    sp.add_argument("--sample-out", required=True, help="folder of the sampled candidates (records, images)")
    sp = add("plot-negatives", cmd_plot_negatives, "grid of both generators' sampled negatives (PNG)")
    sp.add_argument("--sample", required=True, help="the folder filter-rates wrote with --sample-out")
    sp.add_argument("--items", required=True, help="the world's items folder (positive images)")
    sp.add_argument("--rows", type=positive_int, default=8, help="negative captions shown")
    sp.add_argument("--out", required=True)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands."""
    _add_generator_commands(add)
