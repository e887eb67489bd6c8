"""`itmbench ...`: the commands that the workflow's rules call, one per rule.

Every command takes its parameters as explicit flags (a params section arrives as one JSON
string, so Snakemake sees exactly the parameters a job depends on) and writes its outputs
atomically. Entry points are `main(argv)` so tests call them directly.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
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


def _limit_threads(threads: int) -> None:
    """The thread count of a job that may never import torch (scoring from embeddings on the CPU): the
    BLAS/OpenMP variables, read by numpy's OpenBLAS and by torch when they load (a fresh `itmbench`
    process has loaded neither yet), and torch's own setting when torch is loaded already."""
    n = max(1, threads)
    if "numpy" not in sys.modules:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)


def cmd_world(args: argparse.Namespace) -> None:
    """Generate the world's items."""
    from itmbench.world.generate import WorldConfig, generate_world, write_world

    cfg = WorldConfig.from_dict(args.config)
    world = generate_world(cfg)
    write_world(world, args.out)
    log.info("world: %d images, %d captions -> %s", len(world.image_table), len(world.caption_table), args.out)


def cmd_build_retrieval(args: argparse.Namespace) -> None:
    """Build the world's retrieval benchmark (original and complete-truth positives)."""
    from itmbench.papers.retrieval.benchmark import build_world_retrieval, write_retrieval
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
    from itmbench.papers.registry import benchmark
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    deps = {name: benchmark(name).module.read(path) for name, path in _dep_dirs(args.dep).items()}
    tables = entry.build(read_world(args.items), args.config, WorldConfig.from_dict(args.world), deps)
    entry.module.write(tables, args.out)
    log.info("%s: %s", args.name, {k: len(v) for k, v in tables.items()})


def cmd_audit_benchmark(args: argparse.Namespace) -> None:
    """The audit table of one world benchmark against the complete truth."""
    from itmbench.papers.registry import benchmark
    from itmbench.report.tables import write_table
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    tables = entry.module.read(args.bench)
    audit = entry.audit(read_world(args.items), tables, args.config, WorldConfig.from_dict(args.world))
    title = f"{args.name} in the world: audit against the complete truth (95% intervals)"
    write_table(audit, Path(args.out_csv).with_suffix(""), title, row_header="audit", decimals=2)


def cmd_score_benchmark(args: argparse.Namespace) -> None:
    """Per-instance scores of one model on one benchmark, from the embedding cache."""
    _limit_threads(args.threads)  # first: before numpy loads its BLAS
    _check_metrics_args(args)
    from itmbench.io import write_parquet
    from itmbench.papers.registry import benchmark
    from itmbench.scoring.embed import EmbeddingCache

    entry = benchmark(args.name)
    tables = entry.module.read(args.bench)
    if args.pairs:
        from itmbench.scoring.pairs import PairScores

        shortlist = _shortlist(args)
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
    import pandas as pd

    from itmbench.io import write_json
    from itmbench.papers.registry import benchmark

    summary = benchmark(name).module.summarize(
        pd.read_parquet(scores), n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
    )
    write_json(out, {**summary, "model": model, "benchmark": name})


def cmd_metrics_benchmark(args: argparse.Namespace) -> None:
    """A benchmark's metrics with intervals from per-instance scores."""
    _write_benchmark_metrics(args.name, args.scores, args.model, args.config, args.out)


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
    cfg = TrainConfig.from_dict({**args.train, **spec.train})  # the model's own overrides win
    init = {"init": args.init} if args.init else {}  # fine-tuning: start from another model's checkpoint
    summary = train(spec, cfg, args.items, args.out, args.history, pick_device(args.device), **init)
    log.info("trained %s: best epoch %s, val R@1 %s", spec.name, summary["best_epoch"], summary.get("val_r1", "-"))


