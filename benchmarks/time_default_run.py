"""Time the default run: `snakemake --cores all` from nothing, in a fresh copy of the workflow.

Prints, per revision and over --runs repetitions (revisions interleaved within each repetition, so
that the machine's drifting speed hits both alike), the median CPU seconds (user + system of the
whole `snakemake` process tree), wall seconds, the peak resident memory of the largest job, the
number of jobs, and per rule the median job seconds and CPU seconds from Snakemake's own benchmark
files (for the jobs a worker ran, their CPU is the worker's: the per-command figures of its log are
printed too). With two revisions it also sets apart the CPU of the later one's jobs whose outputs
the first one's DAG lacks (work added since), for a like-for-like ratio. Without --rev it times the
working tree; each --rev (a commit, branch or tag) is exported with `git archive` and run with its
own `src/` first on PYTHONPATH.

Usage: python benchmarks/time_default_run.py [--rev OLD --rev NEW] [--runs 3] [--configfile X.yaml]
       [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
WORKFLOW_FILES = ("Snakefile", "params.yaml", "environment.yml")


def export_rev(rev: str, dest: Path) -> Path:
    """The tree of `rev` (its workflow and its src/) under dest; returns the folder."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True)
    tar_path = dest.parent / f"{dest.name}.tar"
    tar_path.write_bytes(archive.stdout)
    with tarfile.open(tar_path) as tar:
        tar.extractall(dest, filter="data")
    tar_path.unlink()
    return dest


def fresh_copy(tree: Path, dest: Path) -> None:
    """The workflow files only: no data, results or reports."""
    for name in WORKFLOW_FILES:
        shutil.copy(tree / name, dest / name)
    shutil.copytree(tree / "workflow", dest / "workflow", symlinks=True)


