"""Scoring predictions made elsewhere: each released format on small files written here (well formed and
malformed: the error names the file and the record), on the mirror's released files, and the CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.cli import main as cli_main
from itmbench.cli.predictions import add_arguments, run
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bivlc.released import RESULT_COLUMNS
from itmbench.papers.predictions import ScoreOptions, bootstrap_mean_interval, score_predictions
from itmbench.papers.sugarcrepe.released import SUBSETS
from itmbench.sources.released import declared_records

FAST = ScoreOptions(n_boot=200)
PARTIAL = ScoreOptions(n_boot=200, allow_missing=True)  # small files: a few instances of each benchmark


def main(argv: list[str]) -> int:
    """`itmbench score-predictions ARGV...`."""
    return cli_main(["score-predictions", *argv])


def _write_json(path: Path, obj: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


# --- BISON ------------------------------------------------------------------------------------------


def _bison_annotations(path: Path, n: int = 4) -> Path:
    data = [
        {
            "bison_id": i,
            "caption_id": 100 + i,
            "image_candidates": [
                {"image_id": 10 * i + 1, "image_filename": f"COCO_val2014_{10 * i + 1:012d}.jpg"},
                {"image_id": 10 * i + 2, "image_filename": f"COCO_val2014_{10 * i + 2:012d}.jpg"},
            ],
            "true_image_id": 10 * i + 1 + (i % 2),
        }
        for i in range(n)
    ]
    return _write_json(path, {"info": {}, "data": data})


def test_bison_accuracy_of_a_prediction_file(tmp_path: Path) -> None:
    ann = _bison_annotations(tmp_path / "ann.json")
    preds = _write_json(tmp_path / "model.json", [{"bison_id": i, "predicted_image_id": 10 * i + 1} for i in range(4)])
    result = score_predictions("bison", [preds], annotations=ann, options=FAST)
    metric = result["systems"]["model"]["metrics"]["bison"]
    assert metric["value"] == 50.0 and metric["n"] == 4 and metric["n_correct"] == 2
    assert (metric["lo"], metric["hi"]) == pytest.approx(tuple(100 * x for x in wilson_interval(2, 4)))
    json.dumps(result)  # JSON-able


def test_bison_annotations_may_be_a_canonical_table(tmp_path: Path) -> None:
    table = pd.DataFrame({"bison_id": [7, 8], "image_id_0": [1, 3], "image_id_1": [2, 4], "true_image_id": [2, 3]})
    table.to_parquet(tmp_path / "annotations.parquet")
    preds = _write_json(
        tmp_path / "p.json", [{"bison_id": 7, "predicted_image_id": 2}, {"bison_id": 8, "predicted_image_id": 3}]
    )
    result = score_predictions("bison", preds, annotations=tmp_path / "annotations.parquet", options=FAST)
    assert result["systems"]["p"]["metrics"]["bison"]["value"] == 100.0


@pytest.mark.parametrize(
    ("records", "where", "expected"),
    [
        (
            [{"bison_id": 0, "predicted_image_id": 1}, {"bison_id": 99, "predicted_image_id": 1}],
            r"\[1\]\.bison_id",
            "a bison_id of the annotations",
        ),
        (
            [{"bison_id": 0, "predicted_image_id": 1}, {"bison_id": 1, "predicted_image_id": 5}],
            r"\[1\]\.predicted_image_id",
            "one of the candidates 11, 12",
        ),
        (
            [{"bison_id": 0, "predicted_image_id": 1}, {"bison_id": 0, "predicted_image_id": 2}],
            r"\[1\]\.bison_id",
            "one prediction per bison_id",
        ),
        (
            [{"bison_id": 0, "predicted_image_id": 1}, {"bison_id": 1}],
            r"\[1\]\.predicted_image_id",
            "key 'predicted_image_id'",
        ),
        ([{"bison_id": 0, "predicted_image_id": 1}], "1 of 2 annotated triples", "have no prediction (first: 1)"),
        ([], "no items", "expected at least one"),
    ],
)
def test_bison_malformed_predictions_name_file_and_record(
    tmp_path: Path, records: list, where: str, expected: str
) -> None:
    ann = _bison_annotations(tmp_path / "ann.json", n=2)
    preds = _write_json(tmp_path / "bad_preds.json", records)
    with pytest.raises(ValueError, match=where) as err:
        score_predictions("bison", preds, annotations=ann, options=FAST)
    assert str(preds) in str(err.value) and expected in str(err.value)


def test_bison_missing_predictions_may_count_as_wrong(tmp_path: Path) -> None:
    ann = _bison_annotations(tmp_path / "ann.json", n=4)
    preds = _write_json(tmp_path / "partial.json", [{"bison_id": 0, "predicted_image_id": 1}])
    options = ScoreOptions(n_boot=50, paper={"bison_missing": "wrong"})
    result = score_predictions("bison", preds, annotations=ann, options=options)
    system = result["systems"]["partial"]
    assert system["metrics"]["bison"]["value"] == 25.0 and system["n_missing"] == 3
    assert result["options"]["bison_missing"] == "wrong"  # recorded beside the shared options, as declared
    with pytest.raises(ValueError, match=r"bison_missing must be one of \['error', 'wrong'\], got 'skip'"):
        ScoreOptions(paper={"bison_missing": "skip"})
    with pytest.raises(ValueError, match="no paper declares the prediction option 'bison_mising'"):
        ScoreOptions(paper={"bison_mising": "wrong"})
    assert ScoreOptions().paper == {"bison_missing": "error"}  # the registry's declared default


def test_bison_missing_predictions_may_be_left_out(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ann = _bison_annotations(tmp_path / "ann.json", n=4)
    preds = _write_json(tmp_path / "partial.json", [{"bison_id": 0, "predicted_image_id": 1}])
    with pytest.raises(
        ValueError, match=r"partial\.json: 3 of 4 annotated triples .* have no prediction \(first: 1, 2, 3\)"
    ):
        score_predictions("bison", preds, annotations=ann, options=FAST)
    system = score_predictions("bison", preds, annotations=ann, options=PARTIAL)["systems"]["partial"]
    assert system["metrics"]["bison"]["value"] == 100.0 and system["metrics"]["bison"]["n"] == 1
    assert system["n_missing"] == 3 and "scored without them (--allow-missing)" in caplog.text


def test_bison_needs_annotations(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="need the annotations"):
        score_predictions("bison", tmp_path / "p.json")


def test_bison_released_fake_predictions_against_a_synthetic_annotation(mirror_dir: Path, tmp_path: Path) -> None:
    from itmbench.sources.released import resolve

    fake = resolve("bison_fake_predictions", mirror_dir, must_exist=True)
    records = json.loads(fake.read_text(encoding="utf-8"))
    # every third triple's true image is the one predicted; the other candidate is a made-up id
    data = []
    for r in records:
        other = 10_000_000 + r["bison_id"]
        true = r["predicted_image_id"] if r["bison_id"] % 3 == 0 else other
        data.append(
            {
                "bison_id": r["bison_id"],
                "caption_id": r["bison_id"],
                "image_candidates": [
                    {"image_id": r["predicted_image_id"], "image_filename": "a.jpg"},
                    {"image_id": other, "image_filename": "b.jpg"},
                ],
                "true_image_id": true,
            }
        )
    ann = _write_json(tmp_path / "synthetic_annotations.json", {"data": data})
    metric = score_predictions("bison", fake, annotations=ann, options=FAST)["systems"][fake.stem]["metrics"]["bison"]
    assert metric["n"] == 54_253
    assert metric["n_correct"] == len(range(0, 54_253, 3)) == 18_085


# --- ranked lists -----------------------------------------------------------------------------------


def _ranked_fixture(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    # i2t: image 1 has 8 positive captions 11..18 (the ECCV worked example), image 2 one positive 21
    i2t = {"1": [21, 11, 12, 13, 14, 15, 16, 17, 18], "2": [21, 11, 12], "3": [11]}
    t2i = {"11": [1, 2], "21": [1, 2]}
    pos_i2t = {"1": list(range(11, 19)), "2": [21]}
    pos_t2i = {"11": [1], "21": [2]}
    return (
        _write_json(tmp_path / "model_i2t.json", i2t),
        _write_json(tmp_path / "model_t2i.json", t2i),
        _write_json(tmp_path / "gt_image_to_caption.json", pos_i2t),
        _write_json(tmp_path / "gt_caption_to_image.json", pos_t2i),
    )


def test_ranked_lists_give_recall_r_precision_and_map_at_r(tmp_path: Path) -> None:
    i2t, t2i, pi, pt = _ranked_fixture(tmp_path)
    result = score_predictions("ranked", [i2t, t2i], positives=[pi, pt], label="m", options=FAST)
    system = result["systems"]["m"]
    assert system["queries"] == {"i2t": 2, "t2i": 2}  # image 3 has no positive: not scored
    m = system["metrics"]
    assert m["i2t/R@1"]["value"] == 50.0 and m["i2t/R@5"]["value"] == 100.0
    # image 1: only top-1 wrong, R = 8 -> mAP@R 66.0 (ECCV's example), R-P 7/8; image 2: both 1
    assert m["i2t/mAP@R"]["value"] == pytest.approx(
        100 * (np.mean([(1 / 2 + 2 / 3 + 3 / 4 + 4 / 5 + 5 / 6 + 6 / 7 + 7 / 8) / 8, 1.0]))
    )
    assert m["i2t/R-P"]["value"] == pytest.approx(100 * (7 / 8 + 1) / 2)
    assert m["t2i/R@1"]["value"] == 50.0  # caption 21's positive image 2 is ranked second
    assert m["mean/R@1"]["value"] == 50.0
    assert m["mean/mAP@R"]["value"] == pytest.approx((m["i2t/mAP@R"]["value"] + m["t2i/mAP@R"]["value"]) / 2)
    for entry in m.values():
        assert entry["lo"] <= entry["value"] <= entry["hi"]


def test_ranked_positives_from_a_table_with_a_selected_set(tmp_path: Path) -> None:
    i2t, t2i, _, _ = _ranked_fixture(tmp_path)
    table = pd.DataFrame(
        {
            "source": ["eccv", "eccv", "original", "original", *["other"] * 6],
            "direction": ["image_to_caption", "caption_to_image", "image_to_caption", "caption_to_image"]
            + ["image_to_caption"] * 6,
            "image_id": [1, 1, 2, 1, *[2] * 6],
            "caption_id": [21, 11, 12, 21, *range(13, 19)],  # the last rows: the rest of the gallery, in no set used
        }
    )
    table.to_parquet(tmp_path / "positives.parquet")
    eccv = score_predictions(
        "ranked", [i2t, t2i], positives=[tmp_path / "positives.parquet"], positive_set="eccv", options=FAST
    )
    m = eccv["systems"]["predictions"]["metrics"]
    assert eccv["systems"]["predictions"]["queries"] == {"i2t": 1, "t2i": 1}
    assert m["i2t/R@1"]["value"] == 100.0 and m["t2i/R@1"]["value"] == 100.0
    original = score_predictions(
        "ranked", [i2t, t2i], positives=[tmp_path / "positives.parquet"], positive_set="original", options=FAST
    )
    m = original["systems"]["predictions"]["metrics"]
    assert m["i2t/R@1"]["value"] == 0.0 and m["i2t/R@5"]["value"] == 100.0 and m["t2i/R@1"]["value"] == 100.0
    with pytest.raises(ValueError, match="positive set 'cxc'"):
        score_predictions("ranked", [i2t], positives=[tmp_path / "positives.parquet"], positive_set="cxc", options=FAST)


def test_ranked_positives_from_a_cxc_table_of_one_split(tmp_path: Path) -> None:
    table = pd.DataFrame(
        {
            "split": ["test", "test", "test", "val"],
            "task": ["sits", "original", "sts", "original"],
            "a_id": [11, 12, 11, 50],  # a = caption (sits, original), b = image
            "b_id": [1, 1, 13, 5],
        }
    )
    table.to_csv(tmp_path / "cxc_positives.csv", index=False)
    i2t = _write_json(tmp_path / "m_i2t.json", {"1": [12, 11, 50]})
    result = score_predictions(
        "ranked", [i2t], positives=[tmp_path / "cxc_positives.csv"], positive_set="split=test", options=FAST
    )
    system = result["systems"]["predictions"]
    assert system["queries"] == {"i2t": 1} and system["metrics"]["i2t/R-P"]["value"] == 100.0
    with pytest.raises(ValueError, match=r"1 of 2 queries with positives have no prediction \(first: 5\)"):
        score_predictions("ranked", [i2t], positives=[tmp_path / "cxc_positives.csv"], options=FAST)


def test_ranked_short_rankings_are_an_error_unless_lenient(tmp_path: Path) -> None:
    i2t = _write_json(tmp_path / "short_i2t.json", {"1": [11, 12]})
    pos = _write_json(tmp_path / "pos_image_to_caption.json", {"1": list(range(11, 19))})
    with pytest.raises(ValueError, match=r"short_i2t\.json: key '1': expected at least R = 8 ranked ids"):
        score_predictions("ranked", [i2t], positives=[pos], options=FAST)
    lenient = score_predictions("ranked", [i2t], positives=[pos], options=ScoreOptions(n_boot=50, strict=False))
    assert lenient["systems"]["predictions"]["metrics"]["i2t/R-P"]["value"] == pytest.approx(100 * 2 / 8)


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ({"1": [11, 11, 12]}, r"key '1'\[1\]: expected distinct gallery ids \(id 11 is ranked twice, also at \[0\]\)"),
        ({"1": [11, "x"]}, r"key '1'\[1\]: expected an integer gallery id"),
        ({"one": [11]}, r"key 'one': expected a query id"),
        ({"1": 11}, r"key '1': expected a list of ranked gallery ids"),
        ([[11]], r"top level: expected an object"),
        ({"2": [11]}, r"1 of 1 queries with positives have no prediction \(first: 1\); pass --allow-missing"),
        ({"1": [11], "01": [12]}, r"key '01': duplicate of key '1'; expected one ranking per query id"),
        ({"1": [11, 2**64]}, r"key '1'\[1\]: expected an integer gallery id in \[0, 2\*\*63 - 1\]"),
        ({}, r"no keys; expected at least one"),
    ],
)
def test_ranked_malformed_rankings_name_file_and_record(tmp_path: Path, content: object, where: str) -> None:
    bad = _write_json(tmp_path / "bad_i2t.json", content)
    pos = _write_json(tmp_path / "pos_image_to_caption.json", {"1": [11]})
    with pytest.raises(ValueError, match=where) as err:
        score_predictions("ranked", [bad], positives=[pos], options=FAST)
    assert str(bad) in str(err.value)


def test_ranked_direction_must_be_known(tmp_path: Path) -> None:
    ranking = _write_json(tmp_path / "rankings.json", {"1": [11]})
    pos = _write_json(tmp_path / "pos_image_to_caption.json", {"1": [11]})
    with pytest.raises(ValueError, match="cannot tell the direction"):
        score_predictions("ranked", [ranking], positives=[pos], options=FAST)
    result = score_predictions("ranked", [f"i2t={ranking}"], positives=[pos], options=FAST)
    assert result["systems"]["predictions"]["metrics"]["i2t/R@1"]["value"] == 100.0


def test_ranked_oracle_on_the_released_eccv_positives(mirror_dir: Path, tmp_path: Path) -> None:
    from itmbench.sources.released import resolve

    pi = resolve("eccv_eccv_image_to_caption", mirror_dir, must_exist=True)
    pt = resolve("eccv_eccv_caption_to_image", mirror_dir, must_exist=True)
    docs = {name: json.loads(path.read_text(encoding="utf-8")) for name, path in (("i2t", pi), ("t2i", pt))}
    gallery = {  # the ids of the other modality the positives name
        "i2t": sorted({int(c) for ids in docs["i2t"].values() for c in ids} | set(map(int, docs["t2i"]))),
        "t2i": sorted({int(i) for ids in docs["t2i"].values() for i in ids} | set(map(int, docs["i2t"]))),
    }
    rankings = {}
    for name, positives in docs.items():
        # positives first, then a non-positive of the gallery: the oracle
        rankings[name] = _write_json(
            tmp_path / f"oracle_{name}.json",
            {q: [*ids, next(g for g in gallery[name] if g not in set(ids))] for q, ids in positives.items()},
        )
    result = score_predictions("ranked", [rankings["i2t"], rankings["t2i"]], positives=[pi, pt], options=FAST)
    system = result["systems"]["predictions"]
    assert system["queries"] == {"i2t": 1261, "t2i": 1332}
    for name in ("R@1", "R@5", "R@10", "R-P", "mAP@R"):
        assert system["metrics"][f"mean/{name}"]["value"] == pytest.approx(100.0)


def test_bootstrap_mean_interval_is_seeded_and_covers_the_mean() -> None:
    values = np.arange(100) % 2
    a = bootstrap_mean_interval([values], n_boot=300, seed=1)
    assert a == bootstrap_mean_interval([values], n_boot=300, seed=1)
    assert a[0] < 0.5 < a[1] and a[1] - a[0] < 0.3


# --- BiVLC per-instance CSVs ------------------------------------------------------------------------


def _bivlc_csv(path: Path, rows: list[tuple[bool, bool, bool, bool]], kinds: list[str]) -> Path:
    lines = [",".join(f'"{c}"' for c in RESULT_COLUMNS)]
    for n, ((i0, i1, c0, c1), kind) in enumerate(zip(rows, kinds)):
        flags = [i0, i1, c0, c1, i0 and i1, c0 and c1, i0 and i1 and c0 and c1]
        subtype = "obj"
        lines.append(
            ",".join(
                [
                    '"<img>"',
                    f'"a cat {n}"',
                    '"a dog"',
                    '"<img>"',
                    f'"{kind}"',
                    f'"{subtype}"',
                    *(f'"{f}"' for f in flags),
                ]
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bivlc_results_and_sugarcrepe_files_form_one_system(tmp_path: Path) -> None:
    rows = [
        (True, True, True, True),
        (True, True, False, True),
        (True, False, True, True),
        (False, False, False, False),
    ]
    results = _bivlc_csv(tmp_path / "BiVLC_mine.csv", rows, ["add", "swap", "replace", "add"])
    correct = tmp_path / "SUGARCREPE_CORRECT_mine.csv"
    correct.write_text(
        '"filename","caption","negative_caption","type","subtype","correct"\n'
        '"000000000001.jpg","a cat","a dog","add","obj","1"\n"000000000002.jpg","a cat","a dog","swap","obj","0"\n',
        encoding="utf-8",
    )
    with pytest.raises(
        ValueError, match=r"BiVLC_mine\.csv: 4 rows; expected [\d,]+ \(sources/released\.yaml: bivlc_results"
    ):
        score_predictions("bivlc", [results, correct], options=FAST)  # 4 of the benchmark's instances
    result = score_predictions("bivlc", [results, correct], options=PARTIAL)
    system = result["systems"]["mine"]
    n_bivlc = declared_records("bivlc:read_bivlc_results")[0]
    n_sugarcrepe = declared_records("bivlc:read_sugarcrepe_correct")[0]
    assert system["n_missing"] == {"bivlc": n_bivlc - 4, "sugarcrepe": n_sugarcrepe - 2}
    m = system["metrics"]
    assert (m["i2t"]["value"], m["t2i"]["value"], m["group"]["value"]) == (50.0, 50.0, 25.0)
    assert m["ipos2t"]["value"] == 75.0 and m["sugarcrepe"]["value"] == 50.0
    assert system["by_type"]["add"]["group"]["value"] == 50.0 and system["by_type"]["add"]["group"]["n"] == 2
    assert system["n_bivlc"] == 4 and system["n_sugarcrepe"] == 2


def test_bivlc_malformed_files_name_file_and_record(tmp_path: Path) -> None:
    path = _bivlc_csv(tmp_path / "BiVLC_bad.csv", [(True, True, True, True), (True, True, True, True)], ["add", "add"])
    text = path.read_text(encoding="utf-8").splitlines()
    fields = text[2].split(",")
    fields[-1] = '"False"'  # group_score contradicts the comparisons
    path.write_text("\n".join([*text[:2], ",".join(fields)]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"BiVLC_bad\.csv: line 3 column group_score: expected True") as err:
        score_predictions("bivlc", [path], options=PARTIAL)
    assert str(path) in str(err.value)
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"other\.csv: line 1: expected the header of a released BiVLC"):
        score_predictions("bivlc", [other], options=FAST)


def test_bivlc_released_files(mirror_dir: Path) -> None:
    from itmbench.sources.released import resolve

    files = [resolve(f"bivlc_results_{k}", mirror_dir, must_exist=True) for k in ("clip_coco", "clip_trohn_img")]
    systems = score_predictions("bivlc", files, options=FAST)["systems"]
    assert sorted(systems) == ["CLIP_COCO", "CLIP_TROHN-Img"]
    assert round(systems["CLIP_COCO"]["metrics"]["i2t"]["value"], 2) == 82.75
    assert round(systems["CLIP_TROHN-Img"]["metrics"]["tpos2i"]["value"], 2) == 81.45


# --- SugarCrepe answers (GPT-4V format) ---------------------------------------------------------------


def _answers(folder: Path, order: str, subset: str, picks: list[str]) -> Path:
    doc = {}
    for i, pick in enumerate(picks):
        caption, negative = f"a cat number {i}", f"a dog number {i}"
        answer = {"positive": caption, "negative": negative, "neither": "Neither"}[pick]
        doc[str(i)] = {
            "answer": {"free_form_answer": "(1)", "multiple_choice_answer": answer},
            "caption": caption,
            "negative_caption": negative,
            "filename": f"{i + 1:012d}.jpg",
            "correct": pick == "positive",
        }
    doc["accuracy"] = 0.5
    return _write_json(folder / order / f"gpt4v-{subset}.json", doc)


def test_sugarcrepe_answers_per_order_and_the_mean_of_orders(tmp_path: Path) -> None:
    folder = tmp_path / "gpt-4v-results"
    _answers(folder, "positive-first", "add_att", ["positive", "positive", "negative", "neither"])
    _answers(folder, "negative-first", "add_att", ["positive", "positive", "positive", "negative"])
    _answers(folder, "positive-first", "swap_obj", ["positive", "negative"])
    _answers(folder, "negative-first", "swap_obj", ["positive", "positive"])
    with pytest.raises(ValueError, match=r"10 answer file\(s\) missing: .*positive-first/gpt4v-add_obj\.json"):
        score_predictions("sugarcrepe_gpt4v", folder, options=FAST)
    system = score_predictions("sugarcrepe_gpt4v", folder, options=PARTIAL)["systems"]["GPT-4V"]
    size = {s: declared_records("sugarcrepe:read_gpt4v_answers", subset=s)[0] for s in SUBSETS}
    assert system["n_missing"] == 2 * sum(size.values()) - 12 and len(system["missing_files"]) == 10
    m = system["metrics"]
    assert m["positive-first"]["value"] == pytest.approx(100 * 3 / 6)
    assert m["negative-first"]["value"] == pytest.approx(100 * 5 / 6)
    assert m["mean of orders"]["value"] == pytest.approx(100 * 8 / 12)
    assert system["by_subset"]["swap_obj"]["negative-first"]["value"] == 100.0
    assert system["n_instances"] == 6 and len(system["files"]) == 4


def test_sugarcrepe_answers_with_an_inconsistent_flag_name_file_and_key(tmp_path: Path) -> None:
    path = _answers(tmp_path / "r", "positive-first", "add_obj", ["positive", "negative"])
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["1"]["correct"] = True
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"gpt4v-add_obj\.json: key '1'\.correct: expected False") as err:
        score_predictions("sugarcrepe_gpt4v", path, options=FAST)
    assert str(path) in str(err.value)
    del doc["1"]["answer"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"gpt4v-add_obj\.json: key '1'\.answer: expected key 'answer'"):
        score_predictions("sugarcrepe_gpt4v", path, options=FAST)


def test_sugarcrepe_released_gpt4v_answers_give_92_19(mirror_dir: Path) -> None:
    folder = mirror_dir / "raw.githubusercontent.com" / "RAIVNLab" / "sugar-crepe" / "main" / "gpt-4v-results"
    system = score_predictions("sugarcrepe_gpt4v", folder, options=FAST)["systems"]["GPT-4V"]
    assert round(system["metrics"]["mean of orders"]["value"], 2) == 92.19
    assert system["metrics"]["positive-first"]["n_correct"] == 6833 and system["n_instances"] == 7512


# --- the CLI ----------------------------------------------------------------------------------------


def test_main_prints_json_and_writes_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    i2t, t2i, pi, pt = _ranked_fixture(tmp_path)
    out = tmp_path / "out"
    code = main(
        ["ranked", str(i2t), str(t2i), "--positives", str(pi), str(pt), "--out-dir", str(out), "--n-boot", "50"]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["systems"]["predictions"]["metrics"]["mean/R@1"]["value"] == 50.0
    assert sorted(p.name for p in out.iterdir()) == ["metrics.csv", "metrics.json", "metrics.md", "metrics.tex"]
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8")) == printed
    table = pd.read_csv(out / "metrics.csv")
    assert set(table.columns) == {"row", "column", "value", "lo", "hi"} and "mean/mAP@R" in set(table["column"])


def test_main_reports_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ann = _bison_annotations(tmp_path / "ann.json", n=2)
    preds = _write_json(tmp_path / "preds.json", [{"bison_id": 0, "predicted_image_id": 3}])
    assert main(["bison", str(preds), "--annotations", str(ann)]) == 2
    line = next(x for x in capsys.readouterr().err.splitlines() if x.startswith("itmbench score-predictions: error: "))
    assert str(preds) in line and "[0].predicted_image_id" in line


def test_arguments_fit_a_subparser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="itmbench")
    sub = parser.add_subparsers(dest="command", required=True)
    add_arguments(sub.add_parser("score-predictions")).set_defaults(func=run)
    ann = _bison_annotations(tmp_path / "ann.json", n=2)
    preds = _write_json(
        tmp_path / "preds.json", [{"bison_id": 0, "predicted_image_id": 1}, {"bison_id": 1, "predicted_image_id": 12}]
    )
    args = parser.parse_args(["score-predictions", "bison", str(preds), "--annotations", str(ann)])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["systems"]["preds"]["metrics"]["bison"]["value"] == 100.0
