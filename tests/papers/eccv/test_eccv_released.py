"""ECCV Caption loaders: association JSONs and coco_test_ids.npy, released and written here."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from itmbench.papers.eccv.released import (
    SCHEMA,
    load_eccv_positives,
    positives_by_query,
    read_association_json,
    read_coco_test_ids,
)
from itmbench.sources._common import check_schema


def npy_bytes(array: np.ndarray) -> bytes:
    """The .npy serialisation of an array."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_small_files_give_long_positives(write, tmp_path) -> None:
    write("data/eccv_image_to_caption.json", json.dumps({"10": [1, 2], "20": [3]}))
    write("data/eccv_caption_to_image.json", json.dumps({"1": [10, 20]}))
    table = load_eccv_positives(tmp_path / "data", sources=["eccv"])
    check_schema(table, SCHEMA)
    assert table.to_dict("list") == {
        "source": ["eccv"] * 5,
        "direction": ["image_to_caption"] * 3 + ["caption_to_image"] * 2,
        "image_id": [10, 10, 20, 10, 20],
        "caption_id": [1, 2, 3, 1, 1],
    }
    assert positives_by_query(table, "eccv", "image_to_caption") == {10: {1, 2}, 20: {3}}
    assert positives_by_query(table, "eccv", "caption_to_image") == {1: {10, 20}}


