"""`itmbench gallery-paired`: paired tests over the same queries of the gallery benchmarks.

`gallery-paired` compares model pairs on a papers' benchmark that ranks whole galleries (the registry's
`ranks_gallery`) by a paired bootstrap over queries of the difference of their per-query metrics
(`itmbench.papers.paired.gallery_records`), from the per-query score files of `itmbench score-benchmark`; the
claims read its CSV (results/<source>/tables/<paper>/paired.csv). `read_scores` and `query_values` read those
files for a paper's own commands too (its ranking correlations over the same queries).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import json_arg, name_value, score_section
from itmbench.papers.registry import GALLERY_BENCHMARKS as REGISTERED_GALLERIES
from itmbench.papers.registry import PAPERS

log = logging.getLogger("itmbench")

# The papers' benchmarks that rank whole galleries (the registry's `ranks_gallery`; retrieval is no paper's own).
GALLERY_BENCHMARKS = tuple(sorted(set(REGISTERED_GALLERIES) & set(PAPERS)))


def read_scores(scores: dict[str, str]) -> dict:
    """Each model's scores table of `itmbench score-benchmark`, a missing file an InputError naming it."""
    from itmbench.errors import InputError
    from itmbench.reading import read_parquet_file

    out = {}
    for model, path in scores.items():
        if not Path(path).is_file():
            raise InputError(
                f"--scores {model}={path}: missing or not a file; expected `itmbench score-benchmark` scores"
            )
        out[model] = read_parquet_file(path)
    return out


def query_values(name: str, frames: dict) -> dict:
    """Each model's per-query metrics (its score module's `query_values`), a bad table an InputError naming it."""
    from itmbench.errors import InputError
    from itmbench.papers.registry import benchmark

    score = benchmark(name).part("score")
    out = {}
    for model, frame in frames.items():
        try:
            out[model] = score.query_values(frame)
        except (KeyError, ValueError) as exc:
            raise InputError(f"--scores {model}: expected {name} scores of `itmbench score-benchmark` ({exc})") from exc
    return out


def cmd_gallery_paired(args: argparse.Namespace) -> None:
    """Paired bootstrap over queries of model pairs' per-query metric differences on one gallery benchmark."""
    import pandas as pd

    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.paired import gallery_long, gallery_records, write_paired_table
    from itmbench.papers.registry import benchmark

    scores = dict(args.scores)
    pairs = list(args.pair)
    unscored = sorted({m for pair in pairs for m in pair} - set(scores))
    if unscored:
        raise InputError(
            f"--pair names {unscored} without --scores MODEL=PATH; expected the scores of every paired model"
        )
    config = score_section(args.config)
    frames = read_scores(scores)
    values = query_values(args.name, frames)
    score = benchmark(args.name).part("score")
    boot = (config["n_boot"], config["seed"], config["confidence"])
    parts = []
    try:
        for a, b in pairs:  # each pair on the per-query metrics both models have (a text-only model: t2t alone)
            metrics = [m for m in score.GALLERY_METRICS if m in values[a] and m in values[b]]
            shared = {m: values[m][metrics].dropna(how="all") for m in (a, b)}  # the queries of those metrics
            parts.append(gallery_records(args.name, shared, [(a, b)], metrics, *boot))
        if hasattr(score, "paired_correlations"):  # a benchmark's own correlations, same samples
            parts.append(score.paired_correlations(frames, pairs, *boot))
    except (KeyError, ValueError) as exc:
        raise InputError(f"--scores: {exc}") from exc
    filled = [p for p in parts if len(p)]
    records = pd.concat(filled, ignore_index=True) if filled else parts[0]
    prefix = Path(args.out_csv).with_suffix("")
    entry = benchmark(args.name)
    title = f"{entry.report_label()}: paired tests over the same queries (A vs B, paired bootstrap over queries)"
    with output_set(files=[prefix.with_suffix(s) for s in (".csv", ".md", ".tex")]):  # together or not at all
        write_paired_table(records, prefix, title, entry.decimals, long=gallery_long)
    log.info("%s: %d paired comparisons -> %s", args.name, len(records), prefix)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add(
        "gallery-paired", cmd_gallery_paired, "paired bootstrap over queries of model pairs on a gallery benchmark"
    )
    sp.add_argument("--name", required=True, choices=GALLERY_BENCHMARKS, help="the gallery benchmark")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", required=True, help="MODEL=PATH: per-query scores"
    )
    sp.add_argument("--pair", type=name_value("MODEL"), action="append", required=True, help="A=B: compare A with B")
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