def cmd_embed(args: argparse.Namespace) -> None:
    """Embed the items of one folder once with one model (of some splits, or the listed ones)."""
    import pandas as pd

    from itmbench.models.registry import ModelSpec, build_encoder, pick_device
    from itmbench.scoring.embed import (
        ItemStore,
        embed_items,
        embed_items_on_devices,
        folder_items,
        visible_devices,
        write_embeddings,
    )

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    items = pd.read_parquet(args.needed) if args.needed else folder_items(args.items, args.splits)
    devices = visible_devices(args.devices)
    if len(devices) > 1:  # item batches split across devices (CUDA, else CPU shards), one worker each
        emb = embed_items_on_devices(
            args.spec,
            args.model,
            args.checkpoint,
            args.items,
            args.extra_items,
            items,
            devices,
            args.batch_size,
            args.threads,
        )
    else:
        encoder = build_encoder(spec, pick_device(args.device), args.checkpoint)
        store = ItemStore(args.items, args.extra_items, image_size=getattr(encoder, "image_size", 224))
        emb = embed_items(encoder, store, items, args.batch_size)
    write_embeddings(args.out, emb)
    log.info("embedded %d images and %d captions with %s", len(emb["image_ids"]), len(emb["caption_ids"]), spec.name)


def cmd_score_retrieval(args: argparse.Namespace) -> None:
    """Per-query first-positive ranks of one model on one retrieval benchmark."""
    _limit_threads(args.threads)  # first: before numpy loads its BLAS
    _check_metrics_args(args)
    from itmbench.io import write_parquet
    from itmbench.papers.retrieval.benchmark import read_retrieval
    from itmbench.scoring.embed import EmbeddingCache
    from itmbench.scoring.retrieval import score_retrieval

    items, positives = read_retrieval(args.bench)
    shortlist = _shortlist(args)
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
    import pandas as pd

    from itmbench.io import write_json
    from itmbench.metrics.retrieval import retrieval_summary

    table = pd.read_parquet(scores)
    result: dict = {"model": model, "benchmark": bench, "metrics": {}}
    for (positive_set, direction), group in table.groupby(["positive_set", "direction"], sort=True):
        summary = retrieval_summary(
            group["rank"].to_numpy(), ks=cfg["ks"], n_boot=cfg["n_boot"], seed=cfg["seed"], confidence=cfg["confidence"]
        )
        result["metrics"].setdefault(positive_set, {})[direction] = summary
    write_json(out, result)


def cmd_metrics_retrieval(args: argparse.Namespace) -> None:
    """R@K and MedR with intervals from per-query ranks."""
    _write_retrieval_metrics(args.scores, args.model, args.benchmark, args.config, args.out)


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
    title = f"Claims checked on the {args.source} results"
    if args.paper:
        table = table[table["paper"] == args.paper].reset_index(drop=True)
        title = f"{args.paper}: claims checked on the {args.source} results"
    write_claims_table(table, Path(args.out_csv).with_suffix(""), title)
    log.info("claims: %s", table["holds"].astype(str).value_counts().to_dict())


def cmd_world_paper_tables(args: argparse.Namespace) -> None:
    """One paper's tables in its own layout, filled from the world's metrics, beside the published numbers."""
    from itmbench.papers.world import write_world_paper_tables

    paths = write_world_paper_tables(args.paper, args.metrics, args.out_dir, args.rows, args.kinds, args.options)
    log.info("%s: %d world table files -> %s", args.paper, len(paths), args.out_dir)


def cmd_world_paper_figures(args: argparse.Namespace) -> None:
    """One paper's figures drawn from the world's metrics (PNG and PDF, byte-deterministic)."""
    from itmbench.papers.world_figures import write_world_paper_figures

    paths = write_world_paper_figures(args.paper, args.metrics, args.out_dir, args.rows, args.kinds, args.dpi)
    log.info("%s: %d world figure files -> %s", args.paper, len(paths), args.out_dir)


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


def cmd_build_coco_benchmark(args: argparse.Namespace) -> None:
    """Build one benchmark of the coco source from its released files and the COCO items."""
    from itmbench.sources.coco_benchmarks import build_coco_benchmark

    released = build_coco_benchmark(args.name, args.raw, args.items, args.config, args.out)
    log.info("coco %s: %s; %s", args.name, {k: len(v) for k, v in released.tables.items()}, released.log)


def cmd_train_diffusion(args: argparse.Namespace) -> None:
    """Train the world's text-to-image diffusion model (model.pt, history.json in --out)."""
    from itmbench.models.registry import pick_device
    from itmbench.negatives.diffusion import DiffusionConfig, train_diffusion

    _set_threads(args.threads)
    cfg = DiffusionConfig.from_dict(args.config)
    history = train_diffusion(args.items, cfg, args.out, str(pick_device(args.device)))
    log.info("diffusion: %s, final loss %.4f", history["timing"][-1], history["log"][-1]["loss"])


