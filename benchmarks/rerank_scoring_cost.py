"""What scoring a cross scorer's shortlist re-ranking costs on the gallery benchmarks, one source tree against another.

A cross scorer (the captioner `coca`, MCIC's `ffnn`) scores each query's shortlist; `score-benchmark`
then ranks a [captions x images] grid per direction whose images are one-hot rows
(`scoring.pairs.GridCache`). This script runs the rule's own command (`itmbench score-benchmark ...
--pairs ... --shortlist ...`, as `snakemake -n -p` prints it for a finished run) with each source tree's
`src` first on PYTHONPATH, interleaved (before, after, before, after, ...), and prints per job the
medians of wall time, CPU time (user + system of the command) and peak RSS, their ratios, and whether
the two trees wrote byte-identical scores and metrics.

Usage: python benchmarks/rerank_scoring_cost.py --run RUN --before TREE --after TREE [--runs 3]
       [--job retrieval/ffnn ...]
       RUN: a finished default-world run (its data/world, results/world/pairs and the shortlist
       model's embeddings); TREE: an itmbench checkout (e.g. `git worktree add /tmp/base HEAD~1`).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = ("retrieval/ffnn", "retrieval/coca", "cxc/ffnn", "cxc/coca", "eccv/ffnn", "eccv/coca")


def job_command(run: Path, job: str) -> list[str]:
    """The rule's shell command for results/world/scores/<job>.parquet, as Snakemake plans it in `run`."""
    target = f"results/world/scores/{job}.parquet"
    plan = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "-f", target],
        cwd=run,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(s for s in plan.splitlines() if "itmbench score-benchmark" in s)
    command = line.split("itmbench score-benchmark", 1)[1].split(" > ", 1)[0]
    return ["score-benchmark", *shlex.split(command)]


def timed(tree: Path, run: Path, argv: list[str], out: Path) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS (MB) of one command, its --out/--metrics redirected into `out`."""
    argv = list(argv)
    argv[argv.index("--out") + 1] = str(out / "scores.parquet")
    argv[argv.index("--metrics") + 1] = str(out / "metrics.json")
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "ITMBENCH_WORKER": "0"}
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from itmbench.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
        cwd=run,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU and peak RSS
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{tree}: {' '.join(argv)} exited {child.returncode}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--job", action="append", help=f"bench/model (default: {', '.join(JOBS)})")
    args = ap.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    print(f"{'job':16} {'tree':7} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}   (medians of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        for job in args.job or JOBS:
            command = job_command(args.run, job)
            got: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    out = Path(tmp) / name / job
                    out.mkdir(parents=True, exist_ok=True)
                    got[name].append(timed(tree, args.run, command, out))
            medians = {name: [statistics.median(x[i] for x in runs) for i in range(3)] for name, runs in got.items()}
            for name, (wall, cpu, rss) in medians.items():
                print(f"{job:16} {name:7} {wall:8.1f} {cpu:8.1f} {rss:8.0f}")
            same = all(
                filecmp.cmp(Path(tmp) / "before" / job / f, Path(tmp) / "after" / job / f, shallow=False)
                for f in ("scores.parquet", "metrics.json")
            )
            b, a = medians["before"], medians["after"]
            print(
                f"{job:16} after/before: wall {a[0] / b[0]:.3f}x, cpu {a[1] / b[1]:.3f}x, peak RSS "
                f"{a[2] / b[2]:.3f}x; outputs {'byte-identical' if same else 'DIFFER'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
