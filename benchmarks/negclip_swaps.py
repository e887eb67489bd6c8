"""How often each model scores a world caption above NegCLIP's swaps of it, by what the swap edits.

Where ARO's NegCLIP claim fails in the world (docs/aro.md: NegCLIP), this tells a limit of the world from a
finding that does not replicate. NegCLIP is trained on these swaps of the train captions (two noun phrases, two
nouns or two adjectives exchanged: `itmbench.train.negatives.swap_kinds`); scored here on a held-out split's
captions, each swap is put in one of four edits (`swap_edit`):
- mentions: the caption's two mentions exchanged, VG-Relation's very edit;
- colours across mentions: the two mentions' colours exchanged, VG-Attribution's very edit;
- other words across mentions: another exchange the world's grammar still reads ('a small circle ... a red
  square' to 'a red circle ... a small square'; two shapes), a binding edit too;
- grammar: a word moved out of its slot ('a red large circle'; 'a picture' of 'a picture of ...' swapped with a
  mention, a noun phrase as spaCy tags it for the authors), which the world's parser does not read: the text
  alone tells it.
A swap still true of the image (the truth function on the structure the world's parser reads in it) is left
out, as ARO's VG sets drop it; a grammar swap claims nothing an image could fit. Ties count as wrong (ARO's VG
rule). Where even NegCLIP stays at chance on a binding edit of the world's own captions while it learns the
grammar edits, its towers do not hold what that edit tests, and NegCLIP's hard negatives do not teach it at this
budget; where it learns an edit and the ARO set of that edit stays at chance, the finding does not replicate.

    python benchmarks/negclip_swaps.py --items data/world/items --split test \\
        --model clip=results/world/models/clip/model.pt --model negclip=results/world/models/negclip/model.pt

prints one table: model, caption kind, edit, pairs, accuracy (%) with its Wilson interval. With
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
from itmbench.train.negatives import swap_kinds
from itmbench.world.captions import GENERIC_NOUNS, CaptionStructure, noun_phrase_spans
from itmbench.world.generate import WorldConfig, read_world
from itmbench.world.parse import parse_caption
from itmbench.world.scene import COLOURS, SHAPES, SIZES, Scene
from itmbench.world.truth import caption_fits

MENTION_NOUNS = frozenset({*SHAPES, *GENERIC_NOUNS, *(n + "s" for n in (*SHAPES, *GENERIC_NOUNS))})
# What a swap edits: the two mentions (VG-Relation's edit), the two mentions' colours (VG-Attribution's edit),
# other words between the mentions in a caption the grammar still reads (a size for a colour, two shapes), or a
# word out of its slot, which the grammar does not read (the text alone tells it).
MENTIONS, COLOURS_ACROSS, OTHER_ACROSS, GRAMMAR = (
    "mentions",
    "colours across mentions",
    "other words across mentions",
    "grammar",
)
EDITS = (MENTIONS, COLOURS_ACROSS, OTHER_ACROSS, GRAMMAR)


def mention_spans(words: list[str]) -> list[tuple[int, int]]:
    """The noun phrases of a caption's mentions (a template's own, 'a picture' of 'a picture of ...', is none)."""
    return [(a, b) for a, b in noun_phrase_spans(words) if words[b - 1] in MENTION_NOUNS]


def mention_swap(text: str) -> str | None:
    """The caption with its two mentions' noun phrases exchanged (VG-Relation's edit), or None where it has not
    two."""
    words = text.split()
    spans = mention_spans(words)
    if len(spans) != 2:
        return None
    (a0, a1), (b0, b1) = spans
    return " ".join([*words[:a0], *words[b0:b1], *words[a1:b0], *words[a0:a1], *words[b1:]])


def swap_edit(text: str, swapped: str) -> tuple[str, CaptionStructure | None]:
    """What a swap of `text` edits (one of `EDITS`): the mentions, the two mentions' colours, other words across
    the mentions in a caption the world's parser reads, or grammar (the parser does not read it); and the structure
    the parser reads in the swap (None for grammar), what the swap claims of the image."""
    claimed = parse_caption(swapped).structure
    if swapped == mention_swap(text):
        return MENTIONS, claimed
    if claimed is None:
        return GRAMMAR, None
    words, other = text.split(), swapped.split()
    differ = [k for k, (a, b) in enumerate(zip(words, other)) if a != b] if len(words) == len(other) else []
    spans = mention_spans(words)
    inside = [next((m for m, (a, b) in enumerate(spans) if a <= k < b), None) for k in differ]
    if len(spans) == 2 and inside == [0, 1] and all(words[k] in COLOURS for k in differ):
        return COLOURS_ACROSS, claimed
    return OTHER_ACROSS, claimed


def embedded(encoder, images: np.ndarray, rows: list[int], texts: list[str]) -> tuple[dict, dict]:
    """The encoder's unit-norm embeddings of the image rows and of the texts, each by its row or text."""
    img = dict(zip(rows, encoder.encode_images(images[rows]).numpy()))
    emb = {}
    for s in range(0, len(texts), 512):
        emb.update(zip(texts[s : s + 512], encoder.encode_texts(texts[s : s + 512]).numpy()))
    return img, emb


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
    kept, made = [], 0  # kept: (image row, true text, swapped text, caption kind, edit)
    for image_id, text, structure in zip(caps["image_id"], caps["text"], caps["structure"]):
        if args.drop_sizes:
            text, structure = without_sizes(text, structure)
        s = CaptionStructure.from_json(structure)
        for swapped in swap_kinds(text):
            made += 1
            edit, claimed = swap_edit(text, swapped)  # what the swap edits and claims, by the world's parser
            if claimed is not None and caption_fits(claimed, scenes[int(image_id)], margin):
                continue  # the swap is still true of the image
            kept.append((row_of[int(image_id)], text, swapped, s.kind, edit))
    print(f"{args.split} split: {len(caps)} captions, {made} swaps, {len(kept)} kept", file=sys.stderr)
    images = np.asarray(world.images)
    rows = sorted({k[0] for k in kept})  # the images and texts every model embeds
    texts = sorted({t for k in kept for t in (k[1], k[2])})
    print("| model | caption kind | edit | pairs | accuracy (%) | interval |")
    print("|---|---|---|---|---|---|")
    for entry in args.model:
        name, _, checkpoint = entry.partition("=")
        encoder = build_encoder(
            model_spec(name, {"family": "open_clip", "arch": "itm-clip-tiny"}), torch.device("cpu"), checkpoint
        )
        img, emb = embedded(encoder, images, rows, texts)
        if args.shuffled_images:  # every row's image replaced by another row's
            img = dict(zip(rows, [img[r] for r in np.random.default_rng(0).permutation(rows).tolist()]))
        groups: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for row, text, swapped, kind, edit in kept:
            right = float(img[row] @ emb[text]) > float(img[row] @ emb[swapped])
            groups[(kind, edit)].append(right)
            groups[("all", edit)].append(right)
        for (kind, edit), outcomes in sorted(groups.items(), key=lambda g: (g[0][0], EDITS.index(g[0][1]))):
            k, n = int(sum(outcomes)), len(outcomes)
            lo, hi = wilson_interval(k, n, DEFAULT_CONFIDENCE)
            print(f"| {name} | {kind} | {edit} | {n} | {100 * k / n:.2f} | {100 * lo:.2f}-{100 * hi:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
