"""The `coco` source's commands: COCO items, TROHN hard negatives (LLM captions, SDXL-DPO images), fine-tuning.

`itmbench.cli.build_parser` registers these.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path

from itmbench.cli._args import add_registry_option, json_arg, name_value, non_negative_int, positive_int
from itmbench.errors import InputError

log = logging.getLogger("itmbench")


def _shard(frame, shard: int, shards: int):
    """Rows shard, shard + shards, ... (deterministic; every row in exactly one shard)."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} of {shards}; expected 0 <= shard < shards")
    return frame.iloc[shard::shards]


def require_output(stage: str, what: str, count: int, min_kept: int, counts: str) -> None:
    """Stop a TROHN stage that produced fewer than `min_kept` (params `coco.min_kept`) of its outputs, naming the
    stage, its filter and its counts, rather than pass a quiet empty table down the DAG."""
    if count < min_kept:
        raise InputError(
            f"{stage}: {count} {what} ({counts}); expected at least {min_kept} (params coco.min_kept; "
            "0 lets the stage produce nothing, as the smoke test's random-weight LLM does)"
        )


def cmd_coco_items(args: argparse.Namespace) -> None:
    """The COCO items folder (Karpathy images with their zips, COCO captions with sentids)."""
    from itmbench.io import output_set
    from itmbench.sources.coco import write_coco_items

    with output_set(folders=[args.out]):  # images, captions and summary together or not at all
        summary = write_coco_items(args.karpathy, args.captions, dict(args.images), args.out)
    log.info("coco items: %s", summary)


def cmd_needed_items(args: argparse.Namespace) -> None:
    """The COCO items some benchmark needs (their union), so each is embedded once per model."""

    from itmbench.io import write_parquet
    from itmbench.reading import read_parquet_checked
    from itmbench.sources.coco import needed_items

    benches = [read_parquet_checked(p, ("kind", "item_id"), "a benchmark's items.parquet") for p in args.benches]
    needed = needed_items(benches, args.items)
    write_parquet(args.out, needed)
    log.info("needed items: %s", needed["kind"].value_counts().to_dict())


def cmd_caption_negatives(args: argparse.Namespace) -> None:
    """TROHN-Text: one LLM negative per (train caption, edit subtype) of one shard, template-filtered."""

    from itmbench.io import write_parquet
    from itmbench.negatives.llm_captions import LLMConfig, build_text_generation_pipeline, generate_negatives
    from itmbench.params import make_config
    from itmbench.reading import read_parquet_checked

    cfg = make_config(LLMConfig, args.config)
    caps = read_parquet_checked(args.captions, ("split", "caption_id", "text"), "the COCO captions.parquet")
    caps = caps[caps["split"].isin(args.splits)].sort_values("caption_id", kind="stable")
    if args.limit:
        caps = caps.iloc[: args.limit]
    part = _shard(caps, args.shard, args.shards)
    pipe = build_text_generation_pipeline(cfg, device=None if args.device == "auto" else args.device)
    negatives = generate_negatives(pipe, part["text"].tolist(), cfg, caption_ids=part["caption_id"].tolist())
    write_parquet(args.out, negatives)
    log.info(
        "shard %d/%d: %d captions, %d negatives kept of %d",
        args.shard,
        args.shards,
        len(part),
        int(negatives["follows_template"].sum()),
        len(negatives),
    )


def cmd_merge_negatives(args: argparse.Namespace) -> None:
    """The shards' negatives as one table (rows renumbered), and the template filter's counts."""
    import pandas as pd

    from itmbench.io import output_set, write_parquet, write_text
    from itmbench.negatives.llm_captions import filter_summary
    from itmbench.reading import read_parquet_checked

    columns = ("caption_id", "subset", "reason")
    frames = [read_parquet_checked(p, columns, "a coco-caption-negatives shard") for p in args.shards]
    merged = pd.concat(frames, ignore_index=True).sort_values(["caption_id", "subset"], kind="stable")
    merged = merged.reset_index(drop=True)
    summary = filter_summary(merged)
    reasons = merged["reason"].value_counts().sort_index().to_dict()
    counts = f"of {len(merged)} generations in {len(frames)} shards; by reason {reasons}"
    kept = int(reasons.get("ok", 0))
    require_output(
        "coco-merge-negatives", "negative captions kept by the LLM's template filter", kept, args.min_kept, counts
    )
    prefix = Path(args.summary_csv).with_suffix("")
    title = "TROHN-Text: LLM generations by subtype and template-filter reason"
    summary_files = [prefix.with_suffix(".csv"), prefix.with_suffix(".md")]
    with output_set(files=[args.out, *summary_files]):  # the negatives and their counts together or not at all
        write_parquet(args.out, merged)
        write_text(summary_files[0], summary.to_csv(index=False, lineterminator="\n"))
        write_text(summary_files[1], f"**{title}**\n\n{summary.to_markdown(index=False, floatfmt='.1f')}\n")
    log.info("merged %d shards: %d negatives", len(frames), len(merged))


