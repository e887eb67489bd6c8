"""`itmbench mcic-sweep`, `mcic-sweep-table`: MCIC's Tables 4 (model sizes) and 5 (lambda_gen) in the world;
`mcic-optimize-pv`: Algorithm 1's OPTIMIZE-PV, whose chosen PV-DBOW point the MCIC build takes.

`mcic-sweep` trains every variant of one sweep in one process (torch imported once) and writes a long
CSV (`itmbench.papers.mcic.sweeps.SWEEP_COLUMNS`); `mcic-sweep-table` renders it beside the printed
values as CSV, Markdown and LaTeX, so that restyling a table never retrains.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import add_confidence, json_arg, positive_int, set_threads

log = logging.getLogger("itmbench")

SWEEPS = ("sizes", "lambda_gen")


def cmd_mcic_sweep(args: argparse.Namespace) -> None:
    """Train one sweep's variants on the MCIC train split, score them on dev and test: one long CSV."""
    from itmbench.errors import InputError
    from itmbench.io import write_text
    from itmbench.papers.mcic import canonical as mcic
    from itmbench.papers.mcic.sweeps import lambda_gen_sweep, size_sweep
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_file
    from itmbench.scoring.embed import EmbeddingCache

    config = validated_section(f"mcic_sweeps.{args.sweep}", args.config, f"mcic_sweeps.{args.sweep} (--config)")
    set_threads(args.threads)
    train = mcic.read(args.train_bench)["examples"]
    examples = mcic.read(args.bench)["examples"]
    evals = {split: examples[examples["split"] == split] for split in ("dev", "test")}
    for split, frame in evals.items():
        if frame.empty:
            raise InputError(f"{args.bench}: no {split} examples; expected an MCIC benchmark with dev and test splits")
    features = EmbeddingCache(args.features)
    if args.sweep == "sizes":
        frame = size_sweep(train, evals, features, config)
    else:
        if args.captions is None:
            raise InputError("--captions: missing; the lambda_gen sweep scores captions against the world's")
        path = Path(args.captions) / "captions.parquet"
        if not path.exists():
            raise InputError(f"{path}: missing; expected the world's captions (columns image_id, text)")
        captions = read_parquet_file(path, columns=["image_id", "text"])
        frame = lambda_gen_sweep(train, evals, features, captions, config)
    write_text(args.out, frame.round(6).to_csv(index=False, lineterminator="\n"))
    log.info("mcic %s sweep: %d rows -> %s", args.sweep, len(frame), args.out)


def cmd_mcic_sweep_table(args: argparse.Namespace) -> None:
    """Table 4 or 5 from a sweep's CSV, beside the printed values."""
    import pandas as pd

    from itmbench.errors import InputError
    from itmbench.papers.mcic.sweeps import TABLE4_TITLE, TABLE5_TITLE, check_sweep, table4_long, table5_long
    from itmbench.report.tables import write_table_set

    if not Path(args.data).exists():
        raise InputError(f"{args.data}: missing; expected the CSV of `itmbench mcic-sweep --sweep {args.sweep}`")
    frame = check_sweep(pd.read_csv(args.data), args.sweep, args.data)
    level = f"{100 * args.confidence:g}%"
    if args.sweep == "sizes":
        long = table4_long(frame, args.confidence)
        title = f"{TABLE4_TITLE}; intervals: {level} Wilson; '±' the binomial standard error, as printed"
        decimals: dict[str, int] = {"dim": 0, "hidden-1": 0, "hidden-2": 0}
    else:
        long = table5_long(frame, args.confidence)
        title = (
            f"{TABLE5_TITLE}; intervals: accuracy {level} Wilson, ROUGE-L and CIDEr {level} normal over images; "
            "distinct: distinct greedy captions over the split's images"
        )
        decimals = {c: 3 for c in ("ROUGE-L Dev", "ROUGE-L Test", "CIDEr Dev", "CIDEr Test")}
        decimals.update({"distinct Dev": 0, "distinct Test": 0})
    write_table_set(long, args.out_csv, title, row_header="model", column_decimals=decimals)
    log.info("mcic %s table: %d rows -> %s", args.sweep, long["row"].nunique(), args.out_csv)


def cmd_mcic_optimize_pv(args: argparse.Namespace) -> None:
    """OPTIMIZE-PV on the world: the search table (CSV, Markdown, LaTeX) and the chosen point (JSON) for the build."""
    import json

    from itmbench.io import output_set, write_text
    from itmbench.papers.mcic.optimize_pv import optimize_pv_on_world
    from itmbench.papers.mcic.tables import PV_SEARCH_TITLE, pv_search_long
    from itmbench.papers.registry import benchmark
    from itmbench.params import make_config
    from itmbench.report.tables import write_table
    from itmbench.world.generate import WorldConfig, read_world

    world_cfg = make_config(WorldConfig, args.world)
    cfg = benchmark("mcic").config(args.config, world_cfg)  # the params are checked before any file is read
    (size, epochs), search = optimize_pv_on_world(read_world(args.items), cfg)
    chosen = search.loc[search["chosen"]].iloc[0]
    choice = {
        "vector_size": size,
        "epochs": epochs,
        "mgs_rank": float(chosen["mgs_rank"]),
        "mgs_rank_se": float(chosen["mgs_rank_se"]),
        "search_split": cfg.pv_search_split,
    }
    title = f"{PV_SEARCH_TITLE}; mgs-rank interval: {100 * args.confidence:g}% normal over captions"
    with output_set(files=[args.out_choice], folders=[Path(args.out_csv).parent]):  # all together or not at all
        write_table(
            pv_search_long(search, args.confidence),
            Path(args.out_csv).with_suffix(""),
            title,
            row_header="PV",
            decimals=1,
        )
        write_text(args.out_choice, json.dumps(choice, indent=1, sort_keys=True) + "\n")
    log.info(
        "mcic OPTIMIZE-PV: %d grid points, chosen dim %d x %d epochs -> %s", len(search), size, epochs, args.out_choice
    )


