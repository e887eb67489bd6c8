"""MCIC-COCO: the dev/test text files (tab-separated key=value fields) -> one row per example.

Each line holds `answer_0` .. `answer_4` (lower-cased, tokenised captions, sorted alphabetically),
`image` (COCO file name), `example_id` ('<image id>_<n>') and `reference` (index of the true caption).
A value may itself contain '=' (e.g. 'a = many slices ...'): a field splits at its first '='.

Canonical table (`read_mcic_txt`), columns in this order:
split: string, example_id: string, image: string, image_id: int64,
options: object (list of the 5 captions, in file order), answer_index: int64 (0-4),
answer: string (the true caption), line: int64 (1-based line of the example).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from itmbench.reading import read_text
from itmbench.sources._common import (
    INT,
    OBJECT,
    STRING,
    SourceFormatError,
    coco_image_id,
    parse_int,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released

N_OPTIONS = 5
FIELDS = tuple(f"answer_{i}" for i in range(N_OPTIONS)) + ("image", "example_id", "reference")
SCHEMA: dict[str, str] = {
    "split": STRING,
    "example_id": STRING,
    "image": STRING,
    "image_id": INT,
    "options": OBJECT,
    "answer_index": INT,
    "answer": STRING,
    "line": INT,
}
_EXAMPLE_ID = re.compile(r"^(\d+)_\d+$")


def infer_split(path: str | os.PathLike) -> str:
    """Split name of a released file mc_mscoco_<split>.txt."""
    match = re.fullmatch(r"mc_mscoco_(\w+)\.txt", Path(path).name)
    if match is None:
        raise ValueError(f"{path}: cannot infer the MCIC split; expected a name like mc_mscoco_dev.txt")
    return match.group(1)


def parse_mcic_line(text: str, path: str | os.PathLike, line: int) -> dict[str, str]:
    """Split one line into its key=value fields, checking that exactly the expected keys appear once."""
    fields: dict[str, str] = {}
    for position, field in enumerate(text.split("\t")):
        key, sep, value = field.partition("=")
        where = f"line {line} field {position + 1}"
        if not sep:
            raise SourceFormatError(path, where, "a tab-separated key=value field", field)
        if key not in FIELDS:
            raise SourceFormatError(path, where, f"a key among {', '.join(FIELDS)}", key)
        if key in fields:
            raise SourceFormatError(path, where, f"key {key!r} once per line (it repeats)")
        fields[key] = value
    missing = [key for key in FIELDS if key not in fields]
    if missing:
        raise SourceFormatError(path, f"line {line}", f"keys {', '.join(FIELDS)}; missing {', '.join(missing)}")
    return fields


def read_mcic_txt(path: str | os.PathLike, split: str | None = None) -> pd.DataFrame:
    """Read an MCIC-COCO dev/test/train file into the canonical table, validating every field.

    UTF-8 (a BOM is dropped); a declared file must have its md5 and line count; an example_id seen
    twice is an error naming both lines.
    """
    check_released(path)
    split = split or infer_split(path)
    cols: dict[str, list] = {name: [] for name in SCHEMA}
    seen: dict[str, int] = {}
    for line, raw in enumerate(read_text(path).split("\n"), start=1):
        text = raw.rstrip("\r")
        if not text.strip():
            continue
        fields = parse_mcic_line(text, path, line)
        where = f"line {line}"
        options = [fields[f"answer_{i}"] for i in range(N_OPTIONS)]
        for i, option in enumerate(options):
            if not option.strip():
                raise SourceFormatError(path, f"{where} key answer_{i}", "a non-empty caption")
        index = parse_int(fields["reference"], path, f"{where} key reference", "an answer index 0-4")
        if not 0 <= index < N_OPTIONS:
            raise SourceFormatError(path, f"{where} key reference", "an answer index 0-4", fields["reference"])
        image_id = coco_image_id(fields["image"], path, f"{where} key image")
        example_id = fields["example_id"]
        match = _EXAMPLE_ID.match(example_id)
        if match is None or int(match.group(1)) != image_id:
            raise SourceFormatError(
                path, f"{where} key example_id", f"'<image id>_<n>' with image id {image_id}", example_id
            )
        if example_id in seen:
            raise SourceFormatError(
                path, f"{where} key example_id", f"a unique id (also on line {seen[example_id]})", example_id
            )
        seen[example_id] = line
        cols["split"].append(split)
        cols["example_id"].append(example_id)
        cols["image"].append(fields["image"])
        cols["image_id"].append(image_id)
        cols["options"].append(options)
        cols["answer_index"].append(index)
        cols["answer"].append(options[index])
        cols["line"].append(line)
    check_count(path, len(cols["line"]), "lines")
    return typed_frame(cols, SCHEMA)
