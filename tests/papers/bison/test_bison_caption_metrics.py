"""BISON section 6: a captioning metric as a BISON scorer, on hand-made instances and on a small world."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from unit_world import unit_world

from itmbench.cli import main
from itmbench.errors import InputError
from itmbench.io import write_parquet
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bison import build as bison_build
from itmbench.papers.bison import canonical as bison_canonical
from itmbench.papers.bison.caption_metrics import (
    NO_PREDICTION,
    PREDICTION_COLUMNS,
    caption_metric_summary,
    predictions_from_scores,
    reference_sets,
    score_caption_metric,
)
from itmbench.papers.bison.config import BisonCaptionMetricsConfig, BisonConfig
from itmbench.params import make_config
from itmbench.world.generate import generate_world, write_world

CFG = make_config(BisonCaptionMetricsConfig)
# image 1 (true image of instance 0): the query (10) and four others; image 2: five captions; image 3: two
CAPTIONS = pd.DataFrame(
    [
        (10, 1, "A red circle above a blue square."),
        (11, 1, "a red circle over a blue square"),
        (12, 1, "a blue square below a red circle"),
        (13, 1, "there is a red circle"),
        (14, 1, "a picture of a blue square"),
        (20, 2, "a red circle left of a blue square"),
        (21, 2, "a blue square and a red circle"),
        (22, 2, "a red circle"),
        (23, 2, "a picture of a square"),
        (24, 2, "a blue square left of a green triangle"),
        (30, 3, "a green triangle"),
        (31, 3, "a small green triangle above a circle"),
    ],
    columns=["caption_id", "image_id", "text"],
)


def _annotations(rows: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    """(bison_id, caption_id, true_image_id, false_image_id) rows."""
    return pd.DataFrame(rows, columns=["bison_id", "caption_id", "true_image_id", "false_image_id"])


ANN = _annotations([(0, 10, 1, 2), (1, 22, 2, 3), (2, 30, 3, 1)])


def test_references_exclude_the_query_and_draw_the_negatives_per_instance() -> None:
    refs = reference_sets(ANN, CAPTIONS, CFG)
    assert refs["query"].tolist() == ["A red circle above a blue square.", "a red circle", "a green triangle"]
    text = dict(zip(CAPTIONS["caption_id"], CAPTIONS["text"]))
    assert refs["references_true"][0] == [text[c] for c in (11, 12, 13, 14)]  # the query removed
    assert refs["references_true"][2] == [text[31]]
    # instance 0's negative image has five captions: four drawn without replacement
    drawn = refs["references_false"][0]
    assert len(drawn) == 4 and len(set(drawn)) == 4 and set(drawn) <= {text[c] for c in (20, 21, 22, 23, 24)}
    assert refs["references_false"][1] == [text[30], text[31]]  # only two: all of them
    # the draw depends on the seed and the bison_id, not on the other instances or their order
    alone = reference_sets(ANN.iloc[[0]], CAPTIONS, CFG)
    assert alone["references_false"][0] == drawn
    shuffled = reference_sets(ANN.iloc[::-1].reset_index(drop=True), CAPTIONS, CFG)
    assert shuffled["references_false"].tolist()[::-1] == refs["references_false"].tolist()
    draws = {tuple(reference_sets(ANN.iloc[[0]], CAPTIONS, make_config(BisonCaptionMetricsConfig, seed=s))
                   ["references_false"][0]) for s in range(20)}  # fmt: skip
    assert len(draws) > 1
    fewer = reference_sets(ANN, CAPTIONS, make_config(BisonCaptionMetricsConfig, negative_references=2))
    assert fewer["references_false"].map(len).tolist() == [2, 2, 2]


def test_bad_instances_are_refused_naming_the_bison_id() -> None:
    with pytest.raises(InputError, match="bison_id 7: query caption 11 belongs to image 1; expected .* image 2"):
        reference_sets(_annotations([(7, 11, 2, 1)]), CAPTIONS, CFG)
    with pytest.raises(InputError, match="bison_id 8: query caption 99 is not among"):
        reference_sets(_annotations([(8, 99, 1, 2)]), CAPTIONS, CFG)
    lonely = pd.concat([CAPTIONS, pd.DataFrame([(40, 4, "a lone caption")], columns=CAPTIONS.columns)])
    with pytest.raises(InputError, match="bison_id 9: image 4 has no reference caption"):
        reference_sets(_annotations([(9, 40, 4, 1)]), lonely, CFG)
    with pytest.raises(InputError, match="bison_id 9: image 5 has no reference caption"):
        reference_sets(_annotations([(9, 10, 1, 5)]), CAPTIONS, CFG)
    with pytest.raises(InputError, match=r"no columns \['text'\]"):
        reference_sets(ANN, CAPTIONS.drop(columns="text"), CFG)


def test_the_decision_picks_the_strictly_higher_image_and_a_tie_is_wrong() -> None:
    refs = reference_sets(ANN, CAPTIONS, CFG)
    out = predictions_from_scores(refs, np.array([0.5, 0.2, 0.3]), np.array([0.1, 0.2, 0.4]))
    assert list(out.columns) == PREDICTION_COLUMNS
    assert out["correct"].tolist() == [True, False, False]
    assert out["predicted_image_id"].tolist() == [1, NO_PREDICTION, 1]  # instance 2's false image is 1
    summary = caption_metric_summary(out, "bleu4", CFG, n_boot=50)
    lo, hi = wilson_interval(1, 3)
    cell = summary["metrics"]["bison"]
    assert cell["n"] == 3 and cell["value"] == pytest.approx(100 / 3)
    assert (cell["lo"], cell["hi"]) == pytest.approx((100 * lo, 100 * hi))
    assert summary["ties"] == 1 and summary["ties_count_as_wrong"] and summary["n_correct"] == 1


@pytest.mark.parametrize("metric", ["bleu4", "cider_d"])
def test_scores_are_pycocoevalcaps_on_the_reference_sets(metric) -> None:
    """Through the BISON path = the library called directly on the same (tokenized) reference sets."""
    out = score_caption_metric(ANN, CAPTIONS, metric, CFG)
    refs = reference_sets(ANN, CAPTIONS, CFG)
    query = ["a red circle above a blue square", "a red circle", "a green triangle"]  # PTB-tokenized by hand
    sets = list(refs["references_true"]) + list(refs["references_false"])
    gts = {i: [r.lower() for r in rs] for i, rs in enumerate(sets)}  # the references have no punctuation
    res = {i: [q] for i, q in enumerate(query + query)}
    if metric == "bleu4":
        expected = np.asarray(Bleu(4).compute_score(gts, res, verbose=0)[1][3])
    else:  # one call over all six reference sets: the IDF corpus of the evaluation
        expected = np.asarray(Cider().compute_score(gts, res)[1])
    np.testing.assert_array_equal(out["score_true"].to_numpy(), expected[:3])
    np.testing.assert_array_equal(out["score_false"].to_numpy(), expected[3:])
    assert out["correct"].tolist() == (out["score_true"] > out["score_false"]).tolist()
    assert out["n_references_true"].tolist() == [4, 4, 1]


# --- a small world, through the command ----------------------------------------------------------------


@pytest.fixture(scope="module")
def world_bison(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bisoncap")
    wcfg = unit_world(n_train=300, n_val=10, n_test=150)
    world = generate_world(wcfg)
    write_world(world, root / "items")
    tables = bison_build.build(world, make_config(BisonConfig, vector_size=32, epochs=5), world_cfg=wcfg)
    bison_canonical.write(tables, root / "bison")
    return root


def _run(root: Path, metric: str, out: Path, config: dict | None = None) -> int:
    return main(
        ["bison-caption-metric", "--metric", metric, "--bench", str(root / "bison")]
        + ["--captions", str(root / "items" / "captions.parquet"), "--config", json.dumps(config or {})]
        + ["--score", json.dumps({"n_boot": 50}), "--out", str(out / f"{metric}.parquet")]
        + ["--metrics", str(out / f"{metric}.json")]
    )


def test_the_command_writes_predictions_and_accuracy(world_bison, tmp_path) -> None:
    assert _run(world_bison, "cider_d", tmp_path) == 0
    predictions = pd.read_parquet(tmp_path / "cider_d.parquet")
    doc = json.loads((tmp_path / "cider_d.json").read_text())
    ann = bison_canonical.read(world_bison / "bison")["annotations"]
    assert len(predictions) == len(ann) == doc["metrics"]["bison"]["n"]
    assert doc["metrics"]["bison"]["value"] == pytest.approx(100 * predictions["correct"].mean())
    assert doc["caption_metric"] == "cider_d" and doc["references"]["mean_positive"] == 4.0
    assert doc["metrics"]["bison"]["value"] > 50  # the references carry signal: above chance
    # the world's captions are lower-case words: the tokenizer leaves them as they are
    captions = pd.read_parquet(world_bison / "items" / "captions.parquet")
    from itmbench.metrics.captioning import ptb_tokenize

    assert all(ptb_tokenize(t) == t for t in captions["text"])
    # same params, same bytes
    again = tmp_path / "again"
    assert _run(world_bison, "cider_d", again) == 0
    assert (again / "cider_d.parquet").read_bytes() == (tmp_path / "cider_d.parquet").read_bytes()
    assert (again / "cider_d.json").read_bytes() == (tmp_path / "cider_d.json").read_bytes()


def test_the_command_refuses_spice_and_bad_params(world_bison, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stop:  # argparse refuses it at parse time
        _run(world_bison, "spice", tmp_path)
    assert stop.value.code == 2 and "argument --metric: invalid choice: 'spice'" in capsys.readouterr().err
    assert _run(world_bison, "bleu4", tmp_path, {"negative_references": 0}) == 2
    assert "negative_references" in capsys.readouterr().err
    assert _run(world_bison, "bleu4", tmp_path, {"metrics": ["spice"]}) == 2
    assert "spice" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    bad = tmp_path / "captions.parquet"
    write_parquet(bad, pd.DataFrame({"caption_id": [1], "image_id": [1]}))
    argv = ["bison-caption-metric", "--metric", "bleu4", "--bench", str(world_bison / "bison"), "--captions"]
    argv += [str(bad), "--config", "{}", "--score", "{}", "--out", str(tmp_path / "o.parquet")]
    assert main([*argv, "--metrics", str(tmp_path / "o.json")]) == 2
    assert "text" in capsys.readouterr().err


def test_tuple_f1_scores_each_instance_on_its_reference_sets() -> None:
    """The world's SPICE analogue through the BISON path = tuple_f1 of the tokenized query on each reference set."""
    from itmbench.metrics.tuple_f1 import tuple_f1_scores

    out = score_caption_metric(ANN, CAPTIONS, "tuple_f1", CFG)
    refs = reference_sets(ANN, CAPTIONS, CFG)
    query = ["a red circle above a blue square", "a red circle", "a green triangle"]
    lower = (
        [[r.lower() for r in rs] for rs in refs["references_true"]],
        [[r.lower() for r in rs] for rs in refs["references_false"]],
    )
    np.testing.assert_array_equal(out["score_true"].to_numpy(), tuple_f1_scores(query, lower[0]))
    np.testing.assert_array_equal(out["score_false"].to_numpy(), tuple_f1_scores(query, lower[1]))
    # instance 0 by hand: its true image's four other captions hold the query's five tuples and one more,
    # (square, below, circle) of 'a blue square below a red circle': P 1, R 5/6
    assert out["score_true"].iloc[0] == pytest.approx(2 * (5 / 6) / (1 + 5 / 6))


