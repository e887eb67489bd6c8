"""Loader fuzz suite: every reader of a released file and every predictions format, fed corrupted copies.

Each loader gets a small valid input: a slice of the mirror's file where the mirror is present (the
first records, re-written), else a synthetic file built here, so the suite runs without the mirror
(the BiVLC and GPT-4V predictions formats get full-size inputs: their coverage check wants every
instance the registry declares). Every corruption class of issue 18 is applied to it: cut at half
(mid-line) and at a record boundary, empty, header only (an empty object or list for JSON), a
missing column (or key), an extra column (or key), a wrong type, NaN, infinity, a duplicated row (or
key), a huge id, a latin-1 byte, a UTF-8 BOM, a directory for the file, a missing file. A file the
registry knows is also corrupted in place (the full file at its declared place: cut at a line
boundary, header only, a duplicated row, one changed byte), where its md5 refuses it.

A case passes with one of three outcomes, and anything else (another exception, a traceback, a
different result) fails it:
- error: a ValueError or OSError subclass whose message names the file;
- same: the clean input's result (a BOM, which every reader accepts; an extra key in a JSON record);
- prefix: the records before the cut, for a copy cut at a record boundary at a place nothing
  declares (no md5 or count can tell a shorter file from a smaller one).
Classes that do not apply to a format (a column of an .npy) are not run. OUTCOMES collects every
outcome; the last test prints the counts per loader and checks each loader ran its classes.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from itmbench.papers.aro.released import read_aro_vg_json
from itmbench.papers.bison.released import read_bison_annotations, read_bison_predictions
from itmbench.papers.bivlc.released import (
    HF_COLUMNS,
    NEGATIVE_IMAGE_COLUMNS,
    RESULT_COLUMNS,
    read_bivlc_results,
    read_bivlc_table,
    read_detector_results,
    read_negative_image_list,
    read_sugarcrepe_correct,
    read_sugarcrepe_csv,
)
from itmbench.papers.cxc.released import read_cxc_csv
from itmbench.papers.eccv.released import read_association_json, read_coco_test_ids
from itmbench.papers.mcic.released import read_mcic_txt
from itmbench.papers.predictions import ScoreOptions, score_predictions
from itmbench.papers.sugarcrepe.released import SUBSETS, read_gpt4v_answers, read_sugarcrepe_json
from itmbench.sources.released import ChecksumMismatchError, declared_records, released_file, resolve

N = 30  # records of a small input
HUGE = "99999999999999999999"  # beyond int64
FAST = ScoreOptions(n_boot=20)
BOM = b"\xef\xbb\xbf"
OUTCOMES: dict[str, Counter] = defaultdict(Counter)


# --- the loaders --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loader:
    """A loader under fuzz: how to read a file, what a valid small one is, and where to corrupt it."""

    name: str
    kind: str  # csv | txt | json | npy
    filename: str  # the copy's name (loaders read the model, subset or split from it)
    load: Callable[[Path], Any]
    synthetic: Callable[[], bytes]
    key: str | None = None  # registry key: the mirror file to slice, and the declared-place cases
    full: bool = False  # use the whole file, not a slice (predictions formats that check coverage)
    columns: dict[str, str] = field(default_factory=dict)  # csv: class -> column to corrupt
    mutate: dict[str, Callable[[Any], Any]] = field(default_factory=dict)  # json: class -> doc -> doc
    parent: str = ""  # folder of the copy (GPT-4V files live in <order>/)
    identity: bool = True  # whether a record names what it is about (else a repeated row is not detectable)


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


def _rows(data: bytes) -> list[list[str]]:
    return [r for r in csv.reader(io.StringIO(data.decode("utf-8"), newline="")) if r]


def _json(doc: Any) -> bytes:
    return json.dumps(doc, indent=1).encode("utf-8")


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _captions(i: int) -> tuple[str, str]:
    return f"a cat number {i} on a mat", f"a dog number {i} on a mat"


def synthetic_cxc() -> bytes:
    rows = [["caption", "image", "agg_score", "sampling_method"]]
    rows += [
        [f"COCO_val2014:sentid:{100 + i}", f"COCO_val2014_{i + 1:012d}.jpg", f"{(i % 6) * 0.8:.1f}", "c2i_intrasim"]
        for i in range(N)
    ]
    return _csv(rows)


def synthetic_mcic() -> bytes:
    lines = []
    for i in range(N):
        options = [f"answer_{k}=a caption {k} of image {i}" for k in range(5)]
        image_id = 1000 + i
        lines.append(
            "\t".join(
                [
                    *options,
                    f"image=COCO_train2014_{image_id:012d}.jpg",
                    f"example_id={image_id}_0",
                    f"reference={i % 5}",
                ]
            )
        )
    return ("\n".join(lines) + "\n").encode("utf-8")


def synthetic_association() -> bytes:
    return _json({str(100 + i): [1000 + 2 * i, 1001 + 2 * i] for i in range(N)})


def synthetic_test_ids() -> bytes:
    return _npy(np.arange(1000, 1000 + N, dtype=np.int64))


def _instance(i: int) -> dict[str, str]:
    caption, negative = _captions(i)
    return {"filename": f"{i + 1:012d}.jpg", "caption": caption, "negative_caption": negative}


def synthetic_subset() -> bytes:
    return _json({str(i): _instance(i) for i in range(N)})


def _answers(n: int) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for i in range(n):
        record = _instance(i)
        pick = record["caption"] if i % 4 else record["negative_caption"]
        answer = {"free_form_answer": "(1)", "multiple_choice_answer": pick}
        doc[str(i)] = {"answer": answer, **record, "correct": pick == record["caption"]}
    doc["accuracy"] = 0.75
    return doc


def synthetic_gpt4v() -> bytes:
    return _json(_answers(N))


def _kind(i: int) -> tuple[str, str]:
    return SUBSETS[i % len(SUBSETS)].split("_")


def synthetic_bivlc_results(n: int = N) -> bytes:
    rows = [list(RESULT_COLUMNS)]
    for i in range(n):
        i0, i1, c0, c1 = (i % 2 == 0, i % 3 != 0, i % 5 != 0, True)
        flags = [i0, i1, c0, c1, i0 and i1, c0 and c1, i0 and i1 and c0 and c1]
        rows.append(["<img>", *_captions(i), "<img>", *_kind(i), *(str(f) for f in flags)])
    return _csv(rows)


def synthetic_correct() -> bytes:
    rows = [["filename", "caption", "negative_caption", "type", "subtype", "correct"]]
    rows += [[_instance(i)["filename"], *_captions(i), *_kind(i), str(i % 2)] for i in range(N)]
    return _csv(rows)


def synthetic_sugarcrepe_csv() -> bytes:
    rows = [["filename", "caption", "negative_caption", "type", "subtype"]]
    rows += [[_instance(i)["filename"], *_captions(i), *_kind(i)] for i in range(N)]
    return _csv(rows)


def synthetic_negative_list() -> bytes:
    rows = [list(NEGATIVE_IMAGE_COLUMNS)]
    for i in range(N):
        name = _instance(i)["filename"]
        rows.append([name, *_captions(i), *_kind(i), str(i), *(f"{i}_{name[:-4]}_{k}.jpg" for k in range(4))])
    return _csv(rows)


def synthetic_detector() -> bytes:
    rows = [["text_pred", "img_pred", "label"]]
    rows += [[f"{i / N:.4f}", f"{1 - i / N:.4f}", f"{float(i % 2)}"] for i in range(N)]
    return _csv(rows)


def synthetic_hf_table() -> bytes:
    rows = [list(HF_COLUMNS)]
    rows += [[f"images/{i}.jpg", *_captions(i), f"images/{i}_neg.jpg", *_kind(i)] for i in range(N)]
    return _csv(rows)


def synthetic_bison_predictions() -> bytes:
    return _json([{"bison_id": i, "predicted_image_id": 10 * i + 1 + i % 2} for i in range(N)])


def _triple(i: int) -> dict[str, Any]:
    return {
        "bison_id": i,
        "caption_id": 100 + i,
        "image_candidates": [
            {"image_id": 10 * i + 1, "image_filename": f"COCO_val2014_{10 * i + 1:012d}.jpg"},
            {"image_id": 10 * i + 2, "image_filename": f"COCO_val2014_{10 * i + 2:012d}.jpg"},
        ],
        "true_image_id": 10 * i + 1 + (i % 3 == 0),
    }


def synthetic_bison_annotations() -> bytes:
    return _json({"info": {"version": "fuzz"}, "data": [_triple(i) for i in range(N)]})


def synthetic_rankings() -> bytes:
    # the two positives of query 100 + i (swapped on odd i), then three ids of other queries' positives (the gallery)
    others = [[1000 + 2 * ((i + k) % N) for k in (1, 2, 3)] for i in range(N)]
    return _json({str(100 + i): [1000 + 2 * i + (i % 2), 1001 + 2 * i - (i % 2), *others[i]] for i in range(N)})


def synthetic_vg_relation() -> bytes:
    box = {"bbox_x": 1, "bbox_y": 2, "bbox_w": 30, "bbox_h": 20}
    return _json(
        [
            {"image_path": f"{i}.jpg", **box, "relation_name": "on", "true_caption": f"the cup {i} is on the table",
             "false_caption": f"the table is on the cup {i}"}
            for i in range(N)
        ]
    )  # fmt: skip


# JSON mutations: on the first record of an object keyed by id, or of a list


def _first(doc: Any) -> Any:
    return doc[0] if isinstance(doc, list) else doc[next(iter(doc))]


def _set_first(name: str, value: Any) -> Callable[[Any], Any]:
    def change(doc: Any) -> Any:
        _first(doc)[name] = value
        return doc

    return change


def _del_first(name: str) -> Callable[[Any], Any]:
    def change(doc: Any) -> Any:
        del _first(doc)[name]
        return doc

    return change


def _first_list(value: Any) -> Callable[[dict], dict]:
    def change(doc: dict) -> dict:
        doc[next(iter(doc))] = [value]
        return doc

    return change


def _huge_key(doc: dict) -> dict:
    return {HUGE: _first(doc), **doc}


def _data(change: Callable[[Any], Any]) -> Callable[[dict], dict]:
    def inner(doc: dict) -> dict:
        doc["data"] = change(doc["data"])
        return doc

    return inner


def _values(change: Callable[[Any], Any]) -> dict[str, Callable[[Any], Any]]:
    """NaN and infinity through a setter (json.dumps writes them as the tokens NaN and Infinity)."""
    return {"nan": change(float("nan")), "inf": change(float("inf"))}


RECORD = {  # SugarCrepe-style {"<id>": {filename, caption, negative_caption, ...}}
    "missing_column": _del_first("caption"),
    "extra_column": _set_first("extra", "ignored"),
    "wrong_types": _set_first("filename", 12),
    **_values(lambda v: _set_first("caption", v)),
    "huge_id": _huge_key,
}
ASSOCIATION = {  # {"<query id>": [ids]}
    "wrong_types": _first_list("x"),
    **_values(_first_list),
    "huge_id": _huge_key,
}
BISON_LIST = {  # [{"bison_id", "predicted_image_id"}]
    "missing_column": _del_first("predicted_image_id"),
    "extra_column": _set_first("score", 0.5),
    "wrong_types": _set_first("bison_id", "x"),
    **_values(lambda v: _set_first("predicted_image_id", v)),
    "huge_id": _set_first("bison_id", int(HUGE)),
}
BISON_ANNOTATIONS = {
    "missing_column": _data(_del_first("true_image_id")),
    "extra_column": _data(_set_first("extra", 1)),
    "wrong_types": _data(_set_first("caption_id", "x")),
    **_values(lambda v: _data(_set_first("true_image_id", v))),
    "huge_id": _data(_set_first("bison_id", int(HUGE))),
}


def _score(kind: str, **kwargs: Any) -> Callable[[Path], Any]:
    def load(path: Path) -> Any:
        result = score_predictions(kind, [path], options=FAST, **kwargs)
        return {name: (s["metrics"], s.get("n_missing")) for name, s in result["systems"].items()}

    return load


def _gpt4v_score(path: Path) -> Any:
    """GPT-4V-format answers of one order: the fuzzed swap_obj file beside the 6 other subsets' files."""
    files = [path.parent / f"gpt4v-{s}.json" for s in SUBSETS if s != "swap_obj"] + [path]
    result = score_predictions("sugarcrepe_gpt4v", files, options=FAST)
    return {name: (s["metrics"], s["n_missing"]) for name, s in result["systems"].items()}