def cmd_train_recognizer(args: argparse.Namespace) -> None:
    """Train the pixel recognizer on rendered scenes (model.pt, history.json, metrics.json in --out)."""
    from itmbench.models.registry import pick_device
    from itmbench.negatives.recognizer import RecognizerConfig, train_recognizer

    _set_threads(args.threads)
    cfg = RecognizerConfig.from_dict(args.config)
    out = train_recognizer(args.items, cfg, args.out, str(pick_device(args.device)))
    log.info("recognizer: %s; val %s", out["history"]["timing"], {k: out["metrics"][k] for k in ("scene_exact",)})


def _bivlc_config(section: dict, world: dict):
    """BiVLC's typed config with the world's truth settings (as the benchmark registry makes it)."""
    from itmbench.papers.registry import benchmark
    from itmbench.world.generate import WorldConfig

    return benchmark("bivlc").config(section, WorldConfig.from_dict(world))


def _diffusion_generator(cfg, image_size: int, args: argparse.Namespace):
    """The registry's diffusion generator (read by the recognizer) from the checkpoint folders of the flags."""
    from itmbench.negatives.images import make_generator

    params = cfg.generator_params(image_size, "diffusion", model_path=args.diffusion, recognizer_path=args.recognizer)
    return make_generator("diffusion", **params, device=args.device)


def cmd_generate_candidates(args: argparse.Namespace) -> None:
    """BiVLC's step 2 with a text-to-image generator: every negative caption's candidates, stored for the build."""
    from itmbench.negatives.candidates import generate_candidates, write_candidates
    from itmbench.world.generate import read_world

    _set_threads(args.threads)
    cfg = _bivlc_config(args.config, args.world)
    if cfg.generator == "render":
        raise ValueError("generate-candidates: bivlc generator 'render' renders inside the build; expected diffusion")
    world = read_world(args.items)
    table, images = generate_candidates(world, cfg, _diffusion_generator(cfg, int(world.images.shape[1]), args))
    write_candidates(table, images, args.out)
    log.info("candidates: %d images of %d captions -> %s", len(table), table["text"].nunique(), args.out)


def cmd_filter_rates(args: argparse.Namespace) -> None:
    """BiVLC's two filters on both generators over one sample: the filter-rate table and the sampled candidates."""
    import numpy as np

    from itmbench.io import atomic_path, write_parquet
    from itmbench.negatives.filter_rates import FilterRateConfig, filter_rate_table, run_filters, sample_instances
    from itmbench.negatives.images import make_generator
    from itmbench.papers.bivlc.benchmark import sugarcrepe_instances
    from itmbench.report.tables import write_table
    from itmbench.world.generate import read_world

    _set_threads(args.threads)
    cfg = _bivlc_config(args.config, args.world)
    rates = FilterRateConfig.from_dict(args.filter)
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
    write_table(filter_rate_table(records, cfg.subsets), Path(args.out_csv).with_suffix(""), title, "generator")
    out = Path(args.sample_out)
    write_parquet(out / "records.parquet", records)
    with atomic_path(out / "images.npy") as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, pixels)
    log.info("filter rates: %s", records.groupby("generator")["kept"].mean().to_dict())