def rule_figures(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per rule: number of jobs, summed job seconds and summed CPU seconds (Snakemake's benchmark files)."""
    out: dict[str, dict[str, float]] = {}
    for tsv in sorted((run_dir / "benchmarks/rules").rglob("*.tsv")):
        rule = tsv.relative_to(run_dir / "benchmarks/rules").parts[0]
        row = pd.read_csv(tsv, sep="\t").iloc[0]
        fig = out.setdefault(rule, {"jobs": 0, "s": 0.0, "cpu_s": 0.0})
        fig["jobs"] += 1
        fig["s"] += float(row["s"])
        fig["cpu_s"] += float(row.get("cpu_time", 0.0))
    return out


def worker_figures(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per `itmbench` command the worker ran (logs/worker.jsonl, where the revision has a worker): jobs, wall
    seconds and CPU seconds, exact (the worker's wait4 of each child). Snakemake's benchmark files of those jobs
    hold their wall time only: their CPU is spent in the worker's children, not in the job's processes."""
    out: dict[str, dict[str, float]] = {}
    for entry in worker_log(run_dir):
        command = entry["argv"][0] if "status" in entry else "(declined)"
        fig = out.setdefault(command, {"jobs": 0, "s": 0.0, "cpu_s": 0.0})
        fig["jobs"] += 1
        fig["s"] += entry.get("wall_s", 0.0)
        fig["cpu_s"] += entry["cpu_s"]
    return out


def worker_log(run_dir: Path) -> list[dict]:
    """The lines of the worker's log (none where the revision has no worker), each with its CPU seconds."""
    log = run_dir / "logs/worker.jsonl"
    entries = [json.loads(line) for line in (log.read_text().splitlines() if log.exists() else [])]
    return [{**e, "cpu_s": e.get("user_s", 0.0) + e.get("sys_s", 0.0)} for e in entries]


def dag_jobs(run_dir: Path, cmd: list[str], env: dict[str, str]) -> dict[str, list[str]]:
    """The finished run's jobs (`snakemake --summary`): each job's key (rule and log, or its first output) and
    its outputs, to tell which jobs one revision's DAG has that another's lacks."""
    res = subprocess.run([*cmd, "--summary"], cwd=run_dir, capture_output=True, text=True, env=env)
    jobs: dict[str, list[str]] = {}
    if res.returncode != 0:  # the timing stands without it
        print(f"snakemake --summary failed in {run_dir}:\n{res.stderr[-2000:]}", file=sys.stderr)
        return jobs
    for line in res.stdout.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) < 4:
            continue
        output, rule, logs = fields[0], fields[2], fields[3]
        key = f"{rule} {logs}" if logs and logs != "-" else f"{rule} {output}"
        jobs.setdefault(key, []).append(output)
    return jobs


def added_jobs_cpu(base: dict, run: dict) -> tuple[int, int, float]:
    """The jobs of `run` with no output in `base`'s DAG (work a later revision added): how many, how many of
    them the worker ran (an argv naming one of their outputs), and those commands' CPU seconds."""
    base_outputs = {o for outs in base["dag_jobs"].values() for o in outs}
    added = [outs for outs in run["dag_jobs"].values() if not base_outputs.intersection(outs)]
    outputs = {o.rstrip("/") for outs in added for o in outs}
    matched, cpu = set(), 0.0
    for record in run["worker_records"]:
        tokens = {t.rstrip("/") for a in record["argv"] for t in a.replace("=", " ").replace(",", " ").split()}
        hits = tokens & outputs
        if hits:
            matched.update(i for i, outs in enumerate(added) if hits.intersection(o.rstrip("/") for o in outs))
            cpu += record["cpu_s"]
    return len(added), len(matched), cpu


def one_run(tree: Path, configfile: str | None, cores: str, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="itmbench-bench-") as tmp:
        d = Path(tmp)
        fresh_copy(tree, d)
        snakemake, override = [sys.executable, "-m", "snakemake"], []
        if configfile:
            shutil.copy(configfile, d / "override.yaml")
            override = ["--configfile", "override.yaml"]
        cmd = [*snakemake, "--cores", cores, "--quiet", "all", *override]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "src"), *filter(None, [env.get("PYTHONPATH")])])
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=d, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if res.returncode != 0:
            raise SystemExit(f"snakemake failed in {tree}:\n{res.stderr[-3000:]}")
        if keep is not None:  # the run's tables, metrics and reports, to read what it computed
            shutil.rmtree(keep, ignore_errors=True)
            for part in ("results/world/tables", "results/world/metrics", "reports"):
                shutil.copytree(d / part, keep / part)
        rules = rule_figures(d)
        return {
            "dag_jobs": dag_jobs(d, [*snakemake, "--cores", "1", *override], env),
            "worker_records": [
                {"argv": e["argv"], "cpu_s": e["cpu_s"]} for e in worker_log(d) if "status" in e
            ],  # the commands it ran
            "wall_s": wall,
            "user_s": after.ru_utime - before.ru_utime,
            "sys_s": after.ru_stime - before.ru_stime,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            # ru_maxrss of RUSAGE_CHILDREN is the largest single descendant, never reset: a lower bound per run
            "peak_rss_mb": after.ru_maxrss / 1024,
            "jobs": int(sum(f["jobs"] for f in rules.values())),
            "per_rule": rules,
            "per_worker_command": worker_figures(d),
        }


