"""BiVLC's step-3 annotators at several perception noises: Cohen's kappa, step-3 drops, chosen images that fit.

The simulated step-3 chooser perceives each candidate's fit to the negative caption with Gaussian noise
(`bivlc.select_noise`); the audit sets a second, independent annotator beside it and prints their Cohen's
kappa on 'an image' vs 'none' (the paper's appendix H.3: 0.49). This script replays both annotators
(`itmbench.papers.bivlc.audit.step3_choices`, the build's and the audit's random streams) on the candidates
of a built BiVLC folder at each given noise, so that the calibration of `select_noise` is measured on the
same candidates before and after. The noise of the params the folder was built with must reproduce the
build's own choices exactly (checked). Build the folder on the world to measure, e.g. in a scratch copy:

    snakemake --cores 1 --configfile /path/to/world.yaml results/world/tables/bivlc/audit.md

Writes OUT/agreement.{csv,md,json} (one row per label: select_noise, kappa, step 3 dropped %, chosen images
that fit the negative caption %) and prints the Markdown.

Usage: python benchmarks/bivlc_annotator_agreement.py --bench DIR [--params params.yaml]
    --noise LABEL=SD [--noise LABEL=SD ...] [--out results/benchmarks/bivlc_annotators]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from itmbench.errors import InputError
from itmbench.io import atomic_path
from itmbench.negatives.edits import STREAM_SECOND_ANNOTATOR, STREAM_SELECT
from itmbench.papers.bivlc.audit import cohen_kappa, step3_choices
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.params import make_config

REPO = Path(__file__).resolve().parents[1]


def agreement(bench: Path, cfg: BiVLCConfig, noises: dict[str, float]) -> pd.DataFrame:
    """Per label: the two annotators' kappa, the chooser's step-3 drop share and its chosen images' fit share."""
    sc = pd.read_parquet(bench / "sugarcrepe.parquet")
    cand = pd.read_parquet(bench / "candidates.parquet")
    instance = cand["sugarcrepe_id"].to_numpy()
    fits = cand["fits_negative"].to_numpy(dtype=bool)
    built, _ = step3_choices(sc, instance, fits, cfg, STREAM_SELECT)
    if not np.array_equal(built, sc["chosen_candidate"].to_numpy() >= 0):
        raise InputError(
            f"{bench / 'sugarcrepe.parquet'}: chosen_candidate differs from a replay at select_noise "
            f"{cfg.select_noise} and seed {cfg.seed}; expected the folder built with the given params"
        )
    rows = []
    for label, noise in noises.items():
        chose, chosen_fits = step3_choices(sc, instance, fits, cfg, STREAM_SELECT, noise)
        second, _ = step3_choices(sc, instance, fits, cfg, STREAM_SECOND_ANNOTATOR, noise)
        rows.append(
            {
                "label": label,
                "select_noise": noise,
                "kappa": cohen_kappa(chose, second),
                "step3_dropped": 100.0 * float(1.0 - chose.mean()),
                "chosen_fits_negative": 100.0 * float(chosen_fits[chose].mean()) if chose.any() else float("nan"),
                "instances": len(sc),
            }
        )
    return pd.DataFrame(rows)


def parse_noises(items: list[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items:
        label, sep, value = item.partition("=")
        try:
            out[label] = float(value)
        except ValueError:
            sep = ""
        if not sep or not label or label in out and out[label] != float(value):
            raise InputError(f"--noise {item!r}: expected LABEL=SD with a number SD and a new LABEL")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", type=Path, required=True, help="a built BiVLC folder (data/world/bivlc)")
    parser.add_argument("--params", type=Path, default=REPO / "params.yaml", help="params the folder was built with")
    parser.add_argument("--noise", action="append", required=True, help="LABEL=SD, a select_noise to replay")
    parser.add_argument("--out", type=Path, default=REPO / "results/benchmarks/bivlc_annotators")
    args = parser.parse_args(argv)
    try:
        noises = parse_noises(args.noise)
        section = yaml.safe_load(args.params.read_text()).get("bivlc", {})
        cfg = make_config(BiVLCConfig, section)
        table = agreement(args.bench, cfg, noises)
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out / "agreement.csv") as tmp:
        table.to_csv(tmp, index=False)
    with atomic_path(args.out / "agreement.json") as tmp:
        Path(tmp).write_text(json.dumps({r["label"]: r for r in table.to_dict("records")}, indent=2) + "\n")
    head = "| label | select_noise | Cohen's kappa | step 3 dropped (%) | chosen images fitting the negative (%) |"
    lines = [
        f"**BiVLC step-3 annotators replayed on {table['instances'].iloc[0]} instances of {args.bench}**",
        "",
        head,
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.label} | {r.select_noise:g} | {r.kappa:.2f} | {r.step3_dropped:.2f} | {r.chosen_fits_negative:.2f} |"
        for r in table.itertuples()
    ]
    md = "\n".join(lines) + "\n"
    with atomic_path(args.out / "agreement.md") as tmp:
        Path(tmp).write_text(md)
    print(md, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