def cmd_plot_negatives(args: argparse.Namespace) -> None:
    """The grid of sampled negatives of both generators (PNG), from the filter-rates sample."""
    import numpy as np
    import pandas as pd

    from itmbench.negatives.filter_rates import plot_generated_negatives
    from itmbench.world.generate import read_world

    records = pd.read_parquet(Path(args.sample) / "records.parquet")
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
        sp.add_argument("--config", type=_json_arg, required=True, help="its params.yaml section as JSON")
        sp.add_argument("--out", required=True, help="folder of model.pt and history.json")
        sp.add_argument("--threads", type=int, default=1)
        sp.add_argument("--device", default="auto")
    parsers = {}
    for name, func, help_ in (
        ("generate-candidates", cmd_generate_candidates, "BiVLC's candidate images from the diffusion model"),
        ("filter-rates", cmd_filter_rates, "BiVLC's two filters on both generators over a sample"),
    ):
        sp = parsers[name] = add(name, func, help_)
        sp.add_argument("--items", required=True)
        sp.add_argument("--world", type=_json_arg, required=True, help="params.yaml `world` section as JSON")
        sp.add_argument("--config", type=_json_arg, required=True, help="params.yaml `bivlc` section as JSON")
        sp.add_argument("--diffusion", required=True, help="folder of the diffusion model (train-diffusion)")
        sp.add_argument("--recognizer", required=True, help="folder of the recognizer (train-recognizer)")
        sp.add_argument("--threads", type=int, default=1)
        sp.add_argument("--device", default="auto")
    parsers["generate-candidates"].add_argument("--out", required=True, help="the candidates folder")
    sp = parsers["filter-rates"]
    sp.add_argument("--filter", type=_json_arg, required=True, help="params.yaml `filter_rates` section as JSON")
    sp.add_argument("--out-csv", required=True, help="the .csv path; .md and .tex are written beside it")
    sp.add_argument("--sample-out", required=True, help="folder of the sampled candidates (records, images)")
    sp = add("plot-negatives", cmd_plot_negatives, "grid of both generators' sampled negatives (PNG)")
    sp.add_argument("--sample", required=True, help="the folder filter-rates wrote with --sample-out")
    sp.add_argument("--items", required=True, help="the world's items folder (positive images)")
    sp.add_argument("--rows", type=int, default=8, help="negative captions shown")
    sp.add_argument("--out", required=True)


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


def _shortlist(args: argparse.Namespace):
    """The `--shortlist` cache files and `--shortlist-k` as a Shortlist, or None (the full grid)."""
    if not getattr(args, "shortlist", None):
        return None
    from itmbench.scoring.embed import EmbeddingCache
    from itmbench.scoring.pairs import Shortlist

    return Shortlist(EmbeddingCache(args.shortlist), args.shortlist_k)


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

    from itmbench.models.registry import ModelSpec, build_encoder, pick_device
    from itmbench.scoring.embed import EmbeddingCache, ItemStore
    from itmbench.scoring.pairs import write_pair_scores

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    scorer = build_encoder(spec, pick_device(args.device), args.checkpoint)
    if not hasattr(scorer, "score_pairs"):
        raise ValueError(f"models.{spec.name}: family {spec.family!r} is no cross scorer (it gives embeddings)")
    pairs = _pairs_needed(args.name, args.bench, _shortlist(args))
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


def cmd_train_ffnn(args: argparse.Namespace) -> None:
    """Train MCIC's FFNN option scorer on the MCIC train split over an upstream model's embeddings."""
    from itmbench.models.option_scorer import train_ffnn
    from itmbench.models.registry import ModelSpec
    from itmbench.papers.mcic import benchmark as mcic
    from itmbench.scoring.embed import EmbeddingCache

    _set_threads(args.threads)
    spec = ModelSpec.from_dict(args.model, args.spec)
    train = mcic.read(args.train_bench)["examples"]
    dev = mcic.read(args.dev_bench)["examples"]
    dev = dev[dev["split"] == args.dev_split]
    summary = train_ffnn(spec, train, dev, EmbeddingCache(args.features), args.out, args.history)
    log.info("trained %s: best epoch %s, dev accuracy %s", spec.name, summary["best_epoch"], summary["dev_accuracy"])


def _add_shortlist(sp: argparse.ArgumentParser) -> None:
    """--shortlist/--shortlist-k: a cross scorer re-ranks a dual encoder's top-k on a gallery benchmark."""
    sp.add_argument(
        "--shortlist",
        nargs="+",
        default=None,
        help="a dual encoder's cache files: the cross scorer re-ranks its top-k per query (gallery benchmarks)",
    )
    sp.add_argument("--shortlist-k", type=int, default=16, help="candidates per query in the shortlist")


def _add_metrics_out(sp: argparse.ArgumentParser) -> None:
    """--metrics/--model/--config: the scoring job also writes the metrics of the scores it wrote."""
    sp.add_argument("--metrics", default=None, help="also write the metrics with intervals (JSON) of these scores")
    sp.add_argument("--model", default=None, help="the model's name, recorded in the metrics (with --metrics)")
    sp.add_argument(
        "--config", type=_json_arg, default=None, help="params.yaml `score` section as JSON (with --metrics)"
    )


