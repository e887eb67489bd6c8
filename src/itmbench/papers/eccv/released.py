"""ECCV Caption's packaged ground truth: association JSONs and the COCO test caption ids.

Files `<source>_<direction>.json` with source in {eccv, cxc, original} and direction in
{image_to_caption, caption_to_image}: a JSON object {"<query id>": [positive ids, ...]}; image ids
are COCO image ids, caption ids COCO caption annotation ids (= CxC sentids). `coco_test_ids.npy`
holds the 25,000 caption ids of the Karpathy test split in COCO 1K fold order.

Canonical positives table (`read_association_json`, `load_eccv_positives`), one row per
(query, positive) in file order, columns in this order:
source: string (eccv | cxc | original), direction: string (image_to_caption: the query is the
image; caption_to_image: the query is the caption), image_id: int64, caption_id: int64.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.reading import read_bytes
from itmbench.sources._common import (
    INT,
    STRING,
    SourceFormatError,
    check_unique,
    parse_int,
    read_json_file,
    typed_frame,
)
from itmbench.sources.released import check_count, check_released, resolve

SOURCES = ("eccv", "cxc", "original")
DIRECTIONS = ("image_to_caption", "caption_to_image")
SCHEMA: dict[str, str] = {"source": STRING, "direction": STRING, "image_id": INT, "caption_id": INT}
N_TEST_CAPTIONS = 25_000


def infer_source_direction(path: str | os.PathLike) -> tuple[str, str]:
    """(source, direction) from a file name such as cxc_image_to_caption.json."""
    match = re.fullmatch(r"(eccv|cxc|original)_(image_to_caption|caption_to_image)\.json", Path(path).name)
    if match is None:
        raise ValueError(f"{path}: cannot infer source and direction; expected e.g. eccv_caption_to_image.json")
    return match.group(1), match.group(2)


def _article(word: str) -> str:
    """'an' before a vowel, else 'a'."""
    return "an" if word[:1] in "aeiou" else "a"


def read_association_json(
    path: str | os.PathLike, source: str | None = None, direction: str | None = None
) -> pd.DataFrame:
    """Read one association file into the long positives table, validating every id.

    Strict JSON (a key repeated is an error naming it and its lines); a declared file must have its
    md5 and key count; two keys naming the same id ('7' and '07') are an error.
    """
    check_released(path)
    if source is None or direction is None:
        inferred_source, inferred_direction = infer_source_direction(path)
        source = source or inferred_source
        direction = direction or inferred_direction
    if source not in SOURCES or direction not in DIRECTIONS:
        raise ValueError(f"{path}: source must be one of {SOURCES} and direction one of {DIRECTIONS}")
    query_kind, target_kind = ("image", "caption") if direction == "image_to_caption" else ("caption", "image")
    document = read_json_file(path)
    if not isinstance(document, Mapping):
        raise SourceFormatError(path, "top level", f"an object mapping {query_kind} ids to lists of {target_kind} ids")
    queries: list[int] = []
    targets: list[int] = []
    seen: dict = {}
    for key, values in document.items():
        query = parse_int(key, path, f"key {key!r}", f"{_article(query_kind)} {query_kind} id (digits)")
        check_unique(path, query, f"key {key!r}", seen, f"one key per {query_kind} id")
        if not isinstance(values, list) or not values:
            raise SourceFormatError(path, f"key {key!r}", f"a non-empty list of {target_kind} ids", values)
        if len(set(map(str, values))) != len(values):
            raise SourceFormatError(path, f"key {key!r}", f"distinct {target_kind} ids", values)
        for position, value in enumerate(values):
            targets.append(
                parse_int(
                    value, path, f"key {key!r}[{position}]", f"{_article(target_kind)} {target_kind} id (integer)"
                )
            )
            queries.append(query)
    check_count(path, len(document), "keys")
    images, captions = (queries, targets) if direction == "image_to_caption" else (targets, queries)
    n = len(queries)
    return typed_frame(
        {"source": [source] * n, "direction": [direction] * n, "image_id": images, "caption_id": captions},
        SCHEMA,
    )


def load_eccv_positives(
    folder: str | os.PathLike,
    sources: Iterable[str] = SOURCES,
    directions: Iterable[str] = DIRECTIONS,
) -> pd.DataFrame:
    """All association files of a folder (the package's data/), concatenated in one long table."""
    frames = [
        read_association_json(Path(folder) / f"{source}_{direction}.json", source, direction)
        for source in sources
        for direction in directions
    ]
    return pd.concat(frames, ignore_index=True)


def load_released_positives(folder: str | os.PathLike) -> pd.DataFrame:
    """The six association files from a folder in the mirror layout (data/raw or a mirror), found by their registry
    keys (eccv_<source>_<direction>), concatenated in one long table; a missing file names its key and path."""
    frames = [
        read_association_json(resolve(f"eccv_{source}_{direction}", folder, must_exist=True), source, direction)
        for source in SOURCES
        for direction in DIRECTIONS
    ]
    return pd.concat(frames, ignore_index=True)


def read_coco_test_ids(path: str | os.PathLike, expected_length: int | None = N_TEST_CAPTIONS) -> np.ndarray:
    """The Karpathy test caption ids (int64, file order) from coco_test_ids.npy, checked for shape and uniqueness.

    A declared file must have its md5 and its declared length (25,000 in released.yaml; a registry
    overlay's own count: the world's release); another file `expected_length` (None: any); an empty,
    truncated or pickled file is an error naming what it should hold.
    """
    declared = check_released(path)
    if declared is not None and declared.records is not None:
        expected_length = None  # check_count holds it to the declaration
    what = f"a NumPy .npy array of {expected_length or 'the'} COCO caption ids (integers, no pickles)"
    data = read_bytes(path)
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        got = "an empty file" if not data else f"{len(data)} bytes that np.load refuses ({err})"
        raise SourceFormatError(path, "header", what, got) from None
    if not isinstance(array, np.ndarray):  # np.load opens a zip as an .npz archive
        raise SourceFormatError(path, "header", what, "an .npz archive")
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise SourceFormatError(
            path, "array", "a 1-D integer array of COCO caption ids", f"shape {array.shape} dtype {array.dtype}"
        )
    check_count(path, len(array), "entries")
    if expected_length is not None and len(array) != expected_length:
        raise SourceFormatError(path, "array", f"{expected_length} caption ids", f"{len(array)} ids")
    outside = np.flatnonzero((array < 0) | (array > np.iinfo(np.int64).max))
    if outside.size:
        at = int(outside[0])
        raise SourceFormatError(path, f"index {at}", "a caption id in [0, 2**63 - 1]", int(array[at]))
    unique, counts = np.unique(array, return_counts=True)
    if (counts > 1).any():
        position = int(np.flatnonzero(array == unique[counts > 1][0])[1])
        raise SourceFormatError(path, f"index {position}", "distinct caption ids", int(array[position]))
    return array.astype(np.int64)


def positives_by_query(positives: pd.DataFrame, source: str, direction: str) -> dict[int, set[int]]:
    """{query id: set of positive ids} of one source and direction of a positives table."""
    subset = positives[(positives["source"] == source) & (positives["direction"] == direction)]
    query, target = ("image_id", "caption_id") if direction == "image_to_caption" else ("caption_id", "image_id")
    grouped = subset.groupby(query, sort=False)[target]
    return {int(key): set(map(int, values)) for key, values in grouped}
