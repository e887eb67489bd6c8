"""The world's text-to-image diffusion model: tokens, pixels, deterministic resumable training, the generator."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.negatives.diffusion import (
    BOS,
    CHECKPOINT_FILE,
    HISTORY_FILE,
    MODEL_FILE,
    UNK,
    DiffusionConfig,
    DiffusionGenerator,
    _batch_indices,
    build_vocabulary,
    encode_captions,
    load_diffusion,
    prompt_seed,
    to_model_space,
    to_pixels,
    train_diffusion,
)
from itmbench.negatives.generator import GeneratedImage
from itmbench.params import make_config
from itmbench.world.generate import generate_world, write_world

TINY = {
    "resolution": 16,
    "block_out_channels": (8, 16),
    "norm_num_groups": 4,
    "attention_head_dim": 4,
    "text_width": 16,
    "text_layers": 1,
    "text_heads": 2,
    "batch_size": 4,
    "train_steps": 4,
    "warmup_steps": 2,
    "checkpoint_every": 2,
    "log_every": 1,
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def items(tmp_path_factory) -> Path:
    """A small world's items folder."""
    path = tmp_path_factory.mktemp("world") / "items"
    write_world(generate_world(unit_world(n_train=24, n_val=4, n_test=4)), path)
    return path


@pytest.fixture(scope="module")
def trained(items, tmp_path_factory) -> Path:
    """A tiny model trained for 4 steps in one go."""
    out = tmp_path_factory.mktemp("diffusion")
    train_diffusion(items, make_config(DiffusionConfig, **TINY), out)
    return out


def test_vocabulary_and_encoding() -> None:
    vocab = build_vocabulary(["A red circle.", "two blue squares above a circle"])
    assert vocab[:3] == ("<pad>", UNK, BOS)
    assert list(vocab[3:]) == sorted(vocab[3:]) and "circle" in vocab and "." not in vocab
    ids, keep = encode_captions(["a red hexagon", "", "a a a a a a"], vocab, 4)
    assert ids.shape == (3, 4)
    assert ids[0].tolist() == [vocab.index(BOS), vocab.index("a"), vocab.index("red"), vocab.index(UNK)]
    assert keep[1].tolist() == [True, False, False, False]  # the empty caption is <bos> alone
    assert keep[2].all()  # truncated to max_tokens


def test_pixel_path_round_trip() -> None:
    image = np.zeros((1, 64, 64, 3), dtype=np.uint8)
    image[:, :32] = 200
    image[:, 32:] = 40
    x = to_model_space(image, 32)
    assert x.shape == (1, 3, 32, 32)
    assert float(x.min()) == pytest.approx(40 / 127.5 - 1) and float(x.max()) == pytest.approx(200 / 127.5 - 1)
    back = to_pixels(x, 64)
    assert back.shape == (1, 64, 64, 3) and back.dtype == np.uint8
    assert (back[0, :30] == 200).all() and (back[0, 34:] == 40).all()  # flat regions survive; only the edge blurs


def test_batches_walk_epoch_permutations() -> None:
    rows = np.concatenate([_batch_indices(0, s, 4, 10) for s in range(5)])
    assert sorted(rows[:10].tolist()) == list(range(10))  # epoch 0: every image once
    assert sorted(rows[10:20].tolist()) == list(range(10))
    assert not np.array_equal(rows[:10], rows[10:20])  # a new order each epoch


def test_prompt_seed_is_stable() -> None:
    assert prompt_seed(0, "a red circle") == prompt_seed(0, "a red circle")
    assert len({prompt_seed(0, "a red circle"), prompt_seed(1, "a red circle"), prompt_seed(0, "a red square")}) == 3
    assert 0 <= prompt_seed(0, "x", 3) < 2**63


def test_training_writes_model_and_history(trained) -> None:
    assert (trained / MODEL_FILE).exists() and (trained / HISTORY_FILE).exists()
    assert not (trained / CHECKPOINT_FILE).exists()  # removed once training completes
    history = json.loads((trained / HISTORY_FILE).read_text())
    assert [row["step"] for row in history["log"]] == [1, 2, 3, 4]
    assert all(np.isfinite(row["loss"]) and row["loss"] > 0 for row in history["log"])
    assert history["n_parameters"]["unet"] > 0 and history["train_images"] == 24


