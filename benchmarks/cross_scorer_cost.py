"""What a cross scorer costs on a gallery benchmark: pairs per second, and the time to score every pair.

A gallery benchmark (retrieval, ECCV, CxC) ranks every caption against every image, so a cross
scorer must score the full grid (500 images x 2,500 captions = 1.25M pairs on the default world).
This script times the captioner's pair scoring (CoCa `itm-coca-tiny`, random weights: the cost
does not depend on them) and the FFNN's (over 64-d features) on a sample of that grid, with the
same number of threads as a Snakemake job gets, and beside them a dual encoder's embedding of the
same gallery (itm-clip-tiny): on a shared machine the ratio is the stable number.

Usage: python benchmarks/cross_scorer_cost.py [--data data/world] [--pairs 20000] [--threads 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from itmbench.models.captioner import WordTokenizer, build_captioner
from itmbench.models.option_scorer import OptionNet, OptionScorer
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.papers.retrieval import canonical as retrieval
from itmbench.scoring.embed import ItemStore, embed_items


class _Features:
    """Random 64-d features by id: what the FFNN reads from its upstream cache."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def get(self, kind: str, ids: np.ndarray) -> torch.Tensor:
        return torch.randn(len(ids), self.dim)


def main(argv: list[str] | None = None) -> int:
    """Time the captioner, the FFNN and a dual encoder on a sample of the retrieval gallery's pairs."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/world")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = Path(args.data)
    items = retrieval.read(data / "retrieval")["items"]
    images = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    captions = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    grid = len(images) * len(captions)
    store = ItemStore(data / "items")
    rng = np.random.default_rng(0)
    # a sample with the grid's shape: every image, and enough captions to make --pairs pairs
    cap_sample = rng.choice(captions, size=max(1, args.pairs // len(images)), replace=False)
    c_ids, i_ids = np.repeat(cap_sample, len(images)), np.tile(images, len(cap_sample))
    texts = pd.read_parquet(data / "items" / "captions.parquet")["text"].tolist()
    tokenizer = WordTokenizer.fit(texts, context_length=32, vocab_size=256)
    coca = build_captioner(
        model_spec("coca", {"family": "coca", "arch": "itm-coca-tiny"}), torch.device("cpu"), tokenizer=tokenizer
    )
    ffnn = OptionScorer(OptionNet(64, 256))
    clip = build_encoder(model_spec("clip", {"family": "open_clip", "arch": "itm-clip-tiny"}), torch.device("cpu"))
    rows = []
    t0 = time.time()
    coca.score_pairs(store, c_ids, i_ids)
    rows.append(("captioner (coca, itm-coca-tiny)", len(c_ids), time.time() - t0))
    t0 = time.time()
    ffnn.score_pairs(store, c_ids, i_ids, features=_Features())
    rows.append(("ffnn (2 x 256 hidden, 64-d features)", len(c_ids), time.time() - t0))
    gallery = pd.DataFrame(
        {"kind": ["image"] * len(images) + ["caption"] * len(captions), "item_id": [*images, *captions]}
    )
    t0 = time.time()
    embed_items(clip, store, gallery)
    clip_seconds = time.time() - t0
    print(f"gallery: {len(images)} images x {len(captions)} captions = {grid:,} pairs; threads {args.threads}")
    print("| scorer | pairs timed | pairs/s | every pair of the gallery (s) |")
    print("|---|---|---|---|")
    for name, n, seconds in rows:
        rate = n / seconds
        print(f"| {name} | {n:,} | {rate:,.0f} | {grid / rate:,.1f} |")
    name = "dual encoder (clip, itm-clip-tiny): embed the gallery once"
    print(f"| {name} | {len(gallery):,} items | - | {clip_seconds:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
