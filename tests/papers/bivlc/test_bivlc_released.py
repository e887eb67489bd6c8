"""BiVLC loaders: the Hugging Face layout (parquet/CSV/JSON lines written here) and the released results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itmbench.papers.bivlc.released import (
    CORRECT_SCHEMA,
    DETECTOR_SCHEMA,
    NEGATIVE_IMAGE_SCHEMA,
    RESULT_COLUMNS,
    RESULTS_SCHEMA,
    TABLE_SCHEMA,
    read_bivlc_results,
    read_bivlc_table,
    read_detector_results,
    read_sugarcrepe_correct,
)
from itmbench.papers.sugarcrepe.released import INSTANCE_SCHEMA
from itmbench.sources._common import check_schema

ROWS = [
    {
        "image": "pos/0.jpg",
        "caption": "A cat on a couch.",
        "negative_caption": "A cat under a blanket on a couch.",
        "negative_image": "neg/0.jpg",
        "type": "add",
        "subtype": "obj",
    },
    {
        "image": "pos/1.jpg",
        "caption": "A red car.",
        "negative_caption": "A blue car.",
        "negative_image": "neg/1.jpg",
        "type": "replace",
        "subtype": "att",
    },
]


def write_csv(path: Path, rows: list[dict]) -> Path:
    """Rows as a quoted CSV (the layout the BiVLC repository writes)."""
    pd.DataFrame(rows).to_csv(path, index=False, quoting=1)
    return path


def test_hf_layout_reads_the_same_from_parquet_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = write_csv(tmp_path / "bivlc.csv", ROWS)
    jsonl_path = tmp_path / "bivlc.jsonl"
    jsonl_path.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    struct = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "image": pa.array([{"bytes": b"\xff\xd8", "path": row["image"]} for row in ROWS], type=struct),
            **{name: [row[name] for row in ROWS] for name in ("caption", "negative_caption")},
            "negative_image": pa.array(
                [{"bytes": b"\x89PNG", "path": row["negative_image"]} for row in ROWS], type=struct
            ),
            **{name: [row[name] for row in ROWS] for name in ("type", "subtype")},
        }
    )
    parquet_path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(table, parquet_path)
    frames = {path.suffix: read_bivlc_table(path) for path in (csv_path, jsonl_path, parquet_path)}
    for frame in frames.values():
        check_schema(frame, TABLE_SCHEMA)
        assert frame["id"].tolist() == [0, 1]
        assert frame["caption"].tolist() == ["A cat on a couch.", "A red car."]
        assert frame["type"].tolist() == ["add", "replace"] and frame["subtype"].tolist() == ["obj", "att"]
    assert frames[".csv"]["image"].tolist() == ["pos/0.jpg", "pos/1.jpg"]
    assert frames[".jsonl"]["negative_image"].tolist() == ["neg/0.jpg", "neg/1.jpg"]
    assert frames[".parquet"]["image"].iloc[1] == {"bytes": b"\xff\xd8", "path": "pos/1.jpg"}


@pytest.mark.parametrize(
    ("change", "csv_where", "jsonl_where", "expected"),
    [
        ({"type": "rotate"}, "line 3 columns type/subtype", "line 2 columns type/subtype", "type/subtype among"),
        (
            {"subtype": "rel", "type": "add"},
            "line 3 columns type/subtype",
            "line 2 columns type/subtype",
            "type/subtype among",
        ),
        ({"caption": " "}, "line 3 column caption", "line 2 column caption", "a non-empty string"),
        ({"negative_image": ""}, "line 3 column negative_image", "line 2 column negative_image", "an image"),
    ],
)
def test_malformed_hf_rows_name_file_and_line(tmp_path: Path, change, csv_where, jsonl_where, expected) -> None:
    rows = [ROWS[0], {**ROWS[1], **change}]
    csv_path = write_csv(tmp_path / "bad.csv", rows)
    jsonl_path = tmp_path / "bad.jsonl"
    jsonl_path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for path, where in ((csv_path, csv_where), (jsonl_path, jsonl_where)):
        with pytest.raises(ValueError) as info:
            read_bivlc_table(path)
        assert str(info.value).startswith(f"{path}: {where}: expected {expected}")


def test_missing_hf_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "no_negative_image.parquet"
    pd.DataFrame([{k: v for k, v in row.items() if k != "negative_image"} for row in ROWS]).to_parquet(path)
    with pytest.raises(
        ValueError, match=r"no_negative_image.parquet: schema: expected columns .*missing negative_image"
    ):
        read_bivlc_table(path)
    with pytest.raises(ValueError, match="cannot tell the format"):
        read_bivlc_table(tmp_path / "table.xlsx")


RESULT_ROW = {
    "image": "<PIL image>",
    "caption": "A man.",
    "negative_caption": "A woman.",
    "negative_image": "<PIL image>",
    "type": "swap",
    "subtype": "att",
    "text_score_i0": "True",
    "text_score_i1": "True",
    "image_score_c0": "False",
    "image_score_c1": "True",
    "text_score": "True",
    "image_score": "False",
    "group_score": "False",
}


def test_small_results_file_and_identity_check(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "BiVLC_MyModel.csv",
        [
            RESULT_ROW,
            {**RESULT_ROW, "caption": "A boy.", "image_score_c0": "True", "image_score": "True", "group_score": "True"},
        ],
    )
    table = read_bivlc_results(path)
    check_schema(table, RESULTS_SCHEMA)
    assert table["model"].tolist() == ["MyModel", "MyModel"]
    assert table["group_score"].tolist() == [False, True]
    twice = write_csv(tmp_path / "BiVLC_Twice.csv", [RESULT_ROW, {**RESULT_ROW, "text_score_i0": "False"}])
    with pytest.raises(
        ValueError, match=r"BiVLC_Twice.csv: line 3: duplicate of line 2; expected one row per \(image,"
    ):
        read_bivlc_results(twice)  # the same instance twice, whatever its scores
    bad = write_csv(
        tmp_path / "BiVLC_Bad.csv", [RESULT_ROW, {**RESULT_ROW, "caption": "A boy.", "group_score": "True"}]
    )
    with pytest.raises(ValueError) as info:
        read_bivlc_results(bad)
    assert str(info.value).startswith(f"{bad}: line 3 column group_score: expected False (from the comparisons)")
    maybe = write_csv(tmp_path / "BiVLC_Maybe.csv", [{**RESULT_ROW, "text_score": "maybe"}])
    with pytest.raises(ValueError, match=r"BiVLC_Maybe.csv: line 2 column text_score: expected a boolean"):
        read_bivlc_results(maybe)


def test_small_correct_and_detector_files(tmp_path: Path) -> None:
    row = {
        "filename": "000000219578.jpg",
        "caption": "A cat.",
        "negative_caption": "A dog.",
        "type": "add",
        "subtype": "obj",
        "correct": "1",
    }
    other = {**row, "negative_caption": "A cow.", "correct": "0"}
    table = read_sugarcrepe_correct(write_csv(tmp_path / "SUGARCREPE_CORRECT_M.csv", [row, other]))
    check_schema(table, CORRECT_SCHEMA)
    assert table["correct"].tolist() == [True, False] and table["image_id"].tolist() == [219578, 219578]
    bad = write_csv(tmp_path / "SUGARCREPE_CORRECT_N.csv", [row, {**other, "correct": "2"}])
    with pytest.raises(ValueError, match=r"SUGARCREPE_CORRECT_N.csv: line 3 column correct: expected a boolean"):
        read_sugarcrepe_correct(bad)
    detector = write_csv(tmp_path / "SUGARCREPE_Classifier_CLIP_x.csv", [{"text_pred": "0.25", "label": "1.0"}])
    table = read_detector_results(detector)
    check_schema(table, DETECTOR_SCHEMA)
    assert table["model"].item() == "CLIP_x" and np.isnan(table["img_pred"].item()) and table["label"].item()


# --- the released files ---------------------------------------------------------------------------

MODELS = ("vit_b_32", "clip_coco", "clip_trohn_text", "clip_trohn_img")


def test_released_results_files(released, github_raw: Path) -> None:
    header = (github_raw / "IMirandaM/BiVLC/main/results/BiVLC_ViT-B-32.csv").read_text().splitlines()[0]
    assert tuple(name.strip('"') for name in header.split(",")) == RESULT_COLUMNS
    tables = [released(f"bivlc_results_{model}") for model in MODELS]
    for table in tables:
        check_schema(table, RESULTS_SCHEMA)
        assert len(table) == 2933
        assert table["image"].str.startswith("<PIL.JpegImagePlugin.JpegImageFile").all()
    for other in tables[1:]:  # the four files list the same instances in the same order
        for name in ("caption", "negative_caption", "type", "subtype"):
            assert (other[name] == tables[0][name]).all()
    assert {table["model"].iloc[0]: round(100 * table["group_score"].mean(), 2) for table in tables} == {
        "ViT-B-32": 49.06,
        "CLIP_COCO": 60.96,
        "CLIP_TROHN-Text": 57.48,
        "CLIP_TROHN-Img": 69.25,
    }


def test_released_sugarcrepe_side_files(released) -> None:
    copy = released("bivlc_sugarcrepe_test")
    check_schema(copy, INSTANCE_SCHEMA)
    assert len(copy) == 7512 and (copy["subset"] == "swap_obj").sum() == 246
    for model in MODELS:
        correct = released(f"bivlc_sugarcrepe_correct_{model}")
        check_schema(correct, CORRECT_SCHEMA)
        assert len(correct) == 7512
        assert (correct["caption"] == copy["caption"]).all() and (correct["type"] == copy["type"]).all()
    negatives = released("bivlc_negative_image_prompts")
    check_schema(negatives, NEGATIVE_IMAGE_SCHEMA)
    assert negatives["id"].tolist() == list(range(7512))
    assert negatives["negative_images"].map(len).eq(4).all()
    assert (negatives["negative_caption"] == copy["negative_caption"]).all()


def test_released_detector_files(released) -> None:
    sizes = {}
    for key in (
        "bivlc_detector_bivlc_trohn_img",
        "bivlc_detector_bivlc_baseline",
        "bivlc_detector_sugarcrepe_trohn_img",
        "bivlc_detector_sugarcrepe_baseline",
    ):
        table = released(key)
        check_schema(table, DETECTOR_SCHEMA)
        sizes[key] = (len(table), bool(table["img_pred"].isna().all()), float(table["label"].mean()))
    assert sizes == {
        "bivlc_detector_bivlc_trohn_img": (5866, False, 0.5),
        "bivlc_detector_bivlc_baseline": (5866, False, 0.5),
        "bivlc_detector_sugarcrepe_trohn_img": (15024, True, 0.5),
        "bivlc_detector_sugarcrepe_baseline": (15024, True, 0.5),
    }
