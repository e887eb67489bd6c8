"""What the small COCO models produce: the trained LM's negatives through TROHN-Text's filter, the trained SDXL's
images through the world's recognizer (issue 36; docs/coco.md, "A smoke test before the GPU hours").

1. Makes the small models on a world (`itmbench make-small-models --world`, timed: wall and CPU seconds) unless
   `--models` already holds them.
2. TROHN-Text: the LM answers SugarCrepe's seven prompts for the first `--captions` val captions with
   `coco-small.yaml`'s generation settings; each answer goes through the same filter as on a real run
   (`check_template`, no lexicon: the COCO path's); beside it the teacher's rate on the same captions (the
   answers the template filter keeps exist for that share: the ceiling of a student of this teacher).
3. TROHN-Img: the pipeline draws `images_per_prompt` images of each kept negative caption (at most `--prompts`)
   with `coco-small.yaml`'s settings, at the world's image size; the world's recognizer (trained here on the
   world's train split with params.yaml's `recognizer:` into `--recognizer` or MODELS/recognizer, unless one is
   there) judges each image
   against the caption as the world's parser reads it: an image fits when P(fit) > 1/2 (the recognizer's own
   decision rule); BiVLC's first filter keeps a caption whose best image fits. Beside it, the recognizer's
   ceiling: the same rule on the world's own images of those val captions (true pairs), and its false-fit
   rate on mismatched pairs (each caption against another image it does not fit by the world's truth).
Prints, and writes as Markdown to `--out`, with Wilson 95% intervals.

Usage: python benchmarks/small_models.py --world data/world/items --models /tmp/small --out reports/coco/small_models.md
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

REPO = Path(__file__).resolve().parents[1]


def cpu_seconds() -> float:
    """This process's and its children's user + system CPU seconds."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def rate(k: int, n: int) -> str:
    """k of n as a percentage with its Wilson 95% interval."""
    from itmbench.metrics.intervals import wilson_interval

    if n == 0:
        return "–"
    lo, hi = wilson_interval(k, n)
    return f"{100 * k / n:.1f} ({100 * lo:.1f}–{100 * hi:.1f})"


def small_overlay() -> dict:
    return yaml.safe_load((REPO / "workflow" / "config" / "coco-small.yaml").read_text())["coco"]


