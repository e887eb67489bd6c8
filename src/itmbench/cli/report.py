"""Tables, figures and reports: `itmbench table-benchmark`, `world-paper-tables`,
`world-paper-figures`, `paired-tests`, `claims`, `notebook`, `index`."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from itmbench.cli._args import (
    choice_values,
    json_arg,
    name_value,
    positive_int,
    score_section,
    with_absent_cells,
)
from itmbench.papers.registry import BENCHMARKS, PAPERS

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger("itmbench")

SOURCES = ("world", "coco")  # the params' `source`


def model_kinds(text: str) -> dict:
    """`--kinds`: a JSON object model -> one of the kinds the claims tell apart (`itmbench.papers.claims.KINDS`)."""
    from itmbench.papers.claims import KINDS

    return choice_values(KINDS)(text)


def _main_metrics_long(metrics: list[dict]) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi): each model's main metrics (its metrics JSON's `metrics`)."""
    import pandas as pd

    rows = []
    for m in metrics:
        for name, cell in m["metrics"].items():
            rows.append(
                {"row": m["model"], "column": name, **{k: cell.get(k, float("nan")) for k in ("value", "lo", "hi")}}
            )
    return pd.DataFrame(rows)


def cmd_table_benchmark(args: argparse.Namespace) -> None:
    """One benchmark's main metrics for every model as CSV, Markdown and LaTeX (a benchmark whose score
    module has its own `long_table` and `ROW_HEADER`, as retrieval's, lays its rows out itself)."""
    from itmbench.papers.registry import benchmark
    from itmbench.reading import read_json
    from itmbench.report.tables import write_table_set

    metrics = [read_json(path) for path in args.metrics]
    score = benchmark(args.name).part("score")
    long = score.long_table(metrics) if hasattr(score, "long_table") else _main_metrics_long(metrics)
    long = with_absent_cells(long, args.absent, args.grid_of)
    entry = benchmark(args.name)
    write_table_set(
        long,
        args.out_csv,
        args.title,
        row_header=getattr(score, "ROW_HEADER", "model"),
        decimals=entry.decimals,  # the paper's printed precision (the CSV stays exact)
        column_decimals=entry.column_precision(long["column"].unique()),
    )


def cmd_notebook(args: argparse.Namespace) -> None:
    """Execute a report notebook with papermill and render its results (no code) to HTML."""
    from itmbench.report.render import run_notebook

    run_notebook(args.notebook, args.out, args.parameters, title=args.title, nav=args.nav)


def cmd_index(args: argparse.Namespace) -> None:
    """reports/index.html: every report, and per paper its claims, largest differences and coverage."""
    from itmbench.errors import InputError
    from itmbench.papers.coverage import STATUSES, index_entries
    from itmbench.report.render import write_index

    missing = [r for r in args.reports if not Path(r).is_file()]
    if missing:
        raise InputError(f"index: reports {missing} are not files; expected the HTML reports the index links")
    write_index(
        args.out,
        args.reports,
        papers=index_entries(args.source),
        statuses=STATUSES,
        claims=args.claims,
        tables=args.tables,
        artefacts=args.artefacts,
        source=args.source,
    )


