"""Start-up of the default run's jobs: the seconds a fresh Python spends importing what each kind of job needs.

Every job of the DAG is a new process, and the default run has ~150 of them, most of them small
(a scoring job over a few thousand rows): their imports are a large share of the run. This
times, per kind of job, a fresh interpreter importing the modules that job's command imports
(the command module plus what its `cmd_*` function imports), median of --runs. With --rev REV,
the same for the code of a git revision (checked out into a temporary worktree, put first on
PYTHONPATH) and the ratio. Usage: python benchmarks/job_startup.py [--runs 5] [--rev HEAD~1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# kind of job (rules; jobs in the default DAG) -> the modules its command imports
KINDS: dict[str, list[str]] = {
    # scores and their metrics in one job, without torch (tests/test_score_without_torch.py)
    "score_benchmark (bison)": [
        "itmbench.papers.registry",
        "itmbench.papers.bison.canonical",
        "itmbench.papers.bison.score",
        "itmbench.scoring.embed",
    ],
    "score_benchmark (retrieval)": [
        "itmbench.papers.registry",
        "itmbench.papers.retrieval.canonical",
        "itmbench.papers.retrieval.score",
        "itmbench.metrics.retrieval",
    ],
    "train / embed of open_clip": ["itmbench.models.registry", "open_clip"],
}


def time_imports(modules: list[str], env: dict[str, str]) -> float:
    code = "import itmbench.cli; " + "; ".join(f"import {m}" for m in modules)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - t0


def measure(runs: int, src: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = {}
    for kind, modules in KINDS.items():
        time_imports(modules, env)  # warm the file cache
        out[kind] = statistics.median(time_imports(modules, env) for _ in range(runs))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--rev", help="also time this git revision's code and print the ratio")
    args = p.parse_args(argv)
    now = measure(args.runs, REPO / "src")
    before = None
    if args.rev:
        with tempfile.TemporaryDirectory(prefix="itmbench-rev-") as tmp:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", tmp, args.rev], check=True, capture_output=True
            )
            try:
                before = measure(args.runs, Path(tmp) / "src")
            finally:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", tmp], check=True)
    print(f"job start-up, median of {args.runs} fresh interpreters (s)")
    header = f"{'kind':28s} {'now':>7s}" + (f" {args.rev:>10s} {'ratio':>6s}" if before else "")
    print(header)
    for kind in KINDS:
        line = f"{kind:28s} {now[kind]:7.2f}"
        if before:
            line += f" {before[kind]:10.2f} {before[kind] / now[kind]:6.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
