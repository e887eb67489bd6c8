"""BISON loaders: annotation files written here (the real one is not mirrored) and the released predictions."""

from __future__ import annotations

import copy
import json

import pytest

from itmbench.papers.bison.released import (
    ANNOTATION_SCHEMA,
    PREDICTION_SCHEMA,
    bison_counts,
    read_bison_annotations,
    read_bison_predictions,
)
from itmbench.sources._common import check_schema


def triple(bison_id: int, caption_id: int, first: int, second: int, true: int) -> dict:
    """One annotation record in the released format."""
    return {
        "bison_id": bison_id,
        "caption_id": caption_id,
        "image_candidates": [
            {"image_id": first, "image_filename": f"COCO_val2014_{first:012d}.jpg"},
            {"image_id": second, "image_filename": f"COCO_val2014_{second:012d}.jpg"},
        ],
        "true_image_id": true,
    }


ANNOTATIONS = {
    "info": {"source": "coco", "split": "val2014"},
    "data": [triple(0, 11, 100, 200, 200), triple(1, 12, 100, 300, 100), triple(2, 11, 400, 200, 400)],
}


def test_small_annotation_file(write) -> None:
    table = read_bison_annotations(write("bison_annotations.cocoval2014.json", json.dumps(ANNOTATIONS)))
    check_schema(table, ANNOTATION_SCHEMA)
    assert table["true_index"].tolist() == [1, 0, 0]
    assert table["false_image_id"].tolist() == [100, 300, 200]
    assert table["image_filename_1"].iloc[0] == "COCO_val2014_000000000200.jpg"
    assert table.attrs["info"] == {"source": "coco", "split": "val2014"}
    assert bison_counts(table) == {"Number of examples": 3, "Unique images": 4, "Unique captions": 2}


def broken(edit) -> dict:
    """A deep copy of the annotations with `edit` applied to it."""
    document = copy.deepcopy(ANNOTATIONS)
    edit(document)
    return document


@pytest.mark.parametrize(
    ("document", "where", "expected"),
    [
        (
            broken(lambda d: d["data"][1].update(true_image_id=999)),
            "data[1].true_image_id",
            "one of the candidates [100, 300]",
        ),
        (
            broken(lambda d: d["data"][2]["image_candidates"].pop()),
            "data[2].image_candidates",
            "a list of exactly 2 image candidates",
        ),
        (broken(lambda d: d["data"][0].pop("caption_id")), "data[0].caption_id", "key 'caption_id'"),
        (broken(lambda d: d["data"][2].update(bison_id=0)), "data[2].bison_id", "a unique bison_id (also at data[0])"),
        (
            broken(lambda d: d["data"][1]["image_candidates"][0].update(image_id="x")),
            "data[1].image_candidates[0].image_id",
            "an integer COCO image id",
        ),
        (
            broken(lambda d: d["data"][1]["image_candidates"][1].update(image_id=100)),
            "data[1].image_candidates",
            "two different images",
        ),
        ({"images": []}, "top level", 'an object with a list "data"'),
    ],
)
def test_malformed_annotations_name_file_and_key(write, document, where, expected) -> None:
    path = write("bison_annotations.cocoval2014.json", json.dumps(document))
    with pytest.raises(ValueError) as info:
        read_bison_annotations(path)
    assert str(info.value).startswith(f"{path}: {where}: expected {expected}")


def test_small_prediction_file_and_errors(write) -> None:
    table = read_bison_predictions(
        write(
            "p.json", json.dumps([{"bison_id": 1, "predicted_image_id": 5}, {"predicted_image_id": 7, "bison_id": 0}])
        )
    )
    check_schema(table, PREDICTION_SCHEMA)
    assert table.to_dict("list") == {"bison_id": [1, 0], "predicted_image_id": [5, 7]}
    path = write(
        "dup.json", json.dumps([{"bison_id": 1, "predicted_image_id": 5}, {"bison_id": 1, "predicted_image_id": 6}])
    )
    with pytest.raises(ValueError) as info:
        read_bison_predictions(path)
    assert str(info.value).startswith(f"{path}: [1].bison_id: expected one prediction per bison_id (also at [0])")
    path = write("missing.json", json.dumps([{"bison_id": 1}]))
    with pytest.raises(ValueError, match=r"missing.json: \[0\].predicted_image_id: expected key 'predicted_image_id'"):
        read_bison_predictions(path)
    path = write("truncated.json", '[{"bison_id": 1,\n "predicted_image_id": 5}')
    with pytest.raises(ValueError, match=r"truncated.json: line 2 column \d+: malformed JSON"):
        read_bison_predictions(path)


def test_released_fake_predictions_cover_every_bison_id(released) -> None:
    table = released("bison_fake_predictions")
    check_schema(table, PREDICTION_SCHEMA)
    # one prediction per triple: 54,253 = "Number of examples" of COCO-BISON in BISON's Table 2
    assert len(table) == 54253
    assert sorted(table["bison_id"]) == list(range(54253))
