"""The world's calibration to COCO: each statistic against a naive recount on a tiny example."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.world import calibration as cal
from itmbench.world.generate import generate_world
from itmbench.world.truth import caption_fits

SMALL = unit_world(n_train=20, n_val=5, n_test=40)
ECCV = "raw.githubusercontent.com/naver-ai/eccv-caption/main/eccv_caption/data"


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


def test_caption_length_and_vocabulary_against_a_recount():
    texts = ["A red circle.", "two  blue squares , left", "a red square"]
    lengths = cal.caption_lengths(texts)
    assert lengths.tolist() == [3.0, 4.0, 3.0]
    words = {"a", "red", "circle", "two", "blue", "squares", "left", "square"}
    assert cal.vocabulary_size(texts) == len(words)


def test_quantile_is_the_lower_order_statistic_with_an_interval_around_it():
    x = np.arange(1.0, 101.0)
    est = cal.quantile_estimate(x[::-1], 0.5)
    assert est.value == 50.0
    assert est.lo < 50 < est.hi
    assert cal.quantile_estimate(x, 0.1).value == 10.0
    assert cal.quantile_estimate([7.0], 0.9).value == 7.0


def test_share_and_mean_intervals():
    est = cal.share_estimate(5, 10)
    assert est.value == 50.0
    assert est.lo == pytest.approx(23.659, abs=1e-3) and est.hi == pytest.approx(76.341, abs=1e-3)  # Wilson
    m = cal.mean_estimate([1.0, 2.0, 3.0])
    assert m.value == 2.0 and m.hi - m.value == pytest.approx(1.959964 / math.sqrt(3), rel=1e-6)


def test_per_query_share_counts_queries_without_positives_as_zero():
    # 3 queries over a gallery of 10: 2, 0 and 1 positives
    est = cal.per_query_share(np.array([0, 0, 2]), 3, 10)
    assert est.value == pytest.approx(100 * (2 + 0 + 1) / 3 / 10)


def test_share_fitting_another_leaves_out_the_own_image():
    positives = {1: {10}, 2: {20, 21}, 3: {31}}
    own = {1: 10, 2: 20, 3: 30}  # caption 3's only positive is another image
    assert cal.share_fitting_another(positives, own).value == pytest.approx(100 * 2 / 3)


def test_rating_and_answer_position_rows_against_a_recount():
    rows = cal.rating_rows(np.array([0.0, 1.9, 2.0, 3.0, 5.0]))
    assert rows["mean rating"].value == pytest.approx(2.38)
    assert rows["ratings < 2, %"].value == pytest.approx(40.0)
    assert rows["ratings >= 3, %"].value == pytest.approx(40.0)
    shares = cal.answer_position_shares(np.array([0, 4, 4, 2]))
    assert [shares[j].value for j in range(5)] == [25.0, 0.0, 25.0, 0.0, 50.0]


def test_world_ambiguity_against_the_naive_truth(world):
    stats = cal.world_statistics(world, SMALL.relation_margin, SMALL.max_objects, {})
    scenes, structures = world.scenes(), world.structures()
    caps = world.caption_table
    test_images = world.image_table.loc[world.image_table["split"] == "test", "image_id"].tolist()
    test_caps = caps.index[caps["split"] == "test"].tolist()
    fits = np.array(
        [[caption_fits(structures[c], scenes[i], SMALL.relation_margin) for i in test_images] for c in test_caps]
    )
    assert stats["true images per caption, % of gallery"].value == pytest.approx(100 * fits.sum(1).mean() / 40)
    assert stats["true captions per image, % of gallery"].value == pytest.approx(
        100 * fits.sum(0).mean() / len(test_caps)
    )
    another = [
        any(f and i != caps.loc[c, "image_id"] for i, f in zip(test_images, row)) for c, row in zip(test_caps, fits)
    ]
    assert stats["captions that fit another image, %"].value == pytest.approx(100 * np.mean(another))
    assert stats["captions per image"].value == SMALL.captions_per_image
    lengths = [len(t.replace(",", " ").split()) for t in caps["text"]]
    assert stats["caption length, mean (words)"].value == pytest.approx(np.mean(lengths))


def test_world_benchmark_rows_from_their_tables(world):
    cxc = {t: pd.DataFrame({"agg_score": [1.0, 3.0, 4.0, 4.0]}) for t in ("sts", "sis", "sits")}
    mcic = {"examples": pd.DataFrame({"image_id": [1, 1, 2], "answer_index": [0, 1, 1]})}
    bison = {"stages": pd.DataFrame({"count": [10, 8, 6]})}
    stats = cal.world_statistics(
        world, SMALL.relation_margin, SMALL.max_objects, {"cxc": cxc, "mcic": mcic, "bison": bison}
    )
    assert stats["CxC SIS: ratings >= 3, %"].value == 75.0
    assert stats["MCIC instances per image"].value == 1.5
    assert stats["MCIC answer at position 1, %"].value == pytest.approx(200 / 3)
    assert stats["BISON query triples, % of image pairs"].value == 80.0
    assert stats["BISON verified triples, % of image pairs"].value == 60.0


def test_without_released_files_the_printed_values_with_their_citations(tmp_path):
    coco = cal.coco_statistics(tmp_path)
    assert coco["true images per caption, % of gallery"].value == pytest.approx(0.17)
    assert "ECCV Caption Section 1" in coco["true images per caption, % of gallery"].source
    assert "caption length, mean (words)" not in coco  # no paper prints it
    table = cal.calibration_table({"captions per image": cal.Estimate(5.0)}, coco)
    status = table[table["column"] == "status"].set_index("row")["note"]
    assert status["captions per image"] == "within"
    assert status["caption length, mean (words)"] == cal.ABSENT
    assert status["true images per caption, % of gallery"] == "no world value"


def test_status_within_and_outside_the_tolerance():
    coco = {"true images per caption, % of gallery": cal.Coco(0.2, "x"), "captions per image": cal.Coco(5.0, "y")}
    world = {"true images per caption, % of gallery": cal.Estimate(0.41), "captions per image": cal.Estimate(5.0)}
    table = cal.calibration_table(world, coco)
    status = table[table["column"] == "status"].set_index("row")["note"]
    assert status["true images per caption, % of gallery"] == "outside"  # 0.41 > 0.2 x 2
    assert status["captions per image"] == "within"
    world["true images per caption, % of gallery"] = cal.Estimate(0.39)
    status = cal.calibration_table(world, coco).query("column == 'status'").set_index("row")["note"]
    assert status["true images per caption, % of gallery"] == "within"


def test_coco_values_from_the_released_files_against_a_recount(mirror_dir: Path):
    coco = cal.coco_statistics(mirror_dir)
    eccv = mirror_dir / ECCV
    c2i = json.loads((eccv / "eccv_caption_to_image.json").read_text())
    i2c = json.loads((eccv / "eccv_image_to_caption.json").read_text())
    own = json.loads((eccv / "original_caption_to_image.json").read_text())
    per_caption = np.mean([len(v) for v in c2i.values()]) / 5000 * 100
    per_image = np.mean([len(v) for v in i2c.values()]) / 25000 * 100
    assert coco["true images per caption, % of gallery"].value == pytest.approx(per_caption)
    assert coco["true captions per image, % of gallery"].value == pytest.approx(per_image)
    another = np.mean([bool(set(v) - set(own[c])) for c, v in c2i.items()]) * 100
    assert coco["captions that fit another image, %"].value == pytest.approx(another)
    assert coco["captions per image"].value == 5.0
