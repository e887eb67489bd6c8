"""The whole tiny-world DAG through the SLURM executor on the loopback cluster: wall time and SLURM jobs.

Starts the cluster of tests/workflow/slurm_cluster.py (Debian's slurm packages, root), runs the
default target with the tiny params of tests/workflow/workflow_helpers.py through
`workflow/profiles/slurm` (overlaid with `cores: 2`, the loopback node's CPUs: the diffusion and
COCO rules ask for `workflow.cores`), then the same locally (`--cores 2`), and writes both times,
the number of SLURM jobs `sacct` shows and whether the outputs are byte-identical to
reports/cluster/whole_dag.md. It is not a test: it takes longer than CI allows (docs/cluster.md).
Run it from a checkout nothing edits for the hour it takes, with that checkout's src/ first on
PYTHONPATH (the SLURM jobs inherit it): its jobs import the package as they start.
Usage: python benchmarks/slurm_whole_dag.py [--profile workflow/profiles/slurm-grouped] [--skip-local]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "workflow"))

from slurm_cluster import LoopbackCluster  # noqa: E402
from workflow_helpers import copy_workflow  # noqa: E402

from itmbench.io import write_text  # noqa: E402

OUT = REPO / "reports" / "cluster" / "whole_dag.md"


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for top in ("data", "results")
        for p in sorted((root / top).rglob("*"))
        if p.is_file() and p.name != "history.json"  # a training history records its epochs' seconds
    }


def _jobs(log: str) -> int:
    """The jobs a Snakemake run printed: `rule X:` through an executor, `localrule X:` run in place (the local
    run's every job, the SLURM run's target `all`), the target not counted."""
    return sum(1 for m in re.finditer(r"^\s*(?:local)?rule (\w+):", log, re.M) if m.group(1) != "all")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="workflow/profiles/slurm", help="the profile to overlay")
    ap.add_argument("--skip-local", action="store_true", help="no local run (no byte comparison)")
    args = ap.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="itm-slurm-dag-"))
    # both copies now, from the same tree: a workflow edited during the long SLURM run must not reach the local one
    (root / "slurm").mkdir()
    remote = copy_workflow(root / "slurm")
    (root / "local").mkdir()
    local = copy_workflow(root / "local")
    commit = subprocess.run(
        ["git", "-C", str(REPO), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    config = yaml.safe_load((REPO / args.profile / "config.yaml").read_text())
    config["cores"] = 2
    if "resources" in config:
        config["resources"] = ["mem_mb=16000"]
    (root / "profile").mkdir()
    (root / "profile" / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    cluster = LoopbackCluster().start()
    try:
        cmd = [sys.executable, "-m", "snakemake", "--workflow-profile", str(root / "profile")]
        cmd += ["--slurm-init-seconds-before-status-checks", "2", "--configfile", "tiny.yaml"]
        t0 = time.monotonic()
        res = subprocess.run(cmd, cwd=remote, env=cluster.env(), capture_output=True, text=True)
        wall = time.monotonic() - t0
        rows = [r for r in cluster.sacct("JobID", "State", "WorkDir") if r["WorkDir"] == str(remote)]
    finally:
        cluster.stop()
    if res.returncode != 0:
        print(res.stdout[-3000:], res.stderr[-3000:], file=sys.stderr)
        return 1
    jobs = _jobs(res.stdout + res.stderr)
    states = sorted({r["State"] for r in rows})
    lines = [
        f"Whole tiny-world DAG at {commit}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end",
        "",
        "| run | seconds | jobs | SLURM jobs (sacct) | states | outputs equal |",
        "|---|---|---|---|---|---|",
    ]
    equal = ""
    if not args.skip_local:
        t0 = time.monotonic()
        loc = subprocess.run(
            [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "tiny.yaml"],
            cwd=local,
            capture_output=True,
            text=True,
        )
        local_wall = time.monotonic() - t0
        if loc.returncode != 0:
            print(loc.stdout[-3000:], loc.stderr[-3000:], file=sys.stderr)
            return 1
        a, b = _files(remote), _files(local)
        differ = sorted(n for n in set(a) | set(b) if a.get(n) != b.get(n))
        equal = "yes" if not differ else f"no: {len(differ)} of {len(set(a) | set(b))} files"
        local_jobs = _jobs(loc.stdout + loc.stderr)
        lines.append(f"| local, --cores 2 | {local_wall:.0f} | {local_jobs} | | | |")
        if differ:
            lines += ["", "Files that differ (SLURM run against the local run):", ""]
            lines += [f"- `{n}`" + ("" if n in a and n in b else " (only in one run)") for n in differ]
    lines.insert(4, f"| SLURM, {args.profile} | {wall:.0f} | {jobs} | {len(rows)} | {' '.join(states)} | {equal} |")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    write_text(OUT, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
