"""TROHN fine-tuning on a tiny COCO: the three recipes run through the same loop and write loadable checkpoints."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from coco_fixtures import make_tiny_coco
from PIL import Image

from itmbench.cli import main
from itmbench.models.registry import build_encoder
from itmbench.models.spec import model_spec
from itmbench.sources.coco import write_coco_items

TRAIN = {"epochs": 1, "batch_size": 4, "lr": 1e-4, "warmup_steps": 1, "seed": 0, "hard_negatives_per_sample": 1}


@pytest.fixture(scope="module")
def coco(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("coco")
    raw = make_tiny_coco(root / "raw")
    write_coco_items(
        raw["karpathy"], raw["captions"], {"train2014": raw["train2014"], "val2014": raw["val2014"]}, root / "items"
    )
    caps = pd.read_parquet(root / "items" / "captions.parquet")
    train = caps[caps["split"].isin(["train", "restval"])]
    negatives = pd.DataFrame(
        {
            "caption_id": train["caption_id"].to_numpy(),
            "caption": train["text"].to_numpy(),
            "subset": "replace_att",
            "negative_caption": [t.replace("square", "circle") for t in train["text"]],
            "follows_template": [i % 3 != 0 for i in range(len(train))],
        }
    )
    negatives.to_parquet(root / "negatives.parquet")
    shard = root / "images" / "shard_0"
    shard.mkdir(parents=True)
    kept = negatives.index[negatives["follows_template"]][:6]
    rows = []
    for n in kept:
        for j in range(2):
            name = f"{n}_{j}.png"
            Image.fromarray(np.full((40, 40, 3), 30 * j + n, dtype=np.uint8)).save(shard / name)
            rows.append((int(n), j, name))
    pd.DataFrame(rows, columns=["id", "candidate", "path"]).to_parquet(shard / "manifest.parquet")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("trainer", ["contrastive", "negclip", "trohn_img"])
def test_each_recipe_fine_tunes_and_the_checkpoint_loads(coco, tmp_path, trainer) -> None:
    torch.set_num_threads(1)
    spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": trainer}
    out = tmp_path / "model.pt"
    args = [
        "coco-finetune",
        "--model",
        f"m_{trainer}",
        "--spec",
        json.dumps(spec),
        "--train",
        json.dumps(TRAIN),
        "--items",
        str(coco / "items"),
        "--out",
        str(out),
        "--history",
        str(tmp_path / "history.json"),
        "--val-images",
        "2",
        "--device",
        "cpu",
    ]
    if trainer != "contrastive":
        args += ["--negatives", str(coco / "negatives.parquet")]
    if trainer == "trohn_img":
        args += ["--negative-images", str(coco / "images")]
    assert main(args) == 0
    history = json.loads((tmp_path / "history.json").read_text())
    assert history["trainer"] == trainer and history["best_epoch"] == 1
    if trainer == "negclip":  # one negative per caption that has a kept one (20 train captions, 7 dropped)
        assert history["samples"]["negatives"] == {"replace_att": 13}
    if trainer == "trohn_img":  # the 6 captions with generated images
        assert history["samples"]["samples"] == 6
    encoder = build_encoder(model_spec("m", spec), torch.device("cpu"), out)
    assert encoder.encode_texts(["a red square"]).shape == (1, 64)


def test_a_world_trainer_is_refused_on_coco(coco, tmp_path) -> None:
    spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "vse_hinge"}
    rc = main(
        [
            "coco-finetune",
            "--model",
            "m",
            "--spec",
            json.dumps(spec),
            "--train",
            json.dumps(TRAIN),
            "--items",
            str(coco / "items"),
            "--out",
            str(tmp_path / "m.pt"),
            "--history",
            str(tmp_path / "h.json"),
        ]
    )
    assert rc == 2 and not (tmp_path / "m.pt").exists()