_PREDICTION_FIXTURES: dict[str, Path] = {}  # positives / annotations of the ranked and BISON formats


def _ranked(path: Path) -> Any:
    return _score("ranked", positives=[_PREDICTION_FIXTURES["positives"]])(path)


def _bison(path: Path) -> Any:
    return _score("bison", annotations=_PREDICTION_FIXTURES["annotations"])(path)


def _synthetic_gpt4v_full() -> bytes:
    return _json(_answers(declared_records("sugarcrepe:read_gpt4v_answers", subset="swap_obj")[0]))


VG_LIST = {  # ARO's [{"image_path", "bbox_x", ..., "true_caption", "false_caption", "relation_name"}]
    "missing_column": _del_first("true_caption"),
    "extra_column": _set_first("extra", "ignored"),
    "wrong_types": _set_first("bbox_x", "left"),
    **_values(lambda v: _set_first("bbox_w", v)),
}

LOADERS = [
    Loader(
        "aro:read_aro_vg_json",
        "json",
        "visual_genome_relation.json",
        lambda p: read_aro_vg_json(p, "vg_relation"),
        synthetic_vg_relation,
        "aro_vg_relation",
        mutate=VG_LIST,
        identity=False,  # a test case names no id: two cases may be alike
    ),
    Loader(
        "cxc:read_cxc_csv",
        "csv",
        "sits_test.csv",
        read_cxc_csv,
        synthetic_cxc,
        "cxc_sits_test",
        columns={
            "missing_column": "sampling_method",
            "wrong_types": "agg_score",
            "nan": "agg_score",
            "huge_id": "caption",
        },
    ),
    Loader("mcic:read_mcic_txt", "txt", "mc_mscoco_dev.txt", read_mcic_txt, synthetic_mcic, "mcic_dev"),
    Loader(
        "eccv:read_association_json",
        "json",
        "eccv_image_to_caption.json",
        read_association_json,
        synthetic_association,
        "eccv_eccv_image_to_caption",
        mutate=ASSOCIATION,
    ),
    Loader(
        "eccv:read_coco_test_ids",
        "npy",
        "coco_test_ids.npy",
        lambda p: read_coco_test_ids(p, expected_length=None),
        synthetic_test_ids,
        "eccv_coco_test_ids",
    ),
    Loader(
        "sugarcrepe:read_sugarcrepe_json",
        "json",
        "add_att.json",
        read_sugarcrepe_json,
        synthetic_subset,
        "sugarcrepe_add_att",
        mutate=RECORD,
    ),
    Loader(
        "sugarcrepe:read_gpt4v_answers",
        "json",
        "gpt4v-swap_obj.json",
        read_gpt4v_answers,
        synthetic_gpt4v,
        "sugarcrepe_gpt4v_positive_first_swap_obj",
        mutate={**RECORD, "wrong_types": _set_first("correct", "yes")},
        parent="positive-first",
    ),
    Loader(
        "bivlc:read_bivlc_results",
        "csv",
        "BiVLC_ViT-B-32.csv",
        read_bivlc_results,
        synthetic_bivlc_results,
        "bivlc_results_vit_b_32",
        columns={"missing_column": "group_score", "wrong_types": "text_score_i0", "nan": "text_score_i0"},
    ),
    Loader(
        "bivlc:read_sugarcrepe_correct",
        "csv",
        "SUGARCREPE_CORRECT_ViT-B-32.csv",
        read_sugarcrepe_correct,
        synthetic_correct,
        "bivlc_sugarcrepe_correct_vit_b_32",
        columns={"missing_column": "correct", "wrong_types": "correct", "nan": "correct", "huge_id": "filename"},
    ),
    Loader(
        "bivlc:read_sugarcrepe_csv",
        "csv",
        "test_SugarCrepe.csv",
        read_sugarcrepe_csv,
        synthetic_sugarcrepe_csv,
        "bivlc_sugarcrepe_test",
        columns={"missing_column": "subtype", "wrong_types": "type", "huge_id": "filename"},
    ),
    Loader(
        "bivlc:read_negative_image_list",
        "csv",
        "BiVLC_negative_imgs.csv",
        read_negative_image_list,
        synthetic_negative_list,
        "bivlc_negative_image_prompts",
        columns={"missing_column": "hn_img_3", "wrong_types": "index", "nan": "index", "huge_id": "index"},
    ),
    Loader(
        "bivlc:read_detector_results",
        "csv",
        "BiVLC_Classifier_CORRECT_CLIP_baseline.csv",
        read_detector_results,
        synthetic_detector,
        "bivlc_detector_bivlc_baseline",
        columns={"missing_column": "label", "wrong_types": "text_pred", "nan": "text_pred"},
        identity=False,  # text_pred, img_pred, label: two instances may score alike
    ),
    Loader(
        "bivlc:read_bivlc_table",
        "csv",
        "bivlc_test.csv",
        read_bivlc_table,
        synthetic_hf_table,
        columns={"missing_column": "negative_image", "wrong_types": "subtype"},
    ),
    Loader(
        "bison:read_bison_predictions",
        "json",
        "fake_predictions.cocoval2014.json",
        read_bison_predictions,
        synthetic_bison_predictions,
        "bison_fake_predictions",
        mutate=BISON_LIST,
    ),
    Loader(
        "bison:read_bison_annotations",
        "json",
        "bison_annotations.cocoval2014.json",
        read_bison_annotations,
        synthetic_bison_annotations,
        mutate=BISON_ANNOTATIONS,
    ),
    # the predictions formats of `itmbench score-predictions`
    Loader("predictions:ranked", "json", "model_i2t.json", _ranked, synthetic_rankings, mutate=ASSOCIATION),
    Loader("predictions:bison", "json", "model.json", _bison, synthetic_bison_predictions, mutate=BISON_LIST),
    Loader(
        "predictions:bivlc",
        "csv",
        "BiVLC_fuzz.csv",
        _score("bivlc"),
        lambda: synthetic_bivlc_results(declared_records("bivlc:read_bivlc_results")[0]),
        "bivlc_results_vit_b_32",
        full=True,
        columns={"missing_column": "group_score", "wrong_types": "text_score_i0", "nan": "text_score_i0"},
    ),
    Loader(
        "predictions:sugarcrepe_gpt4v",
        "json",
        "gpt4v-swap_obj.json",
        _gpt4v_score,
        _synthetic_gpt4v_full,
        "sugarcrepe_gpt4v_positive_first_swap_obj",
        full=True,
        mutate={**RECORD, "wrong_types": _set_first("correct", "yes")},
        parent="positive-first",
    ),
]
PREDICTIONS = {loader.name for loader in LOADERS if loader.name.startswith("predictions:")}


