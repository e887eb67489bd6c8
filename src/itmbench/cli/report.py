"""Tables, figures and reports: `itmbench table-benchmark`, `table-retrieval`, `world-paper-tables`,
`world-paper-figures`, `claims`, `notebook`, `index`."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import (
    json_arg,
    with_absent_cells,
)
from itmbench.papers.registry import PAPERS

log = logging.getLogger("itmbench")


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
    long = with_absent_cells(pd.DataFrame(rows), args.absent, args.grid_of)
    write_table(long, Path(args.out_csv).with_suffix(""), args.title, row_header="model")


def cmd_table_retrieval(args: argparse.Namespace) -> None:
    """The retrieval table of every model as CSV, Markdown and LaTeX."""
    from itmbench.io import read_json
    from itmbench.report.retrieval import retrieval_long_table
    from itmbench.report.tables import write_table

    metrics = [read_json(p) for p in args.metrics]
    long = with_absent_cells(retrieval_long_table(metrics), args.absent, args.grid_of)
    write_table(long, Path(args.out_csv).with_suffix(""), args.title, row_header="model [positives]")


def cmd_notebook(args: argparse.Namespace) -> None:
    """Execute a report notebook with papermill and render it to HTML."""
    from itmbench.report.render import run_notebook

    run_notebook(args.notebook, args.out, args.parameters)


def cmd_index(args: argparse.Namespace) -> None:
    """reports/index.html: every report, and per paper its claims, largest differences and coverage."""
    from itmbench.papers.coverage import STATUSES, index_entries
    from itmbench.report.render import write_index

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


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("table-retrieval", cmd_table_retrieval, "retrieval table as CSV, Markdown, LaTeX")
    sp.add_argument("metrics", nargs="+")
    sp.add_argument("--out-csv", required=True, help="the .csv path; .md and .tex are written beside it")
    sp.add_argument("--title", default="Retrieval")
    sp.add_argument("--absent", action="append", default=[], help="MODEL=REASON: a model the table does not score")
    sp.add_argument("--grid-of", default=None, help="items parquet whose caption x image grid {pairs} counts")
    sp = add("table-benchmark", cmd_table_benchmark, "a benchmark's table of every model")
    sp.add_argument("metrics", nargs="+")
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--title", required=True)
    sp.add_argument("--absent", action="append", default=[], help="MODEL=REASON: a model the table does not score")
    sp.add_argument("--grid-of", default=None, help="items parquet whose caption x image grid {pairs} counts")
    sp = add("claims", cmd_claims, "each paper's claims checked on a source's metrics")
    sp.add_argument("--metrics-dir", required=True)
    sp.add_argument("--source", default="world")
    sp.add_argument("--kinds", type=json_arg, default={}, help='{"model": "contrastive|chance|other", ...}')
    sp.add_argument("--out-csv", required=True)
    sp.add_argument("--paper", default=None, help="only this paper's claims")
    for name, func, help_ in (
        ("world-paper-tables", cmd_world_paper_tables, "a paper's tables in its layout, from the world, vs published"),
        ("world-paper-figures", cmd_world_paper_figures, "a paper's figures from the world's metrics"),
    ):
        sp = add(name, func, help_)
        sp.add_argument("metrics", nargs="+", help="metrics files <benchmark>/<model>.json")
        sp.add_argument("--paper", required=True, choices=[n for n, p in PAPERS.items() if p.world_tables])
        sp.add_argument("--rows", type=json_arg, default={}, help='world model -> printed row: {"clip": "CLIP_COCO"}')
        sp.add_argument("--kinds", type=json_arg, default={}, help='{"model": "contrastive|chance|other", ...}')
        sp.add_argument("--out-dir", required=True)
    sub.choices["world-paper-tables"].add_argument("--options", type=json_arg, default={}, help="report options")
    sub.choices["world-paper-figures"].add_argument("--dpi", type=int, default=150)
    sp = add("notebook", cmd_notebook, "execute a notebook and render HTML")
    sp.add_argument("--notebook", required=True)
    sp.add_argument("--parameters", type=json_arg, default={})
    sp.add_argument("--out", required=True)
    sp = add("index", cmd_index, "write reports/index.html")
    sp.add_argument("reports", nargs="+")
    sp.add_argument("--out", required=True)
    sp.add_argument(
        "--claims", default=None, help="the source's claims table (results/<source>/tables/claims/claims.csv)"
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
