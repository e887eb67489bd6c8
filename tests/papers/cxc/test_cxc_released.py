"""CxC loader: the released rating CSVs and small files written here (good and malformed)."""

from __future__ import annotations

import pandas as pd
import pytest

from itmbench.papers.cxc.released import (
    CxcThresholds,
    load_cxc,
    merge_duplicate_pairs,
    pairs_from_raw,
    pairs_schema,
    raw_schema,
    read_cxc_csv,
)
from itmbench.sources._common import check_schema

STS = (
    "caption1,caption2,agg_score,sampling_method\n"
    "COCO_val2014:sentid:1,COCO_val2014:sentid:2,3.0,c2c_cocaption\n"
    "COCO_val2014:sentid:3,COCO_val2014:sentid:4,2.99,c2c_isim\n"
)
SIS = (
    "image1,image2,agg_score,sampling_method\n"
    "COCO_val2014_000000000001.jpg,COCO_val2014_000000000002.jpg,2.0,i2i_csim\n"
    "COCO_val2014_000000000003.jpg,COCO_val2014_000000000004.jpg,2.5,i2i_csim\n"
    "COCO_val2014_000000000002.jpg,COCO_val2014_000000000001.jpg,3.0,i2i_csim\n"
)
SITS = "caption,image,agg_score,sampling_method\nCOCO_val2014:sentid:7,COCO_val2014_000000000009.jpg,4.8,c2i_original\n"


def test_small_files_have_the_canonical_schema(write) -> None:
    sts = read_cxc_csv(write("sts_val.csv", STS))
    check_schema(sts, raw_schema("sts"))
    assert sts["caption1_id"].tolist() == [1, 3]
    assert sts["line"].tolist() == [2, 3]
    assert sts["split"].tolist() == ["val", "val"]
    sits = load_cxc(write("sits_test.csv", SITS))
    check_schema(sits, pairs_schema("sits"))
    assert (sits["caption_id"].item(), sits["image_id"].item(), bool(sits["positive"].item())) == (7, 9, True)


def test_symmetric_duplicates_are_averaged(write) -> None:
    pairs = load_cxc(write("sis_val.csv", SIS))
    check_schema(pairs, pairs_schema("sis"))
    assert len(pairs) == 2
    first = pairs.iloc[0]
    assert (first["image1_id"], first["image2_id"], first["agg_score"], first["n_rows"], first["line"]) == (
        1,
        2,
        2.5,
        2,
        2,
    )
    assert pairs["positive"].tolist() == [True, True]
    kept = load_cxc(write("sis_test.csv", SIS), average_duplicates=False)
    assert len(kept) == 3 and kept["n_rows"].tolist() == [1, 1, 1]


def test_thresholds_are_parameters(write) -> None:
    path = write("sts_val.csv", STS)
    assert load_cxc(path)["positive"].tolist() == [True, False]
    assert load_cxc(path, thresholds=CxcThresholds(sts=2.9))["positive"].tolist() == [True, True]
    assert load_cxc(path, thresholds=CxcThresholds(sts=3.5))["positive"].tolist() == [False, False]


