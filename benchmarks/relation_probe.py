"""Can the world's image-text model learn a relation's direction at all? A fine-tune taught VG-Relation's very edit.

ARO's VG-Relation stays at chance for every model of the world, NegCLIP included (docs/aro.md: What the world
shows of NegCLIP). Whether that is a limit of the world (its small towers cannot bind a position to an object)
or a finding that does not replicate (NegCLIP's recipe does not teach what it could) is told by an upper bound:
this script fine-tunes a model by NegCLIP's own trainer, loss and nearest-neighbour images, with one change: each
train caption's only hard negative is VG-Relation's edit of it, its two mentions' noun phrases exchanged
(`negclip_swaps.mention_swap`), and only relation captions have one. It then scores the result, beside the
starting model, on the world's VG-Relation and VG-Attribution (the ARO build's instances, the true caption
strictly above the swapped one, micro accuracy with its Wilson interval) and on the held-out relation captions'
mention swaps. If even this stays at chance, no hard negative of the world's captions teaches the direction.

    python benchmarks/relation_probe.py --items data/world/items --aro data/world/aro \\
        --init results/world/models/clip/model.pt --out /tmp/probe --epochs 5

prints the training summary and a table: model, set, items, accuracy (%), interval. The fine-tune follows
params.yaml's `train` section and `models.negclip.train` (epochs and learning rate overridable); it writes only
under --out.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from negclip_swaps import embedded, mention_swap

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.params import load_yaml, make_config
from itmbench.train import TrainConfig
from itmbench.train.loop import Recipe, run_training
from itmbench.train.recipes import RECIPES, build_negclip
from itmbench.world.generate import read_world
from itmbench.world.parse import parse_caption

PROBE = "relation_probe"


def relation_swap(text: str) -> list[str]:
    """VG-Relation's edit of a relation caption (its two mentions exchanged), the only hard negative; none for a
    caption the world's parser does not read as a relation (a pair's swap, 'a Y and a X', would be true of the
    image)."""
    structure = parse_caption(text).structure
    swapped = mention_swap(text) if structure is not None and structure.kind == "relation" else None
    return [swapped] if swapped is not None and swapped != text else []


def vg_pairs(aro: Path, dataset: str) -> list[tuple[int, str, str]]:
    """(image id, true caption, swapped caption) of each instance of an ARO VG set."""
    instances = pd.read_parquet(aro / "instances.parquet")
    options = pd.read_parquet(aro / "options.parquet")
    false = options[options["kind"] == "false"].set_index("id")["text"]
    rows = instances[instances["dataset"] == dataset]
    return [(int(i), t, str(false[k])) for k, i, t in zip(rows["id"], rows["image_id"], rows["caption"])]


def test_swaps(world, split: str) -> list[tuple[int, str, str]]:
    """(image id, caption, VG-Relation's edit of it) of the split's relation captions."""
    caps = world.caption_table[world.caption_table["split"] == split].sort_values("caption_id")
    return [(int(i), t, s[0]) for i, t in zip(caps["image_id"], caps["text"]) if (s := relation_swap(t))]


def accuracy(encoder, world, pairs: list[tuple[int, str, str]]) -> tuple[int, int]:
    """How many pairs the encoder scores true caption strictly above swapped caption for the image."""
    row_of = {int(i): k for k, i in enumerate(world.image_table["image_id"])}
    rows = sorted({row_of[i] for i, _, _ in pairs})
    texts = sorted({t for _, a, b in pairs for t in (a, b)})
    img, emb = embedded(encoder, np.asarray(world.images), rows, texts)
    right = sum(float(img[row_of[i]] @ emb[a]) > float(img[row_of[i]] @ emb[b]) for i, a, b in pairs)
    return int(right), len(pairs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", required=True, help="a world items folder (data/world/items)")
    ap.add_argument("--aro", required=True, help="the world's ARO build (data/world/aro)")
    ap.add_argument(
        "--init", help="the starting checkpoint (results/world/models/clip/model.pt); none: random weights (tests)"
    )
    ap.add_argument("--out", required=True, help="a folder for the probe's checkpoint and history")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--epochs", type=int, help="default: models.negclip.train.epochs")
    ap.add_argument("--lr", type=float, help="default: models.negclip.train.lr")
    ap.add_argument("--split", default="test", help="the held-out captions whose mention swaps are scored")
    args = ap.parse_args(argv)
    params = load_yaml(args.params)
    spec = model_spec(PROBE, params["models"]["negclip"])  # NegCLIP's trainer, loss, start and train section
    overrides = {k: v for k, v in (("epochs", args.epochs), ("lr", args.lr)) if v is not None}
    cfg = make_config(TrainConfig, {**params.get("train", {}), **spec.train, **overrides})
    negclip = RECIPES[spec.trainer]
    recipe = Recipe(negclip.name, functools.partial(build_negclip, swaps_of_text=relation_swap), negclip.loss)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    device = torch.device("cpu")
    summary = run_training(recipe, spec, cfg, args.items, out / "model.pt", out / "history.json", device, args.init)
    print(f"{PROBE}: epochs {cfg.epochs}, lr {cfg.lr}, best epoch {summary['best_epoch']}", file=sys.stderr)
    world = read_world(args.items)
    sets = {
        "VG-Relation": vg_pairs(Path(args.aro), "vg_relation"),
        "VG-Attribution": vg_pairs(Path(args.aro), "vg_attribution"),
        f"{args.split} relation captions, mention swaps": test_swaps(world, args.split),
    }
    print("| model | set | items | accuracy (%) | interval |")
    print("|---|---|---|---|---|")
    arch = {"family": "open_clip", "arch": spec.arch}
    for name, checkpoint in (("start", args.init), (PROBE, out / "model.pt")):
        encoder = build_encoder(model_spec(name, arch), device, checkpoint)
        for set_name, pairs in sets.items():
            k, n = accuracy(encoder, world, pairs)
            lo, hi = wilson_interval(k, n, DEFAULT_CONFIDENCE)
            print(f"| {name} | {set_name} | {n} | {100 * k / n:.2f} | {100 * lo:.2f}-{100 * hi:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