def text_stage(models: Path, captions: list[str], structures) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the LM's negatives, per subtype: generations, kept, the teacher's kept) on `captions`."""
    from itmbench.models.small_llm import teacher_corpus
    from itmbench.negatives.llm_captions import LLMConfig, build_text_generation_pipeline, generate_negatives
    from itmbench.params import make_config

    cfg = make_config(LLMConfig, {**small_overlay()["llm"], "model": str(models / "llm")})
    negatives = generate_negatives(build_text_generation_pipeline(cfg, device="cpu"), captions, cfg)
    teacher = pd.DataFrame(teacher_corpus(captions, structures, seed=1), columns=["caption", "subset", "a", "kept"])
    table = negatives.groupby("subset").agg(generations=("reason", "size"), kept=("follows_template", "sum"))
    table["teacher_kept"] = teacher.groupby("subset")["kept"].sum()
    return negatives, table.reindex(list(cfg.subsets))


def image_stage(models: Path, kept: list[str], world, recognizer) -> dict:
    """Images of each kept negative caption and how many the recognizer finds fitting."""
    from itmbench.negatives.sdxl import SDXLConfig, build_sdxl_pipeline, generate_sdxl
    from itmbench.params import make_config
    from itmbench.world.parse import parse_caption

    overlay = small_overlay()["sdxl"]
    size = int(world.images.shape[1])
    cfg = make_config(
        SDXLConfig,
        {**overlay, "base_model": str(models / "sdxl"), "unet_model": str(models / "sdxl"), "output_size": size},
    )
    readable = [(c, parse_caption(c).structure) for c in kept]
    readable = [(c, s) for c, s in readable if s is not None]
    images = generate_sdxl(build_sdxl_pipeline(cfg, "cpu"), [c for c, _ in readable], cfg)
    fits = [recognizer.judge_pairs([s] * len(imgs), np.stack(imgs)) > 0.5 for (_, s), imgs in zip(readable, images)]
    return {
        "captions": len(kept),
        "readable": len(readable),
        "images": sum(len(f) for f in fits),
        "fitting": int(sum(f.sum() for f in fits)),
        "kept_by_best": int(sum(bool(f.any()) for f in fits)),
        "per_prompt": cfg.images_per_prompt,
    }


def recognizer_ceiling(world, val: pd.DataFrame, structures, recognizer) -> dict:
    """The recognizer on the world's own images of the val captions, each against its caption: the share of true
    pairs it reads as fitting, the most any generator's images can reach under it; and beside it, each caption
    against the next image's (mismatched pairs; those that fit by the world's truth left out): how far the judge
    tells the two apart."""
    from itmbench.params import make_config
    from itmbench.world.generate import WorldConfig
    from itmbench.world.scene import Scene
    from itmbench.world.truth import caption_fits

    margin = make_config(WorldConfig).relation_margin  # params.yaml's, the margin the world was made with
    scene_of = dict(zip(world.scene_table["image_id"].to_numpy(np.int64), world.scene_table["scene"]))
    ids = val["image_id"].to_numpy(np.int64)
    images = world.images[ids]
    fits = recognizer.judge_pairs(structures, images) > 0.5
    distinct = list(dict.fromkeys(ids.tolist()))  # the images in order; each caption meets the next one's
    following = dict(zip(distinct, distinct[1:] + distinct[:1]))
    other = np.array([following[i] for i in ids.tolist()], dtype=np.int64)
    truly = np.array([caption_fits(s, Scene.from_json(scene_of[int(j)]), margin) for s, j in zip(structures, other)])
    wrong = recognizer.judge_pairs(structures, world.images[other]) > 0.5
    return {
        "fitting": int(fits.sum()),
        "pairs": len(fits),
        "mismatched": int((~truly).sum()),
        "mismatched_fitting": int(wrong[~truly].sum()),
    }


def report(made: dict | None, table: pd.DataFrame, reasons: dict, images: dict, n_captions: int, ceiling: dict) -> str:
    lines = ["**The small models of the COCO smoke test, measured on the world**", ""]
    if made:
        lines += [
            f"make-small-models --world: {made['wall']:.0f} s wall, {made['cpu']:.0f} s CPU "
            f"({made['threads']} torch thread(s); the LM, SDXL and the open_clip folder)",
            "",
        ]
    lines += [
        f"TROHN-Text: the LM's answers to the first {n_captions} val captions x 7 subtypes, through the template "
        "filter",
        "",
        "| subtype | generations | kept by the filter (%) | the teacher's answers kept (%) |",
        "|---|---|---|---|",
    ]
    for subset, row in table.iterrows():
        n = int(row["generations"])
        lines.append(f"| {subset} | {n} | {rate(int(row['kept']), n)} | {rate(int(row['teacher_kept']), n)} |")
    n, k, t = int(table["generations"].sum()), int(table["kept"].sum()), int(table["teacher_kept"].sum())
    lines += [f"| all | {n} | {rate(k, n)} | {rate(t, n)} |", ""]
    rest = ", ".join(f"{reason} {count}" for reason, count in reasons.items() if reason != "ok")
    lines += [f"The filter's reasons for the LM's answers it did not keep: {rest}", ""]
    lines += [
        f"TROHN-Img: {images['per_prompt']} images of each of {images['captions']} kept negative captions "
        f"({images['readable']} read by the world's parser), judged by the world's recognizer",
        "",
        "| images fitting their caption (%) | captions whose best image fits (BiVLC's filter 1, %) |",
        "|---|---|",
        f"| {rate(images['fitting'], images['images'])} | {rate(images['kept_by_best'], images['readable'])} |",
        "",
        f"The recognizer's ceiling: the world's own images of those {ceiling['pairs']} val captions, each against its "
        f"caption, read as fitting: {rate(ceiling['fitting'], ceiling['pairs'])}; each caption against the next "
        f"image, where it does not fit by the world's truth ({ceiling['mismatched']} pairs), read as fitting: "
        f"{rate(ceiling['mismatched_fitting'], ceiling['mismatched'])}",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", required=True, help="a world's items folder (data/world/items)")
    p.add_argument("--models", required=True, help="the small models' folder (made here when it is missing)")
    p.add_argument("--recognizer", default=None, help="a recognizer folder (trained there when it has no model)")
    p.add_argument("--captions", type=int, default=40)
    p.add_argument("--prompts", type=int, default=32)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)

    from itmbench.cli import main as itmbench
    from itmbench.io import write_text
    from itmbench.negatives.recognizer import Recognizer, RecognizerConfig, train_recognizer
    from itmbench.params import make_config
    from itmbench.world.captions import CaptionStructure
    from itmbench.world.generate import read_world

    models, made = Path(args.models), None
    if not (models / "llm").is_dir():
        wall, cpu = time.perf_counter(), cpu_seconds()
        if itmbench(["make-small-models", "--out", str(models), "--world", args.world]):
            raise SystemExit("itmbench make-small-models failed")
        made = {"wall": time.perf_counter() - wall, "cpu": cpu_seconds() - cpu, "threads": 1}
        write_text(models / "made.json", json.dumps(made))  # a later measurement of the same models reports it
    elif (models / "made.json").is_file():
        made = json.loads((models / "made.json").read_text())
    torch.set_num_threads(1)
    world = read_world(args.world)
    val = world.caption_table[world.caption_table["split"] == "val"].sort_values("caption_id").iloc[: args.captions]
    structures = [CaptionStructure.from_json(s) for s in val["structure"]]
    negatives, table = text_stage(models, val["text"].tolist(), structures)
    kept = negatives.loc[negatives["follows_template"], "negative_caption"].tolist()[: args.prompts]
    out = Path(args.recognizer) if args.recognizer else models / "recognizer"
    if not (out / "model.pt").is_file():
        train_recognizer(args.world, make_config(RecognizerConfig), out)
    recognizer = Recognizer.load(out / "model.pt")
    reasons = negatives["reason"].value_counts().to_dict()
    ceiling = recognizer_ceiling(world, val, structures, recognizer)
    text = report(made, table, reasons, image_stage(models, kept, world, recognizer), len(val), ceiling)
    print(text)
    if args.out:
        write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
