"""Time the default run: `snakemake --cores all` from nothing, in a fresh copy of the workflow.

Prints, over --runs repetitions, the median wall time and the peak resident memory of the
largest job (the children's max RSS), and per rule the median seconds from Snakemake's own
benchmark files. Usage: python benchmarks/time_default_run.py [--runs 3] [--configfile X.yaml] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def fresh_copy(dest: Path) -> None:
    """The workflow files only: no data, results or reports."""
    for name in ("Snakefile", "params.yaml", "environment.yml"):
        shutil.copy(REPO / name, dest / name)
    shutil.copytree(REPO / "workflow", dest / "workflow", symlinks=True)


def one_run(configfile: str | None, cores: str, keep: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="itmbench-bench-") as tmp:
        d = Path(tmp)
        fresh_copy(d)
        cmd = [sys.executable, "-m", "snakemake", "--cores", cores, "--quiet", "all"]
        if configfile:
            shutil.copy(configfile, d / "override.yaml")
            cmd += ["--configfile", "override.yaml"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t0 = time.perf_counter()
        res = subprocess.run(cmd, cwd=d, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if res.returncode != 0:
            raise SystemExit(f"snakemake failed:\n{res.stderr[-3000:]}")
        if keep is not None:  # the run's tables, metrics and reports, to read what it computed
            shutil.rmtree(keep, ignore_errors=True)
            for part in ("results/world/tables", "results/world/metrics", "reports"):
                shutil.copytree(d / part, keep / part)
        peak_kb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        per_rule: dict[str, float] = {}
        for tsv in sorted((d / "benchmarks/rules").rglob("*.tsv")):
            rule = tsv.relative_to(d / "benchmarks/rules").parts[0]
            per_rule[rule] = per_rule.get(rule, 0.0) + float(pd.read_csv(tsv, sep="\t")["s"].iloc[0])
        return {"wall_s": wall, "peak_rss_mb": peak_kb / 1024, "per_rule_s": per_rule}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--configfile", default=None, help="params override (e.g. a smaller world)")
    p.add_argument("--cores", default="all")
    p.add_argument("--json", default=None, help="also write the figures here")
    p.add_argument("--keep", type=Path, default=None, help="copy the last run's tables, metrics and reports here")
    args = p.parse_args(argv)
    runs = []
    for i in range(args.runs):
        r = one_run(args.configfile, args.cores, args.keep)
        runs.append(r)
        print(f"run {i + 1}/{args.runs}: {r['wall_s']:.1f} s wall, peak job RSS {r['peak_rss_mb']:.0f} MB", flush=True)
    walls = [r["wall_s"] for r in runs]
    med = statistics.median(walls)
    print(f"\ndefault run, {args.runs} runs: median {med:.1f} s (min {min(walls):.1f}, max {max(walls):.1f})")
    print(f"peak job RSS: median {statistics.median(r['peak_rss_mb'] for r in runs):.0f} MB")
    rules = sorted({k for r in runs for k in r["per_rule_s"]})
    print("\nper rule (sum over its jobs), median seconds:")
    for rule in rules:
        med = statistics.median(r["per_rule_s"].get(rule, 0.0) for r in runs)
        print(f"  {rule:<12} {med:8.1f}  ({100 * med / statistics.median(walls):.0f}% of wall)")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
