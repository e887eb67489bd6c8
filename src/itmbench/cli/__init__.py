"""`itmbench ...`: the commands that the workflow's rules call, one per rule.

Every command takes its parameters as explicit flags (a params section arrives as one JSON
string, so Snakemake sees exactly the parameters a job depends on) and writes its outputs
atomically. Entry points are `main(argv)` so tests call them directly.

Exit status (the contract of `itmbench.errors`): 0 done; 2 the input or the options are wrong (one line
`itmbench <command>: error: ...` naming the file, the record and what was expected; argparse's usage
error for an option refused at parse time); 3 an internal error, a bug in itmbench (its traceback, then
one line asking to report it with the command line).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from itmbench.worker import forward

if TYPE_CHECKING:
    import argparse

# The stage modules (itmbench.cli.<name>), in the order their subcommands are listed. A parser imports
# them; the entry point does not until it runs a command itself, so that a job that a warm worker runs
# (itmbench.worker) costs its own process no more than this package and the worker's client.
STAGES = (
    "world",
    "models",
    "score",
    "report",
    "papers",  # each paper's own commands, through the registry (itmbench.papers.<paper>.commands)
    "gallery_paired",
    "released",
    "share",
    "predictions",
    "negatives",
    "diff",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand: each stage module registers its own."""
    import argparse

    p = argparse.ArgumentParser(prog="itmbench", description=__doc__.splitlines()[0])
    p.add_argument("-v", "--verbose", action="store_true")
    sub = p.add_subparsers(dest="command", required=True)

    def add(name: str, func, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_)
        sp.set_defaults(func=func)
        return sp

    for name in STAGES:
        importlib.import_module(f"itmbench.cli.{name}").add_commands(add, sub)
    importlib.import_module("itmbench.cli.coco").add_commands(add)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand: 0 when done; 2 with one line when the input or an option is wrong; 3 on a bug."""
    if argv is None:  # the `itmbench` entry point: a running worker may run the command (itmbench.worker)
        status = forward(sys.argv[1:])
        if status is not None:
            return status
    return run(list(sys.argv[1:] if argv is None else argv))


def run(argv: list[str], parser: argparse.ArgumentParser | None = None) -> int:
    """Run one subcommand in this process (see main), parsed by `parser` (default: a new `build_parser()`; the
    warm worker's children use the one it built before forking them)."""
    import contextlib
    import logging
    import shlex
    import traceback

    from itmbench import LOG_FORMAT
    from itmbench.errors import EXIT_BUG, EXIT_INPUT, input_error_message
    from itmbench.io import removing_temps_on_signals
    from itmbench.sources.released import registry_overlay

    args = (parser or build_parser()).parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format=LOG_FORMAT,
        stream=sys.stderr,
    )
    try:
        # SIGTERM/SIGINT: no temp file left behind, exit 128 + signum; --registry: an overlay's declarations (the
        # packaged registry is parsed by the commands that read it, not by every command)
        overlay = getattr(args, "registry", None)
        with removing_temps_on_signals(), registry_overlay(overlay) if overlay else contextlib.nullcontext():
            args.func(args)
    except Exception as err:  # noqa: BLE001 - every failure ends in one of the two documented ways
        message = input_error_message(err)
        if message is None:
            traceback.print_exc()
            print(
                f"itmbench {args.command}: internal error ({type(err).__name__}): this is a bug in itmbench, "
                f"not in the input; please report it with the traceback above and the command line: "
                f"itmbench {shlex.join(argv)}",
                file=sys.stderr,
            )
            return EXIT_BUG
        print(f"itmbench {args.command}: error: {message}", file=sys.stderr)
        return EXIT_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
