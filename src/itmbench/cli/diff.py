"""`itmbench diff-results`, `dvc-metrics`: comparing two runs, table by table and through `dvc metrics diff`."""

from __future__ import annotations

import argparse
import sys
import textwrap

from itmbench.cli._args import non_negative_float
from itmbench.report.diff import DEFAULT_REL_TOL, DEFINITION


def cmd_diff_results(args: argparse.Namespace) -> None:
    """Every regenerated table and metrics file of two runs compared cell by cell; exit 0, 1 or 4 (2: bad input)."""
    from itmbench.io import write_text
    from itmbench.report.diff import csv_text, diff_results, markdown

    result = diff_results(args.old, args.new, repo=args.repo, rel_tol=args.rel_tol)
    report = markdown(result)
    if args.out:
        write_text(args.out, report)
    else:
        sys.stdout.write(report)
    if args.csv:
        write_text(args.csv, csv_text(result))
    if result.exit_status:
        # main() returns 0 or 2; the diff's own statuses leave through SystemExit after the report is written
        raise SystemExit(result.exit_status)


def cmd_dvc_metrics(args: argparse.Namespace) -> None:
    """Rewrite (or --check) dvc.yaml's `metrics:` list: every metrics file of the run params.yaml describes."""
    from pathlib import Path

    from itmbench.dvc_metrics import check, rewrite
    from itmbench.io import write_text
    from itmbench.papers.plan import load_params, metrics_files

    root = Path(args.root)
    expected = metrics_files(load_params(root / "params.yaml"))
    text = (root / "dvc.yaml").read_text()
    if args.check:
        problems = check(text, expected)
        for p in problems:
            print(p, file=sys.stderr)
        if problems:
            raise SystemExit(1)
        return
    new = rewrite(text, expected)
    if new != text:
        write_text(root / "dvc.yaml", new)
    print(f"dvc.yaml: {len(expected)} metrics files" + (" (rewritten)" if new != text else " (already current)"))


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("diff-results", cmd_diff_results, "compare two runs' tables and metrics cell by cell")
    sp.description = textwrap.fill(
        "Compare the regenerated tables (tables/**/*.csv) and metrics (metrics/**/*.json) of two runs "
        "cell by cell. OLD and NEW are each a results tree (results/<source>, a results folder, a checkout "
        "root) or a git revision of --repo (read through DVC where the repository uses it).",
        width=96,
    )
    sp.epilog = DEFINITION
    sp.formatter_class = argparse.RawDescriptionHelpFormatter
    sp.add_argument("old", help="the old side: a results tree or a git revision")
    sp.add_argument("new", help="the new side: a results tree or a git revision")
    sp.add_argument("--out", default=None, help="write the Markdown report here (default: stdout)")
    sp.add_argument("--csv", default=None, help="also write the changes as CSV, one line per cell")
    sp.add_argument("--repo", default=".", help="the git repository whose revisions are named (default: .)")
    sp.add_argument(
        "--rel-tol", type=non_negative_float, default=DEFAULT_REL_TOL, help="relative tolerance of equal numbers"
    )
    sp = add("dvc-metrics", cmd_dvc_metrics, "regenerate dvc.yaml's metrics list from params.yaml and the registry")
    sp.add_argument("--root", default=".", help="the checkout holding dvc.yaml and params.yaml")
    sp.add_argument("--check", action="store_true", help="exit 1 when the list is stale (and rewrite nothing)")
