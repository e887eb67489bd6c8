"""Speed of a bare contrastive training step of the world's model (itm-clip-tiny), per torch thread count.

The reference for how fast this machine trains today: a CLIP step (both towers forward, symmetric
cross-entropy, backward, AdamW) on random images and tokens, batch 128, no data loading and no
validation, built through the project's model registry. Prints the median pairs/s of --runs
timings of --steps steps each, for each thread count, with the trainers' fused AdamW
(`train.loop.adamw`) and with PyTorch's default AdamW, and their ratio. With --patch, the same
architecture with other image patch sizes (a copy of its config, registered under another name),
one thread, fused AdamW, and each one's speed against the first. Usage:
python benchmarks/train_step.py [--threads 1 2] [--runs 5] [--steps 10] [--arch itm-clip-tiny] [--patch 16 8]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from itmbench.models.openclip import CONFIG_DIR, register_local_configs
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.params import make_config
from itmbench.train.config import TrainConfig
from itmbench.train.loop import adamw


def pairs_per_s(arch: str, threads: int, batch: int, steps: int, runs: int, fused: bool) -> float:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    encoder = build_encoder(model_spec("bench", {"family": "open_clip", "arch": arch}), torch.device("cpu"))
    model = encoder.model
    size = encoder.image_size
    opt = adamw(model, make_config(TrainConfig), fused=fused)
    images = torch.randn(batch, 3, size, size)
    tokens = encoder.text_tensor([f"a red circle left of {k} blue squares" for k in range(batch)]).cpu()
    labels = torch.arange(batch)

    def step() -> None:
        img = model.encode_image(images, normalize=True)
        txt = model.encode_text(tokens, normalize=True)
        logits = model.logit_scale.exp() * img @ txt.T
        loss = torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.T, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(2):  # warm-up
        step()
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        rates.append(batch * steps / (time.perf_counter() - t0))
    return statistics.median(rates)


def with_patch(arch: str, patch: int, tmp: Path) -> str:
    """Register a copy of the project's config `arch` whose image tower reads `patch`-pixel patches."""
    import open_clip

    register_local_configs()
    cfg = json.loads((CONFIG_DIR / f"{arch}.json").read_text())
    cfg["vision_cfg"]["patch_size"] = patch
    name = f"{arch}-patch{patch}"
    (tmp / f"{name}.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(tmp)
    return name


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--arch", default="itm-clip-tiny")
    p.add_argument("--patch", type=int, nargs="+", default=None, help="compare these image patch sizes instead")
    args = p.parse_args(argv)
    if args.patch:
        print(f"{args.arch}, batch {args.batch}, 1 thread, fused AdamW: median of {args.runs} x {args.steps} steps")
        with tempfile.TemporaryDirectory() as tmp:
            rates = [
                pairs_per_s(with_patch(args.arch, k, Path(tmp)), 1, args.batch, args.steps, args.runs, True)
                for k in args.patch
            ]
        for k, rate in zip(args.patch, rates):
            print(f"  patch {k:3d}: {rate:7.1f} pairs/s, {rate / rates[0]:.2f} x patch {args.patch[0]}")
        return 0
    print(f"{args.arch}, batch {args.batch}: median of {args.runs} x {args.steps} steps")
    for threads in args.threads:
        fused = pairs_per_s(args.arch, threads, args.batch, args.steps, args.runs, fused=True)
        plain = pairs_per_s(args.arch, threads, args.batch, args.steps, args.runs, fused=False)
        print(
            f"  {threads} thread(s): {fused:7.1f} pairs/s fused AdamW (the trainers'), {plain:7.1f} default AdamW, "
            f"ratio {fused / plain:.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
