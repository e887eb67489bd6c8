"""SugarCrepe loaders: subset JSONs and GPT-4V answers, released and written here."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from itmbench.papers.sugarcrepe.released import (
    GPT4V_SCHEMA,
    INSTANCE_SCHEMA,
    SUBSETS,
    gpt4v_accuracy,
    read_gpt4v_answers,
    read_sugarcrepe_json,
)
from itmbench.sources._common import check_schema

RECORD = {"filename": "000000085329.jpg", "caption": "A woman.", "negative_caption": "A tattooed woman."}
ANSWER = {**RECORD, "answer": {"free_form_answer": "(1)", "multiple_choice_answer": "A woman."}, "correct": True}


def test_small_subset_file(write) -> None:
    path = write("add_att.json", json.dumps({"0": RECORD, "2": {**RECORD, "filename": "000000000007.jpg"}}))
    table = read_sugarcrepe_json(path)
    check_schema(table, INSTANCE_SCHEMA)
    assert table["id"].tolist() == [0, 2]
    assert table["image_id"].tolist() == [85329, 7]
    assert set(table["subset"]) == {"add_att"} and set(table["type"]) == {"add"} and set(table["subtype"]) == {"att"}


def test_small_gpt4v_file_keeps_summary(write) -> None:
    document = {"0": ANSWER, "1": {**ANSWER, "correct": False}, "accuracy": 0.5}
    path = write("positive-first/gpt4v-swap_obj.json", json.dumps(document))
    table = read_gpt4v_answers(path)
    check_schema(table, GPT4V_SCHEMA)
    assert table["correct"].tolist() == [True, False]
    assert set(table["order"]) == {"positive-first"}
    assert table.attrs["summary"] == {"accuracy": 0.5}


@pytest.mark.parametrize(
    ("document", "where", "expected"),
    [
        (
            {"0": {"filename": "000000085329.jpg", "caption": "A woman."}},
            "key '0'.negative_caption",
            "key 'negative_caption'",
        ),
        ({"0": {**RECORD, "filename": "woman.png"}}, "key '0'.filename", "a COCO image file name"),
        ({"0": {**RECORD, "caption": ""}}, "key '0'.caption", "a non-empty positive caption"),
        ({"first": RECORD}, "key 'first'", "an instance id (digits)"),
        ({"0": "A woman."}, "key '0'", "an object with keys"),
    ],
)
def test_malformed_subset_names_file_and_key(write, document, where, expected) -> None:
    path = write("replace_rel.json", json.dumps(document))
    with pytest.raises(ValueError) as info:
        read_sugarcrepe_json(path)
    assert str(info.value).startswith(f"{path}: {where}: expected {expected}")


@pytest.mark.parametrize(
    ("record", "where", "expected"),
    [
        ({**ANSWER, "correct": "yes"}, "key '3'.correct", "a JSON boolean"),
        (
            {**ANSWER, "answer": {"free_form_answer": "(1)"}},
            "key '3'.answer.multiple_choice_answer",
            "key 'multiple_choice_answer'",
        ),
        ({k: v for k, v in ANSWER.items() if k != "answer"}, "key '3'.answer", "key 'answer'"),
    ],
)
def test_malformed_gpt4v_names_file_and_key(write, record, where, expected) -> None:
    path = write("negative-first/gpt4v-add_obj.json", json.dumps({"3": record}))
    with pytest.raises(ValueError) as info:
        read_gpt4v_answers(path)
    assert str(info.value).startswith(f"{path}: {where}: expected {expected}")


def test_order_must_be_known(write) -> None:
    path = write("answers/gpt4v-add_obj.json", json.dumps({"3": ANSWER}))
    with pytest.raises(ValueError, match="cannot infer the answer order"):
        read_gpt4v_answers(path)
    assert read_gpt4v_answers(path, order="negative-first")["order"].tolist() == ["negative-first"]


# --- the released files ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def instances(released) -> pd.DataFrame:
    return pd.concat([released(f"sugarcrepe_{subset}") for subset in SUBSETS], ignore_index=True)


@pytest.fixture(scope="module")
def answers(released) -> pd.DataFrame:
    return pd.concat(
        [
            released(f"sugarcrepe_gpt4v_{order}_{subset}")
            for order in ("positive_first", "negative_first")
            for subset in SUBSETS
        ],
        ignore_index=True,
    )


def test_released_subsets(instances) -> None:
    check_schema(instances, INSTANCE_SCHEMA)
    assert instances.groupby("subset").size().to_dict() == {
        "add_att": 692,
        "add_obj": 2062,
        "replace_att": 788,
        "replace_obj": 1652,
        "replace_rel": 1406,
        "swap_att": 666,
        "swap_obj": 245,
    }
    swap_obj = instances[instances["subset"] == "swap_obj"]
    assert 108 not in set(swap_obj["id"]) and swap_obj["id"].max() == 245


def test_released_gpt4v_answers(answers, instances, released) -> None:
    check_schema(answers, GPT4V_SCHEMA)
    assert answers.groupby("order").size().to_dict() == {"negative-first": 7512, "positive-first": 7512}
    assert released("sugarcrepe_gpt4v_positive_first_swap_obj").attrs["summary"] == {"accuracy": 0.8577}
    # the answer files repeat each instance's captions and image; they agree with the subset files
    merged = answers.merge(instances, on=["subset", "id"], suffixes=("", "_subset"))
    assert len(merged) == 2 * 7511
    for name in ("filename", "caption", "negative_caption"):
        assert (merged[name] == merged[f"{name}_subset"]).all()
    accuracy = gpt4v_accuracy(answers).set_index("order")["accuracy"]
    assert round(accuracy["mean of orders"], 2) == 92.19  # the number BiVLC quotes