def summary(label: str, runs: list[dict]) -> list[str]:
    med = lambda key: statistics.median(r[key] for r in runs)  # noqa: E731
    lines = [
        f"{label}: {len(runs)} run(s), median CPU {med('cpu_s'):.0f} s "
        f"(user {med('user_s'):.0f} + sys {med('sys_s'):.0f}), wall {med('wall_s'):.0f} s "
        f"(min {min(r['wall_s'] for r in runs):.0f}, max {max(r['wall_s'] for r in runs):.0f}), "
        f"peak job RSS {med('peak_rss_mb'):.0f} MB, {runs[0]['jobs']} benchmarked jobs"
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rev", action="append", default=[], help="a git revision to time (repeat to compare, interleaved)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--configfile", default=None, help="params override (e.g. a smaller world)")
    p.add_argument("--cores", default="all")
    p.add_argument("--json", default=None, help="also write the figures here")
    p.add_argument(
        "--keep", type=Path, default=None, help="copy each revision's last tables, metrics and reports to DIR/<rev>"
    )
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="itmbench-revs-") as tmp:
        trees = {"working tree": REPO} if not args.rev else {}
        for i, rev in enumerate(args.rev):
            trees[rev] = export_rev(rev, Path(tmp) / f"rev{i}")
        runs: dict[str, list[dict]] = {label: [] for label in trees}
        for i in range(args.runs):
            for label, tree in trees.items():
                keep = args.keep / label.replace("/", "_").replace(" ", "_") if args.keep else None
                r = one_run(tree, args.configfile, args.cores, keep)
                runs[label].append(r)
                print(
                    f"run {i + 1}/{args.runs} {label}: CPU {r['cpu_s']:.0f} s, wall {r['wall_s']:.0f} s, "
                    f"peak job RSS {r['peak_rss_mb']:.0f} MB",
                    flush=True,
                )
    print()
    for label, rs in runs.items():
        print("\n".join(summary(label, rs)))
    labels = list(runs)
    if len(labels) == 2:
        a, b = (statistics.median(r["cpu_s"] for r in runs[k]) for k in labels)
        wa, wb = (statistics.median(r["wall_s"] for r in runs[k]) for k in labels)
        print(f"\n{labels[1]} / {labels[0]}: CPU {b / a:.2f}x, wall {wb / wa:.2f}x")
        # work the later revision's DAG added: its CPU (from the worker's log) set apart, for a like-for-like ratio
        added = [added_jobs_cpu(runs[labels[0]][0], r) for r in runs[labels[1]]]
        added_cpu = statistics.median(x[2] for x in added)
        same = statistics.median(r["cpu_s"] - x[2] for r, x in zip(runs[labels[1]], added))
        print(
            f"{labels[1]}: {added[0][0]} jobs whose outputs {labels[0]}'s DAG lacks ({added[0][1]} of them run in the "
            f"worker), {added_cpu:.0f} s of CPU in the worker (median); without them {same:.0f} s: "
            f"{same / a:.2f}x {labels[0]}'s CPU (Snakemake's and the clients' share of those jobs still counted)"
        )
    rules = sorted({rule for rs in runs.values() for r in rs for rule in r["per_rule"]})
    print("\nper rule (summed over its jobs), median: jobs, job seconds, CPU seconds")
    print(f"  {'rule':<28}" + "".join(f"{label[:24]:>26}" for label in labels))
    for rule in rules:
        cells = []
        for label in labels:
            figs = [r["per_rule"].get(rule, {"jobs": 0, "s": 0.0, "cpu_s": 0.0}) for r in runs[label]]
            med_s = statistics.median(f["s"] for f in figs)
            med_cpu = statistics.median(f["cpu_s"] for f in figs)
            cells.append(f"{figs[0]['jobs']:>4} {med_s:9.1f} {med_cpu:9.1f}  ")
        print(f"  {rule:<28}" + "".join(f"{c:>26}" for c in cells))
    for label in labels:
        commands = sorted({c for r in runs[label] for c in r["per_worker_command"]})
        if not commands:
            continue
        print(f"\n{label}: per command run in the worker (logs/worker.jsonl), median: jobs, wall seconds, CPU seconds")
        for command in commands:
            figs = [r["per_worker_command"].get(command, {"jobs": 0, "s": 0.0, "cpu_s": 0.0}) for r in runs[label]]
            print(
                f"  {command:<34}{figs[0]['jobs']:>5} {statistics.median(f['s'] for f in figs):9.1f} "
                f"{statistics.median(f['cpu_s'] for f in figs):9.1f}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
