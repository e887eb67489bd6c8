"""`itmbench train`, `embed`: training the baselines and embedding each item once per model."""

from __future__ import annotations

import argparse
import logging

from itmbench.cli._args import (
    devices_arg,
    json_arg,
    non_negative_int,
    positive_int,
    set_threads,
)
from itmbench.params import make_config

log = logging.getLogger("itmbench")


def cmd_train(args: argparse.Namespace) -> None:
    """Train a model by its spec's trainer (the registry in itmbench.train)."""
    from itmbench.models.registry import pick_device
    from itmbench.models.spec import model_spec
    from itmbench.train import TrainConfig, trainer

    set_threads(args.threads)
    spec = model_spec(args.model, args.spec)
    train = trainer(spec.trainer, spec.name)  # names the model and the known trainers when unknown
    cfg = make_config(TrainConfig, {**args.train, **spec.train})  # the model's own overrides win
    init = {"init": args.init} if args.init else {}  # fine-tuning: start from another model's checkpoint
    summary = train(spec, cfg, args.items, args.out, args.history, pick_device(args.device), **init)
    log.info("trained %s: best epoch %s, val R@1 %s", spec.name, summary["best_epoch"], summary.get("val_r1", "-"))
    if args.embed_out:  # load once: the trained model embeds the world's items in this process (`embed`'s path)
        from itmbench.scoring.embed import folder_items

        items = folder_items(args.items, args.embed_splits)
        _write_embedded(args.embed_out, _embed_once(spec, args.out, args.items, [], items, args), spec.name)


def _embed_once(spec, checkpoint, items_dir, extra_items, items, args: argparse.Namespace) -> dict:
    """One forward pass per listed item with one model on one device: the cache's arrays."""
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.scoring.embed import ItemStore, embed_items

    encoder = build_encoder(spec, pick_device(args.device), checkpoint)
    store = ItemStore(items_dir, extra_items, image_size=getattr(encoder, "image_size", 224))
    return embed_items(encoder, store, items, args.batch_size)


def _write_embedded(out: str, emb: dict, model: str) -> None:
    """Write a cache file atomically and log what it holds."""
    from itmbench.scoring.embed import write_embeddings

    write_embeddings(out, emb)
    log.info("embedded %d images and %d captions with %s", len(emb["image_ids"]), len(emb["caption_ids"]), model)


def cmd_embed(args: argparse.Namespace) -> None:
    """Embed the items of one folder once with one model (of some splits, or the listed ones)."""
    from itmbench.models.spec import model_spec
    from itmbench.reading import read_parquet_file
    from itmbench.scoring.embed import embed_items_on_devices, folder_items, visible_devices

    set_threads(args.threads)
    spec = model_spec(args.model, args.spec)
    items = read_parquet_file(args.needed) if args.needed else folder_items(args.items, args.splits)
    devices = visible_devices(args.devices)
    if len(devices) > 1:  # item batches split across devices (CUDA, else CPU shards), one worker each
        emb = embed_items_on_devices(
            args.spec,
            args.model,
            args.checkpoint,
            args.items,
            args.extra_items,
            items,
            devices,
            args.batch_size,
            args.threads,
        )
    else:
        emb = _embed_once(spec, args.checkpoint, args.items, args.extra_items, items, args)
    _write_embedded(args.out, emb, spec.name)


def cmd_make_small_models(args: argparse.Namespace) -> None:
    """The COCO source's small stand-in models (open_clip, causal LM, SDXL), seeded, for `coco-small.yaml`."""
    from itmbench.models.small import make_small_models

    set_threads(1)  # the same weights on any machine
    for name, path in make_small_models(args.out, args.seed, args.world, log.info).items():
        log.info("small %s: %s", name, path)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    for name, func, help_ in (("train", cmd_train, "train a model"), ("embed", cmd_embed, "embed items once")):
        sp = add(name, func, help_)
        sp.add_argument("--model", required=True)
        sp.add_argument("--spec", type=json_arg, required=True, help="params.yaml `models.<name>` as JSON")
        sp.add_argument("--items", required=True)
        sp.add_argument("--out", required=True)
        sp.add_argument("--threads", type=positive_int, default=1)
        sp.add_argument("--device", default="auto")
    sub.choices["train"].add_argument("--train", type=json_arg, required=True, help="params.yaml `train` as JSON")
    sub.choices["train"].add_argument("--history", required=True)
    sub.choices["train"].add_argument("--init", default=None, help="checkpoint to start from (the spec's `init`)")
    sub.choices["train"].add_argument(
        "--embed-out", default=None, help="also embed the items of --embed-splits with the trained model (a cache file)"
    )
    sub.choices["train"].add_argument("--embed-splits", nargs="*", default=None, help="the splits --embed-out holds")
    sub.choices["train"].add_argument("--batch-size", type=positive_int, default=256, help="embedding batch size")
    sub.choices["embed"].add_argument("--needed", default=None, help="a parquet (kind, item_id) of the items to embed")
    sub.choices["embed"].add_argument("--splits", nargs="*", default=None, help="embed every item of these splits")
    sub.choices["embed"].add_argument("--checkpoint", default=None)
    sub.choices["embed"].add_argument("--batch-size", type=positive_int, default=256)
    sub.choices["embed"].add_argument("--extra-items", nargs="*", default=[], help="item folders benchmarks added")
    sub.choices["embed"].add_argument(
        "--devices",
        type=devices_arg,
        default="1",
        help="N or 'all': split item batches across N CUDA devices, else N CPU shards",
    )
    sp = add(
        "make-small-models",
        cmd_make_small_models,
        "small stand-ins of the COCO models (workflow/config/coco-small.yaml)",
    )
    sp.add_argument(
        "--out", required=True, help="folder of open_clip/, llm/ and sdxl/ (coco-small.yaml: data/small_models)"
    )
    sp.add_argument("--seed", type=non_negative_int, default=0)
    sp.add_argument(
        "--world",
        default=None,
        help="a world's items folder (data/world/items): train the LLM and SDXL on its train split so the TROHN "
        "stages produce (docs/coco.md); without it they keep random weights",
    )
