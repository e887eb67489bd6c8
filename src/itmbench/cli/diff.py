"""`itmbench dvc-metrics`: comparing two runs through `dvc metrics diff`."""

from __future__ import annotations

import argparse
import sys


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
    sp = add("dvc-metrics", cmd_dvc_metrics, "regenerate dvc.yaml's metrics list from params.yaml and the registry")
    sp.add_argument("--root", default=".", help="the checkout holding dvc.yaml and params.yaml")
    sp.add_argument("--check", action="store_true", help="exit 1 when the list is stale (and rewrite nothing)")
