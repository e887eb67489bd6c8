"""Every trainer on a tiny world: it learns, writes a loadable checkpoint, is deterministic and resumes exactly."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from unit_world import unit_world

from itmbench.models.registry import build_encoder
from itmbench.models.spec import ModelSpec, load_checkpoint, model_spec
from itmbench.params import make_config
from itmbench.train import TRAINERS, loop, trainer
from itmbench.train.config import TrainConfig
from itmbench.train.recipes import RECIPES
from itmbench.world.generate import generate_world, write_world

NEW = ("negclip", "negclip_aro", "trohn_img", "vse_hinge", "de_i2t", "de_t2t", "de_t2t_i2t")
CFG = make_config(TrainConfig, epochs=2, batch_size=32, lr=2e-3, warmup_steps=5, trohn_img_fraction=0.5)
# VSE++ warms up with the sum of hinges for an epoch: its loss is compared over the two max-violation epochs.
CFGS = {name: CFG for name in NEW} | {"vse_hinge": replace(CFG, epochs=3, hinge_warmup_epochs=1)}


def spec_of(name: str) -> ModelSpec:
    return model_spec(name, {"family": "open_clip", "arch": "itm-clip-tiny", "trainer": name})


@pytest.fixture(scope="module")
def items_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("world") / "items"
    write_world(generate_world(unit_world(n_train=64, n_val=16, n_test=4)), d)
    return d


@pytest.fixture(scope="module")
def runs(items_dir, tmp_path_factory, one_torch_thread):
    """Each new trainer, trained once for 2 epochs (VSE++ 3; shared by the tests below)."""
    out = {}
    for name in NEW:
        d = tmp_path_factory.mktemp(name)
        cfg = CFGS[name]
        summary = TRAINERS[name](spec_of(name), cfg, items_dir, d / "model.pt", d / "history.json", torch.device("cpu"))
        out[name] = (d, summary)
    return out


def test_registry_holds_every_trainer_and_names_unknown_ones():
    assert set(RECIPES) == {"contrastive", *NEW}
    assert set(TRAINERS) == set(RECIPES) | {"coca", "bow_tfidf"}  # the captioner's and the bag of words' own
    with pytest.raises(ValueError, match="models.m: unknown trainer 'negclip2'; expected one of"):
        trainer("negclip2", "m")
    assert trainer("vse_hinge") is TRAINERS["vse_hinge"]


@pytest.mark.parametrize("name", NEW)
def test_trainer_lowers_its_loss_and_writes_a_loadable_checkpoint(runs, name):
    d, summary = runs[name]
    hist = summary["history"]
    assert [h["epoch"] for h in hist] == list(range(1, CFGS[name].epochs + 1))
    assert hist[-1]["train_loss"] < hist[-2]["train_loss"], hist
    tasks = RECIPES[name].tasks
    assert summary["val_tasks"] == list(tasks) and all(f"val_{t}_r1" in hist[0] for t in tasks)
    assert hist[0]["val_r1"] == pytest.approx(sum(hist[0][f"val_{t}_r1"] for t in tasks) / len(tasks))
    state = load_checkpoint(d / "model.pt")
    assert state["trainer"] == name and state["best_epoch"] in range(1, CFGS[name].epochs + 1)
    assert state["val_r1"] == max(h["val_r1"] for h in hist)
    enc = build_encoder(spec_of(name), torch.device("cpu"), d / "model.pt")
    emb = enc.encode_texts(["a red circle", "a blue square"])
    assert emb.shape == (2, 64) and torch.allclose(emb.norm(dim=1), torch.ones(2), atol=1e-5)
    assert not (d / ".resume.pt").exists()


def test_hard_negative_trainers_report_their_negatives(runs):
    negclip = runs["negclip"][1]["samples"]
    assert negclip["samples"] == 320 and negclip["negatives"] >= 0.95 * 320
    trohn = runs["trohn_img"][1]["samples"]
    assert trohn["samples"] == 160 and trohn["negatives"] == 160
    # unfiltered by default (BiVLC's TROHN-Img): an added object keeps the positive caption true of the negative
    # image, noise the truth filter (the clip_trohn_img_filtered ablation) would drop
    assert "add_obj" in trohn["by_subset"]


def test_text_only_dual_encoder_leaves_the_image_tower_untouched(runs):
    """DE_T2T trains its text tower only: the image weights stay at their seeded initialisation."""
    torch.manual_seed(CFG.seed)
    init = build_encoder(spec_of("de_t2t"), torch.device("cpu")).model.state_dict()
    trained = load_checkpoint(runs["de_t2t"][0] / "model.pt")["state_dict"]
    visual = [k for k in init if k.startswith("visual.")]
    text = [k for k in init if k.startswith("transformer.")]
    assert visual and all(torch.equal(init[k], trained[k]) for k in visual)
    assert not all(torch.equal(init[k], trained[k]) for k in text)


def test_negclip_training_is_deterministic(runs, items_dir, tmp_path):
    d, _ = runs["negclip"]
    TRAINERS["negclip"](spec_of("negclip"), CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    a, b = load_checkpoint(d / "model.pt")["state_dict"], load_checkpoint(tmp_path / "m.pt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_killed_trohn_img_run_resumes_to_the_same_model(runs, items_dir, tmp_path, kill_on_call):
    d, _ = runs["trohn_img"]
    spec = spec_of("trohn_img")
    restore = kill_on_call(loop, "validation_recalls", 2)  # killed in epoch two
    with pytest.raises(KeyboardInterrupt):
        TRAINERS["trohn_img"](spec, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert (tmp_path / ".resume.pt").exists() and not (tmp_path / "m.pt").exists()
    restore()
    summary = TRAINERS["trohn_img"](spec, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))
    assert [h["epoch"] for h in summary["history"]] == [1, 2]
    a, b = load_checkpoint(d / "model.pt")["state_dict"], load_checkpoint(tmp_path / "m.pt")["state_dict"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_trainer_refuses_a_spec_of_another_trainer_or_family(items_dir, tmp_path):
    with pytest.raises(ValueError, match="models.negclip: trainer 'negclip' run with the 'vse_hinge' trainer"):
        TRAINERS["vse_hinge"](spec_of("negclip"), CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", "cpu")
    random = model_spec("rnd", {"family": "random", "trainer": "de_i2t"})
    with pytest.raises(ValueError, match="models.rnd: trainer 'de_i2t' needs a trainable encoder.*family 'random'"):
        TRAINERS["de_i2t"](random, CFG, items_dir, tmp_path / "m.pt", tmp_path / "h.json", torch.device("cpu"))


def test_killed_captioner_run_resumes_to_the_same_model(items_dir, tmp_path, monkeypatch, kill_on_call):
    from itmbench.train import captioner

    torch.set_num_threads(1)
    spec = model_spec("coca", {"family": "coca", "arch": "itm-coca-tiny", "trainer": "coca"})
    whole = TRAINERS["coca"](
        spec, CFG, items_dir, tmp_path / "a" / "m.pt", tmp_path / "a" / "h.json", torch.device("cpu")
    )
    assert [h["epoch"] for h in whole["history"]] == [1, 2] and not (tmp_path / "a" / ".resume.pt").exists()
    assert whole["history"][1]["train_loss"] < whole["history"][0]["train_loss"]
    real = captioner.validation_log_likelihood
    b = tmp_path / "b"
    kill_on_call(captioner, "validation_log_likelihood", 2)  # killed in epoch two
    with pytest.raises(KeyboardInterrupt):
        TRAINERS["coca"](spec, CFG, items_dir, b / "m.pt", b / "h.json", torch.device("cpu"))
    assert (b / ".resume.pt").exists() and not (b / "m.pt").exists()
    validated = []
    monkeypatch.setattr(captioner, "validation_log_likelihood", lambda *a, **k: validated.append(1) or real(*a, **k))
    resumed = TRAINERS["coca"](spec, CFG, items_dir, b / "m.pt", b / "h.json", torch.device("cpu"))
    assert len(validated) == 1  # only epoch 2 ran: epoch 1 came from the resume state
    assert [h["epoch"] for h in resumed["history"]] == [1, 2] and resumed["best_epoch"] == whole["best_epoch"]
    x, y = load_checkpoint(tmp_path / "a" / "m.pt")["state_dict"], load_checkpoint(b / "m.pt")["state_dict"]
    assert all(torch.equal(x[k], y[k]) for k in x)
