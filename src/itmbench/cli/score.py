"""`itmbench score-benchmark`, `metrics-benchmark`, `score-pairs`: scoring."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import (
    add_metrics_out,
    add_shortlist,
    check_metrics_args,
    json_arg,
    limit_threads,
    positive_int,
    score_section,
    set_threads,
    shortlist_of,
)
from itmbench.papers.registry import BENCHMARKS

log = logging.getLogger("itmbench")
# the params `score` keys a benchmark's `summarize` takes, unless its score module names others (`SCORE_OPTIONS`)
DEFAULT_SCORE_OPTIONS = ("n_boot", "seed", "confidence")


def cmd_score_benchmark(args: argparse.Namespace) -> None:
    """Per-instance scores of one model on one benchmark, from the embedding cache."""
    limit_threads(args.threads)  # first: before numpy loads its BLAS
    check_metrics_args(args)
    from itmbench.io import output_set, staged, write_parquet
    from itmbench.papers.registry import benchmark
    from itmbench.scoring.embed import EmbeddingCache

    entry = benchmark(args.name)
    tables = entry.part("canonical").read(args.bench)
    score = entry.part("score")
    if args.pairs:
        from itmbench.scoring.pairs import PairScores

        shortlist = shortlist_of(args)
        if shortlist is not None:
            scores = score.score_pairs(tables, PairScores(args.pairs), shortlist=shortlist)
        else:
            scores = score.score_pairs(tables, PairScores(args.pairs))
    else:
        scores = score.score_dual(tables, EmbeddingCache(args.embeddings))
    with output_set(files=[args.out, *([args.metrics] if args.metrics else [])]):  # together or not at all
        write_parquet(args.out, scores)
        if args.metrics:
            _write_benchmark_metrics(args.name, staged(args.out), args.model, args.config, args.metrics)


def _write_benchmark_metrics(name: str, scores: str | Path, model: str, cfg: dict, out: str | Path) -> None:
    """A benchmark's metrics with intervals from a per-instance scores file (read back as written)."""
    from itmbench.errors import InputError
    from itmbench.io import write_json
    from itmbench.papers.registry import benchmark
    from itmbench.reading import read_parquet_checked

    table = read_parquet_checked(scores, (), f"{name}'s per-instance scores (score-benchmark)")
    if table.empty:
        raise InputError(f"{scores}: no rows; expected {name}'s per-instance scores (score-benchmark)")
    score = benchmark(name).part("score")
    options = getattr(score, "SCORE_OPTIONS", DEFAULT_SCORE_OPTIONS)
    try:
        summary = score.summarize(table, **{key: cfg[key] for key in options})
    except (KeyError, ValueError) as err:  # the scores lack what the benchmark's summary reads
        reason = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise InputError(f"{scores}: {reason}; expected {name}'s per-instance scores (score-benchmark)") from err
    write_json(out, {**summary, "model": model, "benchmark": name})


def cmd_metrics_benchmark(args: argparse.Namespace) -> None:
    """A benchmark's metrics with intervals from per-instance scores."""
    _write_benchmark_metrics(args.name, args.scores, args.model, score_section(args.config), args.out)


def _pairs_needed(name: str, bench: str, shortlist=None):
    """The (caption_id, image_id) pairs benchmark `name` (in folder `bench`) needs scored: on a gallery
    benchmark every pair, or each query's shortlist when one is given."""
    from itmbench.papers.registry import GALLERY_BENCHMARKS

    if shortlist is not None and name not in GALLERY_BENCHMARKS:
        raise ValueError(f"--shortlist: {name} is no gallery benchmark ({sorted(GALLERY_BENCHMARKS)} are)")
    from itmbench.papers.registry import benchmark

    entry = benchmark(name)
    tables = entry.part("canonical").read(bench)
    if shortlist is not None:
        return entry.part("score").pairs_needed(tables, shortlist=shortlist)
    return entry.part("score").pairs_needed(tables)


def cmd_score_pairs(args: argparse.Namespace) -> None:
    """A cross scorer's s(caption, image) of exactly the pairs one benchmark needs, or, given several (`--name A B
    --bench DIR_A DIR_B`, benchmarks on the same items), of the pairs any of them needs, each scored once."""
    import time

    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.scoring.embed import EmbeddingCache, ItemStore
    from itmbench.scoring.pairs import union_pairs, write_pair_scores

    set_threads(args.threads)
    spec = model_spec(args.model, args.spec)
    if len(args.name) != len(args.bench):
        from itmbench.errors import InputError

        raise InputError(
            f"score-pairs: {len(args.name)} --name for {len(args.bench)} --bench; expected one folder each"
        )
    shortlist = shortlist_of(args)  # the inputs first, then the model
    needed = [_pairs_needed(name, bench, shortlist) for name, bench in zip(args.name, args.bench)]
    pairs = needed[0] if len(needed) == 1 else union_pairs(needed)
    scorer = build_encoder(spec, pick_device(args.device), args.checkpoint)
    if not hasattr(scorer, "score_pairs"):
        raise ValueError(f"models.{spec.name}: family {spec.family!r} is no cross scorer (it gives embeddings)")
    features = EmbeddingCache(args.features) if args.features else None
    t0 = time.time()
    scores = scorer.score_pairs(
        ItemStore(args.items, args.extra_items),
        pairs["caption_id"].to_numpy(),
        pairs["image_id"].to_numpy(),
        features=features,
    )
    seconds = time.time() - t0
    write_pair_scores(args.out, pairs, scores)
    log.info(
        "%s on %s: %d pairs in %.1f s (%.0f pairs/s)",
        spec.name,
        " + ".join(args.name),
        len(pairs),
        seconds,
        len(pairs) / max(seconds, 1e-9),
    )


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("score-benchmark", cmd_score_benchmark, "per-instance scores of a model on a benchmark")
    sp.add_argument("--name", required=True, choices=sorted(BENCHMARKS))
    sp.add_argument("--bench", required=True)
    scored = sp.add_mutually_exclusive_group(required=True)
    scored.add_argument("--embeddings", nargs="+", help="the model's cache files (source + added items)")
    scored.add_argument("--pairs", nargs="+", help="a cross scorer's pair-score files (score-pairs)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--threads", type=positive_int, default=1)
    add_shortlist(sp)
    add_metrics_out(sp)
    sp = add("metrics-benchmark", cmd_metrics_benchmark, "a benchmark's metrics with intervals")
    sp.add_argument("--name", required=True, choices=sorted(BENCHMARKS))
    sp.add_argument("--scores", required=True)
    sp.add_argument("--model", required=True)
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out", required=True)
    sp = add("score-pairs", cmd_score_pairs, "a cross scorer's scores of the pairs a benchmark needs")
    sp.add_argument(
        "--name",
        required=True,
        nargs="+",
        choices=sorted(BENCHMARKS),
        help="the benchmark (a name of the benchmark registry); several on the same items: the union of their pairs",
    )
    sp.add_argument("--bench", required=True, nargs="+", help="each --name's benchmark folder, in the same order")
    sp.add_argument("--model", required=True)
    sp.add_argument("--spec", type=json_arg, required=True, help="params.yaml `models.<name>` as JSON")
    sp.add_argument("--checkpoint", default=None)
    sp.add_argument("--items", required=True, help="the source's items folder")
    sp.add_argument("--extra-items", nargs="*", default=[], help="item folders the benchmark added")
    sp.add_argument("--features", nargs="*", default=[], help="the upstream model's cache files (ffnn)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--device", default="auto")
    add_shortlist(sp)
