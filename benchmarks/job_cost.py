"""What one job of a finished run costs, one source tree against another, and whether both write the same bytes.

For each target (an output file of the run, e.g. `results/world/metrics/eccv/clip.json`), the script asks
Snakemake for the job that writes it (`snakemake -n -p -f TARGET` in the run: its rule's outputs and shell
command), points every output path of the command (or the folder it writes them in) into a scratch
folder, and runs the command with each source tree's `src` first on PYTHONPATH, interleaved (before,
after, before, after, ...), with the warm worker off. It prints per job the medians of wall time, CPU
time (user + system of the command, from wait4) and peak RSS, their ratios, and whether the two trees
wrote byte-identical files.

Usage: python benchmarks/job_cost.py --run RUN --before TREE [--after TREE] [--after-env NAME=VALUE ...]
       [--runs 3] [--job TARGET ...]
       RUN: a finished default-world run (the inputs of the jobs); TREE: an itmbench checkout (e.g.
       `git worktree add /tmp/base HEAD~1`; --after defaults to --before). --after-env: a variable set for the
       after runs only, and unset for the before runs (e.g. the allocator settings of `itmbench.allocator`,
       which the Snakefile gives every job: `--after-env MALLOC_TOP_PAD_=268435456 ...`). Without --job: the
       cross scorers' shortlist scoring on the galleries (`JOBS`).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

JOBS = tuple(
    f"results/world/scores/{bench}/{model}.parquet"
    for bench in ("retrieval", "cxc", "eccv")
    for model in ("ffnn", "coca")
)


def plan(run: Path, target: str) -> tuple[list[str], list[str]]:
    """The job's output paths and its command's argv after `itmbench`, as Snakemake plans it in `run`."""
    text = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "-p", "-f", target],
        cwd=run,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    blocks = re.split(r"^(?=(?:local)?rule \w+:$)", text, flags=re.MULTILINE)  # one block per planned job
    for block in blocks:
        found = re.search(r"^\s+output: (.+)$", block, re.MULTILINE)
        outputs = [p.strip() for p in found.group(1).split(",")] if found else []
        command = next((s for s in block.splitlines() if "itmbench " in s), None)
        if target in outputs and command is not None:
            break
    else:
        raise SystemExit(f"{run}: no itmbench job writes {target} (snakemake -n -p -f printed no such command)")
    return outputs, shlex.split(command.split("itmbench ", 1)[1].split(" > ", 1)[0])


def redirected(argv: list[str], outputs: list[str], scratch: Path) -> list[str]:
    """argv with each output path, or the folder that holds outputs, moved under `scratch` (same relative path)."""
    folders = {str(Path(p).parent) for p in outputs}
    out = []
    for token in argv:
        if token in outputs or token in folders:
            (scratch / token).parent.mkdir(parents=True, exist_ok=True)
            token = str(scratch / token)
        out.append(token)
    if out == argv:
        raise SystemExit(f"none of the command's arguments names an output ({outputs}): {shlex.join(argv)}")
    return out


def timed(
    tree: Path,
    run: Path,
    argv: list[str],
    log: Path,
    extra: dict[str, str] | None = None,
    unset: frozenset = frozenset(),
) -> tuple[float, float, float]:
    """Wall s, CPU s and peak RSS (MB) of one command run with `tree`'s source, variables `extra` set and `unset`
    removed; its output goes to `log`."""
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env |= {"PYTHONPATH": str(tree / "src"), "ITMBENCH_WORKER": "0", **(extra or {})}
    start = time.perf_counter()
    with open(log, "w") as sink:
        child = subprocess.Popen(
            [sys.executable, "-c", "import sys; from itmbench.cli import main; sys.exit(main(sys.argv[1:]))", *argv],
            cwd=run,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(child.pid, 0)  # this child's own CPU and peak RSS
    if os.waitstatus_to_exitcode(status):
        tail = "\n".join(log.read_text().splitlines()[-15:])
        raise SystemExit(f"{tree}: {shlex.join(argv)} exited {os.waitstatus_to_exitcode(status)}:\n{tail}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def same_files(a: Path, b: Path) -> bool:
    """Whether two folders hold the same files with the same bytes."""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all(filecmp.cmp(a / f, b / f, shallow=False) for f in files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, required=True)
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, help="default: --before")
    ap.add_argument("--after-env", action="append", default=[], metavar="NAME=VALUE", help="set for the after runs")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--job", action="append", help="an output file of the run (default: the cross scorers' JOBS)")
    args = ap.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": (args.after or args.before).resolve()}
    if bad := [item for item in args.after_env if "=" not in item]:
        ap.error(f"--after-env takes NAME=VALUE; got {bad}")
    after_env = dict(item.split("=", 1) for item in args.after_env)
    envs = {"before": ({}, frozenset(after_env)), "after": (after_env, frozenset())}
    print(f"{'job':44} {'tree':7} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}   (medians of {args.runs})")
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.job or JOBS:
            outputs, command = plan(args.run, target)
            got: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
            for _ in range(args.runs):
                for name, tree in trees.items():
                    argv = redirected(command, outputs, Path(tmp) / name / target)
                    got[name].append(timed(tree, args.run, argv, Path(tmp) / f"{name}.log", *envs[name]))
            medians = {name: [statistics.median(x[i] for x in runs) for i in range(3)] for name, runs in got.items()}
            for name, (wall, cpu, rss) in medians.items():
                print(f"{target:44} {name:7} {wall:8.1f} {cpu:8.1f} {rss:8.0f}")
            same = same_files(Path(tmp) / "before" / target, Path(tmp) / "after" / target)
            b, a = medians["before"], medians["after"]
            print(
                f"{target:44} after/before: wall {a[0] / b[0]:.3f}x, cpu {a[1] / b[1]:.3f}x, peak RSS "
                f"{a[2] / b[2]:.3f}x; outputs {'byte-identical' if same else 'DIFFER'}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