def _check_metrics_args(args: argparse.Namespace) -> None:
    if args.metrics and (args.model is None or args.config is None):
        raise ValueError("--metrics needs --model and --config (the `score` section as JSON)")


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
    sub.choices["train"].add_argument("--init", default=None, help="checkpoint to start from (the spec's `init`)")
    sub.choices["embed"].add_argument("--needed", default=None, help="a parquet (kind, item_id) of the items to embed")
    sub.choices["embed"].add_argument("--splits", nargs="*", default=None, help="embed every item of these splits")
    sub.choices["embed"].add_argument("--checkpoint", default=None)
    sub.choices["embed"].add_argument("--batch-size", type=int, default=256)
    sub.choices["embed"].add_argument("--extra-items", nargs="*", default=[], help="item folders benchmarks added")
    sub.choices["embed"].add_argument(
        "--devices", default="1", help="N or 'all': split item batches across N CUDA devices, else N CPU shards"
    )

    sp = add("score-retrieval", cmd_score_retrieval, "per-query ranks on a retrieval benchmark")
    sp.add_argument("--bench", required=True)
    scored = sp.add_mutually_exclusive_group(required=True)
    scored.add_argument("--embeddings", nargs="+")
    scored.add_argument("--pairs", nargs="+", help="a cross scorer's pair-score files (the full grid or a shortlist)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--chunk-size", type=int, default=1024)
    sp.add_argument("--threads", type=int, default=1)
    _add_shortlist(sp)
    _add_metrics_out(sp)

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
    _add_shortlist(sp)
    _add_metrics_out(sp)

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
    _add_shortlist(sp)

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
    sp.add_argument("--paper", default=None, help="only this paper's claims")

    for name, func, help_ in (
        ("world-paper-tables", cmd_world_paper_tables, "a paper's tables in its layout, from the world, vs published"),
        ("world-paper-figures", cmd_world_paper_figures, "a paper's figures from the world's metrics"),
    ):
        sp = add(name, func, help_)
        sp.add_argument("metrics", nargs="+", help="metrics files <benchmark>/<model>.json")
        sp.add_argument("--paper", required=True, choices=["bison", "mcic", "eccv", "bivlc", "cxc", "sugarcrepe"])
        sp.add_argument("--rows", type=_json_arg, default={}, help='world model -> printed row: {"clip": "CLIP_COCO"}')
        sp.add_argument("--kinds", type=_json_arg, default={}, help='{"model": "contrastive|chance|other", ...}')
        sp.add_argument("--out-dir", required=True)
    sub.choices["world-paper-tables"].add_argument("--options", type=_json_arg, default={}, help="report options")
    sub.choices["world-paper-figures"].add_argument("--dpi", type=int, default=150)

    sp = add("share", cmd_share, "dvc add + push the expensive outputs, with their modification times")
    sp.add_argument("--source", default="world")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)
    sp.add_argument("--no-push", action="store_true")

    sp = add("pull", cmd_pull, "dvc pull the shared outputs and restore their modification times")
    sp.add_argument("--root", default=".")
    sp.add_argument("--remote", default=None)

    from itmbench import predictions_args

    sp = add(
        "score-predictions", predictions_args.run, "score predictions made elsewhere (the papers' released formats)"
    )
    predictions_args.add_arguments(sp)

    sp = add("build-coco-benchmark", cmd_build_coco_benchmark, "a benchmark of the coco source from its released files")
    sp.add_argument("--name", required=True, help="bison, mcic, eccv, cxc, bivlc or retrieval")
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--items", required=True, help="the COCO items folder (itmbench coco-items)")
    sp.add_argument("--config", type=_json_arg, default={}, help="params.yaml `coco_benchmarks.<name>` as JSON")
    sp.add_argument("--out", required=True)

    sp = add("notebook", cmd_notebook, "execute a notebook and render HTML")
    sp.add_argument("--notebook", required=True)
    sp.add_argument("--parameters", type=_json_arg, default={})
    sp.add_argument("--out", required=True)

    sp = add("index", cmd_index, "write reports/index.html")
    sp.add_argument("reports", nargs="+")
    sp.add_argument("--out", required=True)

    from itmbench import cli_coco

    cli_coco.add_commands(add, _json_arg)

    _add_generator_commands(add)
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
