"""`itmbench ...`: the commands that the workflow's rules call, one per rule.

Every command takes its parameters as explicit flags (a params section arrives as one JSON
string, so Snakemake sees exactly the parameters a job depends on) and writes its outputs
atomically. Entry points are `main(argv)` so tests call them directly.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger("itmbench")


def _json_arg(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"not valid JSON ({err.msg}): {text[:80]!r}") from err
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {type(value).__name__}")
    return value


def _set_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


def cmd_world(args: argparse.Namespace) -> None:
    """Generate the world's items."""
    from itmbench.world.generate import WorldConfig, generate_world, write_world

    cfg = WorldConfig.from_dict(args.config)
    world = generate_world(cfg)
    write_world(world, args.out)
    log.info("world: %d images, %d captions -> %s", len(world.image_table), len(world.caption_table), args.out)


def cmd_build_retrieval(args: argparse.Namespace) -> None:
    """Build the world's retrieval benchmark (original and complete-truth positives)."""
    from itmbench.benchmarks.retrieval import build_world_retrieval, write_retrieval
    from itmbench.world.generate import WorldConfig, read_world

    cfg = WorldConfig.from_dict(args.world)
    items, positives = build_world_retrieval(read_world(args.items), args.split, cfg.relation_margin, cfg.max_objects)
    write_retrieval(items, positives, args.out)
    counts = positives.groupby("positive_set").size().to_dict()
    log.info("retrieval on %s: %d items; positives %s", args.split, len(items), counts)


def _dep_dirs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep:
            raise ValueError(f"--dep {pair!r}: expected NAME=DIR")
        out[name] = path
    return out


def cmd_build_benchmark(args: argparse.Namespace) -> None:
    """Build one world benchmark by its paper's procedure (canonical tables + construction stages)."""
    from itmbench.benchmarks.registry import benchmark
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    deps = {name: benchmark(name).module.read(path) for name, path in _dep_dirs(args.dep).items()}
    tables = entry.build(read_world(args.items), args.config, WorldConfig.from_dict(args.world), deps)
    entry.module.write(tables, args.out)
    log.info("%s: %s", args.name, {k: len(v) for k, v in tables.items()})


def cmd_audit_benchmark(args: argparse.Namespace) -> None:
    """The audit table of one world benchmark against the complete truth."""
    from itmbench.benchmarks.registry import benchmark
    from itmbench.report.tables import write_table
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    tables = entry.module.read(args.bench)
    audit = entry.audit(read_world(args.items), tables, args.config, WorldConfig.from_dict(args.world))
    title = f"{args.name} in the world: audit against the complete truth (95% intervals)"
    write_table(audit, Path(args.out_csv).with_suffix(""), title, row_header="audit", decimals=2)


def cmd_score_benchmark(args: argparse.Namespace) -> None:
    """Per-instance scores of one model on one benchmark, from the embedding cache."""
    from itmbench.benchmarks.registry import benchmark
    from itmbench.io import write_parquet
    from itmbench.scoring.embed import EmbeddingCache

    _set_threads(args.threads)
    entry = benchmark(args.name)
    tables = entry.module.read(args.bench)
    if args.pairs:
        from itmbench.scoring.pairs import PairScores

        scores = entry.module.score_pairs(tables, PairScores(args.pairs))
    else:
        scores = entry.module.score_dual(tables, EmbeddingCache(args.embeddings))
    write_parquet(args.out, scores)


def cmd_metrics_benchmark(args: argparse.Namespace) -> None:
    """A benchmark's metrics with intervals from per-instance scores."""
    import pandas as pd

    from itmbench.benchmarks.registry import benchmark
    from itmbench.io import write_json

    cfg = args.config
    summary = benchmark(args.name).module.summarize(
        pd.read_parquet(args.scores), n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
    )
    write_json(args.out, {**summary, "model": args.model, "benchmark": args.name})


def cmd_table_benchmark(args: argparse.Namespace) -> None:
    """One benchmark's main metrics for every model as CSV, Markdown and LaTeX."""
    import pandas as pd

    from itmbench.io import read_json
    from itmbench.report.tables import write_table

    rows = []
    for path in args.metrics:
        m = read_json(path)
        for name, cell in m["metrics"].items():
            rows.append(
                {"row": m["model"], "column": name, **{k: cell.get(k, float("nan")) for k in ("value", "lo", "hi")}}
            )
    long = _with_absent_cells(pd.DataFrame(rows), args.absent, args.grid_of)
    write_table(long, Path(args.out_csv).with_suffix(""), args.title, row_header="model")