def test_training_is_deterministic_and_resumes_exactly(items, trained, tmp_path) -> None:
    cfg = make_config(DiffusionConfig, **TINY)
    partial = train_diffusion(items, cfg, tmp_path, max_steps_this_run=3)
    assert not (tmp_path / MODEL_FILE).exists() and (tmp_path / CHECKPOINT_FILE).exists()
    assert len(partial["log"]) == 3
    resumed = train_diffusion(items, cfg, tmp_path)
    assert resumed["resumed_at"] == [3]
    a = torch.load(trained / MODEL_FILE, weights_only=True)
    b = torch.load(tmp_path / MODEL_FILE, weights_only=True)
    for part in ("unet", "text"):
        assert a[part].keys() == b[part].keys()
        assert all(torch.equal(a[part][k], b[part][k]) for k in a[part])
    assert a["vocab"] == b["vocab"]
    assert (trained / MODEL_FILE).read_bytes() == (tmp_path / MODEL_FILE).read_bytes()  # byte-identical file
    straight = json.loads((trained / HISTORY_FILE).read_text())
    assert resumed["log"] == straight["log"]  # the logged losses too
    assert len(resumed["timing"]) == 2  # one entry per run


def test_resume_carries_losses_between_log_lines(items, tmp_path) -> None:
    cfg = make_config(DiffusionConfig, **{**TINY, "log_every": 4})
    train_diffusion(items, cfg, tmp_path / "a")
    train_diffusion(items, cfg, tmp_path / "b", max_steps_this_run=1)
    resumed = train_diffusion(items, cfg, tmp_path / "b")
    straight = json.loads((tmp_path / "a" / HISTORY_FILE).read_text())
    assert resumed["log"] == straight["log"] and len(straight["log"]) == 1


def test_checkpoint_of_another_config_is_not_resumed(items, tmp_path) -> None:
    train_diffusion(items, make_config(DiffusionConfig, **TINY), tmp_path, max_steps_this_run=2)
    history = train_diffusion(items, make_config(DiffusionConfig, **{**TINY, "seed": 1}), tmp_path)
    assert history["resumed_at"] == [] and history["config"]["seed"] == 1


def test_generator_interface_and_seeding(trained) -> None:
    gen = DiffusionGenerator.from_params(
        model_path=str(trained), image_size=64, num_inference_steps=3, noise=4.0, p_missing_object=0.2
    )
    text = "a red circle to the left of a blue square"
    first = gen.generate(None, None, 3, np.random.default_rng(0), text=text)
    again = gen.generate(None, None, 3, np.random.default_rng(99), text=text)
    other = gen.generate(None, None, 3, np.random.default_rng(0), text="two green triangles")
    assert len(first) == 3 and all(isinstance(c, GeneratedImage) and c.scene is None for c in first)
    assert all(c.image.shape == (64, 64, 3) and c.image.dtype == np.uint8 for c in first)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(first, again))  # seeded by the text, not the rng
    assert not np.array_equal(first[0].image, first[1].image)  # candidates differ
    assert not np.array_equal(first[0].image, other[0].image)
    with pytest.raises(ValueError, match="no caption text"):
        gen.generate(None, None, 1, np.random.default_rng(0))


def test_sampling_is_guided_by_the_caption(trained) -> None:
    model = load_diffusion(trained)
    seed = 5
    plain = model.sample("a red circle", 2, seed, guidance_scale=0.0, num_inference_steps=2)
    guided = model.sample("a red circle", 2, seed, guidance_scale=3.0, num_inference_steps=2)
    assert plain.shape == (2, 3, 16, 16)
    assert float(plain.abs().max()) <= 1.0 + 1e-6  # x0 clipped to [-1, 1]
    assert not torch.equal(plain, guided)


def test_bad_config_and_missing_model(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown keys"):
        make_config(DiffusionConfig, {"resolutoin": 32})
    with pytest.raises(ValueError, match="divisible"):
        make_config(DiffusionConfig, resolution=30, block_out_channels=(8, 16, 16), norm_num_groups=4)
    with pytest.raises(FileNotFoundError, match="model.pt"):
        load_diffusion(tmp_path)
    with pytest.raises(ValueError, match="no images in split"):
        empty = tmp_path / "items"
        write_world(generate_world(replace(unit_world(), n_train=0, n_val=2, n_test=2)), empty)
        train_diffusion(empty, make_config(DiffusionConfig, **TINY), tmp_path / "out")
