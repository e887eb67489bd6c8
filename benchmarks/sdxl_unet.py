"""The small SDXL's images of the world's own captions, judged by the world's recognizer (issue 36.1; docs/coco.md,
"A smoke test before the GPU hours"): does a longer-trained UNet draw what the caption says?

Trains the pipeline as `itmbench make-small-models --world` does (`models.small.train_sdxl` on the world's train
split), with `--unet-steps` and `--vae-steps` in place of `models.small_sdxl`'s, unless `--pipeline` names one
already trained; then, for the first `--captions` train and val captions (caption-id order), draws
`coco-small.yaml`'s `images_per_prompt` images of each with its generation settings at the world's image size,
and judges them against the caption as the world's parser reads it (an image fits when P(fit) > 1/2), beside the
world's own image of each caption. Prints a Markdown table, with Wilson 95% intervals, and the training's CPU
seconds (one torch thread).

Usage: python benchmarks/sdxl_unet.py --world data/world/items --recognizer DIR --unet-steps 2400 [--out DIR]
       python benchmarks/sdxl_unet.py --world data/world/items --recognizer DIR --pipeline DIR
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from small_models import rate, small_overlay


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", required=True, help="a world's items folder (data/world/items)")
    p.add_argument("--recognizer", required=True, help="a recognizer folder holding model.pt (train-recognizer)")
    p.add_argument("--pipeline", default=None, help="an SDXL pipeline folder already trained (nothing is trained)")
    p.add_argument("--unet-steps", type=int, default=None)
    p.add_argument("--vae-steps", type=int, default=None)
    p.add_argument("--out", default=None, help="where the trained pipeline is saved (a temporary folder if not)")
    p.add_argument("--captions", type=int, default=32)
    args = p.parse_args(argv)

    from itmbench.models.small import _train_split, train_sdxl
    from itmbench.negatives.recognizer import Recognizer
    from itmbench.negatives.sdxl import SDXLConfig, build_sdxl_pipeline, generate_sdxl
    from itmbench.params import make_config
    from itmbench.world.captions import CaptionStructure

    torch.set_num_threads(1)
    world, train_caps = _train_split(args.world)
    recognizer = Recognizer.load(Path(args.recognizer) / "model.pt")
    pipeline, trained = args.pipeline, "an already trained pipeline (--pipeline)"
    if pipeline is None:
        pipeline = args.out or tempfile.mkdtemp(prefix="sdxl-unet-")
        steps = {k: v for k, v in (("unet_steps", args.unet_steps), ("vae_steps", args.vae_steps)) if v is not None}
        cpu = time.process_time()
        train_sdxl(Path(pipeline), world, train_caps, seed=0, log=lambda _: None, **steps)
        trained = f"trained here ({steps or 'the module defaults'}): {time.process_time() - cpu:.0f} s CPU"
    size = int(world.images.shape[1])
    cfg = make_config(
        SDXLConfig,
        {**small_overlay()["sdxl"], "base_model": pipeline, "unet_model": pipeline, "output_size": size},
    )
    pipe = build_sdxl_pipeline(cfg, "cpu")
    rows = []
    for split in ("train", "val"):
        table = world.caption_table
        caps = table[table["split"] == split].sort_values("caption_id").iloc[: args.captions]
        structures = [CaptionStructure.from_json(s) for s in caps["structure"]]
        real = recognizer.judge_pairs(structures, world.images[caps["image_id"].to_numpy(np.int64)])
        drawn = generate_sdxl(pipe, caps["text"].tolist(), cfg)
        gen = np.concatenate([recognizer.judge_pairs([s] * len(im), np.stack(im)) for s, im in zip(structures, drawn)])
        rows.append(
            f"| {split} | {len(caps)} | {rate(int((real > 0.5).sum()), len(real))} | {real.mean():.3f} "
            f"| {rate(int((gen > 0.5).sum()), len(gen))} | {gen.mean():.3f} |"
        )
    print(f"**The small SDXL's images of the world's own captions** ({trained})\n")
    print("| split | captions | the world's images fitting (%) | mean P | generated images fitting (%) | mean P |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