def cmd_train(args: argparse.Namespace) -> None:
    """Train a model by its spec's trainer (the registry in itmbench.train)."""
    from itmbench.models.registry import ModelSpec, pick_device
    from itmbench.train import TrainConfig, trainer

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    train = trainer(spec.trainer, spec.name)  # names the model and the known trainers when unknown
    cfg = TrainConfig.from_dict(args.train)
    summary = train(spec, cfg, args.items, args.out, args.history, pick_device(args.device))
    log.info("trained %s: best epoch %s, val R@1 %s", spec.name, summary["best_epoch"], summary.get("val_r1", "-"))


def cmd_embed(args: argparse.Namespace) -> None:
    """Embed the items of one folder once with one model (of some splits, or the listed ones)."""
    import pandas as pd

    from itmbench.models.registry import ModelSpec, build_encoder, pick_device
    from itmbench.scoring.embed import ItemStore, embed_items, folder_items, write_embeddings

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    encoder = build_encoder(spec, pick_device(args.device), args.checkpoint)
    items = pd.read_parquet(args.needed) if args.needed else folder_items(args.items, args.splits)
    emb = embed_items(encoder, ItemStore(args.items, args.extra_items), items, args.batch_size)
    write_embeddings(args.out, emb)
    log.info("embedded %d images and %d captions with %s", len(emb["image_ids"]), len(emb["caption_ids"]), spec.name)


def cmd_score_retrieval(args: argparse.Namespace) -> None:
    """Per-query first-positive ranks of one model on one retrieval benchmark."""
    from itmbench.benchmarks.retrieval import read_retrieval
    from itmbench.io import write_parquet
    from itmbench.scoring.embed import EmbeddingCache
    from itmbench.scoring.retrieval import score_retrieval

    _set_threads(args.threads)
    items, positives = read_retrieval(args.bench)
    if args.pairs:
        from itmbench.scoring.pairs import PairScores

        cache = PairScores(args.pairs).as_cache(
            items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
        )
    else:
        cache = EmbeddingCache(args.embeddings)
    scores = score_retrieval(items, positives, cache, args.chunk_size)
    write_parquet(args.out, scores)


def cmd_metrics_retrieval(args: argparse.Namespace) -> None:
    """R@K and MedR with intervals from per-query ranks."""
    import pandas as pd

    from itmbench.io import write_json
    from itmbench.metrics.retrieval import retrieval_summary

    scores = pd.read_parquet(args.scores)
    cfg = args.config
    out: dict = {"model": args.model, "benchmark": args.benchmark, "metrics": {}}
    for (positive_set, direction), group in scores.groupby(["positive_set", "direction"], sort=True):
        summary = retrieval_summary(
            group["rank"].to_numpy(), ks=cfg["ks"], n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
        )
        out["metrics"].setdefault(positive_set, {})[direction] = summary
    write_json(args.out, out)


def cmd_table_retrieval(args: argparse.Namespace) -> None:
    """The retrieval table of every model as CSV, Markdown and LaTeX."""
    from itmbench.io import read_json
    from itmbench.report.retrieval import retrieval_long_table
    from itmbench.report.tables import write_table

    metrics = [read_json(p) for p in args.metrics]
    long = _with_absent_cells(retrieval_long_table(metrics), args.absent, args.grid_of)
    write_table(long, Path(args.out_csv).with_suffix(""), args.title, row_header="model [positives]")


def cmd_fetch(args: argparse.Namespace) -> None:
    """Fetch one declared released file through DVC (URL or mirror), md5-checked, atomically."""
    from itmbench.sources.fetch import fetch_released

    md5 = fetch_released(args.key, args.out, args.mirror or None)
    log.info("fetched %s -> %s (md5 %s)", args.key, args.out, md5)


def cmd_released_statistics(args: argparse.Namespace) -> None:
    """One paper's dataset statistics from the released files, beside the published numbers."""
    from itmbench.report.tables import write_comparison_table
    from itmbench.sources.statistics import statistics_from_mirror

    df = statistics_from_mirror(args.paper, args.raw)
    title = f"{args.paper}: dataset statistics regenerated from the released files vs published"
    write_comparison_table(df, Path(args.out_csv).with_suffix(""), title)
    log.info("%s statistics: %s", args.paper, df["status"].value_counts().to_dict())