def cmd_claims(args: argparse.Namespace) -> None:
    """Each paper's claims checked on one source's metrics."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.claims import CLAIM_ORDER, claims_table, load_world_results, write_claims_table

    if args.paper and args.paper not in CLAIM_ORDER:
        raise InputError(f"--paper {args.paper}: the paper states no claims; expected one of {list(CLAIM_ORDER)}")
    if Path(args.metrics_dir).is_dir() and not any(Path(args.metrics_dir).glob("*/*.json")):
        raise InputError(f"{args.metrics_dir}: no metrics files; expected <benchmark>/<model>.json files")
    results = load_world_results(
        args.metrics_dir, kinds=args.kinds, source=args.source, paired_files=args.paired, table_files=args.table
    )
    table = claims_table(results)
    title = f"Claims checked on the {args.source} results"
    if args.paper:
        table = table[table["paper"] == args.paper].reset_index(drop=True)
        title = f"{args.paper}: claims checked on the {args.source} results"
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv and .md together or not at all
        write_claims_table(table, Path(args.out_csv).with_suffix(""), title)
    log.info("claims: %s", table["holds"].astype(str).value_counts().to_dict())


def cmd_world_paper_tables(args: argparse.Namespace) -> None:
    """One paper's tables in its own layout, filled from the world's metrics, beside the published numbers."""
    from itmbench.io import output_set
    from itmbench.papers.world import write_world_paper_tables

    with output_set(folders=[args.out_dir]):  # every table file together or not at all
        paths = write_world_paper_tables(args.paper, args.metrics, args.out_dir, args.rows, args.kinds, args.options)
    log.info("%s: %d world table files -> %s", args.paper, len(paths), args.out_dir)


def cmd_world_paper_figures(args: argparse.Namespace) -> None:
    """One paper's figures drawn from the world's metrics (PNG and PDF, byte-deterministic)."""
    from itmbench.io import output_set
    from itmbench.papers.world_figures import write_world_paper_figures

    with output_set(folders=[args.out_dir]):  # every PNG and PDF together or not at all
        paths = write_world_paper_figures(args.paper, args.metrics, args.out_dir, args.rows, args.kinds, args.dpi)
    log.info("%s: %d world figure files -> %s", args.paper, len(paths), args.out_dir)


def cmd_paired_tests(args: argparse.Namespace) -> None:
    """Paired tests (exact McNemar, paired bootstrap) of model pairs over the same instances of one benchmark."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.paired import PAIRED_BENCHMARKS, paired_records, write_paired_table
    from itmbench.papers.registry import benchmark
    from itmbench.reading import read_parquet_checked

    score = benchmark(args.name).part("score")
    if not hasattr(score, "instance_outcomes"):
        raise InputError(
            f"--name {args.name}: its scores have no per-instance outcomes to pair; expected one of "
            f"{list(PAIRED_BENCHMARKS)}"
        )
    scores = dict(args.scores)
    pairs = list(args.pair)
    for a, b in pairs:
        for model in (a, b):
            if model not in scores:
                raise InputError(f"--pair {a}={b}: no --scores {model}=PATH; expected the scores of both models")
    columns = score.OUTCOME_COLUMNS
    expected = "a scores file of `itmbench score-benchmark` (one row per instance)"
    outcomes = {m: score.instance_outcomes(read_parquet_checked(p, columns, expected)) for m, p in scores.items()}
    config = score_section(args.config)
    records = paired_records(
        args.name, outcomes, pairs, score.PAIRED_METRICS, config["n_boot"], config["seed"], config["confidence"]
    )
    prefix = Path(args.out_csv).with_suffix("")
    entry = benchmark(args.name)
    title = f"{entry.report_label()}: paired tests over the same instances (A vs B, exact McNemar and paired bootstrap)"
    with output_set(files=[prefix.with_suffix(s) for s in (".csv", ".md", ".tex")]):  # together or not at all
        write_paired_table(records, prefix, title, entry.decimals)
    log.info("%s: %d paired comparisons -> %s", args.name, len(records), prefix)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("table-benchmark", cmd_table_benchmark, "a benchmark's table of every model")
    sp.add_argument("metrics", nargs="+")
    sp.add_argument("--name", required=True, choices=sorted(BENCHMARKS), help="the benchmark")
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--title", required=True)
    sp.add_argument("--absent", action="append", default=[], help="MODEL=REASON: a model the table does not score")
    sp.add_argument("--grid-of", default=None, help="items parquet whose caption x image grid {pairs} counts")
    sp = add("claims", cmd_claims, "each paper's claims checked on a source's metrics")
    sp.add_argument("--metrics-dir", required=True)
    sp.add_argument("--source", choices=SOURCES, default="world")
    sp.add_argument(
        "--kinds", type=model_kinds, default={}, help='{"model": "contrastive|chance|human|generative|other", ...}'
    )
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--paper", default=None, choices=sorted(PAPERS), help="only this paper's claims")
    sp.add_argument(
        "--paired", action="append", default=[], help="a paired-test table (itmbench paired-tests) the claims use"
    )
    sp.add_argument(
        "--table", action="append", default=[], help="a paper's table CSV (<paper>/<name>.csv) its claims read"
    )
    sp = add("paired-tests", cmd_paired_tests, "paired tests of model pairs over the same instances")
    sp.add_argument(
        "--name",
        required=True,
        choices=sorted(BENCHMARKS),
        help="the benchmark (one whose scores give per-instance outcomes)",
    )
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", required=True, help="MODEL=PATH: per-instance scores"
    )
    sp.add_argument("--pair", type=name_value("MODEL"), action="append", required=True, help="A=B: compare A with B")
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    for name, func, help_ in (
        ("world-paper-tables", cmd_world_paper_tables, "a paper's tables in its layout, from the world, vs published"),
        ("world-paper-figures", cmd_world_paper_figures, "a paper's figures from the world's metrics"),
    ):
        sp = add(name, func, help_)
        sp.add_argument("metrics", nargs="+", help="metrics files <benchmark>/<model>.json")
        sp.add_argument("--paper", required=True, choices=[n for n, p in PAPERS.items() if p.world_tables])
        sp.add_argument("--rows", type=json_arg, default={}, help='world model -> printed row: {"clip": "CLIP_COCO"}')
        sp.add_argument(
            "--kinds", type=model_kinds, default={}, help='{"model": "contrastive|chance|human|generative|other", ...}'
        )
        sp.add_argument("--out-dir", required=True)
    sub.choices["world-paper-tables"].add_argument("--options", type=json_arg, default={}, help="report options")
    sub.choices["world-paper-figures"].add_argument("--dpi", type=positive_int, default=150)
    sp = add("notebook", cmd_notebook, "execute a notebook and render HTML")
    sp.add_argument("--notebook", required=True)
    sp.add_argument("--parameters", type=json_arg, default={})
    sp.add_argument("--out", required=True)
    sp.add_argument("--title", default="", help="the report's title (default: the notebook's name)")
    sp.add_argument(
        "--nav",
        type=name_value("PATH"),
        action="append",
        default=[],
        help="LABEL=PATH: a page the report links to at its top, in order (the report itself shown unlinked)",
    )
    sp = add("index", cmd_index, "write reports/index.html")
    sp.add_argument("reports", nargs="+")
    sp.add_argument("--out", required=True)
    sp.add_argument(
        "--claims",
        nargs="*",
        default=[],
        help="claims tables (results/<source>/tables/claims/claims.csv; with a mirror, results/released/'s too)",
    )
    sp.add_argument(
        "--tables",
        nargs="*",
        default=[],
        help="the papers' world tables (results/<source>/tables/<paper>/table<N>.csv)",
    )
    sp.add_argument(
        "--artefacts", nargs="*", default=[], help="files of the papers' coverage matrices this run built (linked)"
    )
    sp.add_argument("--source", default="world", help="the source the run regenerates ({source} in coverage.csv)")
