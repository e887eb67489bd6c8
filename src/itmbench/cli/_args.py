"""Argument types and helpers shared by the stage modules of the CLI."""

from __future__ import annotations

import argparse
import json
import os
import sys


def json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err.msg}): {text[:80]!r}") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


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
    sp.add_argument("--shortlist-k", type=int, default=16, help="candidates per query in the shortlist")


def add_metrics_out(sp: argparse.ArgumentParser) -> None:
    """--metrics/--model/--config: the scoring job also writes the metrics of the scores it wrote."""
    sp.add_argument("--metrics", default=None, help="also write the metrics with intervals (JSON) of these scores")
    sp.add_argument("--model", default=None, help="the model's name, recorded in the metrics (with --metrics)")
    sp.add_argument(
        "--config", type=json_arg, default=None, help="params.yaml `score` section as JSON (with --metrics)"
    )


def check_metrics_args(args: argparse.Namespace) -> None:
    if args.metrics and (args.model is None or args.config is None):
        raise ValueError("--metrics needs --model and --config (the `score` section as JSON)")


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

    from itmbench.report.tables import absent_rows

    pairs = ""
    if grid_of:
        items = pd.read_parquet(grid_of)
        n = int((items["kind"] == "caption").sum()) * int((items["kind"] == "image").sum())
        pairs = f"{n:,} pairs"
    reasons = {}
    for entry in absent:
        model, sep, reason = entry.partition("=")
        if not sep:
            raise ValueError(f"--absent {entry!r}: expected MODEL=REASON")
        reasons[model] = reason.replace("{pairs}", pairs or "every pair")
    return pd.concat([long, absent_rows(reasons, long.columns)], ignore_index=True) if reasons else long
