"""The pixel recognizer: labels from scene graphs, judgements exact in the world's semantics, training, loading."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.negatives.captions import propose_edit
from itmbench.negatives.diffusion import to_model_space, to_pixels
from itmbench.negatives.recognizer import (
    METRICS_FILE,
    MODEL_FILE,
    GridDetector,
    Posterior,
    Recognizer,
    RecognizerConfig,
    images_to_tensor,
    lowres,
    scene_targets,
    train_recognizer,
)
from itmbench.papers.sugarcrepe.released import SUBSETS
from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import generate_world, write_world
from itmbench.world.scene import COLOURS, SHAPES, SIZES, Scene, WorldObject
from itmbench.world.truth import caption_fits

TINY = {"channels": (8, 8, 16, 16), "epochs": 3, "batch_size": 32, "n_samples": 64}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread: the tests' budget is one core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def world():
    """A small world."""
    return generate_world(unit_world(n_train=96, n_val=16, n_test=4))


@pytest.fixture(scope="module")
def items(world, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("world") / "items"
    write_world(world, path)
    return path


def certain_posterior(scene: Scene, grid: int = 8) -> Posterior:
    """The posterior of a recognizer that reads `scene` without doubt."""
    c = grid * grid
    post = Posterior(
        objectness=np.zeros(c),
        shape=np.full((c, len(SHAPES)), 1 / len(SHAPES)),
        colour=np.full((c, len(COLOURS)), 1 / len(COLOURS)),
        size=np.full((c, len(SIZES)), 1 / len(SIZES)),
        x=(np.tile(np.arange(grid), grid) + 0.5) / grid,
        y=(np.repeat(np.arange(grid), grid) + 0.5) / grid,
    )
    for o in scene.objects:
        cell = min(int(o.y * grid), grid - 1) * grid + min(int(o.x * grid), grid - 1)
        post.objectness[cell] = 1.0
        for name, values in (("shape", SHAPES), ("colour", COLOURS), ("size", SIZES)):
            getattr(post, name)[cell] = np.eye(len(values))[values.index(getattr(o, name))]
        post.x[cell], post.y[cell] = o.x, o.y
    return post


def untrained(**over) -> Recognizer:
    cfg = make_config(RecognizerConfig, **{**TINY, **over})
    return Recognizer(cfg, GridDetector(cfg.channels))


def test_scene_targets_put_each_object_in_its_cell() -> None:
    scene = Scene(
        0, (WorldObject("circle", "red", "small", 0.10, 0.90), WorldObject("square", "blue", "large", 0.55, 0.3)), 220
    )
    t = scene_targets([scene], 8)
    assert t["objectness"].sum() == 2 and t["objectness"][0, 7, 0] == 1 and t["objectness"][0, 2, 4] == 1
    assert t["shape"][0, 7, 0] == SHAPES.index("circle") and t["colour"][0, 2, 4] == COLOURS.index("blue")
    assert t["size"][0, 2, 4] == SIZES.index("large") and (t["shape"] >= 0).sum() == 2
    assert t["offset"][0, :, 7, 0].tolist() == pytest.approx([0.8, 0.2])
    clash = Scene(
        5, (WorldObject("circle", "red", "small", 0.51, 0.51), WorldObject("circle", "red", "small", 0.55, 0.55)), 220
    )
    with pytest.raises(ValueError, match="scene 5: two object centres"):
        scene_targets([clash], 8)


def test_judge_of_a_certain_reading_is_the_worlds_truth(world) -> None:
    rec = untrained()
    scenes = world.scenes()[:40]
    structures = world.structures()[::7][:30]
    rng = np.random.default_rng(0)
    edits = []
    for s, t in zip(structures, world.caption_table["text"][::7]):
        edit = propose_edit(s, t, SUBSETS[int(rng.integers(len(SUBSETS)))], rng)
        if edit is not None:
            edits.append(edit.structure)
    checked = 0
    for scene in scenes:
        post = certain_posterior(scene)
        for s in structures + edits:
            p = rec.judge_posterior(s, post)
            assert p == float(caption_fits(s, scene, 0.05)), (s, scene)
            checked += 1
    assert checked > 1000


def test_judge_is_a_probability_under_doubt() -> None:
    rec = untrained(n_samples=4000)
    post = certain_posterior(Scene(0, (), 220))
    post.objectness[10], post.objectness[40] = 0.3, 0.5
    post.shape[10] = post.shape[40] = np.eye(len(SHAPES))[0]  # circles
    post.colour[10] = post.colour[40] = np.eye(len(COLOURS))[0]  # red
    one = CaptionStructure((Mention(shape="circle"),))
    two = CaptionStructure((Mention(shape="circle", count=2),), kind="count")
    assert rec.judge_posterior(one, post) == pytest.approx(1 - 0.7 * 0.5, abs=0.03)
    assert rec.judge_posterior(two, post) == pytest.approx(0.3 * 0.5, abs=0.03)
    cell_10_above_40 = CaptionStructure((Mention(shape="circle"), Mention(colour="red")), "above", "relation")
    below = CaptionStructure((Mention(shape="circle"), Mention(colour="red")), "below", "relation")
    assert rec.judge_posterior(cell_10_above_40, post) == pytest.approx(0.15, abs=0.03)  # cell 10 is row 1, 40 row 5
    assert rec.judge_posterior(below, post) == pytest.approx(0.15, abs=0.03)
    assert rec.judge_posterior(one, post) == rec.judge_posterior(one, post)  # common random numbers


def test_read_posterior_recovers_the_scene(world) -> None:
    rec = untrained()
    scene = world.scenes()[3]
    read = rec.read_posterior(certain_posterior(scene), world.images[3])
    key = sorted((o.shape, o.colour, o.size, round(o.x, 6), round(o.y, 6)) for o in scene.objects)
    assert sorted((o.shape, o.colour, o.size, round(o.x, 6), round(o.y, 6)) for o in read.objects) == key
    assert abs(read.background - scene.background) <= 8


def test_lowres_augmentation_is_the_diffusion_pixel_path(world) -> None:
    images = np.asarray(world.images[:4])
    augmented = lowres(images_to_tensor(images, 64), 32)
    generated = images_to_tensor(to_pixels(to_model_space(images, 32), 64), 64)
    assert float((augmented - generated).abs().max()) <= 1.0 / 127.5 + 1e-6  # equal up to uint8 rounding


def test_training_is_deterministic_and_reports_val_metrics(items, tmp_path) -> None:
    cfg = make_config(RecognizerConfig, **TINY)
    a = train_recognizer(items, cfg, tmp_path / "a")
    train_recognizer(items, cfg, tmp_path / "b")
    sa = torch.load(tmp_path / "a" / MODEL_FILE, weights_only=True)["net"]
    sb = torch.load(tmp_path / "b" / MODEL_FILE, weights_only=True)["net"]
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert (tmp_path / "a" / MODEL_FILE).read_bytes() == (tmp_path / "b" / MODEL_FILE).read_bytes()
    losses = [e["loss"] for e in a["history"]["epochs"]]
    assert losses[-1] < losses[0]
    m = json.loads((tmp_path / "a" / METRICS_FILE).read_text())
    assert m == json.loads((tmp_path / "b" / METRICS_FILE).read_text())
    assert m["split"] == "val" and m["n_images"] == 16
    for k in ("detection_precision", "detection_recall", "shape_accuracy", "scene_exact", "judge_accuracy"):
        assert 0.0 <= m[k] <= 1.0
    assert set(m["judge_by_kind"]) == {"own image", "hard negative caption", "random image"}
    assert m["judge_by_kind"]["own image"]["n"] == 16 * 5
    rec = Recognizer.load(tmp_path / "a")
    probs = rec.judge_pairs(
        [CaptionStructure((Mention(shape="circle"),))] * 2,
        np.zeros((2, 64, 64, 3), np.uint8),
    )
    assert probs.shape == (2,) and ((probs >= 0) & (probs <= 1)).all() and probs[0] == probs[1]
    scene = rec.read_scene(np.zeros((64, 64, 3), np.uint8), image_id=7)
    assert scene.image_id == 7 and len(scene.objects) <= cfg.max_objects


def test_bad_inputs(tmp_path) -> None:
    with pytest.raises(ValueError, match="unknown keys"):
        make_config(RecognizerConfig, {"epoch": 3})
    with pytest.raises(ValueError, match="multiple of 8"):
        make_config(RecognizerConfig, image_size=60)
    with pytest.raises(FileNotFoundError, match="model.pt"):
        Recognizer.load(tmp_path)
    with pytest.raises(ValueError, match=r"expected \[N, H, W, 3\]"):
        untrained().posteriors(np.zeros((2, 64, 64), np.uint8))