def test_the_command_scores_tuple_f1_on_the_world_and_refuses_free_text(world_bison, tmp_path, capsys) -> None:
    assert _run(world_bison, "tuple_f1", tmp_path) == 0
    doc = json.loads((tmp_path / "tuple_f1.json").read_text())
    assert doc["caption_metric"] == "tuple_f1" and "not SPICE" in doc["scorer"]
    assert doc["metrics"]["bison"]["n"] == len(pd.read_parquet(tmp_path / "tuple_f1.parquet"))
    # COCO's captions are free text the world's grammar cannot read: refused (exit 2), nothing written
    coco = tmp_path / "coco"
    (coco / "items").mkdir(parents=True)
    captions = pd.read_parquet(world_bison / "items" / "captions.parquet")
    write_parquet(coco / "items" / "captions.parquet", captions.assign(text="A man riding a horse on a beach."))
    (coco / "bison").symlink_to(world_bison / "bison")
    out = tmp_path / "coco_out"
    assert _run(coco, "tuple_f1", out) == 2
    err = capsys.readouterr().err
    assert "is a caption of the world's grammar" in err and "source=world only" in err
    assert not out.exists() or not list(out.iterdir())
    assert _run(coco, "bleu4", out) == 0  # the pycocoevalcap metrics read any text
