"""The world: determinism, truth of its own captions, vectorised truth against the naive one."""

from __future__ import annotations

import numpy as np
import pytest
from unit_world import unit_world

from itmbench.world.captions import CaptionStructure, Mention, caption_scene
from itmbench.world.generate import generate_world, read_world, write_world
from itmbench.world.scene import Scene, WorldObject, relation_holds, sample_scene
from itmbench.world.truth import caption_fits, truth_matrix

SMALL = unit_world(n_train=40, n_val=10, n_test=30)


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


def test_same_seed_gives_identical_world(world):
    again = generate_world(SMALL)
    assert np.array_equal(world.images, again.images)
    assert world.caption_table.equals(again.caption_table)
    assert world.scene_table.equals(again.scene_table)


def test_other_seed_gives_other_world(world):
    other = generate_world(unit_world(n_train=40, n_val=10, n_test=30, seed=1))
    assert not np.array_equal(world.images, other.images)


def test_an_image_does_not_depend_on_the_world_size(world):
    bigger = generate_world(unit_world(n_train=40, n_val=10, n_test=60))
    assert np.array_equal(world.images[:80], bigger.images[:80])


def test_splits_and_caption_counts(world):
    assert world.image_table["split"].value_counts().to_dict() == {"train": 40, "test": 30, "val": 10}
    assert (world.caption_table.groupby("image_id").size() == 5).all()
    assert world.images.shape == (80, 64, 64, 3) and world.images.dtype == np.uint8


def test_every_caption_fits_its_own_scene(world):
    scenes = world.scenes()
    for structure, image_id in zip(world.structures(), world.caption_table["image_id"]):
        assert caption_fits(structure, scenes[image_id], SMALL.relation_margin)


def test_captions_describe_part_of_the_scene_with_varied_text(world):
    texts = world.caption_table["text"]
    assert texts.nunique() > 0.8 * len(texts)
    kinds = {CaptionStructure.from_json(s).kind for s in world.caption_table["structure"]}
    assert kinds == {"single", "relation", "pair", "count"}


def test_vectorised_truth_equals_naive(world):
    scenes, structures = world.scenes(), world.structures()
    fast = truth_matrix(structures, scenes, SMALL.relation_margin)
    naive = np.array([[caption_fits(c, s, SMALL.relation_margin) for s in scenes] for c in structures])
    assert np.array_equal(fast, naive)
    # captions fit other images too (the false-negative problem), but far from all of them
    assert 1.0 < fast.sum(axis=1).mean() < 0.5 * len(scenes)


def _scene(*objs: WorldObject) -> Scene:
    return Scene(image_id=0, objects=objs, background=220)


def test_truth_semantics_by_hand():
    red_left = WorldObject("circle", "red", "small", 0.2, 0.5)
    blue_right = WorldObject("square", "blue", "large", 0.8, 0.5)
    red_2 = WorldObject("circle", "red", "large", 0.5, 0.2)
    s = _scene(red_left, blue_right)
    m = 0.05
    red_circle, blue_square = Mention("circle", "red"), Mention("square", "blue")
    assert caption_fits(CaptionStructure((red_circle,)), s, m)
    assert not caption_fits(CaptionStructure((Mention("circle", "blue"),)), s, m)
    assert caption_fits(CaptionStructure((red_circle, blue_square), "left_of", "relation"), s, m)
    assert not caption_fits(CaptionStructure((red_circle, blue_square), "right_of", "relation"), s, m)
    # a pair needs two distinct objects
    assert not caption_fits(CaptionStructure((red_circle, Mention("circle")), None, "pair"), s, m)
    assert caption_fits(CaptionStructure((red_circle, Mention("circle")), None, "pair"), _scene(red_left, red_2), m)
    # counts are exact
    two_red = CaptionStructure((Mention(None, "red", None, 2),), kind="count")
    assert caption_fits(two_red, _scene(red_left, red_2), m)
    assert not caption_fits(two_red, _scene(red_left, red_2, WorldObject("hexagon", "red", "small", 0.8, 0.8)), m)
    # the margin: objects too close in x are neither left nor right of each other
    near = WorldObject("square", "blue", "small", 0.23, 0.9)
    assert not relation_holds(red_left, near, "left_of", m) and not relation_holds(near, red_left, "left_of", m)


def test_scenes_have_no_overlap_and_respect_counts():
    rng = np.random.default_rng(0)
    for i in range(200):
        s = sample_scene(i, rng, 1, 4)
        assert 1 <= len(s.objects) <= 4
        for a in range(len(s.objects)):
            for b in range(a + 1, len(s.objects)):
                oa, ob = s.objects[a], s.objects[b]
                assert np.hypot(oa.x - ob.x, oa.y - ob.y) > 0.1


def test_caption_generation_is_deterministic():
    scene = sample_scene(0, np.random.default_rng(3), 3, 3)
    kinds = {"single": 1.0, "relation": 1.0, "pair": 1.0, "count": 1.0}
    a = caption_scene(scene, np.random.default_rng(7), 5, kinds, 0.9, 0.5, 0.05)
    b = caption_scene(scene, np.random.default_rng(7), 5, kinds, 0.9, 0.5, 0.05)
    assert [t for t, _ in a] == [t for t, _ in b]


def test_write_and_read_round_trip(tmp_path, world):
    write_world(world, tmp_path / "items")
    back = read_world(tmp_path / "items")
    assert np.array_equal(np.asarray(back.images), world.images)
    assert back.caption_table.equals(world.caption_table)


def test_missing_items_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing"):
        read_world(tmp_path)


def test_unknown_world_param_is_named():
    with pytest.raises(ValueError, match="n_tset"):
        unit_world({"n_tset": 3})
