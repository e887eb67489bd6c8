"""Where the small SDXL's images lose their caption: the world's recognizer on the world's val images as they are,
at the pipeline's resolution and back, and through VAEs trained as `models.small_sdxl.train_small_sdxl` trains its
own (issue 36; docs/coco.md, "A smoke test before the GPU hours").

Each val image is judged against its first caption (an image fits when P(fit) > 1/2, the recognizer's rule). A VAE
variant is `BLOCKS:STEPS` (block_out_channels joined by `x`, one downsampling per block after the first): trained
on the world's train images at `small_sdxl.RESOLUTION` with the trainer's batch, learning rate and schedule, then
each val image is encoded, decoded (the latent's mode) and resized back to the world's size. Prints a Markdown
table: fits, mean P(fit), the mean absolute pixel error at the pipeline's resolution, and the CPU seconds.

Usage: python benchmarks/sdxl_vae.py --world data/world/items --recognizer DIR --vae 32x64:300 --vae 32x64:1200
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from PIL import Image


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", required=True, help="a world's items folder (data/world/items)")
    p.add_argument("--recognizer", required=True, help="a recognizer folder holding model.pt (train-recognizer)")
    p.add_argument("--vae", action="append", default=[], help="BLOCKS:STEPS, e.g. 32x64:300 (repeat)")
    args = p.parse_args(argv)

    from itmbench.models.small_sdxl import BATCH, RESOLUTION, _images_tensor, small_vae, train_vae
    from itmbench.negatives.recognizer import Recognizer
    from itmbench.world.generate import read_world
    from itmbench.world.parse import parse_caption

    torch.set_num_threads(1)
    world = read_world(args.world)
    recognizer = Recognizer.load(f"{args.recognizer}/model.pt")
    images = world.image_table
    train = images.loc[images["split"] == "train", "image_id"].to_numpy()
    val = images.loc[images["split"] == "val", "image_id"].to_numpy()
    captions = world.caption_table
    first = captions[captions["image_id"].isin(val)].sort_values("caption_id").groupby("image_id").head(1)
    pairs = [(int(i), parse_caption(t).structure) for i, t in zip(first["image_id"], first["text"])]
    pairs = [(i, s) for i, s in pairs if s is not None]
    structures = [s for _, s in pairs]
    size = int(world.images.shape[1])

    def pixels(x: torch.Tensor) -> np.ndarray:
        return ((x.clamp(-1, 1) + 1) * 127.5).round().byte().permute(0, 2, 3, 1).numpy()

    def back(small: np.ndarray) -> np.ndarray:
        return np.stack([np.asarray(Image.fromarray(a).resize((size, size), Image.BICUBIC)) for a in small])

    x_train, x_val = _images_tensor(world.images[train]), _images_tensor(world.images[[i for i, _ in pairs]])
    down = pixels(x_val)
    rows = []

    def judge(name: str, judged: np.ndarray, error: str, cpu: str) -> None:
        fit = recognizer.judge_pairs(structures, judged)
        rows.append(f"| {name} | {int((fit > 0.5).sum())} of {len(fit)} | {fit.mean():.3f} | {error} | {cpu} |")

    judge("the world's images", world.images[[i for i, _ in pairs]], "–", "–")
    judge(f"at {RESOLUTION} px and back", back(down), "0.0", "–")
    for spec in args.vae:
        blocks_text, steps_text = spec.split(":")
        blocks, steps = tuple(int(b) for b in blocks_text.split("x")), int(steps_text)
        torch.manual_seed(0)
        vae, cpu = small_vae(blocks), time.process_time()
        train_vae(
            vae, x_train, steps, BATCH, np.random.default_rng(0), torch.Generator().manual_seed(0), log=lambda _: None
        )
        with torch.no_grad():
            small = pixels(vae.decode(vae.encode(x_val).latent_dist.mode()).sample)
        error = np.abs(small.astype(int) - down.astype(int)).mean()
        judge(f"VAE {blocks_text}, {steps} steps", back(small), f"{error:.1f}", f"{time.process_time() - cpu:.0f}")
    print(f"**The recognizer on the world's {len(pairs)} val images, each against its first caption**\n")
    print("| images | fit | mean P(fit) | pixel error (of 255) | CPU s |\n|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
