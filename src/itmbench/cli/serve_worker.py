"""`python -m itmbench.cli.serve_worker SOCKET PARENT_PID [LOG]`: the warm worker (itmbench.worker) of one
Snakemake run, running each command it is given with this package's `run` and the parser `warm` built.
`itmbench.worker.start` starts it; it is not a command of its own."""

import contextlib
import importlib
import os
import pkgutil
import sys

import itmbench
from itmbench import params
from itmbench.cli import build_parser, run
from itmbench.worker import serve

_parser = None


def warm() -> None:
    """What each command's child would otherwise do again, done once before the first fork: the parser
    (and with it the stage modules), every module of this package, and the parsed params schema with
    its validator (`params.load_schema`). Modules that need an optional library this machine lacks are
    left to the commands that import them, which report the missing library as a fresh process does."""
    global _parser
    _parser = build_parser()
    for module in pkgutil.walk_packages(itmbench.__path__, "itmbench."):
        if module.name.rpartition(".")[2] in ("__main__", "serve_worker"):
            continue
        with contextlib.suppress(ImportError):
            importlib.import_module(module.name)
    params.load_schema()


def run_command(argv: list[str]) -> int:
    """A command in a forked child: `itmbench.cli.run` with the parser `warm` built (each child parses once)."""
    return run(argv, _parser)


if __name__ == "__main__":
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path.pop(0)  # as for the `itmbench` script: the working directory is not an import path
    serve(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else None, int(sys.argv[2]), run=run_command, warm=warm)
    sys.stdout.flush()
    os._exit(0)
