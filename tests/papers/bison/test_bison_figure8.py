"""BISON Figure 8 in the world (captioning scores of correct and incorrect BISON predictions): the numbers against
a naive reference on hand-built captions and predictions, the commands writing the table and a deterministic
figure, and their refusals."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider

from itmbench.cli import main
from itmbench.errors import EXIT_INPUT, InputError
from itmbench.metrics.captioning import ptb_tokenize
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bison.captioning import (
    FIGURE8_COLUMNS,
    figure8_long,
    instance_caption_scores,
    mean_difference,
    per_image_scores,
)

# the split's captions: four images, two captions each
CAPTIONS = pd.DataFrame(
    {
        "caption_id": np.arange(8),
        "image_id": [10, 10, 11, 11, 12, 12, 13, 13],
        "split": ["test"] * 8,
        "text": [
            "a red circle left of a blue square",
            "a red circle beside a blue square",
            "a green triangle above a small circle",
            "a small green triangle over a circle",
            "two yellow squares",
            "a pair of yellow squares",
            "a blue circle",
            "one blue circle alone",
        ],
    }
)
GENERATED = pd.DataFrame(
    {
        "image_id": [10, 11, 12, 13],
        "caption": ["a red circle left of a blue square", "a green circle", "two yellow squares side by side", "a cat"],
    }
)
# the captioner's BISON predictions: positive images 10, 11, 10, 12, 13 (right, wrong, right, right, wrong)
BISON = pd.DataFrame(
    {
        "bison_id": [1, 2, 3, 4, 5],
        "true_image_id": [10, 11, 10, 12, 13],
        "correct": [True, False, True, True, False],
    }
)


def _naive_scores(metric: str) -> dict[int, float]:
    """Each image's generated caption scored by pycocoevalcap directly (x100), image -> score."""
    gts = {int(i): [ptb_tokenize(t) for t in g["text"]] for i, g in CAPTIONS.groupby("image_id")}
    res = {int(i): [ptb_tokenize(c)] for i, c in zip(GENERATED["image_id"], GENERATED["caption"])}
    scorer = Bleu(4) if metric == "bleu4" else Cider()
    _, per = scorer.compute_score(gts, res)
    per = per[3] if metric == "bleu4" else per
    return {image: 100 * float(s) for image, s in zip(sorted(res), per)}


@pytest.mark.parametrize("metric", ["bleu4", "cider_d"])
def test_each_instance_gets_the_score_of_its_positive_images_caption(metric):
    per_image = per_image_scores(GENERATED, CAPTIONS, [metric])
    got = instance_caption_scores(per_image, BISON, "scores.parquet")
    naive = _naive_scores(metric)
    assert got["bison_id"].tolist() == [1, 2, 3, 4, 5]
    assert got["correct"].tolist() == [True, False, True, True, False]
    np.testing.assert_allclose(got[metric], [naive[i] for i in BISON["true_image_id"]], atol=1e-9)
    if metric == "bleu4":
        assert got[metric].iloc[0] == pytest.approx(100.0)  # the generated caption is one of its references


def test_figure8_numbers_match_a_naive_reference():
    metrics = ["bleu4", "cider_d"]
    per_image = per_image_scores(GENERATED, CAPTIONS, metrics)
    instances = instance_caption_scores(per_image, BISON, "scores.parquet")
    long = figure8_long({"coca": instances}, metrics, {"coca": "CoCa"}, bins=4, n_boot=200, seed=0)
    assert list(long.columns) == list(FIGURE8_COLUMNS)
    for metric in metrics:
        naive = _naive_scores(metric)
        top = max(naive[i] for i in BISON["true_image_id"])
        groups = {
            "correct": [naive[i] for i, c in zip(BISON["true_image_id"], BISON["correct"]) if c],
            "incorrect": [naive[i] for i, c in zip(BISON["true_image_id"], BISON["correct"]) if not c],
        }
        for group, values in groups.items():
            part = long[(long["metric"] == metric) & (long["group"] == group)].set_index("row")
            assert part["value"]["mean"] == pytest.approx(sum(values) / len(values))
            assert part["value"]["median"] == pytest.approx(statistics.median(values))
            assert part["value"]["instances"] == len(values)
            counts = [0] * 4
            for v in values:  # four equal bins over [0, top]; the last holds top
                counts[min(int(v / (top / 4) + 1e-9), 3)] += 1
            bins = part[part["statistic"] == "bin"]
            assert bins["value"].tolist() == pytest.approx([100 * c / len(values) for c in counts])
            k = counts[0]
            lo, hi = wilson_interval(k, len(values))
            assert (bins["lo"].iloc[0], bins["hi"].iloc[0]) == pytest.approx((100 * lo, 100 * hi))
            assert bins["bin_hi"].iloc[-1] == pytest.approx(top)
        diff = long[(long["metric"] == metric) & (long["group"] == "correct - incorrect")].iloc[0]
        expected = np.mean(groups["correct"]) - np.mean(groups["incorrect"])
        assert diff["value"] == pytest.approx(expected) and diff["lo"] <= diff["value"] <= diff["hi"]
    assert set(long["column"]) >= {"CoCa: BLEU-4 correct", "CoCa: CIDEr-D incorrect"}


