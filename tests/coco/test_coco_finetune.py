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


@pytest.mark.slow
def test_no_kept_negative_stops_or_with_min_kept_0_trains_negclip_on_pairs_and_leaves_trohn_img_at_its_start(
    coco, tmp_path, capsys
) -> None:
    """An LLM that follows no template (a random-weight small LM): by default each TROHN fine-tune stops, naming
    its recipe and counts, and writes nothing. With --min-kept 0 (coco.min_kept in a config file) TROHN-Text's
    fine-tune has no hard negative to add, TROHN-Img's has no generated image (the shards' manifests are empty): its
    checkpoint is the starting model, unchanged, and its history says so (zero samples, best epoch 0)."""
    torch.set_num_threads(1)
    negatives = pd.read_parquet(coco / "negatives.parquet").assign(follows_template=False, negative_caption=None)
    negatives.to_parquet(tmp_path / "negatives.parquet")
    (tmp_path / "images" / "shard_0").mkdir(parents=True)
    pd.DataFrame(
        {"id": pd.Series([], dtype="int64"), "candidate": pd.Series([], dtype="int64"), "path": []}
    ).to_parquet(tmp_path / "images" / "shard_0" / "manifest.parquet")
    for trainer in ("negclip", "trohn_img"):
        spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": trainer}
        args = ["coco-finetune", "--model", f"m_{trainer}", "--spec", json.dumps(spec), "--train", json.dumps(TRAIN)]
        args += ["--items", str(coco / "items"), "--negatives", str(tmp_path / "negatives.parquet")]
        args += ["--out", str(tmp_path / f"{trainer}.pt"), "--history", str(tmp_path / f"{trainer}.json")]
        args += ["--val-images", "2", "--device", "cpu"]
        if trainer == "trohn_img":
            args += ["--negative-images", str(tmp_path / "images")]
        assert main(args) == 2 and not (tmp_path / f"{trainer}.pt").exists(), trainer
        err = capsys.readouterr().err
        assert f"coco-finetune m_{trainer} ({trainer}): 0 " in err and "coco.min_kept" in err, err
        assert main([*args, "--min-kept", "0"]) == 0, trainer
    negclip = json.loads((tmp_path / "negclip.json").read_text())
    assert negclip["best_epoch"] == 1 and negclip["samples"]["negatives"] == {}
    trohn_img = json.loads((tmp_path / "trohn_img.json").read_text())
    assert trohn_img["samples"] == {"samples": 0} and trohn_img["best_epoch"] == 0 and trohn_img["history"] == []
    torch.manual_seed(0)  # the start: itm-clip-tiny's random init under the training seed
    start = build_encoder(model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny"}), torch.device("cpu"))
    saved = torch.load(tmp_path / "trohn_img.pt", weights_only=False)["state_dict"]
    assert all(torch.equal(v, saved[k]) for k, v in start.model.state_dict().items())


def test_generated_images_of_other_captions_are_still_refused(coco, tmp_path) -> None:
    """Images whose ids are no negative of a train caption: the shards and the table do not belong together."""
    negatives = pd.read_parquet(coco / "negatives.parquet")
    negatives.iloc[:0].to_parquet(tmp_path / "negatives.parquet")  # no row: every image id is unknown
    spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "trohn_img"}
    args = ["coco-finetune", "--model", "m", "--spec", json.dumps(spec), "--train", json.dumps(TRAIN)]
    args += ["--items", str(coco / "items"), "--negatives", str(tmp_path / "negatives.parquet")]
    args += ["--negative-images", str(coco / "images"), "--out", str(tmp_path / "m.pt")]
    args += ["--history", str(tmp_path / "h.json"), "--val-images", "2", "--device", "cpu"]
    assert main(args) != 0
    assert not (tmp_path / "m.pt").exists()
