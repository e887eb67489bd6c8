"""`itmbench score-benchmark`, `metrics-benchmark`, `score-retrieval`, `metrics-retrieval`, `score-pairs`: scoring."""

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


def cmd_score_benchmark(args: argparse.Namespace) -> None:
    """Per-instance scores of one model on one benchmark, from the embedding cache."""
    limit_threads(args.threads)  # first: before numpy loads its BLAS
    check_metrics_args(args)
    from itmbench.io import write_parquet
    from itmbench.papers.registry import benchmark
    from itmbench.scoring.embed import EmbeddingCache

    entry = benchmark(args.name)
    tables = entry.module.read(args.bench)
    if args.pairs:
        from itmbench.scoring.pairs import PairScores

        shortlist = shortlist_of(args)
        if shortlist is not None:
            scores = entry.module.score_pairs(tables, PairScores(args.pairs), shortlist=shortlist)
        else:
            scores = entry.module.score_pairs(tables, PairScores(args.pairs))
    else:
        scores = entry.module.score_dual(tables, EmbeddingCache(args.embeddings))
    write_parquet(args.out, scores)
    if args.metrics:
        _write_benchmark_metrics(args.name, args.out, args.model, args.config, args.metrics)


def _write_benchmark_metrics(name: str, scores: str | Path, model: str, cfg: dict, out: str | Path) -> None:
    """A benchmark's metrics with intervals from a per-instance scores file (read back as written)."""
    from itmbench.errors import InputError
    from itmbench.io import read_parquet_checked, write_json
    from itmbench.papers.registry import benchmark

    table = read_parquet_checked(scores, (), f"{name}'s per-instance scores (score-benchmark)")
    if table.empty:
        raise InputError(f"{scores}: no rows; expected {name}'s per-instance scores (score-benchmark)")
    try:
        summary = benchmark(name).module.summarize(
            table, n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
        )
    except (KeyError, ValueError) as err:  # the scores lack what the benchmark's summary reads
        reason = err.args[0] if isinstance(err, KeyError) and err.args else err
        raise InputError(f"{scores}: {reason}; expected {name}'s per-instance scores (score-benchmark)") from err
    write_json(out, {**summary, "model": model, "benchmark": name})


def cmd_metrics_benchmark(args: argparse.Namespace) -> None:
    """A benchmark's metrics with intervals from per-instance scores."""
    _write_benchmark_metrics(args.name, args.scores, args.model, score_section(args.config), args.out)


def cmd_score_retrieval(args: argparse.Namespace) -> None:
    """Per-query first-positive ranks of one model on one retrieval benchmark."""
    limit_threads(args.threads)  # first: before numpy loads its BLAS
    check_metrics_args(args)
    from itmbench.io import write_parquet
    from itmbench.papers.retrieval.benchmark import read_retrieval
    from itmbench.scoring.embed import EmbeddingCache
    from itmbench.scoring.retrieval import score_retrieval

    items, positives = read_retrieval(args.bench)
    shortlist = shortlist_of(args)
    if args.pairs and shortlist is not None:
        from itmbench.scoring.pairs import PairScores, by_direction, rerank_caches

        grids = rerank_caches(items, PairScores(args.pairs), shortlist)
        scores = by_direction(
            {d: score_retrieval(items, positives, grids[d], args.chunk_size) for d in grids}, "direction"
        )
    else:
        if args.pairs:
            from itmbench.scoring.pairs import PairScores

            cache = PairScores(args.pairs).as_cache(
                items.loc[items["kind"] == "caption", "item_id"].to_numpy(),
                items.loc[items["kind"] == "image", "item_id"],
            )
        else:
            cache = EmbeddingCache(args.embeddings)
        scores = score_retrieval(items, positives, cache, args.chunk_size)
    write_parquet(args.out, scores)
    if args.metrics:
        _write_retrieval_metrics(args.out, args.model, Path(args.bench).name, args.config, args.metrics)