def cmd_mcic_lambda_search(args: argparse.Namespace) -> None:
    """MCIC's OPTIMIZE-SCORE: the wmgs-rank of each lambda of the grid and the chosen one, from the world's build."""
    from itmbench.errors import InputError
    from itmbench.papers.mcic import canonical
    from itmbench.papers.mcic.tables import LAMBDA_SEARCH_TITLE, lambda_search_long
    from itmbench.report.tables import write_table_set

    path = Path(args.bench) / "lambda_search.parquet"
    if not path.exists():
        raise InputError(f"{path}: missing; expected the lambda search of an MCIC benchmark built in the world")
    search = canonical.read(args.bench)["lambda_search"]
    if int(search["chosen"].sum()) != 1:
        raise InputError(f"{path}: {int(search['chosen'].sum())} rows marked chosen; expected exactly one")
    long = lambda_search_long(search, args.confidence)
    title = f"{LAMBDA_SEARCH_TITLE}; wmgs-rank interval: {100 * args.confidence:g}% normal over captions"
    write_table_set(long, args.out_csv, title, row_header="lambda", decimals=2)
    chosen = float(search.loc[search["chosen"], "lambda"].iloc[0])
    log.info("mcic lambda search: %d grid points, chosen lambda %g -> %s", len(search), chosen, args.out_csv)


def cmd_train_ffnn(args: argparse.Namespace) -> None:
    """Train an MCIC option scorer (the FFNN, or a linear baseline) on the MCIC train split over an upstream model's
    embeddings: the spec's family picks the trainer (`OPTION_TRAINERS`)."""
    from itmbench.models.registry import option_trainer
    from itmbench.models.spec import model_spec
    from itmbench.papers.mcic import canonical as mcic
    from itmbench.scoring.embed import EmbeddingCache

    set_threads(args.threads)
    spec = model_spec(args.model, args.spec)
    train = mcic.read(args.train_bench)["examples"]
    dev = mcic.read(args.dev_bench)["examples"]
    dev = dev[dev["split"] == args.dev_split]
    train_option = option_trainer(spec)
    summary = train_option(spec, train, dev, EmbeddingCache(args.features), args.out, args.history)
    log.info("trained %s: best epoch %s, dev accuracy %s", spec.name, summary["best_epoch"], summary["dev_accuracy"])


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("mcic-sweep", cmd_mcic_sweep, "MCIC Table 4 or 5: train a sweep's variants, one long CSV")
    sp.add_argument("--sweep", required=True, choices=SWEEPS, help="sizes (Table 4) or lambda_gen (Table 5)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `mcic_sweeps.<sweep>` as JSON")
    sp.add_argument("--train-bench", required=True, help="the MCIC folder built on the train split")
    sp.add_argument("--bench", required=True, help="the MCIC folder with the dev and test splits")
    sp.add_argument("--features", nargs="+", required=True, help="the upstream model's cache files (train + items)")
    sp.add_argument("--captions", default=None, help="the world's items folder (captions.parquet): lambda_gen only")
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--out", required=True, help="the sweep's long CSV")
    sp = add("mcic-optimize-pv", cmd_mcic_optimize_pv, "MCIC's OPTIMIZE-PV: mgs-rank per PV point, the chosen point")
    sp.add_argument("--items", required=True, help="the world's items folder")
    sp.add_argument("--world", type=json_arg, required=True, help="params.yaml `world` section as JSON")
    sp.add_argument(
        "--config", type=json_arg, required=True, help="params.yaml `mcic` section (or its PV keys) as JSON"
    )
    add_confidence(sp, "interval level of the mgs-rank")
    sp.add_argument("--out-csv", required=True, help="the search table's CSV; .md and .tex are written beside it")
    sp.add_argument("--out-choice", required=True, help="the chosen point as JSON (build-benchmark --input pv_choice=)")
    sp = add("mcic-sweep-table", cmd_mcic_sweep_table, "MCIC Table 4 or 5 from its sweep's CSV, beside the paper's")
    sp.add_argument("--sweep", required=True, choices=SWEEPS)
    sp.add_argument("--data", required=True, help="the sweep's CSV (mcic-sweep --out)")
    add_confidence(sp)
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("mcic-lambda-search", cmd_mcic_lambda_search, "MCIC's OPTIMIZE-SCORE: wmgs-rank per lambda, as a table")
    sp.add_argument("--bench", required=True, help="the world's MCIC benchmark folder (data/world/mcic)")
    add_confidence(sp, "interval level of the wmgs-rank")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("train-ffnn", cmd_train_ffnn, "train an MCIC option scorer (the FFNN, or a linear baseline)")
    sp.add_argument("--model", required=True)
    sp.add_argument("--spec", type=json_arg, required=True, help="params.yaml `models.<name>` as JSON")
    sp.add_argument("--train-bench", required=True, help="the MCIC folder built on the train split")
    sp.add_argument("--dev-bench", required=True, help="the MCIC folder with the dev split (epoch selection)")
    sp.add_argument("--dev-split", default="dev")
    sp.add_argument("--features", nargs="+", required=True, help="the upstream model's cache files (train + dev)")
    sp.add_argument("--out", required=True)
    sp.add_argument("--history", required=True)
    sp.add_argument("--threads", type=positive_int, default=1)
