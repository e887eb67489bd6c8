"""The CPU seconds CxC's appendix Table 3 adds to a run: the trainings and CxC scorings of de_i2t's ablations.

The ablation models are those params.yaml `report.cxc.ablations` names, but the baseline (de_i2t, which the
default run trains anyway). Run their targets in a fresh copy of the workflow on the params to measure (the
default world: no override), e.g.

    snakemake --cores 2 results/world/metrics/cxc/de_i2t_scratch.json ...

then point this script at that copy: it reads each job's Snakemake `benchmark:` file (cpu_time: user + system
seconds of the job's process tree) of rules `train` and `score_benchmark` (cxc). A training timed outside
Snakemake instead (`/usr/bin/time -v -o FILE itmbench train ...`, e.g. the small-batch fine-tune from a
stand-in checkpoint of the same architecture where `clip` was not trained in the copy: its cost does not
depend on the starting weights) is given as `--time MODEL=FILE`, a scoring timed so as `--score-time
MODEL=FILE`. Writes OUT/cost.csv and OUT/cost.md
(one row per job, the total, the date and the machine) and prints the Markdown.

Usage: python benchmarks/cxc_ablation_cost.py --run DIR [--time MODEL=FILE] [--score-time MODEL=FILE]
    [--out results/benchmarks/cxc_ablation]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import sys
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]


def ablation_models(params: Path) -> list[str]:
    """The ablation models of report.cxc.ablations, the baseline left out."""
    ablations = yaml.safe_load(params.read_text())["report"]["cxc"]["ablations"]
    return [model for name, model in ablations.items() if name != "baseline"]


def snakemake_cpu(path: Path) -> float:
    """cpu_time of a Snakemake benchmark file (its one repetition)."""
    frame = pd.read_csv(path, sep="\t")
    if "cpu_time" not in frame.columns or len(frame) != 1:
        raise ValueError(f"{path}: expected one row with a cpu_time column (a Snakemake benchmark file)")
    return float(frame["cpu_time"].iloc[0])


def time_cpu(path: Path) -> float:
    """User + system seconds of a `/usr/bin/time -v` report."""
    text = path.read_text()
    found = {k: re.search(rf"{k} time \(seconds\): ([0-9.]+)", text) for k in ("User", "System")}
    if not all(found.values()):
        raise ValueError(f"{path}: expected 'User time (seconds)' and 'System time (seconds)' (/usr/bin/time -v)")
    return sum(float(m.group(1)) for m in found.values() if m)


def machine() -> str:
    """The CPU model and count of this machine."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = re.findall(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), flags=re.M)
        model = names[0] if names else model
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="the workflow copy that ran the ablations' targets")
    ap.add_argument("--time", action="append", default=[], help="MODEL=FILE: a training timed by /usr/bin/time -v")
    ap.add_argument("--score-time", action="append", default=[], help="MODEL=FILE: a CxC scoring timed so")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "benchmarks" / "cxc_ablation")
    args = ap.parse_args(argv)
    timed = {
        "train": dict(item.split("=", 1) for item in args.time),
        "score_benchmark (cxc)": dict(item.split("=", 1) for item in args.score_time),
    }
    rows = []
    for model in ablation_models(args.run / "params.yaml"):
        jobs = {"train": args.run / "benchmarks/rules/train" / f"{model}.tsv"}
        jobs["score_benchmark (cxc)"] = args.run / "benchmarks/rules/score/cxc" / f"{model}.tsv"
        for job, path in jobs.items():
            if model in timed[job]:
                rows.append((model, job, "/usr/bin/time -v", time_cpu(Path(timed[job][model]))))
            elif path.is_file():
                rows.append((model, job, "Snakemake benchmark", snakemake_cpu(path)))
            else:
                print(f"{path}: absent (its job did not run in {args.run})", file=sys.stderr)
    if not rows:
        print(f"{args.run}: no job of the ablations was measured", file=sys.stderr)
        return 1
    frame = pd.DataFrame(rows, columns=["model", "job", "measured by", "cpu_seconds"])
    total = frame["cpu_seconds"].sum()
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "cost.csv", index=False)
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    lines = [
        f"Measured {today} on {machine()} (one thread per job, as the workflow runs the world's models).",
        "",
        "| model | job | measured by | CPU seconds |",
        "|---|---|---|---|",
        *(f"| {r.model} | {r.job} | {r[3]} | {r.cpu_seconds:.1f} |" for r in frame.itertuples()),
        f"| total | | | {total:.1f} |",
    ]
    text = "\n".join(lines) + "\n"
    (args.out / "cost.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
