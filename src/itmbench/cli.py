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


def cmd_needed_items(args: argparse.Namespace) -> None:
    """Union of the items all benchmarks need: what every model embeds, once."""
    import pandas as pd

    from itmbench.io import write_parquet
    from itmbench.scoring.embed import needed_items

    tables = [pd.read_parquet(p) for p in args.benchmark_items]
    df = needed_items(tables)
    write_parquet(args.out, df)
    log.info("%d unique items needed by %d benchmarks", len(df), len(tables))


def cmd_train(args: argparse.Namespace) -> None:
    """Train a model by its spec's trainer."""
    from itmbench.models.registry import ModelSpec, pick_device
    from itmbench.train.contrastive import TrainConfig, train_contrastive

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    trainers = {"contrastive": train_contrastive}
    if spec.trainer not in trainers:
        raise SystemExit(f"models.{spec.name}: unknown trainer {spec.trainer!r}; expected one of {sorted(trainers)}")
    summary = trainers[spec.trainer](
        spec, TrainConfig.from_dict(args.train), args.items, args.out, args.history, pick_device(args.device)
    )
    log.info("trained %s: best epoch %s, val R@1 %.2f", spec.name, summary["best_epoch"], summary["val_r1"])


def cmd_embed(args: argparse.Namespace) -> None:
    """Embed every needed item once with one model."""
    import pandas as pd

    from itmbench.models.registry import ModelSpec, build_encoder, pick_device
    from itmbench.scoring.embed import ItemStore, embed_items, write_embeddings

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    encoder = build_encoder(spec, pick_device(args.device), args.checkpoint)
    items = pd.read_parquet(args.needed)
    emb = embed_items(encoder, ItemStore(args.items), items, args.batch_size)
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
    scores = score_retrieval(items, positives, EmbeddingCache(args.embeddings), args.chunk_size)
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
    long = retrieval_long_table(metrics)
    write_table(long, Path(args.out_csv).with_suffix(""), args.title, row_header="model [positives]")


def cmd_notebook(args: argparse.Namespace) -> None:
    """Execute a report notebook with papermill and render it to HTML."""
    from itmbench.report.render import run_notebook

    run_notebook(args.notebook, args.out, args.parameters)


def cmd_index(args: argparse.Namespace) -> None:
    """reports/index.html linking every report."""
    from itmbench.report.render import write_index

    write_index(args.out, args.reports)


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

    sp = add("needed-items", cmd_needed_items, "union of the items every benchmark needs")
    sp.add_argument("benchmark_items", nargs="+")
    sp.add_argument("--out", required=True)

    for name, func, help_ in (("train", cmd_train, "train a model"), ("embed", cmd_embed, "embed needed items")):
        sp = add(name, func, help_)
        sp.add_argument("--model", required=True)
        sp.add_argument("--spec", type=_json_arg, required=True, help="params.yaml `models.<name>` as JSON")
        sp.add_argument("--items", required=True)
        sp.add_argument("--out", required=True)
        sp.add_argument("--threads", type=int, default=1)
        sp.add_argument("--device", default="auto")
    sub.choices["train"].add_argument("--train", type=_json_arg, required=True, help="params.yaml `train` as JSON")
    sub.choices["train"].add_argument("--history", required=True)
    sub.choices["embed"].add_argument("--needed", required=True)
    sub.choices["embed"].add_argument("--checkpoint", default=None)
    sub.choices["embed"].add_argument("--batch-size", type=int, default=256)

    sp = add("score-retrieval", cmd_score_retrieval, "per-query ranks on a retrieval benchmark")
    sp.add_argument("--bench", required=True)
    sp.add_argument("--embeddings", required=True)
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
    except (ValueError, KeyError, FileNotFoundError) as err:
        log.error("%s", err)
        print(f"itmbench {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
