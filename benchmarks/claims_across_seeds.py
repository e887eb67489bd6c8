"""Each claim's verdict on other draws of the world: the default run's claims at other `world.seed`s, side by side.

A verdict decided on one world is a finding of that draw of scenes, captions and images, and of the models
trained on it. This script tells a verdict that holds on every draw from one that turns with the draw (a claim
decided near its edge, as docs/README.md warns). For each seed it makes a fresh `git clone` of this repository
at --rev, writes an override file `{world: {seed: S}}` and runs Snakemake there for the claims table alone
(`results/world/tables/claims/claims.csv`: every benchmark, model and table a claim reads, no report), with the
clone's own `src` first on PYTHONPATH, so that editing this checkout meanwhile changes nothing. Everything else
is params.yaml's default, so the models' own seeds stay; what changes is the world they train and are scored on.
A finished run (for example the default run, seed 0) is read with `--run SEED=DIR` instead of run again.

Prints, and with --md writes as a Markdown table, each claim's verdict per seed and how many seeds it holds on.

Usage: python benchmarks/claims_across_seeds.py [--rev HEAD] [--seed S ...] [--run SEED=DIR ...] [--work DIR]
       [--cores 2] [--md FILE]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_default_run import fresh_clone, resolve  # noqa: E402

CLAIMS = "results/world/tables/claims/claims.csv"


def run_seed(commit: str, seed: int, dest: Path, cores: int) -> Path:
    """The default run's claims at world seed `seed`, in a fresh clone at `commit` (kept if it is there)."""
    if not (dest / CLAIMS).exists():
        fresh_clone(commit, dest)
        (dest / "seed.yaml").write_text(f"world:\n  seed: {seed}\n")
        env = {**os.environ, "PYTHONPATH": str(dest / "src")}
        start = time.monotonic()
        log = dest / "claims_across_seeds.log"
        with open(log, "w") as out:
            res = subprocess.run(
                [sys.executable, "-m", "snakemake", "--cores", str(cores), CLAIMS, "--configfile", "seed.yaml"],
                cwd=dest, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        if res.returncode != 0:
            raise SystemExit(f"claims_across_seeds: seed {seed} failed (exit {res.returncode}); see {log}")
        print(f"seed {seed}: {time.monotonic() - start:.0f} s wall in {dest}", flush=True)
    return dest / CLAIMS


def verdicts(path: Path) -> pd.Series:
    """A claims table's verdicts, (paper, claim) -> holds / does not hold / undecided."""
    table = pd.read_csv(path)
    missing = {"paper", "claim", "holds"} - set(table.columns)
    if missing:
        raise SystemExit(f"{path}: no column {sorted(missing)[0]!r}; expected a claims table")
    word = [{"True": "holds", "False": "does not hold"}.get(str(v), "undecided") for v in table["holds"]]
    return pd.Series(word, index=pd.MultiIndex.from_frame(table[["paper", "claim"]]))


def matrix(runs: dict[int, Path]) -> pd.DataFrame:
    """Claim x seed verdicts, in the first run's claim order, and the count of seeds a claim holds on."""
    columns = {f"seed {s}": verdicts(p) for s, p in sorted(runs.items())}
    frame = pd.DataFrame(columns)
    first = columns[f"seed {min(runs)}"].index
    frame = frame.reindex(first.append(frame.index.difference(first))).fillna("absent")
    seeds = frame.to_numpy()
    decided = np.isin(seeds, ["holds", "does not hold"])
    frame["holds on"] = [f"{int(h)} of {int(d)}" for h, d in zip((seeds == "holds").sum(axis=1), decided.sum(axis=1))]
    frame["agrees"] = ["yes" if len(set(row[d])) <= 1 else "no" for row, d in zip(seeds, decided)]
    return frame.reset_index()


def markdown(frame: pd.DataFrame, header: str) -> str:
    cols = list(frame.columns)
    lines = [header, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        cells = [f"**{v}**" if v == "does not hold" else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD", help="the commit the seeds run (default HEAD)")
    ap.add_argument("--seed", type=int, action="append", default=[], help="a world seed to run (repeatable)")
    ap.add_argument("--run", action="append", default=[], help="SEED=DIR: a finished default run of that seed")
    ap.add_argument("--work", default="/tmp/claims_across_seeds", help="where the seeds' clones are made (kept)")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--md", default=None, help="also write the table as Markdown here")
    args = ap.parse_args(argv)
    commit = resolve(args.rev)
    runs: dict[int, Path] = {}
    for item in args.run:
        seed, _, folder = item.partition("=")
        if not seed.lstrip("-").isdigit() or not (Path(folder) / CLAIMS).exists():
            raise SystemExit(f"claims_across_seeds: --run {item!r}: expected SEED=DIR with DIR/{CLAIMS}")
        runs[int(seed)] = Path(folder) / CLAIMS
    for seed in args.seed:
        runs[seed] = run_seed(commit, seed, Path(args.work) / f"seed_{seed}", args.cores)
    if not runs:
        raise SystemExit("claims_across_seeds: give --seed or --run")
    frame = matrix(runs)
    stable = int((frame["agrees"] == "yes").sum())
    header = (
        f"**Each claim's verdict on {len(runs)} draws of the default world** (`world.seed` "
        f"{', '.join(str(s) for s in sorted(runs))}"
        + (f"; seeds {', '.join(str(s) for s in args.seed)} run at {commit[:7]}" if args.seed else "")
        + "; everything else params.yaml's default; "
        f"`benchmarks/claims_across_seeds.py`): {stable} of {len(frame)} claims have the same verdict on every draw"
    )
    text = markdown(frame, header)
    print(text)
    if args.md:
        Path(args.md).parent.mkdir(parents=True, exist_ok=True)
        Path(args.md).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
