"""`python -m itmbench.cli.serve_worker SOCKET PARENT_PID [LOG]`: the warm worker (itmbench.worker) of one
Snakemake run, running each command it is given with this package's `main`. `itmbench.worker.start` starts
it; it is not a command of its own."""

import os
import sys

from itmbench.cli import build_parser, main
from itmbench.worker import serve

if __name__ == "__main__":
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path.pop(0)  # as for the `itmbench` script: the working directory is not an import path
    serve(sys.argv[1], sys.argv[3] if len(sys.argv) > 3 else None, int(sys.argv[2]), run=main, warm=build_parser)
    sys.stdout.flush()
    os._exit(0)