# --- the corruptions -------------------------------------------------------------------------------

CLASSES = (
    "cut_half",
    "cut_record",
    "empty",
    "header_only",
    "missing_column",
    "extra_column",
    "wrong_types",
    "nan",
    "inf",
    "duplicate",
    "huge_id",
    "latin1",
    "bom",
    "directory",
    "missing_file",
)
DECLARED_CLASSES = ("declared_cut_record", "declared_header_only", "declared_duplicate", "declared_md5")


def _csv_column(data: bytes, column: str, change: Callable[[list[list[str]], int], None]) -> bytes:
    rows = _rows(data)
    change(rows, rows[0].index(column))
    return _csv(rows)


def _set_cell(data: bytes, column: str | None, value: str) -> bytes | None:
    if column is None:
        return None
    return _csv_column(data, column, lambda rows, i: rows[1].__setitem__(i, value))


def _huge(value: str) -> str:
    """The same kind of id with a number beyond int64 (caption ids, image file names, plain ids)."""
    if value.startswith("COCO_val2014:sentid:"):
        return "COCO_val2014:sentid:" + HUGE
    if value.endswith(".jpg"):
        return HUGE + ".jpg"
    return HUGE


def _cut_half(data: bytes) -> bytes:
    cut = len(data) // 2
    while cut < len(data) - 1 and (data[cut - 1 : cut] == b"\n" or data[cut : cut + 1] in (b"\n", b"\r")):
        cut += 1  # mid-line: characters of the line on both sides of the cut
    return data[:cut]