def test_mean_difference_resamples_within_each_group():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([10.0])
    value, lo, hi = mean_difference(a, b, n_boot=500, seed=1)
    assert value == -8.0
    assert -9.0 <= lo < hi <= -7.0  # b is one value: every resample's b mean is 10
    assert mean_difference(a, b, n_boot=500, seed=1) == (value, lo, hi)


def test_a_group_without_instances_has_only_its_count():
    per_image = per_image_scores(GENERATED, CAPTIONS, ["bleu4"])
    all_right = BISON.assign(correct=True)
    long = figure8_long({"coca": instance_caption_scores(per_image, all_right, "s")}, ["bleu4"], {}, bins=3)
    wrong = long[long["group"] == "incorrect"]
    assert wrong["statistic"].tolist() == ["n"] and wrong["value"].tolist() == [0.0]
    assert not (long["group"] == "correct - incorrect").any()


def test_bad_input_is_refused_naming_what_was_expected():
    per_image = per_image_scores(GENERATED[GENERATED["image_id"] != 13], CAPTIONS, ["bleu4"])
    with pytest.raises(InputError, match="scores.parquet: bison_id 5: no generated caption of its positive image 13"):
        instance_caption_scores(per_image, BISON, "scores.parquet")
    with pytest.raises(InputError, match="gen.parquet: an image_id appears twice"):
        per_image_scores(pd.concat([GENERATED, GENERATED]), CAPTIONS, ["bleu4"], "gen.parquet")


def test_the_commands_write_the_table_and_a_deterministic_figure(tmp_path, capsys):
    GENERATED.to_parquet(tmp_path / "gen.parquet")
    BISON.to_parquet(tmp_path / "bison.parquet")
    CAPTIONS.to_parquet(tmp_path / "captions.parquet")
    argv = ["bison-figure8-data", "--generated", f"coca={tmp_path / 'gen.parquet'}", "--captions"]
    argv += [str(tmp_path / "captions.parquet"), "--caption-metrics", '{"metrics": ["bleu4", "cider_d", "tuple_f1"]}']
    argv += ["--figure-config", '{"bins": 5}', "--score", '{"n_boot": 50}']
    rc = main([*argv, "--out-csv", str(tmp_path / "bad.csv")])  # no --scores for the captioner
    assert rc == EXIT_INPUT and "--scores" in capsys.readouterr().err and not (tmp_path / "bad.csv").exists()
    argv += ["--scores", f"coca={tmp_path / 'bison.parquet'}"]
    assert main([*argv, "--out-csv", str(tmp_path / "t/figure8.csv")]) == 0
    table = pd.read_csv(tmp_path / "t/figure8.csv")
    assert len(table[table["statistic"] == "bin"]) == 3 * 2 * 5
    md = (tmp_path / "t/figure8.md").read_text()
    assert "SPICE: not possible here" in md and "coca: BLEU-4 correct - incorrect" in md
    # the world's SPICE analogue is a panel of its own, named as such. By hand: image 10's caption is its first
    # reference (the same tuples; the second is not the grammar's): 100; image 11's 'a green circle' shares only
    # (circle) with the union of its references' 6 tuples: P 1/2, R 1/6, F1 1/4; images 12 and 13's captions
    # are not the grammar's: 0. Correct instances: images 10, 10, 12; incorrect: 11, 13
    assert "Tuple F1, the world's SPICE analogue and not SPICE" in md
    analogue = table[(table["metric"] == "tuple_f1") & (table["statistic"] == "mean")].set_index("group")["value"]
    assert analogue["correct"] == pytest.approx((100 + 100 + 0) / 3)
    assert analogue["incorrect"] == pytest.approx((25 + 0) / 2)
    outputs = []
    for out in ("f1", "f2"):
        png = tmp_path / out / "figure8.png"
        cmd = ["bison-figure", "--figure", "figure8", "--data", str(tmp_path / "t/figure8.csv"), "--out-png", str(png)]
        assert main(cmd) == 0
        assert png.read_bytes()[:4] == b"\x89PNG" and png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
        outputs.append((png.read_bytes(), png.with_suffix(".pdf").read_bytes()))
    assert outputs[0] == outputs[1]