def cmd_image_negatives(args: argparse.Namespace) -> None:
    """TROHN-Img: SDXL-DPO images of one shard of the sampled negative captions (4 per prompt, seeded)."""
    import numpy as np
    import pandas as pd

    from itmbench.negatives.sdxl import SDXLConfig, build_sdxl_pipeline, write_sdxl_images
    from itmbench.params import make_config
    from itmbench.reading import read_parquet_checked

    cfg = make_config(SDXLConfig, args.config)
    negatives = read_parquet_checked(
        args.negatives, ("follows_template", "negative_caption"), "the merged TROHN-Text negatives"
    )
    kept = negatives[negatives["follows_template"]]
    rng = np.random.default_rng(args.seed)
    n = min(args.sample, len(kept)) if args.sample else len(kept)
    counts = f"of {len(kept)} kept by the template filter, {len(negatives)} generated; --sample {args.sample}"
    require_output("coco-image-negatives", "negative captions drawn for SDXL", n, args.min_kept, counts)
    chosen = np.sort(rng.choice(kept.index.to_numpy(), size=n, replace=False))
    instances = pd.DataFrame({"id": chosen, "negative_caption": negatives.loc[chosen, "negative_caption"].to_numpy()})
    part = _shard(instances, args.shard, args.shards)
    device = ("cuda" if _cuda() else "cpu") if args.device == "auto" else args.device
    manifest = write_sdxl_images(build_sdxl_pipeline(cfg, device), part, cfg, args.out_dir)
    log.info("shard %d/%d: %d prompts, %d images", args.shard, args.shards, len(part), len(manifest))


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def cmd_coco_finetune(args: argparse.Namespace) -> None:
    """Fine-tune a pretrained open_clip model on COCO by the TROHN recipe (CLIP_COCO, TROHN-Text, TROHN-Img)."""
    import torch

    from itmbench.models.registry import pick_device
    from itmbench.models.spec import model_spec
    from itmbench.params import make_config
    from itmbench.train.coco import run_coco_training
    from itmbench.train.config import TrainConfig

    torch.set_num_threads(max(1, args.threads))
    spec = model_spec(args.model, args.spec)
    cfg = make_config(TrainConfig, args.train)
    summary = run_coco_training(
        spec,
        cfg,
        args.items,
        args.out,
        args.history,
        pick_device(args.device),
        args.negatives,
        args.negative_images,
        tuple(args.splits),
        args.val_images,
        args.image_candidate,
        args.min_kept,
    )
    log.info("fine-tuned %s: best epoch %s, val R@1 %.2f", spec.name, summary["best_epoch"], summary["val_r1"])


def add_commands(add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the COCO commands on the main parser."""
    sp = add("coco-items", cmd_coco_items, "COCO items: Karpathy images (read from the zips) and COCO captions")
    sp.add_argument("--karpathy", required=True, help="caption_datasets.zip (dataset_coco.json)")
    sp.add_argument("--captions", required=True, help="annotations_trainval2014.zip")
    sp.add_argument("--images", nargs="+", type=name_value("PATH"), required=True, help="train2014=ZIP val2014=ZIP")
    sp.add_argument("--out", required=True)
    add_registry_option(sp)

    sp = add("coco-needed-items", cmd_needed_items, "the union of the COCO items the benchmarks need")
    sp.add_argument("benches", nargs="+", help="each benchmark's items.parquet (kind, item_id)")
    sp.add_argument("--items", required=True, help="data/coco/items")
    sp.add_argument("--out", required=True)

    sp = add("coco-caption-negatives", cmd_caption_negatives, "TROHN-Text negatives of one shard (LLM)")
    sp.add_argument("--captions", required=True, help="data/coco/items/captions.parquet")
    sp.add_argument("--splits", nargs="+", default=["train", "restval"])
    sp.add_argument("--limit", type=non_negative_int, default=0, help="first N captions only (0: all)")
    sp.add_argument("--shard", type=non_negative_int, required=True)
    sp.add_argument("--shards", type=positive_int, required=True)
    sp.add_argument("--config", type=json_arg, required=True, help="params `coco.llm` as JSON")
    sp.add_argument("--device", default="auto")
    sp.add_argument("--out", required=True)

    sp = add("coco-merge-negatives", cmd_merge_negatives, "merge the TROHN-Text shards; filter counts table")
    sp.add_argument("shards", nargs="+")
    sp.add_argument("--out", required=True)
    sp.add_argument("--summary-csv", required=True)
    sp.add_argument("--min-kept", type=non_negative_int, default=1, help="fewest kept negatives (0: none is fine)")

    sp = add("coco-image-negatives", cmd_image_negatives, "TROHN-Img images of one shard (SDXL-DPO)")
    sp.add_argument("--negatives", required=True)
    sp.add_argument("--sample", type=non_negative_int, default=0, help="negative captions to draw (0: all kept)")
    sp.add_argument("--seed", type=non_negative_int, default=0)
    sp.add_argument("--shard", type=non_negative_int, required=True)
    sp.add_argument("--shards", type=positive_int, required=True)
    sp.add_argument("--config", type=json_arg, required=True, help="params `coco.sdxl` as JSON")
    sp.add_argument("--device", default="auto")
    sp.add_argument("--out-dir", required=True)
    sp.add_argument("--min-kept", type=non_negative_int, default=1, help="fewest captions drawn (0: none is fine)")

    sp = add("coco-finetune", cmd_coco_finetune, "fine-tune a pretrained open_clip model on COCO (TROHN)")
    sp.add_argument("--model", required=True)
    sp.add_argument("--spec", type=json_arg, required=True)
    sp.add_argument("--train", type=json_arg, required=True)
    sp.add_argument("--items", required=True)
    sp.add_argument("--negatives", default=None)
    sp.add_argument("--negative-images", default=None, help="folder of the coco-image-negatives shards")
    sp.add_argument("--splits", nargs="+", default=["train", "restval"])
    sp.add_argument("--val-images", type=positive_int, default=1000)
    sp.add_argument("--image-candidate", default="random")
    sp.add_argument(
        "--min-kept", type=non_negative_int, default=1, help="fewest hard-negative samples of a TROHN recipe (0: none)"
    )
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--device", default="auto")
    sp.add_argument("--out", required=True)
    sp.add_argument("--history", required=True)
