"""`itmbench score-predictions`: predictions made elsewhere, in the papers' released formats.

The arguments live apart from the scoring code (`itmbench.papers.predictions`), so that building the CLI's
parser (every job of the DAG does) imports neither pandas nor scipy."""

from __future__ import annotations

import argparse

from itmbench.cli._args import add_confidence, add_registry_option, non_negative_int, positive_int
from itmbench.papers.registry import PAPERS, PREDICTION_FORMATS

# The formats: ranked lists (the shared engine) and each paper's own (the registry)
KINDS: tuple[str, ...] = ("ranked", *PREDICTION_FORMATS)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the score-predictions arguments to a parser (a subparser of `itmbench`, or a standalone one)."""
    parser.add_argument("kind", choices=KINDS, help="format of the predictions")
    parser.add_argument(
        "files", nargs="+", help="prediction files (ranked: i2t=PATH / t2i=PATH, or i2t/t2i in the name)"
    )
    parser.add_argument("--positives", nargs="+", default=[], help="ranked: association JSONs or positives tables")
    parser.add_argument(
        "--positive-set", default=None, help="ranked: rows of this source/positive_set only (or COLUMN=VALUE)"
    )
    parser.add_argument("--label", default=None, help="name of the system (ranked, and the formats that take one)")
    parser.add_argument("--out-dir", default=None, help="write metrics.json and metrics.{csv,md,tex} here")
    add_confidence(parser, "interval confidence, in (0, 1)")
    parser.add_argument("--n-boot", type=positive_int, default=1000, help="bootstrap resamples, >= 1")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed, >= 0")
    parser.add_argument("--ks", type=positive_int, nargs="+", default=[1, 5, 10], help="ranked: the K of R@K")
    parser.add_argument("--lenient", action="store_true", help="ranked: rankings shorter than R give lower bounds")
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="score the instances present when predictions miss some (an error by default); "
        "the metrics JSON records n_missing and the log says how many",
    )
    for paper in PAPERS.values():  # each paper's own options (the registry's `prediction_options`)
        for flag, keywords in paper.prediction_options:
            parser.add_argument(flag, **keywords)
    return parser


def run(args: argparse.Namespace) -> int:
    """Score the predictions (imports the scoring code only now)."""
    from itmbench.io import output_set
    from itmbench.papers import predictions

    if not args.out_dir:
        return predictions.run(args)
    with output_set(folders=[args.out_dir]):  # metrics.json and its tables together or not at all
        return predictions.run(args)


def add_commands(add, sub) -> None:
    """Register `score-predictions`."""
    sp = add("score-predictions", run, "score predictions made elsewhere (the papers' released formats)")
    add_arguments(sp)
    add_registry_option(sp)
