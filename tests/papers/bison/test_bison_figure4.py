"""BISON Figure 4 in the world (correctness and detailedness of generated captions by captioning score, the
world's truth as the raters): the ratings of hand-made captions on a hand-made scene worked out by hand, binning
and normalisation against a naive loop, the table beside the printed averages, and the commands (Figure 8's
per-caption scores reused, the table, a deterministic figure) with their refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from itmbench.cli import main
from itmbench.errors import EXIT_INPUT, InputError
from itmbench.papers.bison.human_eval import (
    FIGURE4_COLUMNS,
    MAX_DETAIL,
    bin_index,
    figure4_long,
    normalised,
    rate_captions,
    spearman,
)
from itmbench.papers.published import published_value
from itmbench.world.scene import Scene, WorldObject

MARGIN = 0.05
# a large red circle on the left, a small blue square on the right
SCENE = Scene(
    10, (WorldObject("circle", "red", "large", 0.2, 0.5), WorldObject("square", "blue", "small", 0.7, 0.5)), 230
)
# caption -> (correctness, detailedness) worked out by hand: correctness 1 + 4 x true/statements, detailedness
# 1 + 4 x units / 9 (units: per mention 1 + its attributes (+1 for a number), +1 for a relation)
WORKED = {
    # mentions true, true; relation true: 3/3. units (1+2) + (1+2) + 1 = 7
    "a red circle to the left of a blue square": (5.0, 1 + 28 / 9),
    # mentions true, true; the circle is not right of the square: 2/3. units 7
    "a red circle is on the right of a blue square": (1 + 8 / 3, 1 + 28 / 9),
    # no green triangle: 0/1. units 1 + 2 = 3
    "a green triangle": (1.0, 1 + 12 / 9),
    # one red circle, not two: 0/1. units 1 + 2 + 1 (the number) = 4
    "two red circles": (1.0, 1 + 16 / 9),
    # the large red circle is there, no small green square: 1/2. units (1+3) + (1+3) = 8
    "a large red circle and a small green square": (3.0, 1 + 32 / 9),
    # some object: 1/1. units 1
    "there is an object": (5.0, 1 + 4 / 9),
    # everything the grammar states, true: 3/3; units 9 (the most)
    "a large red circle left of a small blue square": (5.0, 5.0),
    # unreadable (cut short): 1 and 1
    "a red circle left of": (1.0, 1.0),
}


def test_the_ratings_of_hand_made_captions_match_the_worked_examples():
    assert MAX_DETAIL == 9
    generated = pd.DataFrame({"image_id": [10] * len(WORKED), "caption": list(WORKED)})
    rated = rate_captions(generated, {10: SCENE}, MARGIN, "gen.parquet")
    for (caption, (correct, detail)), row in zip(WORKED.items(), rated.itertuples()):
        assert row.correctness == pytest.approx(correct), caption
        assert row.detailedness == pytest.approx(detail), caption
    assert rated["readable"].tolist() == [True] * 7 + [False]
    assert rated["error"].iloc[-1].startswith("after word 5: expected an article")
    with pytest.raises(InputError, match="gen.parquet: image 11 has no scene"):
        rate_captions(pd.DataFrame({"image_id": [11], "caption": ["a red circle"]}), {10: SCENE}, MARGIN, "gen.parquet")


def _naive_bin(x: float, bins: int) -> int:
    edges = np.linspace(0.0, 1.0, bins + 1)
    for b in range(bins):
        if edges[b] <= x < edges[b + 1] or (b == bins - 1 and x == edges[-1]):
            return b
    raise AssertionError(x)


@pytest.mark.parametrize("bins", [2, 7, 10])
def test_binning_and_normalisation_match_a_naive_loop(bins):
    rng = np.random.default_rng(bins)
    scores = np.concatenate([rng.uniform(0, 130, 200), [0.0, 130.0]])
    x = normalised(scores)
    top = max(scores)
    assert [float(v) for v in x] == [s / top for s in scores]
    edges = np.linspace(0.0, 1.0, bins + 1)
    points = np.concatenate([x, edges])  # the edges themselves fall in the bin they open (1 in the last)
    assert bin_index(points, bins).tolist() == [_naive_bin(float(p), bins) for p in points]
    assert normalised(np.zeros(3)).tolist() == [0.0, 0.0, 0.0]


def test_spearman_matches_scipy_and_is_nan_for_a_constant_side():
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, 40).astype(float), rng.normal(size=40)
    assert spearman(x, y) == pytest.approx(scipy.stats.spearmanr(x, y).statistic)
    assert np.isnan(spearman(np.ones(5), np.arange(5.0)))


def _rated() -> dict[str, pd.DataFrame]:
    captions = list(WORKED)
    generated = pd.DataFrame({"image_id": np.arange(len(captions)) + 100, "caption": captions})
    scenes = {100 + i: SCENE for i in range(len(captions))}
    return {"coca": rate_captions(generated, scenes, MARGIN, "gen.parquet")}


SCORES = pd.DataFrame(
    {
        "model": ["coca"] * 8,
        "image_id": np.arange(8) + 100,
        "bleu4": [80.0, 40.0, 0.0, 10.0, 55.0, 20.0, 100.0, 5.0],
        "cider_d": [300.0, 150.0, 0.0, 30.0, 120.0, 60.0, 290.0, 10.0],
    }
)


def test_figure4_numbers_match_a_naive_reference():
    rated = _rated()
    published = {"correctness": 3.266, "detailedness": 2.203}
    long = figure4_long(rated, SCORES, ["bleu4", "cider_d"], {}, published, bins=4, n_boot=50)
    assert tuple(long.columns) == FIGURE4_COLUMNS
    printed = long[long["model"] == "printed"].set_index("panel")["value"]
    assert printed.to_dict() == published
    frame = rated["coca"]
    for panel in ("correctness", "detailedness"):
        average = long[(long["model"] == "coca") & (long["panel"] == panel) & (long["statistic"] == "mean")]
        assert float(average["value"].iloc[0]) == pytest.approx(frame[panel].mean())
        assert float(average["lo"].iloc[0]) <= frame[panel].mean() <= float(average["hi"].iloc[0])
        for metric in ("bleu4", "cider_d"):
            top = SCORES[metric].max()
            naive: dict[int, list[float]] = {b: [] for b in range(4)}
            for score, rating in zip(SCORES[metric], frame[panel]):
                naive[_naive_bin(score / top, 4)].append(rating)
            got = long[(long["metric"] == metric) & (long["panel"] == panel) & (long["statistic"] == "bin")]
            assert got["n"].tolist() == [len(naive[b]) for b in range(4)]
            for b, (value, n) in enumerate(zip(got["value"], got["n"])):
                assert (np.isnan(value) and n == 0) or value == pytest.approx(np.mean(naive[b]))
            rho = long[(long["metric"] == metric) & (long["panel"] == panel) & (long["statistic"] == "spearman")]
            naive_rho = scipy.stats.spearmanr(SCORES[metric], frame[panel]).statistic
            assert float(rho["value"].iloc[0]) == pytest.approx(naive_rho)
    unreadable = long[long["statistic"] == "unreadable"]
    assert unreadable["value"].tolist() == [pytest.approx(100 / 8)]
    with pytest.raises(InputError, match="no scores of coca's caption of image 107"):
        figure4_long(rated, SCORES.iloc[:7], ["bleu4"], {}, published, bins=4, n_boot=10)


def test_the_printed_averages_are_data():
    assert published_value("bison", "Figure 4", "Average", "Correctness") == 3.266
    assert published_value("bison", "Figure 4", "Average", "Detailedness") == 2.203


CAPTIONS = pd.DataFrame(
    {
        "caption_id": np.arange(4),
        "image_id": [10, 10, 11, 11],
        "split": ["test"] * 4,
        "text": ["a red circle left of a blue square", "a red circle", "a blue square", "a small blue square"],
    }
)
GENERATED = pd.DataFrame({"image_id": [10, 11], "caption": ["a red circle left of a blue square", "a green circle"]})
BISON = pd.DataFrame({"bison_id": [1, 2], "true_image_id": [10, 11], "correct": [True, False]})


def test_the_commands_write_the_table_and_a_deterministic_figure(tmp_path, capsys):
    GENERATED.to_parquet(tmp_path / "gen.parquet")
    BISON.to_parquet(tmp_path / "bison.parquet")
    CAPTIONS.to_parquet(tmp_path / "captions.parquet")
    other = Scene(11, (WorldObject("square", "blue", "small", 0.5, 0.5),), 230)
    pd.DataFrame({"image_id": [10, 11], "scene": [SCENE.to_json(), other.to_json()]}).to_parquet(tmp_path / "s.parquet")
    argv = ["bison-figure8-data", "--generated", f"coca={tmp_path / 'gen.parquet'}", "--captions"]
    argv += [str(tmp_path / "captions.parquet"), "--caption-metrics", '{"metrics": ["bleu4", "cider_d"]}']
    argv += [
        "--figure-config",
        '{"bins": 5}',
        "--score",
        '{"n_boot": 50}',
        "--scores",
        f"coca={tmp_path / 'bison.parquet'}",
    ]
    scores = tmp_path / "scores.parquet"
    assert main([*argv, "--out-csv", str(tmp_path / "t/figure8.csv"), "--out-caption-scores", str(scores)]) == 0
    assert pd.read_parquet(scores).columns.tolist() == ["model", "image_id", "bleu4", "cider_d"]
    argv = ["bison-figure4-data", "--scenes", str(tmp_path / "s.parquet"), "--caption-scores", str(scores)]
    argv += ["--world", '{"relation_margin": 0.05}', "--figure-config", '{"bins": 4}', "--score", '{"n_boot": 50}']
    rc = main([*argv, "--out-csv", str(tmp_path / "bad.csv")])  # no --generated
    assert rc == EXIT_INPUT and "--generated" in capsys.readouterr().err and not (tmp_path / "bad.csv").exists()
    argv += ["--generated", f"coca={tmp_path / 'gen.parquet'}"]
    bad = tmp_path / "bad.parquet"
    pd.DataFrame({"model": ["coca"], "image_id": [10]}).to_parquet(bad)
    rc = main([*argv[:4], str(bad), *argv[5:], "--out-csv", str(tmp_path / "bad.csv")])  # scores without a metric
    assert rc == EXIT_INPUT and "no metric column" in capsys.readouterr().err
    assert main([*argv, "--out-csv", str(tmp_path / "t/figure4.csv")]) == 0
    table = pd.read_csv(tmp_path / "t/figure4.csv")
    averages = table[(table["model"] == "coca") & (table["statistic"] == "mean")].set_index("panel")["value"]
    # image 10's caption is all true (5), image 11's green circle is not there (1); units 7 and 3 of 9
    assert averages["correctness"] == pytest.approx(3.0)
    assert averages["detailedness"] == pytest.approx(1 + 4 * (7 + 3) / 2 / 9, abs=1e-6)
    md = (tmp_path / "t/figure4.md").read_text()
    assert "SPICE: not possible here" in md and "printed (UpDown): correctness" in md and "3.266" in md
    outputs = []
    for out in ("f1", "f2"):
        png = tmp_path / out / "figure4.png"
        cmd = ["bison-figure", "--figure", "figure4", "--data", str(tmp_path / "t/figure4.csv"), "--out-png", str(png)]
        assert main(cmd) == 0
        assert png.read_bytes()[:4] == b"\x89PNG" and png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
        outputs.append((png.read_bytes(), png.with_suffix(".pdf").read_bytes()))
    assert outputs[0] == outputs[1]