def _dump_duplicate_key(doc: dict) -> bytes:
    key = next(iter(doc))
    text = json.dumps(doc, indent=1)
    return ("{\n " + json.dumps(key) + ": " + json.dumps(doc[key]) + "," + text[1:]).encode("utf-8")


def corrupt(loader: Loader, clean: bytes, name: str) -> bytes | None:
    """The corrupted bytes of class `name`, or None where the class does not apply to the format."""
    if name == "cut_half":
        return _cut_half(clean)
    if name == "empty":
        return b""
    if loader.kind == "npy" and name in ("latin1", "bom"):
        return None  # text encodings: not for a binary array
    if name == "latin1":  # an 'a' of the first record (else its first byte) becomes a latin-1 'ä'
        start = clean.index(b"\n") + 1 if loader.kind == "csv" else 0
        at = clean.find(b"a", start)
        at = start if at < 0 else at
        return clean[:at] + "ä".encode("latin-1") + clean[at + 1 :]
    if name == "bom":
        return BOM + clean
    if loader.kind == "csv":
        rows = _rows(clean)
        if name == "cut_record":
            return _csv(rows[: 1 + (len(rows) - 1) // 2])
        if name == "header_only":
            return _csv(rows[:1])
        if name == "missing_column":
            i = rows[0].index(loader.columns["missing_column"])
            return _csv([r[:i] + r[i + 1 :] for r in rows])
        if name == "extra_column":
            return _csv([rows[0] + ["extra"]] + [r + ["x"] for r in rows[1:]])
        if name == "wrong_types":
            return _set_cell(clean, loader.columns.get("wrong_types"), "abc")
        if name in ("nan", "inf"):
            return _set_cell(clean, loader.columns.get("nan"), name)
        if name == "duplicate":  # a file without an id column cannot tell a repeated row from an equal one
            return _csv([*rows, rows[1]]) if loader.identity else None
        if name == "huge_id":
            column = loader.columns.get("huge_id")
            return None if column is None else _set_cell(clean, column, _huge(rows[1][rows[0].index(column)]))
    if loader.kind == "txt":  # MCIC: tab-separated key=value fields, no header
        lines = clean.decode("utf-8").splitlines()
        first = lines[0].split("\t")

        def with_first(fields: list[str]) -> bytes:
            return ("\n".join(["\t".join(fields), *lines[1:]]) + "\n").encode("utf-8")

        def with_reference(value: str) -> bytes:
            return with_first([f if not f.startswith("reference=") else f"reference={value}" for f in first])

        cases = {
            "cut_record": lambda: ("\n".join(lines[: len(lines) // 2]) + "\n").encode("utf-8"),
            "missing_column": lambda: with_first([f for f in first if not f.startswith("reference=")]),
            "extra_column": lambda: with_first([*first, "extra=1"]),
            "wrong_types": lambda: with_reference("abc"),
            "nan": lambda: with_reference("nan"),
            "inf": lambda: with_reference("inf"),
            "huge_id": lambda: with_reference(HUGE),
            "duplicate": lambda: ("\n".join([*lines, lines[0]]) + "\n").encode("utf-8"),
        }
        return cases[name]() if name in cases else None
    if loader.kind == "json":
        doc = json.loads(clean)
        if name == "cut_record":
            lines = clean.split(b"\n")
            return b"\n".join(lines[: len(lines) // 2]) + b"\n"
        if name == "header_only":
            return b"[]" if isinstance(doc, list) else _json({**doc, "data": []}) if "data" in doc else b"{}"
        if name == "duplicate":
            if isinstance(doc, list):  # a list of records without ids: a repeated one may be an equal one
                return _json([*doc, doc[0]]) if loader.identity else None
            if "data" in doc:
                return _json({**doc, "data": [*doc["data"], doc["data"][0]]})
            return _dump_duplicate_key(doc)
        change = loader.mutate.get(name)
        return None if change is None else _json(change(doc))
    if loader.kind == "npy":
        array = np.load(io.BytesIO(clean))
        header = len(clean) - array.nbytes
        cases = {
            "cut_record": lambda: clean[: header + (len(array) // 2) * array.itemsize],
            "header_only": lambda: _npy(array[:0]),
            "extra_column": lambda: _npy(np.stack([array, array], axis=1)),
            "wrong_types": lambda: _npy(array.astype(float)),
            "nan": lambda: _npy(np.append(array.astype(float), np.nan)),
            "inf": lambda: _npy(np.append(array.astype(float), np.inf)),
            "duplicate": lambda: _npy(np.append(array, array[0])),
            "huge_id": lambda: _npy(np.append(array.astype(np.uint64), np.uint64(2**64 - 1))),
        }
        return cases[name]() if name in cases else None
    return None


def corrupt_declared(loader: Loader, full: bytes, name: str) -> bytes:
    """A change of the full released file at its declared place (its md5 refuses each, before parsing)."""
    if loader.kind == "npy":
        array = np.load(io.BytesIO(full))
        header = len(full) - array.nbytes
        return {
            "declared_cut_record": lambda: full[: header + (len(array) // 2) * array.itemsize],
            "declared_header_only": lambda: _npy(array[:0]),
            "declared_duplicate": lambda: _npy(np.append(array, array[0])),
            "declared_md5": lambda: _npy(np.append(array[:-1], array[-1] + 1)),  # one id changed
        }[name]()
    lines = full.split(b"\n")
    if name == "declared_md5":  # one letter (or digit) changed: still well-formed
        at = full.rfind(b"e")
        if at >= 0:
            return full[:at] + b"o" + full[at + 1 :]
        at = max(full.rfind(bytes([d])) for d in b"123456789")
        return full[:at] + bytes([full[at] - 1]) + full[at + 1 :]
    if name == "declared_cut_record":
        return b"\n".join(lines[: len(lines) // 2]) + b"\n"
    if name == "declared_header_only":
        return lines[0] + b"\n" if loader.kind == "csv" else b"[]" if full.lstrip().startswith(b"[") else b"{}"
    if loader.kind in ("csv", "txt"):
        return full + lines[1] + b"\n"
    doc = json.loads(full)
    return _json([*doc, doc[0]]) if isinstance(doc, list) else _dump_duplicate_key(doc)


# --- the inputs ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mirror(request: pytest.FixtureRequest) -> Path | None:
    """The offline mirror, or None: the suite then runs on synthetic inputs only."""
    try:
        return request.getfixturevalue("mirror_dir")
    except pytest.skip.Exception:
        return None


def _slice(loader: Loader, full: bytes) -> bytes:
    """The first N records of a released file, in its format."""
    if loader.kind == "csv":
        return _csv(_rows(full)[: N + 1])
    if loader.kind == "txt":
        return ("\n".join(full.decode("utf-8").splitlines()[:N]) + "\n").encode("utf-8")
    if loader.kind == "npy":
        return _npy(np.load(io.BytesIO(full))[:N])
    doc = json.loads(full)
    if isinstance(doc, list):
        return _json(doc[:N])
    records = [k for k, v in doc.items() if isinstance(v, (dict, list))][:N]
    return _json({k: v for k, v in doc.items() if k in records or not isinstance(v, (dict, list))})


@pytest.fixture(scope="module")
def inputs(mirror: Path | None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bytes | None]]:
    """{loader: (clean input bytes, the full released file or None)}, read once per module."""
    out: dict[str, tuple[bytes, bytes | None]] = {}
    for loader in LOADERS:
        full = None
        if loader.key is not None and mirror is not None:
            path = resolve(loader.key, mirror)
            full = path.read_bytes() if path.is_file() else None
        if full is None:
            clean = loader.synthetic()
        else:
            clean = full if loader.full else _slice(loader, full)
        out[loader.name] = (clean, full)
    folder = tmp_path_factory.mktemp("prediction_fixtures")
    positives = {str(100 + i): [1000 + 2 * i, 1001 + 2 * i] for i in range(N)}
    _PREDICTION_FIXTURES["positives"] = folder / "positives_image_to_caption.json"
    _PREDICTION_FIXTURES["positives"].write_text(json.dumps(positives), encoding="utf-8")
    _PREDICTION_FIXTURES["annotations"] = folder / "annotations.json"
    _PREDICTION_FIXTURES["annotations"].write_bytes(synthetic_bison_annotations())
    return out


def _place(loader: Loader, folder: Path, data: bytes | None, mirror: Path | None) -> Path:
    """Write `data` (None: no file) where the loader reads it; GPT-4V's other subsets beside it."""
    path = folder / loader.parent / loader.filename
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        path.write_bytes(data)
    if loader.name == "predictions:sugarcrepe_gpt4v":
        for subset in [s for s in SUBSETS if s != "swap_obj"]:  # swap_obj: the file under fuzz
            other = path.parent / f"gpt4v-{subset}.json"
            source = None if mirror is None else resolve(f"sugarcrepe_gpt4v_positive_first_{subset}", mirror)
            if source is not None and source.is_file():
                shutil.copyfile(source, other)
            else:
                size = declared_records("sugarcrepe:read_gpt4v_answers", subset=subset)[0]
                other.write_bytes(_json(_answers(size)))
    return path


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, pd.DataFrame):
        return isinstance(b, pd.DataFrame) and a.equals(b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and np.array_equal(a, b)
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _prefix(result: Any, clean: Any) -> bool:
    if isinstance(result, pd.DataFrame):
        return 0 < len(result) < len(clean) and result.equals(clean.iloc[: len(result)].reset_index(drop=True))
    return False


def run_case(loader: Loader, path: Path, clean_result: Any, prefix_allowed: bool) -> str:
    """The outcome of loading `path`: error (naming the file), same, or prefix; anything else fails."""
    try:
        result = loader.load(path)
    except (ValueError, OSError) as err:
        assert path.name in str(err), f"{type(err).__name__} does not name {path.name}: {err}"
        return "error"
    if _same(result, clean_result):
        return "same"
    if prefix_allowed and _prefix(result, clean_result):
        return "prefix"
    pytest.fail(f"{loader.name}: {path} loaded without error into another result")


_CLEAN: dict[str, Any] = {}


@pytest.fixture(scope="module")
def clean_results(inputs, mirror, tmp_path_factory) -> dict[str, Any]:
    """Each loader's result on its clean input (which must load)."""
    for loader in LOADERS:
        folder = tmp_path_factory.mktemp("clean")
        _CLEAN[loader.name] = loader.load(_place(loader, folder, inputs[loader.name][0], mirror))
    return _CLEAN


# --- the cases ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("loader", LOADERS, ids=lambda loader: loader.name)
def test_corrupted_copy_gives_a_clean_error_or_the_clean_result(
    loader: Loader, name: str, inputs, clean_results, mirror, tmp_path: Path
) -> None:
    clean, _ = inputs[loader.name]
    if name == "directory":
        path = _place(loader, tmp_path, None, mirror)
        path.mkdir()
    elif name == "missing_file":
        path = _place(loader, tmp_path, None, mirror)
    else:
        data = corrupt(loader, clean, name)
        if data is None:
            pytest.skip(f"{name} does not apply to a {loader.kind} file of {loader.name}")
        path = _place(loader, tmp_path, data, mirror)
    prefix_allowed = name == "cut_record" and loader.name not in PREDICTIONS
    outcome = run_case(loader, path, clean_results[loader.name], prefix_allowed)
    if name == "bom" or (name == "extra_column" and loader.kind == "json"):
        assert outcome == "same", f"{loader.name}: {name} should read as the clean file"
    elif name not in ("cut_record", "extra_column"):  # an extra CSV column: refused, or ignored (same result)
        assert outcome == "error", f"{loader.name}: {name} was accepted"
    OUTCOMES[loader.name][outcome] += 1


@pytest.mark.parametrize("name", DECLARED_CLASSES)
@pytest.mark.parametrize(
    "loader", [x for x in LOADERS if x.key and x.name not in PREDICTIONS], ids=lambda loader: loader.name
)
def test_released_file_changed_at_its_declared_place_is_refused_by_md5(
    loader: Loader, name: str, inputs, mirror, tmp_path: Path
) -> None:
    full = inputs[loader.name][1]
    if full is None:
        pytest.skip("offline mirror of the released files not found: no full file to change in place")
    path = resolve(loader.key, tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(corrupt_declared(loader, full, name))
    with pytest.raises(ChecksumMismatchError) as info:
        loader.load(path)
    assert str(path) in str(info.value) and released_file(loader.key).md5 in str(info.value)
    OUTCOMES[loader.name]["error"] += 1


def test_outcome_counts_per_loader(capsys: pytest.CaptureFixture[str]) -> None:
    """Print the outcome counts of this run per loader (pytest -s shows them); every loader ran its cases."""
    if not OUTCOMES:
        pytest.skip("run with the cases above")
    with capsys.disabled():
        print("\nloader fuzz outcomes (cases: error / same / prefix)")
        for loader in LOADERS:
            counts = OUTCOMES[loader.name]
            print(
                f"  {loader.name:36s} {sum(counts.values()):3d}: "
                f"{counts['error']} / {counts['same']} / {counts['prefix']}"
            )
    for loader in LOADERS:
        assert sum(OUTCOMES[loader.name].values()) >= 10, loader.name
