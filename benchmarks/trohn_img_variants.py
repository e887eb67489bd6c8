"""Does TROHN-Img raise BiVLC's T2I in the world? The faithful (unfiltered) default and the untried variants.

docs/bivlc.md listed as untried: a longer fine-tune, more hard-negative pairs per batch and a larger model. This script
runs BiVLC's paired tests (`rule bivlc_paired`: exact McNemar and a paired bootstrap of the accuracy
difference over the same instances) on the tiny world of the workflow tests
(tests/workflow/workflow_helpers.py `TINY`), once per variant, in one working copy of the workflow: each
variant is a params override, so Snakemake retrains only the models whose spec it changes (the world,
BiVLC and `clip` are built once). Only the BiVLC targets run, never the default DAG.

Variants (each against the control `clip_coco`, fine-tuned from the same `clip`):
- `faithful`: the default, TROHN-Img unfiltered as the paper's (`clip_trohn_img`), and its filtered
  ablation (`clip_trohn_img_filtered`);
- `longer`: both `clip_coco` and `clip_trohn_img` fine-tuned for `--longer-epochs` epochs instead of
  2 (the control as long as the treatment: equal compute, as BiVLC's CLIP_COCO);
- `more_negatives`: `clip_trohn_img` with `--negatives` hard-negative caption+image pairs per positive
  (train.hard_negatives_per_sample) instead of 1: more hard-negative pairs in every batch;
- `larger`: `clip` and the three fine-tunes on `itm-clip-small` (models/configs: twice itm-clip-tiny's
  width and layers in both towers, the same embedding; 8-pixel patches, which itm-clip-tiny had too until it
  moved to 16-pixel ones), so `clip` is trained again first.

Each variant's table is copied to OUT/<variant>.{csv,md}; OUT/summary.md holds the T2I, I2T and Group
rows of TROHN-Img vs CLIP_COCO of every variant, with the best epoch each fine-tune kept (the trainer
keeps the epoch of best validation R@1). Printed too.

Usage: python benchmarks/trohn_img_variants.py --workdir /tmp/trohn [--out results/benchmarks/trohn_img]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "workflow"))
from workflow_helpers import copy_workflow  # noqa: E402  (the tiny params of the workflow tests)

PAIRS = [["clip_trohn_img", "clip_coco"], ["clip_trohn_img_filtered", "clip_coco"]]
PAIRS.append(["clip_trohn_img", "clip_trohn_img_filtered"])
FINE_TUNE = {"epochs": 2, "lr": 5.0e-4}  # params.yaml's fine-tunes
LARGER_ARCH = "itm-clip-small"  # models/configs: twice itm-clip-tiny's width and layers, its former 8-pixel patches


def variants(longer_epochs: int, negatives: int) -> dict[str, dict]:
    """Each variant's params override (merged over the tiny params)."""
    longer = {**FINE_TUNE, "epochs": longer_epochs}
    return {
        "faithful": {},
        "longer": {"models": {"clip_coco": {"train": longer}, "clip_trohn_img": {"train": longer}}},
        "more_negatives": {
            "models": {"clip_trohn_img": {"train": {**FINE_TUNE, "hard_negatives_per_sample": negatives}}}
        },
        # the world's "pretrained CLIP" and the three fine-tunes of the pairs on a larger tower
        "larger": {"models": {m: {"arch": LARGER_ARCH} for m in ("clip", *dict.fromkeys(sum(PAIRS, [])))}},
    }


def run_variant(workdir: Path, name: str, override: dict, cores: int) -> float:
    """Run the paired-test target with the variant's override; the seconds it took."""
    override = {**override, "report": {"bivlc_paired": PAIRS}}
    (workdir / "override.yaml").write_text(yaml.safe_dump(override))
    target = "results/world/tables/bivlc/paired.csv"
    cmd = [sys.executable, "-m", "snakemake", target, "--cores", str(cores)]
    cmd += ["--configfile", "tiny.yaml", "override.yaml"]
    start = time.monotonic()
    res = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"variant {name}: snakemake failed\n{(res.stdout + res.stderr)[-4000:]}")
    return time.monotonic() - start


def best_epochs(workdir: Path) -> dict[str, str]:
    """Each fine-tune's kept epoch / its epochs (history.json)."""
    out = {}
    for model in ("clip_coco", "clip_trohn_img", "clip_trohn_img_filtered"):
        doc = json.loads((workdir / f"results/world/models/{model}/history.json").read_text())
        out[model] = f"{doc['best_epoch']}/{len(doc['history'])}"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", type=Path, required=True, help="a working copy of the workflow (created if empty)")
    ap.add_argument("--out", type=Path, default=REPO / "results/benchmarks/trohn_img")
    ap.add_argument("--longer-epochs", type=int, default=4)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None, help="run only these variants")
    args = ap.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    if not (args.workdir / "Snakefile").exists():
        copy_workflow(args.workdir)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, override in variants(args.longer_epochs, args.negatives).items():
        if args.only and name not in args.only:
            continue
        seconds = run_variant(args.workdir, name, override, args.cores)
        table = args.workdir / "results/world/tables/bivlc/paired"
        for ext in (".csv", ".md"):
            shutil.copyfile(table.with_suffix(ext), (args.out / name).with_suffix(ext))
        records = pd.read_csv(table.with_suffix(".csv"))
        kept = best_epochs(args.workdir)
        for r in records.itertuples(index=False):
            rows.append(
                {
                    "variant": name,
                    "A vs B": f"{r.model_a} vs {r.model_b}",
                    "metric": r.metric.upper() if len(r.metric) == 3 else r.metric,
                    "n": r.n,
                    "A only / B only": f"{r.a_only} / {r.b_only}",
                    "A − B (pp, 95% paired bootstrap)": f"{r.difference:+.2f} ({r.lo:+.2f} to {r.hi:+.2f})",
                    "McNemar p": f"{r.p_mcnemar:.3g}",
                    "direction": r.direction,
                    "kept epoch A, B": f"{kept[r.model_a]}, {kept[r.model_b]}",
                }
            )
        print(f"{name}: {seconds:.0f} s", flush=True)
    summary = pd.DataFrame(rows)
    header = "| " + " | ".join(summary.columns) + " |"
    lines = [header, "|" + "|".join(["---"] * len(summary.columns)) + "|"]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in summary.itertuples(index=False)]
    text = "\n".join(lines) + "\n"
    (args.out / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