def cmd_released_paper_tables(args: argparse.Namespace) -> None:
    """The paper tables, figure and claims that follow from released files, beside the published values."""
    from itmbench.papers.bivlc.figures import gpt4v_figure_data, plot_gpt4v_accuracy
    from itmbench.papers.bivlc.tables import write_released_tables
    from itmbench.papers.claims import claims_table, published_results, released_results, write_claims_table
    from itmbench.papers.eccv.tables import write_table5_comparison

    out = Path(args.out_dir)
    write_released_tables(args.raw, out / "tables" / "bivlc")
    write_table5_comparison(out / "tables" / "eccv" / "table5")
    plot_gpt4v_accuracy(gpt4v_figure_data(args.raw), out / "figures" / "bivlc" / "gpt4v_sugarcrepe")
    import pandas as pd

    claims = pd.concat([claims_table(published_results()), claims_table(released_results(args.raw))], ignore_index=True)
    write_claims_table(claims, out / "tables" / "claims" / "claims", "Claims on the published and the released numbers")


def cmd_claims(args: argparse.Namespace) -> None:
    """Each paper's claims checked on one source's metrics."""
    from itmbench.papers.claims import claims_table, load_world_results, write_claims_table

    table = claims_table(load_world_results(args.metrics_dir, kinds=args.kinds, source=args.source))
    write_claims_table(table, Path(args.out_csv).with_suffix(""), f"Claims checked on the {args.source} results")
    log.info("claims: %s", table["holds"].astype(str).value_counts().to_dict())


def cmd_share(args: argparse.Namespace) -> None:
    """Track the expensive outputs with DVC, record their modification times, push to the remote."""
    from itmbench.share import share

    files = share(args.source, Path(args.root), push=not args.no_push, remote=args.remote)
    print("now commit the pointers: git add " + " ".join(map(str, files)) + " dvc/mtimes.json && git commit")


def cmd_pull(args: argparse.Namespace) -> None:
    """`dvc pull` the shared outputs and restore their modification times (no Snakemake rerun)."""
    from itmbench.share import pull

    restored, missing = pull(Path(args.root), remote=args.remote)
    log.info("pulled; restored the modification times of %d files (%d listed but absent)", restored, missing)


def cmd_notebook(args: argparse.Namespace) -> None:
    """Execute a report notebook with papermill and render it to HTML."""
    from itmbench.report.render import run_notebook

    run_notebook(args.notebook, args.out, args.parameters)


def cmd_index(args: argparse.Namespace) -> None:
    """reports/index.html linking every report."""
    from itmbench.report.render import write_index

    write_index(args.out, args.reports)


def _with_absent_cells(long, absent: list[str], grid_of: str | None):
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


def _pairs_needed(name: str, bench: str):
    """The (caption_id, image_id) pairs benchmark `name` (in folder `bench`) needs scored, and its tables."""
    if name == "retrieval":
        from itmbench.benchmarks.retrieval import read_retrieval
        from itmbench.scoring.pairs import items_grid

        items, _ = read_retrieval(bench)
        return items_grid(items)
    from itmbench.benchmarks.registry import benchmark

    module = benchmark(name).module
    return module.pairs_needed(module.read(bench))


def cmd_score_pairs(args: argparse.Namespace) -> None:
    """A cross scorer's s(caption, image) of exactly the pairs one benchmark needs."""
    import time

    from itmbench.models.registry import ModelSpec, build_encoder, pick_device
    from itmbench.scoring.embed import EmbeddingCache, ItemStore
    from itmbench.scoring.pairs import write_pair_scores

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    scorer = build_encoder(spec, pick_device(args.device), args.checkpoint)
    if not hasattr(scorer, "score_pairs"):
        raise ValueError(f"models.{spec.name}: family {spec.family!r} is no cross scorer (it gives embeddings)")
    pairs = _pairs_needed(args.name, args.bench)
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
    log.info("%s on %s: %d pairs in %.1f s (%.0f pairs/s)", spec.name, args.name, len(pairs), seconds,
             len(pairs) / max(seconds, 1e-9))