def _write_retrieval_metrics(scores: str | Path, model: str, bench: str, cfg: dict, out: str | Path) -> None:
    """R@K and MedR with intervals from a per-query ranks file (read back as written)."""
    from itmbench.errors import InputError
    from itmbench.io import read_parquet_checked, write_json
    from itmbench.metrics.retrieval import retrieval_summary

    expected = "per-query ranks (score-retrieval)"
    table = read_parquet_checked(scores, ("positive_set", "direction", "rank"), expected)
    if table.empty:
        raise InputError(f"{scores}: no rows; expected {expected}")
    result: dict = {"model": model, "benchmark": bench, "metrics": {}}
    for (positive_set, direction), group in table.groupby(["positive_set", "direction"], sort=True):
        summary = retrieval_summary(
            group["rank"].to_numpy(), ks=cfg["ks"], n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
        )
        result["metrics"].setdefault(positive_set, {})[direction] = summary
    write_json(out, result)


def cmd_metrics_retrieval(args: argparse.Namespace) -> None:
    """R@K and MedR with intervals from per-query ranks."""
    _write_retrieval_metrics(args.scores, args.model, args.benchmark, score_section(args.config), args.out)


def _pairs_needed(name: str, bench: str, shortlist=None):
    """The (caption_id, image_id) pairs benchmark `name` (in folder `bench`) needs scored: on a gallery
    benchmark every pair, or each query's shortlist when one is given."""
    from itmbench.papers.registry import GALLERY_BENCHMARKS

    if shortlist is not None and name not in GALLERY_BENCHMARKS:
        raise ValueError(f"--shortlist: {name} is no gallery benchmark ({sorted(GALLERY_BENCHMARKS)} are)")
    if name == "retrieval":
        from itmbench.papers.retrieval.benchmark import read_retrieval
        from itmbench.scoring.pairs import items_grid, shortlist_pairs

        items, _ = read_retrieval(bench)
        return items_grid(items) if shortlist is None else shortlist_pairs(items, shortlist)
    from itmbench.papers.registry import benchmark

    module = benchmark(name).module
    if shortlist is not None:
        return module.pairs_needed(module.read(bench), shortlist=shortlist)
    return module.pairs_needed(module.read(bench))


def cmd_score_pairs(args: argparse.Namespace) -> None:
    """A cross scorer's s(caption, image) of exactly the pairs one benchmark needs."""
    import time

    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.scoring.embed import EmbeddingCache, ItemStore
    from itmbench.scoring.pairs import write_pair_scores

    set_threads(args.threads)
    spec = model_spec(args.model, args.spec)
    pairs = _pairs_needed(args.name, args.bench, shortlist_of(args))  # the inputs first, then the model
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
        args.name,
        len(pairs),
        seconds,
        len(pairs) / max(seconds, 1e-9),
    )


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("score-retrieval", cmd_score_retrieval, "per-query ranks on a retrieval benchmark")
    sp.add_argument("--bench", required=True)
    scored = sp.add_mutually_exclusive_group(required=True)
    scored.add_argument("--embeddings", nargs="+")
    scored.add_argument("--pairs", nargs="+", help="a cross scorer's pair-score files (the full grid or a shortlist)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--chunk-size", type=positive_int, default=1024)
    sp.add_argument("--threads", type=positive_int, default=1)
    add_shortlist(sp)
    add_metrics_out(sp)
    sp = add("metrics-retrieval", cmd_metrics_retrieval, "R@K and MedR with intervals")
    sp.add_argument("--scores", required=True)
    sp.add_argument("--model", required=True)
    sp.add_argument("--benchmark", required=True)
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out", required=True)
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
        choices=["retrieval", *sorted(BENCHMARKS)],
        help="the benchmark (retrieval or a world benchmark)",
    )
    sp.add_argument("--bench", required=True)
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
