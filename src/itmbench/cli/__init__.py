"""`itmbench ...`: the commands that the workflow's rules call, one per rule.

Every command takes its parameters as explicit flags (a params section arrives as one JSON
string, so Snakemake sees exactly the parameters a job depends on) and writes its outputs
atomically. Entry points are `main(argv)` so tests call them directly.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from itmbench.cli import coco, diff, models, negatives, predictions, released, report, score, share, world
from itmbench.cli._args import json_arg

log = logging.getLogger("itmbench")

# The stage modules, in the order their subcommands are listed.
STAGES = (world, models, score, report, released, share, predictions, negatives, diff)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand: each stage module registers its own."""
    p = argparse.ArgumentParser(prog="itmbench", description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, func, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.set_defaults(func=func)
        return sp

    for stage in STAGES:
        stage.add_commands(add, sub)
    coco.add_commands(add, json_arg)
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