@pytest.mark.parametrize(
    ("content", "where", "expected"),
    [
        ('{"10": [1, 2],\n "x": [3]}', "key 'x'", "an image id (digits)"),
        ('{"10": []}', "key '10'", "a non-empty list of caption ids"),
        ('{"10": [1, "two"]}', "key '10'[1]", "a caption id (integer)"),
        ('{"10": [1, 1]}', "key '10'", "distinct caption ids"),
        ("[1, 2]", "top level", "an object mapping image ids"),
        ("{}", "no keys", "at least one"),
        ('{"10": [1],\n "010": [2]}', "key '010'", "one key per image id"),
    ],
)
def test_malformed_association_names_file_and_key(write, content, where, expected) -> None:
    path = write("cxc_image_to_caption.json", content)
    with pytest.raises(ValueError) as info:
        read_association_json(path)
    assert str(info.value).startswith(f"{path}: {where}") and f"expected {expected}" in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"10": [1, 2],\n "20": [3]', "line 2 column 11: malformed JSON (Expecting ',' delimiter)"),
        (
            '{"10": [1],\n "10": [2]}',
            "line 2 column 2: key '10' appears twice in one object (first at line 1 column 2); expected unique keys",
        ),
        (b'{"10": [1],\n "20": [2\xe4]}', "byte 21 (line 2): not UTF-8 text (invalid continuation byte"),
    ],
)
def test_malformed_association_json_names_file_and_line(write, content, message) -> None:
    path = write("cxc_image_to_caption.json", content)
    with pytest.raises(ValueError) as info:
        read_association_json(path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_coco_test_ids_checks(write) -> None:
    ids = read_coco_test_ids(write("ok.npy", npy_bytes(np.array([5, 3, 9], dtype=np.int32))), expected_length=3)
    assert ids.dtype == np.int64 and ids.tolist() == [5, 3, 9]
    with pytest.raises(ValueError, match=r"short.npy: array: expected 25000 caption ids, got '3 ids'"):
        read_coco_test_ids(write("short.npy", npy_bytes(np.array([5, 3, 9]))))
    with pytest.raises(ValueError, match=r"dup.npy: index 2: expected distinct caption ids, got 5"):
        read_coco_test_ids(write("dup.npy", npy_bytes(np.array([5, 3, 5]))), expected_length=None)
    with pytest.raises(ValueError, match=r"float.npy: array: expected a 1-D integer array"):
        read_coco_test_ids(write("float.npy", npy_bytes(np.zeros(3))), expected_length=None)
    with pytest.raises(ValueError, match=r"text.npy: header: expected a NumPy .npy array"):
        read_coco_test_ids(write("text.npy", "not an array"))


@pytest.fixture(scope="module")
def positives(released) -> pd.DataFrame:
    keys = [
        f"eccv_{source}_{direction}"
        for source in ("eccv", "cxc", "original")
        for direction in ("image_to_caption", "caption_to_image")
    ]
    return pd.concat([released(key) for key in keys], ignore_index=True)


def test_released_association_sizes(positives) -> None:
    check_schema(positives, SCHEMA)
    sizes = positives.groupby(["source", "direction"]).size().to_dict()
    assert sizes == {
        ("cxc", "caption_to_image"): 35585,
        ("cxc", "image_to_caption"): 35585,
        ("eccv", "caption_to_image"): 11279,
        ("eccv", "image_to_caption"): 22550,
        ("original", "caption_to_image"): 25000,
        ("original", "image_to_caption"): 25000,
    }
    queries = (
        positives.groupby(["source", "direction"])
        .apply(
            lambda group: (group["image_id"] if group.name[1] == "image_to_caption" else group["caption_id"]).nunique()
        )
        .to_dict()
    )
    assert queries[("eccv", "image_to_caption")] == 1261
    assert queries[("eccv", "caption_to_image")] == 1332
    assert queries[("cxc", "caption_to_image")] == 24972  # 28 test captions have no CxC positive


def test_released_original_and_cxc_are_symmetric(positives) -> None:
    for source in ("original", "cxc"):
        table = positives[positives["source"] == source]
        i2c = table[table["direction"] == "image_to_caption"]
        c2i = table[table["direction"] == "caption_to_image"]
        assert set(zip(i2c["image_id"], i2c["caption_id"], strict=True)) == set(
            zip(c2i["image_id"], c2i["caption_id"], strict=True)
        )


def test_released_test_ids_cover_the_galleries(positives, released) -> None:
    ids = released("eccv_coco_test_ids")
    assert ids.shape == (25000,) and ids.dtype == np.int64
    original = positives[positives["source"] == "original"]
    assert set(original["caption_id"]) == set(ids.tolist())
    assert original["image_id"].nunique() == 5000
    # a quirk of the released ECCV file: two image->caption positives name captions outside the test split
    eccv = positives[(positives["source"] == "eccv") & (positives["direction"] == "image_to_caption")]
    outside = eccv[~eccv["caption_id"].isin(ids)]
    assert sorted(zip(outside["image_id"], outside["caption_id"], strict=True)) == [(421999, 467259), (575916, 144675)]


# --- Figure 3(a) from the released files ------------------------------------------------------------------------


def test_figure3a_of_small_released_files_counts_the_eccv_files_queries(write, tmp_path) -> None:
    from itmbench.papers.eccv.canonical import released_queries
    from itmbench.papers.eccv.tables import positives_per_query_long

    files = {
        "eccv_image_to_caption": {"10": [1, 2, 3, 4, 5, 6], "20": [6, 7, 8, 9, 10, 11, 12]},
        "eccv_caption_to_image": {"1": [10], "7": [20, 10, 30], "8": [40]},
        "cxc_image_to_caption": {"10": [1, 2, 3, 4, 5], "20": [7, 8, 9, 10, 11, 12], "30": [7]},  # 30: no query
        "cxc_caption_to_image": {"1": [10], "7": [20, 30], "99": [30]},  # caption 8 has no CxC positive
        "original_image_to_caption": {"10": [1, 2, 3, 4, 5], "20": [8, 9, 10, 11, 12], "30": [7, 13, 14, 15, 16]},
        "original_caption_to_image": {"1": [10], "7": [20], "8": [40], "13": [30]},
    }
    for name, content in files.items():
        write(f"data/{name}.json", json.dumps(content))
    positives = load_eccv_positives(tmp_path / "data")
    queries = released_queries(positives)
    assert queries.groupby("direction")["query_id"].apply(list).to_dict() == {
        "caption_to_image": [1, 7, 8],
        "image_to_caption": [10, 20],
    }
    long = positives_per_query_long({"positives": positives, "queries": queries})
    counts = {(c, n): v for c, n, v in zip(long["column"], long["n_positives"], long["value"], strict=True) if v}
    assert counts == {
        ("eccv i2t", 6): 1,
        ("eccv i2t", 7): 1,
        ("cxc i2t", 5): 1,
        ("cxc i2t", 6): 1,
        ("original i2t", 5): 2,
        ("eccv t2i", 1): 2,
        ("eccv t2i", 3): 1,
        ("cxc t2i", 0): 1,
        ("cxc t2i", 1): 1,
        ("cxc t2i", 2): 1,
        ("original t2i", 1): 3,
    }


def test_figure3a_from_the_mirror_matches_a_naive_count_of_the_json(mirror_dir, tmp_path) -> None:
    from collections import Counter

    from itmbench.cli import main
    from itmbench.sources.fetch import raw_path

    out = tmp_path / "tables" / "figure3.csv"
    assert main(["eccv-positives-per-query", "--raw", str(mirror_dir), "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert "(released files)" in out.with_suffix(".md").read_text().splitlines()[0]
    documents = {
        (source, direction): json.loads(raw_path(f"eccv_{source}_{direction}", mirror_dir).read_text())
        for source in ("eccv", "cxc", "original")
        for direction in ("image_to_caption", "caption_to_image")
    }
    for direction, short in (("image_to_caption", "i2t"), ("caption_to_image", "t2i")):
        queries = list(documents[("eccv", direction)])  # the paper's queries: the eccv file's keys
        for source in ("eccv", "cxc", "original"):
            naive = Counter(len(documents[(source, direction)].get(q, [])) for q in queries)
            column = table[table["column"] == f"{source} {short}"]
            got = {int(n): int(v) for n, v in zip(column["n_positives"], column["value"], strict=True) if v}
            assert got == dict(naive), (source, direction)
    png = tmp_path / "figures" / "figure3.png"
    argv = ["eccv-figure", "--figure", "figure3", "--data", str(out), "--source", "released", "--out-png", str(png)]
    assert main(argv) == 0
    assert png.stat().st_size > 1000 and png.with_suffix(".pdf").exists()
