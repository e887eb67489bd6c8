"""MCIC-COCO loader: the released dev/test files and small files written here."""

from __future__ import annotations

import pytest

from itmbench.papers.mcic.released import SCHEMA, read_mcic_txt
from itmbench.sources._common import check_schema


def line(
    reference: str = "1",
    example_id: str = "258209_0",
    image: str = "COCO_train2014_000000258209.jpg",
    first: str = "a man = on a bench",
) -> str:
    """One example line in the released format."""
    answers = [first, "a man sitting", "a man sleeping", "a woman", "two men"]
    fields = [f"answer_{i}={answer}" for i, answer in enumerate(answers)]
    fields += [f"image={image}", f"example_id={example_id}", f"reference={reference}"]
    return "\t".join(fields) + "\n"


def test_small_file_gives_one_row_per_example(write) -> None:
    path = write("mc_mscoco_dev.txt", line() + line("4", "258209_1"))
    table = read_mcic_txt(path)
    check_schema(table, SCHEMA)
    assert table["split"].tolist() == ["dev", "dev"]
    assert table["options"].iloc[0] == ["a man = on a bench", "a man sitting", "a man sleeping", "a woman", "two men"]
    assert table["answer_index"].tolist() == [1, 4]
    assert table["answer"].tolist() == ["a man sitting", "two men"]
    assert table["image_id"].tolist() == [258209, 258209]
    assert table["line"].tolist() == [1, 2]


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        (line().replace("reference=1", "reference=7"), "line 2 key reference", "an answer index 0-4"),
        (line().replace("reference=1", "reference=one"), "line 2 key reference", "an answer index 0-4"),
        (line().replace("\treference=1", ""), "line 2", "keys answer_0"),
        (
            line().replace("\treference=1", "\treference=1\tanswer_0=again"),
            "line 2 field 9",
            "key 'answer_0' once per line",
        ),
        (line().replace("\treference=1", "\tscore=1"), "line 2 field 8", "a key among answer_0"),
        (line().replace("image=", "image "), "line 2 field 6", "a tab-separated key=value field"),
        (line(image="cat.png"), "line 2 key image", "a COCO image file name"),
        (line(example_id="999_0"), "line 2 key example_id", "'<image id>_<n>' with image id 258209"),
        (line(), "line 2 key example_id", "a unique id (also on line 1)"),
        (line().replace("answer_2=a man sleeping", "answer_2= "), "line 2 key answer_2", "a non-empty caption"),
    ],
)
def test_malformed_line_names_file_line_and_key(write, text, where, expected) -> None:
    path = write("mc_mscoco_test.txt", line() + text)
    with pytest.raises(ValueError) as info:
        read_mcic_txt(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: expected {expected}")


def test_split_is_inferred_or_given(write) -> None:
    path = write("examples.txt", line())
    with pytest.raises(ValueError, match="cannot infer the MCIC split"):
        read_mcic_txt(path)
    assert read_mcic_txt(path, split="train")["split"].tolist() == ["train"]


def test_released_dev_and_test(released) -> None:
    dev, test = released("mcic_dev"), released("mcic_test")
    check_schema(dev, SCHEMA)
    assert (len(dev), len(test)) == (9999, 10253)
    assert dev["example_id"].is_unique and test["example_id"].is_unique
    for table in (dev, test):
        assert table["options"].map(len).eq(5).all()
        assert table["options"].map(lambda options: options == sorted(options)).all()  # sorted alphabetically
        assert table["image"].str.startswith("COCO_train2014_").all()
    # the two dev lines whose caption holds '=' keep it in the value
    assert dev.loc[dev["line"] == 3190, "options"].item()[0] == "a = many slices of apples on a wooden cutting board"
    assert dev["answer_index"].value_counts().to_dict() == {3: 2273, 4: 2158, 2: 2027, 1: 1875, 0: 1666}
