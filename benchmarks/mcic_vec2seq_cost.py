"""CPU seconds that MCIC's Vec2seq+FFNN and the Table 4 / Table 5 sweeps add to a run: their jobs' benchmark files.

Run the new targets once in a working copy whose upstream (the world, MCIC's benchmarks, the trained
`clip` and its embeddings) already exists, e.g. a copy of a default run's data/ and results/ with
`snakemake --cores 1 --rerun-triggers mtime <targets>` (the targets: `--targets` prints them), then
point this script at it. It reads the `cpu_time` column of each new job's Snakemake benchmark file
(benchmarks/rules/...) and writes a Markdown table with the total, the date and the machine:

    python benchmarks/mcic_vec2seq_cost.py --run /tmp/def --out results/benchmarks/mcic_vec2seq/cost.md
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

NEW_MODEL = "vec2seq"


def scored_benchmarks(params: Path) -> list[str]:
    """The benchmarks the Vec2seq+FFNN scores under these params (the plan's rule)."""
    from itmbench.papers.plan import gallery_models, model_specs, scored_models
    from itmbench.papers.registry import BENCHMARKS
    from itmbench.params import load_yaml

    p = load_yaml(params)
    return [b for b in sorted(BENCHMARKS) if NEW_MODEL in scored_models(b, model_specs(p), gallery_models(p))]


def jobs(benches: list[str]) -> list[tuple[str, str, str]]:
    """(job, its target, its benchmark file) of every job the model and the sweeps add."""
    rows = [("train_ffnn vec2seq", "results/world/models/vec2seq/model.pt", "train/vec2seq.tsv")]
    for b in benches:
        rows.append((f"score_pairs {b}", f"results/world/pairs/{b}/vec2seq.parquet", f"pairs/{b}/vec2seq.tsv"))
        rows.append((f"score_benchmark_pairs {b}", f"results/world/metrics/{b}/vec2seq.json", f"score/{b}/vec2seq.tsv"))
    for sweep, table in (("sizes", "table4"), ("lambda_gen", "table5")):
        rows.append((f"mcic_sweep {sweep}", f"results/world/mcic/sweeps/{sweep}.csv", f"mcic/sweep_{sweep}.tsv"))
        rows.append((f"mcic_sweep_table {table}", f"results/world/tables/mcic/{table}.md", f"tables/mcic_{table}.tsv"))
    return rows


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, help="the working copy where the new targets ran")
    ap.add_argument("--params", type=Path, default=REPO / "params.yaml")
    ap.add_argument("--targets", action="store_true", help="print the targets to run and exit")
    ap.add_argument("--out", type=Path, default=REPO / "results/benchmarks/mcic_vec2seq/cost.md")
    args = ap.parse_args()
    rows = jobs(scored_benchmarks(args.params))
    if args.targets:
        print(" ".join(target for _, target, _ in rows))
        return 0
    if args.run is None:
        ap.error("--run is required (or --targets)")
    lines = ["| job | CPU s | wall s |", "|---|---|---|"]
    total_cpu = total_wall = 0.0
    for job, _, tsv in rows:
        path = args.run / "benchmarks" / "rules" / tsv
        if not path.exists():
            raise SystemExit(f"{path}: missing; run the targets first (--targets prints them)")
        with path.open() as fh:
            record = next(csv.DictReader(fh, delimiter="\t"))
        cpu, wall = float(record["cpu_time"]), float(record["s"])
        total_cpu, total_wall = total_cpu + cpu, total_wall + wall
        lines.append(f"| {job} | {cpu:.1f} | {wall:.1f} |")
    lines.append(f"| **total** | **{total_cpu:.1f}** | **{total_wall:.1f}** |")
    stamp = dt.datetime.fromtimestamp((args.run / "benchmarks").stat().st_mtime, tz=dt.timezone.utc)
    lines += [
        "",
        f"Measured {stamp:%Y-%m-%d} on {cpu_model()} ({os.cpu_count()} logical cores, shared), "
        "one job at a time (`--cores 1`).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.out.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
