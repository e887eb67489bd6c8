"""Hostile predictions files (issue 34): inputs that are well-formed JSON or CSV, yet would be scored into a
wrong number without a word. Each class here must be refused with one line naming the file (and the record
and id where there is one), or, for a reordering, give the very same result.

Classes: two BISON files of one name (one system would overwrite the other), a BISON triple whose two
candidates are one image, a ranked file of ids outside the gallery (shifted by 10^9), a ranked file without
half the queries that have positives, --positive-set with an association JSON (nothing to select), a ranked
list that repeats an id 300,000 places apart (refused, naming both places), GPT-4V answers whose records or
files come in another order (the same intervals), a ranked file that gives a query an empty list.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from itmbench.papers.predictions import ScoreOptions, score_predictions
from itmbench.papers.sugarcrepe.released import SUBSETS
from itmbench.sources.released import declared_records

FAST = ScoreOptions(n_boot=50)


def _write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _bison_annotations(tmp_path: Path, n: int = 6) -> Path:
    table = pd.DataFrame(
        {
            "bison_id": range(n),
            "image_id_0": [10 * i + 1 for i in range(n)],
            "image_id_1": [10 * i + 2 for i in range(n)],
            "true_image_id": [10 * i + 1 for i in range(n)],
        }
    )
    path = tmp_path / "annotations.csv"
    table.to_csv(path, index=False)
    return path


def test_two_bison_files_of_one_name_are_refused(tmp_path: Path) -> None:
    annotations = _bison_annotations(tmp_path)
    good = _write(tmp_path / "a" / "model.json", [{"bison_id": i, "predicted_image_id": 10 * i + 1} for i in range(6)])
    bad = _write(tmp_path / "b" / "model.json", [{"bison_id": i, "predicted_image_id": 10 * i + 2} for i in range(6)])
    with pytest.raises(ValueError, match=r"a second prediction file named 'model' \(first: .*a/model\.json\)") as err:
        score_predictions("bison", [good, bad], annotations=annotations, options=FAST)
    assert str(bad) in str(err.value)


def test_bison_triple_with_one_image_twice_is_refused(tmp_path: Path) -> None:
    annotations = _bison_annotations(tmp_path)
    table = pd.read_csv(annotations)
    table.loc[3, "image_id_1"] = table.loc[3, "image_id_0"]
    table.to_csv(annotations, index=False)
    predictions = _write(tmp_path / "m.json", [{"bison_id": i, "predicted_image_id": 10 * i + 1} for i in range(6)])
    with pytest.raises(ValueError, match=r"annotations\.csv: row 3 \(bison_id 3\) image_id_1: expected an image other"):
        score_predictions("bison", [predictions], annotations=annotations, options=FAST)


def _ranked_case(tmp_path: Path) -> tuple[dict[str, list[int]], Path]:
    positives = {str(q): [100 + q, 200 + q] for q in range(10)}
    rankings = {str(q): [100 + q, 200 + q, 100 + (q + 1) % 10] for q in range(10)}
    return rankings, _write(tmp_path / "gt_i2t.json", positives)


def test_ranked_ids_outside_the_gallery_are_refused(tmp_path: Path) -> None:
    rankings, positives = _ranked_case(tmp_path)
    shifted = _write(tmp_path / "m_i2t.json", {q: [g + 10**9 for g in ids] for q, ids in rankings.items()})
    with pytest.raises(
        ValueError, match=r"m_i2t\.json: key '0'\[0\]: expected a caption id of the gallery .* 1000000100"
    ):
        score_predictions("ranked", [shifted], positives=[positives], options=FAST)
    rankings["7"][2] = 999  # one stray id among good ones
    stray = _write(tmp_path / "one_i2t.json", rankings)
    with pytest.raises(
        ValueError, match=r"one_i2t\.json: key '7'\[2\]: .*1 ranked ids of this file are outside it.* 999"
    ):
        score_predictions("ranked", [stray], positives=[positives], options=FAST)


def test_ranked_file_without_half_the_queries_is_refused(tmp_path: Path) -> None:
    rankings, positives = _ranked_case(tmp_path)
    half = _write(tmp_path / "half_i2t.json", {q: ids for q, ids in rankings.items() if int(q) < 5})
    with pytest.raises(ValueError, match=r"half_i2t\.json: 5 of 10 queries with positives have no prediction"):
        score_predictions("ranked", [half], positives=[positives], options=FAST)
    partial = score_predictions(
        "ranked", [half], positives=[positives], options=ScoreOptions(n_boot=50, allow_missing=True)
    )
    assert partial["systems"]["predictions"]["n_missing"] == {"i2t": 5}


def test_positive_set_with_an_association_json_is_refused(tmp_path: Path) -> None:
    rankings, positives = _ranked_case(tmp_path)
    ranked = _write(tmp_path / "m_i2t.json", rankings)
    with pytest.raises(ValueError, match=r"gt_i2t\.json: --positive-set 'nosuch' selects rows of a positives table"):
        score_predictions("ranked", [ranked], positives=[positives], positive_set="nosuch", options=FAST)


def test_a_long_list_repeating_an_id_is_refused_naming_both_places(tmp_path: Path) -> None:
    n = 300_000
    positives = _write(tmp_path / "gt_i2t.json", {"1": [0]})
    ids = list(range(n))
    ids[-1] = 5
    ranked = _write(tmp_path / "long_i2t.json", {"1": ids})
    with pytest.raises(ValueError, match=rf"long_i2t\.json: key '1'\[{n - 1}\]: .*id 5 is ranked twice, also at \[5\]"):
        score_predictions("ranked", [ranked], positives=[positives], options=FAST)


def test_a_long_list_is_cut_at_the_depth_the_metrics_read(tmp_path: Path) -> None:
    # one query ranks the whole gallery, the others three ids: the metrics equal those of the lists cut at 10
    gallery = list(range(1000, 1400))
    positives = _write(tmp_path / "gt_i2t.json", {str(q): [1000 + q] for q in range(400)})
    full = {str(q): [1000 + (q + 1) % 400, 1000 + q, 1000 + (q + 2) % 400] for q in range(400)}
    full["0"] = [g for g in gallery if g != 1000][:50] + [1000] + [g for g in gallery if g != 1000][50:]
    cut = dict(full, **{"0": full["0"][:10]})
    a = score_predictions("ranked", [_write(tmp_path / "full_i2t.json", full)], positives=[positives], options=FAST)
    b = score_predictions("ranked", [_write(tmp_path / "cut_i2t.json", cut)], positives=[positives], options=FAST)
    assert a["systems"]["predictions"]["metrics"] == b["systems"]["predictions"]["metrics"]


def _answers(n: int, subset: str, order: str) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for i in range(n):
        caption, negative = f"a cat {subset} {i}", f"a dog {subset} {i}"
        pick = caption if (i * 7 + len(subset) + len(order)) % 9 else negative
        doc[str(i)] = {
            "filename": f"{i + 1:012d}.jpg",
            "caption": caption,
            "negative_caption": negative,
            "answer": {"free_form_answer": "(1)", "multiple_choice_answer": pick},
            "correct": pick == caption,
        }
    return doc


def test_gpt4v_answers_in_another_order_give_the_same_intervals(tmp_path: Path) -> None:
    forward, backward = tmp_path / "forward", tmp_path / "backward"
    for order in ("positive-first", "negative-first"):
        for subset in SUBSETS:
            n = declared_records("sugarcrepe:read_gpt4v_answers", subset=subset)[0]
            doc = _answers(n, subset, order)
            _write(forward / order / f"gpt4v-{subset}.json", doc)
            _write(backward / order / f"gpt4v-{subset}.json", dict(reversed(list(doc.items()))))
    files_forward = sorted(forward.glob("*/*.json"))
    files_backward = sorted(backward.glob("*/*.json"), reverse=True)  # the files in another order too
    a = score_predictions("sugarcrepe_gpt4v", files_forward, options=FAST)["systems"]["GPT-4V"]
    b = score_predictions("sugarcrepe_gpt4v", files_backward, options=FAST)["systems"]["GPT-4V"]
    for key in ("metrics", "by_subset", "sugarcrepe"):
        assert a[key] == b[key], key
