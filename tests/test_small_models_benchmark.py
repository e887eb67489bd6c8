"""benchmarks/small_models.py's judge lines: the recognizer's ceiling on true pairs and its false-fit rate on
mismatched pairs, against a naive recount with a stand-in recognizer on a small world."""

from __future__ import annotations

import numpy as np
from benchmark_scripts import load_benchmark
from unit_world import unit_world

from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import WorldConfig, generate_world
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits


class Always:
    """A recognizer that reads every pair as fitting (P = 0.9)."""

    def judge_pairs(self, structures, images):
        assert len(structures) == len(images)
        return np.full(len(structures), 0.9)


def test_the_ceiling_counts_true_pairs_and_mismatched_pairs_that_do_not_fit_by_truth(monkeypatch):
    script = load_benchmark("small_models")
    # the benchmark judges truth at params.yaml's margin (the margin a run's world is made with)
    margin = make_config(WorldConfig).relation_margin
    world = generate_world(unit_world(n_train=4, n_val=6, n_test=2, relation_margin=margin))
    val = world.caption_table[world.caption_table["split"] == "val"].sort_values("caption_id").iloc[:12]
    structures = [CaptionStructure.from_json(s) for s in val["structure"]]
    got = script.recognizer_ceiling(world, val, structures, Always())
    assert got["pairs"] == got["fitting"] == len(val)
    # naive: each caption against the image that follows its own among the images in order (cyclically)
    ids = val["image_id"].tolist()
    order = sorted(set(ids), key=ids.index)
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    misfits = sum(
        not caption_fits(s, scenes[order[(order.index(i) + 1) % len(order)]], margin) for s, i in zip(structures, ids)
    )
    assert 0 < got["mismatched"] == misfits
    assert got["mismatched_fitting"] == misfits  # the stand-in passes every one of them
