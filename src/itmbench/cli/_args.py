"""Argument types and helpers shared by the stage modules of the CLI.

The types refuse a value at parse time, so a wrong option ends in argparse's usage error (exit 2) naming
the option and what was expected (`argument --confidence: expected a number in (0, 1), got 1.5`) before
any file is read; they import nothing heavy (building the parser is part of every job).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Collection

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE

# Whose numbers a paper's figure or table shows (its title): the released files, or a run's source.
FIGURE_SOURCES = ("released", "world", "coco")
FIGURE_SOURCE_LABELS = {"released": "released files", "world": "world", "coco": "coco source"}


def _number(text: str, kind: type) -> float | int:
    try:
        value = kind(text)
    except (TypeError, ValueError):
        noun = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {noun}, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
    return value


def open_fraction(text: str) -> float:
    """A number in (0, 1), both ends excluded (a confidence level)."""
    value = _number(text, float)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text}")
    return value


def probability(text: str) -> float:
    """A number in [0, 1]."""
    value = _number(text, float)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a probability in [0, 1], got {text}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (a count of threads, resamples, items per batch, a K)."""
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0 (a seed, an index, a size where 0 means all)."""
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number >= 0 (a tolerance)."""
    value = _number(text, float)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text}")
    return value


def devices_arg(text: str) -> str:
    """`all` or a positive device count (as `itmbench.scoring.embed.visible_devices` reads it)."""
    if text != "all":
        positive_int(text)
    return text


def name_value(what: str, names: Collection[str] | None = None) -> Callable[[str], tuple[str, str]]:
    """The type of a NAME=VALUE option (`what` names VALUE in messages); NAME one of `names` when given."""

    def parse(text: str) -> tuple[str, str]:
        name, sep, value = text.partition("=")
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"expected NAME={what}, got {text!r}")
        if names is not None and name not in names:
            raise argparse.ArgumentTypeError(f"unknown name {name!r} in {text!r}; expected one of {sorted(names)}")
        return name, value

    parse.__name__ = f"NAME={what}"
    return parse


def choice_values(allowed: Collection[str]) -> Callable[[str], dict]:
    """The type of a JSON object option whose values are each one of `allowed` (`--kinds`)."""

    def parse(text: str) -> dict:
        value = json_arg(text)
        bad = {k: v for k, v in value.items() if v not in allowed}
        if bad:
            raise argparse.ArgumentTypeError(f"values {bad}; expected each one of {sorted(allowed)}")
        return value

    parse.__name__ = "JSON object"
    return parse


def json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err.msg}): {text[:80]!r}") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def add_registry_option(parser: argparse.ArgumentParser) -> None:
    """`--registry FILE`: a registry overlay (released.yaml's format) whose md5s and counts the command checks.

    `itmbench.cli.main` puts it in force for the command (`sources.released.registry_overlay`): the files
    of a release `itmbench export-release` wrote are declared by the overlay it writes beside them.
    """
    parser.add_argument(
        "--registry",
        default=None,
        help="registry overlay (released.yaml format) declaring the md5s and record counts of another release",
    )


def set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


def limit_threads(threads: int) -> None:
    """The thread count of a job that may never import torch (scoring from embeddings on the CPU): the
    BLAS/OpenMP variables, read by numpy's OpenBLAS and by torch when they load (a fresh `itmbench`
    process has loaded neither yet), and torch's own setting when torch is loaded already."""
    n = max(1, threads)
    if "numpy" not in sys.modules:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def add_shortlist(sp: argparse.ArgumentParser) -> None:
    """--shortlist/--shortlist-k: a cross scorer re-ranks a dual encoder's top-k on a gallery benchmark."""
    sp.add_argument(
        "--shortlist",
        nargs="+",
        default=None,
        help="a dual encoder's cache files: the cross scorer re-ranks its top-k per query (gallery benchmarks)",
    )
    sp.add_argument("--shortlist-k", type=positive_int, default=16, help="candidates per query in the shortlist")


def add_confidence(sp: argparse.ArgumentParser, help: str = "interval level") -> None:
    """--confidence: an interval level in (0, 1), by default DEFAULT_CONFIDENCE (params.yaml's)."""
    sp.add_argument("--confidence", type=open_fraction, default=DEFAULT_CONFIDENCE, help=help)


def add_bootstrap_options(sp: argparse.ArgumentParser) -> None:
    """--n-boot/--seed/--confidence: the bootstrap over queries of a table computed from a benchmark."""
    sp.add_argument("--n-boot", type=positive_int, default=1000, help="bootstrap resamples over queries")
    sp.add_argument("--seed", type=non_negative_int, default=0, help="bootstrap seed")
    add_confidence(sp)


def add_metrics_out(sp: argparse.ArgumentParser) -> None:
    """--metrics/--model/--config: the scoring job also writes the metrics of the scores it wrote."""
    sp.add_argument("--metrics", default=None, help="also write the metrics with intervals (JSON) of these scores")
    sp.add_argument("--model", default=None, help="the model's name, recorded in the metrics (with --metrics)")
    sp.add_argument(
        "--config", type=json_arg, default=None, help="params.yaml `score` section as JSON (with --metrics)"
    )


def check_metrics_args(args: argparse.Namespace) -> None:
    """--metrics comes with --model and --config, a valid `score` section (checked before any scoring)."""
    if args.metrics and (args.model is None or args.config is None):
        raise ValueError("--metrics needs --model and --config (the `score` section as JSON)")
    if args.config is not None:
        args.config = score_section(args.config)


def score_section(values: dict) -> dict:
    """The `score` section given as --config, its defaults filled, checked against the params schema."""
    from itmbench.params import validated_section

    return validated_section("score", values, "score params (--config)")


def shortlist_of(args: argparse.Namespace):
    """The `--shortlist` cache files and `--shortlist-k` as a Shortlist, or None (the full grid)."""
    if not getattr(args, "shortlist", None):
        return None
    from itmbench.scoring.embed import EmbeddingCache
    from itmbench.scoring.pairs import Shortlist

    return Shortlist(EmbeddingCache(args.shortlist), args.shortlist_k)


def with_absent_cells(long, absent: list[str], grid_of: str | None):
    """A table's rows plus one 'status' cell per model it does not score, saying why ({pairs}: the grid's size)."""
    import pandas as pd

    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import absent_rows

    pairs = ""
    if grid_of:
        items = read_parquet_checked(grid_of, ("kind",), "an items parquet (--grid-of)")
        n = int((items["kind"] == "caption").sum()) * int((items["kind"] == "image").sum())
        pairs = f"{n:,} pairs"
    reasons = {}
    for entry in absent:
        model, sep, reason = entry.partition("=")
        if not sep:
            raise ValueError(f"--absent {entry!r}: expected MODEL=REASON")
        reasons[model] = reason.replace("{pairs}", pairs or "every pair")
    return pd.concat([long, absent_rows(reasons, long.columns)], ignore_index=True) if reasons else long