@pytest.mark.parametrize(
    ("name", "text", "where", "expected"),
    [
        ("sts_val.csv", "caption1,caption2,score,sampling_method\n", "line 1", "header caption1,caption2,agg_score"),
        (
            "sts_val.csv",
            STS + "COCO_val2014:sentid:5,COCO_val2014:sentid:6,high,c2c_isim\n",
            "line 4 column agg_score",
            "a mean rating in [0, 5]",
        ),
        (
            "sts_val.csv",
            STS + "COCO_val2014:sentid:5,COCO_val2014:sentid:6,5.2,c2c_isim\n",
            "line 4 column agg_score",
            "a mean rating in [0, 5]",
        ),
        (
            "sts_val.csv",
            STS + "COCO_val2014:sentid:5,COCO_val2014:sentid:6,1.0,i2i_csim\n",
            "line 4 column sampling_method",
            "one of ('c2c_cocaption', 'c2c_isim')",
        ),
        (
            "sts_val.csv",
            STS + "sentid 5,COCO_val2014:sentid:6,1.0,c2c_isim\n",
            "line 4 column caption1",
            "a caption id like COCO_val2014:sentid:732091",
        ),
        (
            "sis_val.csv",
            SIS + "COCO_val2014_000000000001.jpg,cat.png,1.0,i2i_csim\n",
            "line 5 column image2",
            "a COCO image file name",
        ),
        (
            "sits_val.csv",
            SITS + "COCO_val2014:sentid:7,COCO_val2014_000000000009.jpg,4.8\n",
            "line 3",
            "4 comma-separated fields",
        ),
    ],
)
def test_malformed_files_name_file_line_and_expectation(write, name, text, where, expected) -> None:
    path = write(name, text)
    with pytest.raises(ValueError) as info:
        read_cxc_csv(path)
    message = str(info.value)
    assert str(path) in message
    assert f": {where}: " in message
    assert f"expected {expected}" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (STS + 'COCO_val2014:sentid:5,"COCO_val2014:sentid:6"x,1.0,c2c_isim\n', "line 4: malformed CSV ("),
        (STS + '"COCO_val2014:sentid:5,COCO_val2014:sentid:6,1.0,c2c_isim\n', "line 4: malformed CSV ("),
        (STS + STS.splitlines()[2] + "\n", "line 4: duplicate of line 3; expected one row per (caption1, caption2)"),
        (STS.replace("sentid:3,", "sentid:99999999999999999999,"), "line 3 column caption1: expected a caption id"),
        (STS.replace(",sampling_method", ",sampling_method,x"), "line 1: unexpected column(s) x; expected header"),
        (STS.replace("agg_score,", ""), "line 1: missing column(s) agg_score; expected header"),
        (STS.replace("c2c_isim", "c2c_isim\xe4"), "byte "),
        ("caption1,caption2,agg_score,sampling_method\n", "no rows; expected at least one"),
    ],
)
def test_stray_quotes_repeats_huge_ids_and_columns_are_named(write, text, message) -> None:
    path = write("sts_val.csv", text.encode("latin-1") if "\xe4" in text else text)
    with pytest.raises(ValueError) as info:
        read_cxc_csv(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_columns_may_come_in_another_order(write) -> None:
    swapped = "\n".join(",".join(line.split(",")[::-1]) for line in STS.splitlines()) + "\n"
    assert read_cxc_csv(write("a/sts_val.csv", swapped)).equals(read_cxc_csv(write("b/sts_val.csv", STS)))


def test_unknown_file_name_needs_task_and_split(write) -> None:
    path = write("ratings.csv", STS)
    with pytest.raises(ValueError, match="cannot infer the CxC task"):
        read_cxc_csv(path)
    assert len(read_cxc_csv(path, "sts", "val")) == 2


# --- the released files ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def raw(released) -> dict[tuple[str, str], pd.DataFrame]:
    return {
        (task, split): released(f"cxc_{task}_{split}") for task in ("sts", "sis", "sits") for split in ("val", "test")
    }


def test_released_files_parse_with_schema(raw) -> None:
    for (task, split), table in raw.items():
        check_schema(table, raw_schema(task))
        assert (table["split"] == split).all()
        assert table["agg_score"].between(0, 5).all()
        assert table["line"].iloc[0] == 2 and table["line"].is_monotonic_increasing
    assert raw["sts", "val"]["sampling_method"].value_counts().to_dict() == {"c2c_cocaption": 25000, "c2c_isim": 19009}
    assert raw["sits", "test"]["sampling_method"].value_counts().to_dict() == {
        "c2i_original": 25000,
        "c2i_intrasim": 19833,
    }


def test_released_sis_duplicates_are_averaged(raw) -> None:
    for split, n_pairs, n_duplicates in (("val", 40514, 2253), ("test", 43856, 2863)):
        pairs = merge_duplicate_pairs(raw["sis", split], "sis")
        assert len(pairs) == n_pairs
        assert (pairs["n_rows"] == 2).sum() == n_duplicates
        assert len(pairs) + n_duplicates == len(raw["sis", split])
    for task in ("sts", "sits"):
        for split in ("val", "test"):
            assert len(merge_duplicate_pairs(raw[task, split], task)) == len(raw[task, split])


def test_released_positive_counts(raw) -> None:
    counts = {key: int(pairs_from_raw(table, key[0])["positive"].sum()) for key, table in raw.items()}
    assert counts == {
        ("sts", "val"): 14783,
        ("sts", "test"): 16184,
        ("sis", "val"): 26849,
        ("sis", "test"): 19990,
        ("sits", "val"): 37254,
        ("sits", "test"): 35585,
    }


def test_sits_test_positives_are_eccvs_cxc_file(raw, released) -> None:
    sits = pairs_from_raw(raw["sits", "test"], "sits")
    mine = set(zip(sits.loc[sits["positive"], "image_id"], sits.loc[sits["positive"], "caption_id"], strict=True))
    eccv = released("eccv_cxc_image_to_caption")
    assert mine == set(zip(eccv["image_id"], eccv["caption_id"], strict=True))
