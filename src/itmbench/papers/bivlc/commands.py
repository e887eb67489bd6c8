"""`itmbench bivlc-figure4-data`, `bivlc-figure4`, `trohn-text-table`, `generate-candidates`, `filter-rates`:
BiVLC's Figure 4 and Table 6, and its negative generators' candidates and filter rates in the world.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import FIGURE_SOURCE_LABELS as SOURCE_LABELS
from itmbench.cli._args import FIGURE_SOURCES as SOURCES
from itmbench.cli._args import (
    add_confidence,
    json_arg,
    name_value,
    positive_int,
    set_threads,
)
from itmbench.params import make_config

log = logging.getLogger("itmbench")


def cmd_bivlc_figure4_data(args: argparse.Namespace) -> None:
    """BiVLC Figure 4's numbers: per model, the distribution of the positive caption's and image's margins."""
    from itmbench.cli._args import score_section
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.bivlc.margins import MARGINS, SCORE_COLUMNS, figure4_long
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

    config = validated_section("report.bivlc_figure4", args.config, "report.bivlc_figure4 params (--config)")
    score = score_section(args.score)
    if not args.scores:
        raise InputError("bivlc-figure4-data needs --scores MODEL=PATH for each model")
    scores = {m: read_parquet_checked(p, SCORE_COLUMNS, f"the BiVLC scores of {m}") for m, p in args.scores}
    long = figure4_long(scores, dict(args.rows), config["bins"], score["n_boot"], score["seed"], score["confidence"])
    level = f"{100 * score['confidence']:g}%"
    title = (
        f"BiVLC Figure 4 ({SOURCE_LABELS[args.source]}): per model and BiVLC instance, the margins "
        + "; ".join(f"{name}: {label}" for name, (label, _, _) in MARGINS.items())
        + f". Mean and median with {level} percentile bootstrap intervals ({score['n_boot']} resamples, seed "
        f"{score['seed']}); share > 0 and the share of instances per histogram bin ({config['bins']} equal bins "
        f"over the margin's range pooled over the models; edges in the CSV's bin_lo and bin_hi) with {level} "
        "Wilson intervals"
    )
    out = Path(args.out_csv)
    with output_set(folders=[out.parent]):  # .csv, .md, .tex together or not at all
        write_table(long, out.with_suffix(""), title, row_header="statistic", decimals=3)
    summary = long[long["statistic"] != "bin"].set_index(["column", "statistic"])["value"].round(4).to_dict()
    log.info("bivlc figure4: %s", summary)


def cmd_bivlc_figure4(args: argparse.Namespace) -> None:
    """Draw BiVLC Figure 4 from its computed table (PNG and PDF, byte-deterministic)."""
    from itmbench.io import output_set
    from itmbench.papers.bivlc.figures import write_figure4

    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_figure4(args.data, out, SOURCE_LABELS[args.source], args.dpi)
    log.info("bivlc figure4: %s", [str(p) for p in paths])


def cmd_trohn_text_table(args: argparse.Namespace) -> None:
    """BiVLC Table 6 (TROHN-Text statistics) from TROHN-Text trainers' summaries, beside the printed counts."""
    from itmbench.io import output_set
    from itmbench.papers.bivlc.tables import write_trohn_text_table

    prefix = Path(args.out_csv).with_suffix("")
    with output_set(files=[prefix.with_suffix(s) for s in (".csv", ".md", ".tex")]):  # together or not at all
        paths = write_trohn_text_table(args.histories, prefix, args.confidence)
    log.info("TROHN-Text statistics of %d model(s) -> %s", len(args.histories), ", ".join(map(str, paths)))


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


def add_commands(add, sub) -> None:
    """Register this paper's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("bivlc-figure4-data", cmd_bivlc_figure4_data, "BiVLC Figure 4's numbers: the positive pair's margins")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: its BiVLC scores"
    )
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --scores (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml report.bivlc_figure4 as JSON")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (n_boot, seed, confidence) as JSON")
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("bivlc-figure4", cmd_bivlc_figure4, "draw BiVLC Figure 4 from its computed table")
    sp.add_argument("--data", required=True, help="the figure's table (bivlc-figure4-data)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="whose numbers the figure shows")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")
    sp = add("trohn-text-table", cmd_trohn_text_table, "BiVLC Table 6: TROHN-Text statistics vs published")
    sp.add_argument("histories", nargs="+", help="history.json of each TROHN-Text (negclip) model")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    add_confidence(sp, "of the shares' Wilson intervals")
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
