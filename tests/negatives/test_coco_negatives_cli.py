"""The COCO DAG's TROHN commands on tiny random-weight models saved to disk and loaded by path, as by name."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch
from test_llm_captions import TEMPLATES
from test_sdxl import pipe  # noqa: F401 - the fixture

from itmbench.cli import main


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> Path:
    """A tiny GPT-2 with a BPE tokenizer trained on the prompts, saved as a Hugging Face model folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    corpus = [t.instruction + "\n" + t.example_answer for t in TEMPLATES.values()]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>")
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=1024,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    out = tmp_path_factory.mktemp("gpt2")
    GPT2LMHeadModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture()
def captions(tmp_path) -> Path:
    path = tmp_path / "captions.parquet"
    pd.DataFrame(
        {
            "caption_id": [5, 3, 9, 11, 2],
            "sentid": [0, 1, 2, 3, 4],
            "image_id": [1, 1, 2, 2, 3],
            "split": ["train", "train", "restval", "train", "test"],
            "text": ["A dog on a sofa.", "A cat.", "Two cats near a red door", "A bus.", "A test caption."],
        }
    ).to_parquet(path)
    return path


def test_caption_negatives_sharded_then_merged(gpt2_dir, captions, tmp_path) -> None:
    cfg = {
        "model": str(gpt2_dir),
        "dtype": "float32",
        "subsets": ["replace_att", "swap_obj"],
        "batch_size": 2,
        "max_new_tokens": 6,
    }
    shards = []
    for k in range(2):
        shards.append(tmp_path / f"shard_{k}.parquet")
        rc = main(
            [
                "coco-caption-negatives",
                "--captions",
                str(captions),
                "--shard",
                str(k),
                "--shards",
                "2",
                "--config",
                json.dumps(cfg),
                "--device",
                "cpu",
                "--out",
                str(shards[-1]),
            ]
        )
        assert rc == 0
    parts = [pd.read_parquet(p) for p in shards]
    # train+restval captions only (4), split across the shards by position, 2 subtypes each
    assert sorted(parts[0]["caption_id"].unique()) == [3, 9] and sorted(parts[1]["caption_id"].unique()) == [5, 11]
    assert [len(p) for p in parts] == [4, 4]
    out = tmp_path / "negatives.parquet"
    assert (
        main(
            [
                "coco-merge-negatives",
                *map(str, shards),
                "--out",
                str(out),
                "--summary-csv",
                str(tmp_path / "filter.csv"),
                "--min-kept",
                "0",  # the random-weight GPT-2 follows no template
            ]
        )
        == 0
    )
    merged = pd.read_parquet(out)
    assert merged["caption_id"].tolist() == [3, 3, 5, 5, 9, 9, 11, 11]
    summary = pd.read_csv(tmp_path / "filter.csv")
    assert summary.set_index("subset")[["ok", "no_template"]].sum(axis=1).to_dict() == {"replace_att": 4, "swap_obj": 4}
    assert (tmp_path / "filter.md").read_text().startswith("**TROHN-Text")


def test_a_bad_shard_is_refused(gpt2_dir, captions, tmp_path) -> None:
    rc = main(
        [
            "coco-caption-negatives",
            "--captions",
            str(captions),
            "--shard",
            "2",
            "--shards",
            "2",
            "--config",
            json.dumps({"model": str(gpt2_dir)}),
            "--out",
            str(tmp_path / "x.parquet"),
        ]
    )
    assert rc == 2 and not (tmp_path / "x.parquet").exists()


def test_image_negatives_from_a_saved_sdxl_pipeline(pipe, tmp_path) -> None:  # noqa: F811
    model_dir = tmp_path / "sdxl"
    pipe.save_pretrained(model_dir)
    negatives = pd.DataFrame(
        {
            "caption_id": [1, 1, 2, 3],
            "negative_caption": ["a red cat.", None, "two dogs.", "a bus."],
            "follows_template": [True, False, True, True],
        }
    )
    negatives.to_parquet(tmp_path / "negatives.parquet")
    cfg = {
        "base_model": str(model_dir),
        "unet_model": str(model_dir),
        "variant": None,
        "dtype": "float32",
        "num_inference_steps": 2,
        "images_per_prompt": 2,
        "output_size": 32,
        "prompts_per_batch": 2,
        "height": 64,
        "width": 64,
    }
    out = tmp_path / "shard_0"
    rc = main(
        [
            "coco-image-negatives",
            "--negatives",
            str(tmp_path / "negatives.parquet"),
            "--sample",
            "2",
            "--shard",
            "0",
            "--shards",
            "1",
            "--config",
            json.dumps(cfg),
            "--device",
            "cpu",
            "--out-dir",
            str(out),
        ]
    )
    assert rc == 0
    manifest = pd.read_parquet(out / "manifest.parquet")
    assert len(manifest) == 4 and set(manifest["id"]) <= {0, 2, 3}  # 2 of the kept negatives, 2 images each
    assert all((out / p).exists() for p in manifest["path"])


def test_a_merge_that_keeps_no_negative_stops_naming_the_filter_and_its_counts(tmp_path, capsys) -> None:
    """No generation followed its template: the merge stops (exit 2, nothing written) unless --min-kept 0."""
    shard = tmp_path / "shard_0.parquet"
    pd.DataFrame(
        {"caption_id": [1, 1, 2], "subset": ["replace_att", "swap_obj", "replace_att"], "reason": ["no_template"] * 3}
    ).to_parquet(shard)
    out = tmp_path / "negatives.parquet"
    args = ["coco-merge-negatives", str(shard), "--out", str(out), "--summary-csv", str(tmp_path / "filter.csv")]
    assert main(args) == 2 and not out.exists() and not (tmp_path / "filter.csv").exists()
    err = capsys.readouterr().err
    assert "coco-merge-negatives: 0 negative captions kept by the LLM's template filter (of 3 generations" in err
    assert "'no_template': 3" in err and "coco.min_kept" in err, err
    assert main([*args, "--min-kept", "0"]) == 0 and len(pd.read_parquet(out)) == 3
    assert main([*args, "--min-kept", "4"]) == 2  # fewer kept than asked for, some kept or not


def test_image_negatives_with_no_kept_caption_to_draw_stop_before_loading_sdxl(tmp_path, capsys) -> None:
    negatives = pd.DataFrame(
        {"caption_id": [1, 2], "negative_caption": [None, None], "follows_template": [False, False]}
    )
    negatives.to_parquet(tmp_path / "negatives.parquet")
    cfg = {"base_model": str(tmp_path / "no_sdxl_here"), "unet_model": str(tmp_path / "no_sdxl_here")}
    args = ["coco-image-negatives", "--negatives", str(tmp_path / "negatives.parquet"), "--sample", "8"]
    args += ["--shard", "0", "--shards", "1", "--config", json.dumps(cfg), "--device", "cpu"]
    args += ["--out-dir", str(tmp_path / "shard_0")]
    assert main(args) == 2 and not (tmp_path / "shard_0").exists()
    err = capsys.readouterr().err
    assert (
        "coco-image-negatives: 0 negative captions drawn for SDXL (of 0 kept by the template filter, 2 generated" in err
    )
