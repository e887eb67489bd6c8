"""How often each model scores a world caption above NegCLIP's swaps of it, by swap kind and caption kind.

Where ARO's NegCLIP claim fails in the world (docs/aro.md: NegCLIP), this tells a limit of the world from a
finding that does not replicate: NegCLIP is trained on exactly these swaps of the train captions (two noun
phrases, two nouns or two adjectives exchanged: `itmbench.train.negatives.swap_negatives`). Scored here on a
held-out split's captions, per swap kind and caption kind (the grammar's structure): where even NegCLIP does not
score a relation caption above its noun-phrase swap (VG-Relation's very edit), its image and text towers do not
hold the relation's direction, which no hard negative can then teach; where it does and VG-Relation stays at
chance, the finding does not replicate.

A noun-phrase swap of a two-mention caption that is still true of the image (the truth function on the swapped
structure) is left out, as VG-Relation drops it; the other swaps are not checked (their text does not give their
structure), so a few of them are true of the image and cap those rows below 100%. Ties count as wrong (ARO's VG
rule).

    python benchmarks/negclip_swaps.py --items data/world/items --split test \\
        --model clip=results/world/models/clip/model.pt --model negclip=results/world/models/negclip/model.pt

prints one table: model, caption kind, swap kind, pairs, accuracy (%) with its Wilson interval. With
`--shuffled-images`, the control: each caption against another caption's image; with `--drop-sizes`, the
captions without their size words, as VG-Relation names its objects.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import replace

import numpy as np
import torch

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.params import load_yaml, make_config
from itmbench.train.negatives import swap_negatives
from itmbench.world.captions import CaptionStructure, noun_phrase_spans, word_tag
from itmbench.world.generate import WorldConfig, read_world
from itmbench.world.scene import SIZES, Scene
from itmbench.world.truth import caption_fits


def swap_kind(text: str, swapped: str) -> str:
    """Which swap made `swapped` from `text`: 'noun phrases', 'nouns' or 'adjectives' (the first that does)."""
    words, other = text.split(), swapped.split()
    differ = [i for i, (a, b) in enumerate(zip(words, other)) if a != b]
    if len(words) == len(other) and len(differ) == 2 and word_tag(words[differ[0]]) == word_tag(words[differ[1]]):
        return "nouns" if word_tag(words[differ[0]]) == "noun" else "adjectives"
    return "noun phrases" if len(noun_phrase_spans(words)) >= 2 else "other"


def without_sizes(text: str, structure: str) -> tuple[str, str]:
    """A caption without its size words ('a large orange square' -> 'an orange square') and its structure without
    the sizes its mentions claim."""
    words = [w for w in text.split() if w not in SIZES]
    for i in range(len(words) - 1):
        if words[i] in ("a", "an"):
            words[i] = "an" if words[i + 1][0] in "aeiou" else "a"
    s = CaptionStructure.from_json(structure)
    plain = CaptionStructure(tuple(replace(m, size=None) for m in s.mentions), relation=s.relation, kind=s.kind)
    return " ".join(words), plain.to_json()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", required=True, help="a world items folder (data/world/items)")
    ap.add_argument("--split", default="test")
    ap.add_argument("--model", action="append", required=True, help="NAME=CHECKPOINT of an itm-clip-tiny model")
    ap.add_argument("--params", default="params.yaml", help="the run's params (the truth's relation margin)")
    ap.add_argument(
        "--shuffled-images",
        action="store_true",
        help="the control: each caption scored against another caption's image (a seeded permutation), so what is "
        "left above 50%% is the text tower's preference for the true word order, not the image",
    )
    ap.add_argument(
        "--drop-sizes",
        action="store_true",
        help="every caption without its size words (articles fixed), its structure without sizes, as VG-Relation "
        "names objects by colour and shape only",
    )
    args = ap.parse_args(argv)
    margin = float(make_config(WorldConfig, load_yaml(args.params).get("world", {})).relation_margin)
    world = read_world(args.items)
    caps = world.caption_table[world.caption_table["split"] == args.split].sort_values("caption_id")
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    row_of = {int(i): k for k, i in enumerate(world.image_table["image_id"])}
    pairs = []  # (image row, true text, swapped text, caption kind, swap kind)
    for image_id, text, structure in zip(caps["image_id"], caps["text"], caps["structure"]):
        if args.drop_sizes:
            text, structure = without_sizes(text, structure)
        kind = CaptionStructure.from_json(structure).kind
        for swapped in swap_negatives(text):
            skind = swap_kind(text, swapped)
            pairs.append((row_of[int(image_id)], text, swapped, kind, skind, int(image_id), structure))
    kept = []
    for row, text, swapped, kind, skind, image_id, structure in pairs:
        s = CaptionStructure.from_json(structure)
        if skind == "noun phrases" and len(s.mentions) == 2:
            flipped = CaptionStructure((s.mentions[1], s.mentions[0]), relation=s.relation, kind=s.kind)
            if caption_fits(flipped, scenes[image_id], margin):
                continue  # the swap is still true of the image
        kept.append((row, text, swapped, kind, skind))
    print(f"{args.split} split: {len(caps)} captions, {len(pairs)} swaps, {len(kept)} kept", file=sys.stderr)
    images = np.asarray(world.images)
    rows = sorted({k[0] for k in kept})  # the images and texts every model embeds
    texts = sorted({t for k in kept for t in (k[1], k[2])})
    print("| model | caption kind | swap | pairs | accuracy (%) | interval |")
    print("|---|---|---|---|---|---|")
    for entry in args.model:
        name, _, checkpoint = entry.partition("=")
        encoder = build_encoder(
            model_spec(name, {"family": "open_clip", "arch": "itm-clip-tiny"}), torch.device("cpu"), checkpoint
        )
        img = dict(zip(rows, encoder.encode_images(images[rows]).numpy()))
        if args.shuffled_images:  # every row's image replaced by another row's
            img = dict(zip(rows, [img[r] for r in np.random.default_rng(0).permutation(rows).tolist()]))
        emb = {}
        for s in range(0, len(texts), 512):
            emb.update(zip(texts[s : s + 512], encoder.encode_texts(texts[s : s + 512]).numpy()))
        groups: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for row, text, swapped, kind, skind in kept:
            right = float(img[row] @ emb[text]) > float(img[row] @ emb[swapped])
            groups[(kind, skind)].append(right)
            groups[("all", skind)].append(right)
        for (kind, skind), outcomes in sorted(groups.items()):
            k, n = int(sum(outcomes)), len(outcomes)
            lo, hi = wilson_interval(k, n, DEFAULT_CONFIDENCE)
            print(f"| {name} | {kind} | {skind} | {n} | {100 * k / n:.2f} | {100 * lo:.2f}-{100 * hi:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