def cmd_train_ffnn(args: argparse.Namespace) -> None:
    """Train MCIC's FFNN option scorer on the MCIC train split over an upstream model's embeddings."""
    from itmbench.benchmarks import mcic
    from itmbench.models.option_scorer import train_ffnn
    from itmbench.models.registry import ModelSpec
    from itmbench.scoring.embed import EmbeddingCache

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    train = mcic.read(args.train_bench)["examples"]
    dev = mcic.read(args.dev_bench)["examples"]
    dev = dev[dev["split"] == args.dev_split]
    summary = train_ffnn(spec, train, dev, EmbeddingCache(args.features), args.out, args.history)
    log.info("trained %s: best epoch %s, dev accuracy %s", spec.name, summary["best_epoch"], summary["dev_accuracy"])


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = argparse.ArgumentParser(prog="itmbench", description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, func, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.set_defaults(func=func)
        return sp

    sp = add("world", cmd_world, "generate the world's items")
    sp.add_argument("--config", type=_json_arg, required=True, help="params.yaml `world` section as JSON")
    sp.add_argument("--out", required=True)

    sp = add("build-retrieval", cmd_build_retrieval, "build the world's retrieval benchmark")
    sp.add_argument("--items", required=True)
    sp.add_argument("--world", type=_json_arg, required=True)
    sp.add_argument("--split", default="test")
    sp.add_argument("--out", required=True)

    for name, func, help_ in (("train", cmd_train, "train a model"), ("embed", cmd_embed, "embed items once")):
        sp = add(name, func, help_)
        sp.add_argument("--model", required=True)
        sp.add_argument("--spec", type=_json_arg, required=True, help="params.yaml `models.<name>` as JSON")
        sp.add_argument("--items", required=True)
        sp.add_argument("--out", required=True)
        sp.add_argument("--threads", type=int, default=1)
        sp.add_argument("--device", default="auto")
    sub.choices["train"].add_argument("--train", type=_json_arg, required=True, help="params.yaml `train` as JSON")
    sub.choices["train"].add_argument("--history", required=True)
    sub.choices["embed"].add_argument("--needed", default=None, help="a parquet (kind, item_id) of the items to embed")
    sub.choices["embed"].add_argument("--splits", nargs="*", default=None, help="embed every item of these splits")
    sub.choices["embed"].add_argument("--checkpoint", default=None)
    sub.choices["embed"].add_argument("--batch-size", type=int, default=256)
    sub.choices["embed"].add_argument("--extra-items", nargs="*", default=[], help="item folders benchmarks added")

    sp = add("score-retrieval", cmd_score_retrieval, "per-query ranks on a retrieval benchmark")
    sp.add_argument("--bench", required=True)
    scored = sp.add_mutually_exclusive_group(required=True)
    scored.add_argument("--embeddings", nargs="+")
    scored.add_argument("--pairs", nargs="+", help="a cross scorer's pair-score files (the full grid)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--chunk-size", type=int, default=1024)
    sp.add_argument("--threads", type=int, default=1)

    sp = add("metrics-retrieval", cmd_metrics_retrieval, "R@K and MedR with intervals")
    sp.add_argument("--scores", required=True)
    sp.add_argument("--model", required=True)
    sp.add_argument("--benchmark", required=True)
    sp.add_argument("--config", type=_json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out", required=True)

    sp = add("table-retrieval", cmd_table_retrieval, "retrieval table as CSV, Markdown, LaTeX")
    sp.add_argument("metrics", nargs="+")
    sp.add_argument("--out-csv", required=True, help="the .csv path; .md and .tex are written beside it")
    sp.add_argument("--title", default="Retrieval")
    sp.add_argument("--absent", action="append", default=[], help="MODEL=REASON: a model the table does not score")
    sp.add_argument("--grid-of", default=None, help="items parquet whose caption x image grid {pairs} counts")

    sp = add("build-benchmark", cmd_build_benchmark, "build a world benchmark by its paper's procedure")
    sp.add_argument("--name", required=True)
    sp.add_argument("--items", required=True)
    sp.add_argument("--world", type=_json_arg, required=True)
    sp.add_argument("--config", type=_json_arg, required=True, help="the benchmark's params.yaml section as JSON")
    sp.add_argument("--dep", action="append", default=[], help="NAME=DIR of a benchmark this one builds on")
    sp.add_argument("--out", required=True)

    sp = add("audit-benchmark", cmd_audit_benchmark, "audit a world benchmark against the truth")
    sp.add_argument("--name", required=True)
    sp.add_argument("--items", required=True)
    sp.add_argument("--bench", required=True)
    sp.add_argument("--world", type=_json_arg, required=True)
    sp.add_argument("--config", type=_json_arg, required=True)
    sp.add_argument("--out-csv", required=True)

    sp = add("score-benchmark", cmd_score_benchmark, "per-instance scores of a model on a benchmark")
    sp.add_argument("--name", required=True)
    sp.add_argument("--bench", required=True)
    scored = sp.add_mutually_exclusive_group(required=True)
    scored.add_argument("--embeddings", nargs="+", help="the model's cache files (source + added items)")
    scored.add_argument("--pairs", nargs="+", help="a cross scorer's pair-score files (score-pairs)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--threads", type=int, default=1)

    sp = add("metrics-benchmark", cmd_metrics_benchmark, "a benchmark's metrics with intervals")
    sp.add_argument("--name", required=True)
    sp.add_argument("--scores", required=True)
    sp.add_argument("--model", required=True)
    sp.add_argument("--config", type=_json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out", required=True)

    sp = add("table-benchmark", cmd_table_benchmark, "a benchmark's table of every model")
    sp.add_argument("metrics", nargs="+")
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--title", required=True)
    sp.add_argument("--absent", action="append", default=[], help="MODEL=REASON: a model the table does not score")
    sp.add_argument("--grid-of", default=None, help="items parquet whose caption x image grid {pairs} counts")

    sp = add("score-pairs", cmd_score_pairs, "a cross scorer's scores of the pairs a benchmark needs")
    sp.add_argument("--name", required=True, help="the benchmark (retrieval or a world benchmark)")
    sp.add_argument("--bench", required=True)
    sp.add_argument("--model", required=True)
    sp.add_argument("--spec", type=_json_arg, required=True, help="params.yaml `models.<name>` as JSON")
    sp.add_argument("--checkpoint", default=None)
    sp.add_argument("--items", required=True, help="the source's items folder")
    sp.add_argument("--extra-items", nargs="*", default=[], help="item folders the benchmark added")
    sp.add_argument("--features", nargs="*", default=[], help="the upstream model's cache files (ffnn)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--threads", type=int, default=1)
    sp.add_argument("--device", default="auto")

    sp = add("train-ffnn", cmd_train_ffnn, "train MCIC's FFNN option scorer")
    sp.add_argument("--model", required=True)
    sp.add_argument("--spec", type=_json_arg, required=True, help="params.yaml `models.<name>` as JSON")
    sp.add_argument("--train-bench", required=True, help="the MCIC folder built on the train split")
    sp.add_argument("--dev-bench", required=True, help="the MCIC folder with the dev split (epoch selection)")
    sp.add_argument("--dev-split", default="dev")
    sp.add_argument("--features", nargs="+", required=True, help="the upstream model's cache files (train + dev)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--history", required=True)
    sp.add_argument("--threads", type=int, default=1)

    sp = add("fetch", cmd_fetch, "fetch a released file through DVC, md5-checked")
    sp.add_argument("--key", required=True, help="key in src/itmbench/sources/released.yaml")
    sp.add_argument("--out", required=True)
    sp.add_argument("--mirror", default=None, help="mirror folder or base URL (<host>/<path> layout)")

    sp = add("released-statistics", cmd_released_statistics, "dataset statistics from the released files")
    sp.add_argument("--paper", required=True, choices=["cxc", "mcic", "eccv", "bivlc"])
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--out-csv", required=True)

    sp = add("released-paper-tables", cmd_released_paper_tables, "paper tables and figures from released files")
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--out-dir", required=True)

    sp = add("claims", cmd_claims, "each paper's claims checked on a source's metrics")
    sp.add_argument("--metrics-dir", required=True)
    sp.add_argument("--source", default="world")
    sp.add_argument("--kinds", type=_json_arg, default={}, help='{"model": "contrastive|chance|other", ...}')
    sp.add_argument("--out-csv", required=True)

    sp = add("share", cmd_share, "dvc add + push the expensive outputs, with their modification times")
    sp.add_argument("--source", default="world")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)
    sp.add_argument("--no-push", action="store_true")

    sp = add("pull", cmd_pull, "dvc pull the shared outputs and restore their modification times")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)

    from itmbench import predictions

    sp = add("score-predictions", predictions.run, "score predictions made elsewhere (the papers' released formats)")
    predictions.add_arguments(sp)

    sp = add("notebook", cmd_notebook, "execute a notebook and render HTML")
    sp.add_argument("--notebook", required=True)
    sp.add_argument("--parameters", type=_json_arg, default={})
    sp.add_argument("--out", required=True)

    sp = add("index", cmd_index, "write reports/index.html")
    sp.add_argument("reports", nargs="+")
    sp.add_argument("--out", required=True)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; errors print one clear line and exit non-zero."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        args.func(args)
    except (ValueError, KeyError, FileNotFoundError, RuntimeError) as err:
        log.error("%s", err)
        print(f"itmbench {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
