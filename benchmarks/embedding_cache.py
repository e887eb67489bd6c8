"""The embedding cache's worth: forward passes saved, and the pipeline's throughput against a bare loop.

1. Image and caption forward passes per model: the cache's (each item once: the world's
   evaluated splits plus each benchmark's added items) against what re-embedding every
   benchmark's own item list would need — counted from a finished run's data/<source>/ files.
2. Embedding throughput (items/s) of the pipeline (`embed_items` from the item store) against a
   bare forward loop of the same model over tensors already in memory on the same device, as
   medians of --runs repetitions.

Usage: python benchmarks/embedding_cache.py [--data data/world] [--runs 5] [--arch itm-clip-tiny] [--split test]
       (on a GPU machine: --arch ViT-B-32 --device cuda, which embeds at 224 px; a COCO run's
       `--data data/coco` times the pipeline on its JPEG files, decoded and resized as the embed rule does)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from itmbench.io import write_text
from itmbench.models.registry import build_encoder, pick_device
from itmbench.models.spec import model_spec
from itmbench.scoring.embed import ItemStore, embed_items, folder_items


def forward_pass_counts(data: Path, splits: list[str]) -> pd.DataFrame:
    """Per kind: items each benchmark lists, their sum (re-embedding per benchmark), and the cache's count."""
    rows = []
    files = [p for p in sorted(data.glob("*/items.parquet")) if p.parent.name != "items"]
    lists = {p.parent.name: pd.read_parquet(p) for p in files}
    cache = folder_items(data / "items", splits)
    for extra in sorted(data.glob("*/extra_items")):
        cache = pd.concat([cache, folder_items(extra)], ignore_index=True)
    for kind in ("image", "caption"):
        per_bench = {name: int((df["kind"] == kind).sum()) for name, df in lists.items()}
        total = sum(per_bench.values())
        cached = int((cache["kind"] == kind).sum())
        rows.append({"kind": kind, **per_bench, "per-benchmark total": total, "cache": cached, "ratio": total / cached})
    return pd.DataFrame(rows)


def throughput(
    data: Path, arch: str, device: torch.device, n: int, runs: int, batch: int, split: str = "test"
) -> dict[str, float]:
    """Median items/s (the first n images and n captions of `split`) of the pipeline and of a bare forward loop."""
    spec = model_spec("bench", {"family": "open_clip", "arch": arch})
    enc = build_encoder(spec, device)
    items = folder_items(data / "items", [split])
    images = items[items["kind"] == "image"].head(n)
    captions = items[items["kind"] == "caption"].head(n)
    store = ItemStore(data / "items", image_size=getattr(enc, "image_size", 224))  # as the embed rule builds it
    img_tensor = enc.image_tensor(store.image_batch(images["item_id"].to_numpy()))
    tok = enc.text_tensor(store.texts(captions["item_id"].to_numpy()))

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    def bare() -> None:
        with torch.no_grad():
            for s in range(0, len(img_tensor), batch):
                enc.model.encode_image(img_tensor[s : s + batch], normalize=True)
            for s in range(0, len(tok), batch):
                enc.model.encode_text(tok[s : s + batch], normalize=True)
        sync()

    def pipeline() -> None:
        embed_items(enc, store, pd.concat([images, captions]), batch_size=batch)
        sync()

    out = {}
    for name, fn in (("bare", bare), ("pipeline", pipeline)):
        fn()  # warm-up
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out[name] = (len(images) + len(captions)) / statistics.median(times)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="data/world", help="a finished run's data folder")
    p.add_argument("--splits", nargs="+", default=["val", "test"], help="the world splits the cache embeds")
    p.add_argument("--arch", default="itm-clip-tiny")
    p.add_argument("--device", default="auto")
    p.add_argument("--n", type=int, default=500, help="images and captions timed")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", type=Path, help="also write the figures here, as a fenced Markdown block")
    p.add_argument("--split", default="test", help="the split whose first --n images and captions are timed")
    args = p.parse_args(argv)
    data = Path(args.data)
    if not (data / "items" / "images.parquet").exists():
        raise SystemExit(f"{data}: no finished run here (run `snakemake --cores all` first)")
    counts = forward_pass_counts(data, args.splits)
    lines = ["forward passes per model (items embedded):", counts.to_string(index=False)]
    torch.set_num_threads(max(1, torch.get_num_threads()))
    device = pick_device(args.device)
    t = throughput(data, args.arch, device, args.n, args.runs, args.batch, args.split)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    lines += [
        "",
        f"embedding throughput, {args.arch} on {device} ({name}), batch {args.batch}, median of {args.runs} runs:",
        f"  bare forward loop : {t['bare']:8.0f} items/s",
        f"  pipeline          : {t['pipeline']:8.0f} items/s  ({100 * t['pipeline'] / t['bare']:.0f}% of bare)",
    ]
    print("\n".join(lines))
    if args.out:  # a fenced block, for a docs snippet
        write_text(args.out, "```text\n" + "\n".join(lines) + "\n```\n")
    return 0


if __name__ == "__main__":
    np.set_printoptions(precision=2)
    sys.exit(main())
