"""Training smoke test on a tiny world: it learns, it is deterministic, a killed run resumes exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.models.registry import build_encoder
from itmbench.models.spec import load_checkpoint, model_spec
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, ItemStore, embed_items, folder_items, write_embeddings
from itmbench.train import loop
from itmbench.train.contrastive import TrainConfig, cosine_lr, train_contrastive, validation_r1
from itmbench.world.generate import generate_world, read_world, write_world

SPEC = model_spec("clip", {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "contrastive"})
CFG = make_config(TrainConfig, epochs=2, batch_size=32, lr=2e-3, warmup_steps=5)


@pytest.fixture(scope="module")
def items_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("world") / "items"
    write_world(generate_world(unit_world(n_train=96, n_val=24, n_test=24)), d)
    return d


@pytest.fixture(scope="module")
def trained(items_dir, tmp_path_factory, one_torch_thread):
    out = tmp_path_factory.mktemp("model")
    summary = train_contrastive(SPEC, CFG, items_dir, out / "model.pt", out / "history.json", torch.device("cpu"))
    return out, summary


def test_training_lowers_the_loss_and_writes_a_loadable_checkpoint(trained, items_dir):
    out, summary = trained
    hist = summary["history"]
    assert len(hist) == 2 and hist[1]["train_loss"] < hist[0]["train_loss"]
    state = load_checkpoint(out / "model.pt")
    assert state["best_epoch"] in (1, 2)
    enc = build_encoder(SPEC, torch.device("cpu"), out / "model.pt")
    emb = enc.encode_texts(["a red circle", "a blue square"])
    assert emb.shape == (2, 64)
    assert torch.allclose(emb.norm(dim=1), torch.ones(2), atol=1e-5)
    assert not (out / ".resume.pt").exists()


def test_training_is_deterministic(trained, items_dir, tmp_path):
    out, _ = trained
    train_contrastive(SPEC, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    a, b = load_checkpoint(out / "model.pt")["state_dict"], load_checkpoint(tmp_path / "m.pt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "m.pt").read_bytes() == (out / "model.pt").read_bytes()  # not the temp file's name inside


def test_killed_run_resumes_to_the_same_model(trained, items_dir, tmp_path, kill_on_call):
    out, _ = trained
    restore = kill_on_call(loop, "validation_recalls", 2)  # killed in epoch two
    with pytest.raises(KeyboardInterrupt):
        train_contrastive(SPEC, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert (tmp_path / ".resume.pt").exists() and not (tmp_path / "m.pt").exists()
    restore()
    summary = train_contrastive(SPEC, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert [h["epoch"] for h in summary["history"]] == [1, 2]
    a, b = load_checkpoint(out / "model.pt")["state_dict"], load_checkpoint(tmp_path / "m.pt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert (tmp_path / "m.pt").read_bytes() == (out / "model.pt").read_bytes()


def test_a_run_killed_between_checkpoint_and_history_leaves_neither(trained, items_dir, tmp_path, kill_on_call):
    """The checkpoint and its history appear together: killed after the checkpoint is written but before the
    history, neither has its name, the resume state is kept, and the next run completes both."""
    out, _ = trained
    restore = kill_on_call(loop, "write_json", 1)
    with pytest.raises(KeyboardInterrupt):
        train_contrastive(SPEC, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert not (tmp_path / "m.pt").exists() and not (tmp_path / "h.json").exists()
    assert (tmp_path / ".resume.pt").exists()
    assert [p.name for p in tmp_path.iterdir()] == [".resume.pt"]  # no temp file left either
    restore()
    train_contrastive(SPEC, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert (tmp_path / "m.pt").read_bytes() == (out / "model.pt").read_bytes()
    assert (tmp_path / "h.json").exists() and not (tmp_path / ".resume.pt").exists()


def test_the_checkpoints_val_r1_reproduces_from_the_loaded_model(trained, items_dir):
    """validation_r1 (the old entry point) is the mean of i2t and t2i R@1, and the saved score reloads exactly."""
    out, _ = trained
    enc = build_encoder(SPEC, torch.device("cpu"), out / "model.pt")
    val = loop.ValidationSet.from_world(read_world(items_dir), str(items_dir))
    recalls = loop.validation_recalls(enc, val, ("i2t", "t2i"))
    score = validation_r1(enc, val.images, val.texts, val.caption_image_row)
    assert score == pytest.approx(0.5 * (recalls["i2t"] + recalls["t2i"]))
    assert score == pytest.approx(load_checkpoint(out / "model.pt")["val_r1"])


def test_cosine_schedule_warms_up_then_decays():
    lrs = [cosine_lr(s, 100, 1.0, 10) for s in range(100)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(lrs[10:], lrs[11:])) and lrs[-1] < 0.01


def test_embedding_cache_embeds_each_item_once_and_batch_size_does_not_matter(trained, items_dir, tmp_path):
    out, _ = trained
    enc = build_encoder(SPEC, torch.device("cpu"), out / "model.pt")
    need = folder_items(items_dir, ["test"])
    # the test split's 24 images and 120 captions, each once
    assert (need["kind"] == "image").sum() == 24 and (need["kind"] == "caption").sum() == 120
    assert not need.duplicated().any()
    store = ItemStore(items_dir)
    big = embed_items(enc, store, need, batch_size=256)
    small = embed_items(enc, store, need, batch_size=1)
    assert np.allclose(big["image_emb"], small["image_emb"], atol=1e-5)
    write_embeddings(tmp_path / "e.npz", big)
    cache = EmbeddingCache(tmp_path / "e.npz")
    caption_ids = need.loc[need["kind"] == "caption", "item_id"].to_numpy()[:2]
    got = cache.get("caption", caption_ids[::-1])
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (2, 64)
    rows = {int(i): r for r, i in enumerate(big["caption_ids"])}
    assert np.array_equal(got, big["caption_emb"][[rows[int(i)] for i in caption_ids[::-1]]])
    with pytest.raises(KeyError, match="no image embedding for ids \\[99\\]"):
        cache.get("image", np.array([99]))


def test_unknown_model_family_and_bad_checkpoint_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown family 'vse'"):
        model_spec("m", {"family": "vse"})
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="bad.pt"):
        load_checkpoint(bad)


def test_pretrained_path_loads_a_saved_architecture_without_download(tmp_path):
    """The COCO path by architecture name: random ViT-B-32 weights saved, then loaded via a path."""
    import open_clip

    model = open_clip.create_model("ViT-B-32", pretrained=None, force_quick_gelu=True)
    ckpt = tmp_path / "vitb32.pt"
    torch.save({"state_dict": model.state_dict()}, ckpt)
    spec = model_spec("vitb32", {"family": "open_clip", "arch": "ViT-B-32", "quick_gelu": True})
    enc = build_encoder(spec, torch.device("cpu"), ckpt)
    x = np.random.default_rng(0).integers(0, 255, size=(2, 64, 64, 3), dtype=np.uint8)
    emb = enc.encode_images(x)  # resized to 224 px on the way
    assert emb.shape == (2, 512)
    ref = model.encode_image(enc.image_tensor(x), normalize=True)
    assert torch.allclose(emb, ref, atol=1e-5)


@pytest.mark.parametrize("arch", ["itm-clip-tiny", "RN50"])
def test_adamw_decays_matrices_only_as_bivlc_does(arch):
    """No weight decay on gains, biases, norms and the logit scale: BiVLC's own rule (its CLIP_fine_tuning.py),
    re-stated here by name, selects the same parameters as `param_groups` (a ViT and a ResNet with batch norms)."""
    import open_clip

    from itmbench.models.openclip import register_local_configs

    register_local_configs()
    model = open_clip.create_model(arch)
    groups = loop.param_groups(model, 0.1)
    assert [g["weight_decay"] for g in groups] == [0.1, 0.0]
    decayed = {id(p) for p in groups[0]["params"]}
    names = dict(model.named_parameters())

    def bivlc_excludes(n: str, p: torch.nn.Parameter) -> bool:
        return p.ndim < 2 or "bn" in n or "ln" in n or "bias" in n or "logit_scale" in n

    assert {n for n, p in names.items() if id(p) in decayed} == {
        n for n, p in names.items() if not bivlc_excludes(n, p)
    }
    assert len(decayed) + len(groups[1]["params"]) == len(names)  # every parameter in exactly one group
    assert id(model.logit_scale) not in decayed and id(model.visual.conv1.weight) in decayed


def test_fine_tuning_starts_from_init_and_the_specs_train_overrides_win(trained, items_dir, tmp_path):
    """`itmbench train --init` (a spec with `init`, as clip_trohn_img starts from clip): one epoch at a vanishing
    lr leaves the init's weights, while the same run from scratch would be a random model; `train:` in the spec
    overrides the section (1 epoch, not 2)."""
    import json

    from itmbench.cli import main

    out, _ = trained
    spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "contrastive", "init": "clip"}
    spec["train"] = {"epochs": 1, "lr": 1e-12}
    section = {"epochs": 2, "batch_size": 32, "lr": 2e-3, "warmup_steps": 5}
    args = ["train", "--model", "ft", "--spec", json.dumps(spec), "--train", json.dumps(section)]
    args += ["--items", str(items_dir), "--out", str(tmp_path / "ft.pt"), "--history", str(tmp_path / "h.json")]
    assert main([*args, "--init", str(out / "model.pt")]) == 0
    history = json.loads((tmp_path / "h.json").read_text())["history"]
    assert [h["epoch"] for h in history] == [1]
    init, tuned = load_checkpoint(out / "model.pt"), load_checkpoint(tmp_path / "ft.pt")
    assert max((init["state_dict"][k] - tuned["state_dict"][k]).abs().max().item() for k in init["state_dict"]) < 1e-6
    assert tuned["val_r1"] == pytest.approx(init["val_r1"])
    assert tuned["train"]["epochs"] == 1 and tuned["train"]["lr"] == 1e-12


def test_a_training_job_embeds_the_items_as_the_embed_job_does(items_dir, tmp_path, one_torch_thread):
    """`itmbench train --embed-out` (the world's training jobs, load once) writes the very cache that a
    separate `itmbench embed` of the trained checkpoint writes: same ids, same float32 bits."""
    import json

    from itmbench.cli import main

    spec = {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": "contrastive", "train": {"epochs": 1}}
    section = {"epochs": 1, "batch_size": 32, "lr": 2e-3, "warmup_steps": 5}
    common = ["--model", "clip", "--spec", json.dumps(spec), "--items", str(items_dir)]
    train = ["train", *common, "--train", json.dumps(section), "--out", str(tmp_path / "model.pt")]
    train += ["--history", str(tmp_path / "h.json"), "--embed-out", str(tmp_path / "joint.npz")]
    assert main([*train, "--embed-splits", "test", "val"]) == 0
    embed = ["embed", *common, "--checkpoint", str(tmp_path / "model.pt"), "--out", str(tmp_path / "alone.npz")]
    assert main([*embed, "--splits", "test", "val"]) == 0
    joint, alone = np.load(tmp_path / "joint.npz"), np.load(tmp_path / "alone.npz")
    assert sorted(joint.files) == sorted(alone.files)
    assert len(joint["image_ids"]) == 48 and len(joint["caption_ids"]) == 240  # the test and val splits
    for key in alone.files:
        assert joint[key].dtype == alone[key].dtype and joint[key].tobytes() == alone[key].tobytes(), key
