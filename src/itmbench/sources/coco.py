"""COCO items for the `coco` source: images and captions with their Karpathy split, from the released zips.

Inputs are the files the data registry fetches (never extracted: images are read from the zips):
- `caption_datasets.zip` (Karpathy): `dataset_coco.json`, one record per image with `cocoid`,
  `filepath` (train2014 | val2014), `filename`, `split` (train | restval | val | test) and its
  `sentences` (`sentid`, `raw`);
- `annotations_trainval2014.zip`: `annotations/captions_{train,val}2014.json`, the COCO caption
  annotations (`id`, `image_id`, `caption`): their ids are the caption ids ECCV Caption and BISON use;
- `train2014.zip`, `val2014.zip`: the JPEGs, at `<coco_split>/<file name>` inside.

Outputs, in the items layout every downstream rule reads (scoring/embed.py ItemStore):
- `images.parquet`: image_id (COCO id), file_name, coco_split, split (Karpathy), path (`<zip>::<member>`);
- `captions.parquet`: caption_id (COCO annotation id), sentid (Karpathy sentid, -1 when Karpathy
  lacks the caption), image_id, split, text (the COCO caption).
Karpathy sentences are matched to COCO annotations by image and whitespace-normalised text; a
Karpathy sentence with no annotation is an error naming it (the two files disagree).
"""

from __future__ import annotations

import zipfile
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import write_json, write_parquet
from itmbench.reading import decode_utf8, parse_json, read_parquet_file
from itmbench.sources.released import check_released

KARPATHY_MEMBER = "dataset_coco.json"
CAPTION_MEMBERS = ("annotations/captions_train2014.json", "annotations/captions_val2014.json")
COCO_SPLITS = ("train2014", "val2014")
KARPATHY_SPLITS = ("train", "restval", "val", "test")


def _read_json_member(archive: str | Path, member_suffix: str) -> Any:
    """The JSON member of a zip whose name ends with `member_suffix` (the zips nest folders differently).

    The archive's md5 is checked where it lies at a declared place with a declared md5; the member
    is parsed strictly (UTF-8, a repeated key or NaN is an error naming archive, member and line).
    """
    check_released(archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.endswith(member_suffix)]
            if not names:
                raise ValueError(f"{archive}: no member ending in {member_suffix!r}; expected the released zip")
            with zf.open(names[0]) as f:
                data = f.read()
    except zipfile.BadZipFile as err:
        raise ValueError(f"{archive}: not a zip file ({err})") from err
    member = f"{archive}:{names[0]}"
    return parse_json(decode_utf8(data, member), member, allow_nan=False)


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def read_karpathy(archive: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Images and sentences of dataset_coco.json, checked: (images, sentences) tables."""
    data = _read_json_member(archive, KARPATHY_MEMBER)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise ValueError(f"{archive}:{KARPATHY_MEMBER}: expected an object with an `images` list")
    images, sentences = [], []
    for n, record in enumerate(data["images"]):
        where = f"{archive}:{KARPATHY_MEMBER}: images[{n}]"
        try:
            image_id, split = int(record["cocoid"]), str(record["split"])
            coco_split, file_name = str(record["filepath"]), str(record["filename"])
            sents = record["sentences"]
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{where}: expected cocoid, split, filepath, filename, sentences ({err})") from err
        if split not in KARPATHY_SPLITS or coco_split not in COCO_SPLITS:
            raise ValueError(
                f"{where}: split {split!r} / filepath {coco_split!r}; expected {KARPATHY_SPLITS} / {COCO_SPLITS}"
            )
        images.append((image_id, file_name, coco_split, split))
        for s in sents:
            sentences.append((int(s["sentid"]), image_id, str(s["raw"])))
    return (
        pd.DataFrame(images, columns=["image_id", "file_name", "coco_split", "split"]),
        pd.DataFrame(sentences, columns=["sentid", "image_id", "raw"]),
    )


def read_coco_captions(archive: str | Path) -> pd.DataFrame:
    """Every COCO 2014 caption annotation (train and val): caption_id, image_id, text."""
    rows = []
    for member in CAPTION_MEMBERS:
        data = _read_json_member(archive, member)
        for n, ann in enumerate(data.get("annotations", [])):
            try:
                rows.append((int(ann["id"]), int(ann["image_id"]), str(ann["caption"])))
            except (KeyError, TypeError, ValueError) as err:
                raise ValueError(
                    f"{archive}:{member}: annotations[{n}]: expected id, image_id, caption ({err})"
                ) from err
    return pd.DataFrame(rows, columns=["caption_id", "image_id", "text"])


def match_sentids(sentences: pd.DataFrame, captions: pd.DataFrame, source: str) -> np.ndarray:
    """The Karpathy sentid of each COCO caption (-1: none), matching on image and normalised text."""
    pool: dict[tuple[int, str], list[int]] = defaultdict(list)
    for sentid, image_id, raw in sentences.sort_values("sentid").itertuples(index=False):
        pool[(int(image_id), _norm(raw))].append(int(sentid))
    out = np.full(len(captions), -1, dtype=np.int64)
    for row, (image_id, text) in enumerate(zip(captions["image_id"], captions["text"])):
        hits = pool.get((int(image_id), _norm(text)))
        if hits:
            out[row] = hits.pop(0)
    left = [(k, v) for k, vs in pool.items() for v in vs]
    if left:
        (image_id, text), sentid = left[0]
        raise ValueError(
            f"{source}: {len(left)} Karpathy sentences have no COCO caption annotation, e.g. sentid {sentid} "
            f"of image {image_id} ({text!r}); expected the 2014 caption annotations of the same images"
        )
    return out


def build_coco_items(
    karpathy_zip: str | Path, captions_zip: str | Path, image_zips: Mapping[str, str | Path]
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The items tables of the Karpathy images (images, captions) and a summary of the counts."""
    images, sentences = read_karpathy(karpathy_zip)
    missing = sorted(set(images["coco_split"]) - set(image_zips))
    if missing:
        raise ValueError(f"{karpathy_zip}: images of {missing}; expected their zips among {sorted(image_zips)}")
    images["path"] = [f"{image_zips[cs]}::{cs}/{fn}" for cs, fn in zip(images["coco_split"], images["file_name"])]
    images = images.sort_values("image_id", kind="stable").reset_index(drop=True)
    captions = read_coco_captions(captions_zip)
    captions = captions[captions["image_id"].isin(set(images["image_id"]))].copy()
    captions = captions.sort_values("caption_id", kind="stable").reset_index(drop=True)
    captions["sentid"] = match_sentids(sentences, captions, str(karpathy_zip))
    captions["split"] = captions["image_id"].map(dict(zip(images["image_id"], images["split"])))
    captions = captions[["caption_id", "sentid", "image_id", "split", "text"]]
    summary = {
        "images": images["split"].value_counts().sort_index().to_dict(),
        "captions": captions["split"].value_counts().sort_index().to_dict(),
        "captions_without_sentid": int((captions["sentid"] < 0).sum()),
    }
    return images, captions, summary


IMAGE_SIGNATURES = {b"\xff\xd8\xff": "JPEG", b"\x89PNG\r\n\x1a\n": "PNG"}  # COCO's JPEGs; an export's PNGs


def check_members(images: pd.DataFrame, limit: int | None = None) -> None:
    """Every image's member is in its zip and starts as a JPEG or PNG does (the first `limit` per zip when
    given), naming the zip and the first member that is missing or not an image."""
    for archive, group in images.groupby(images["path"].str.split("::").str[0], sort=True):
        members = group["path"].str.split("::").str[1]
        try:
            with zipfile.ZipFile(archive) as zf:
                names = set(zf.namelist())
                for image_id, member in zip(group["image_id"][:limit], members[:limit]):
                    if member not in names:
                        raise ValueError(
                            f"{archive}: no member {member!r} for image {image_id}; expected the COCO 2014 zip"
                        )
                    with zf.open(member) as f:
                        head = f.read(8)
                    if not any(head.startswith(magic) for magic in IMAGE_SIGNATURES):
                        raise ValueError(
                            f"{archive}: member {member!r} (image {image_id}) is not an image (it starts with "
                            f"{head!r}); expected a {' or '.join(IMAGE_SIGNATURES.values())} file"
                        )
        except (zipfile.BadZipFile, EOFError) as err:
            raise ValueError(f"{archive}: not a readable zip file ({err}); expected the COCO 2014 zip") from err


def write_coco_items(
    karpathy_zip: str | Path, captions_zip: str | Path, image_zips: Mapping[str, str | Path], out_dir: str | Path
) -> dict[str, Any]:
    """Write images.parquet, captions.parquet and summary.json of the COCO items folder (atomically)."""
    images, captions, summary = build_coco_items(karpathy_zip, captions_zip, image_zips)
    check_members(images)
    out = Path(out_dir)
    write_parquet(out / "images.parquet", images)
    write_parquet(out / "captions.parquet", captions)
    write_json(out / "summary.json", summary)
    return summary


def needed_items(bench_items: list[pd.DataFrame], items_dir: str | Path) -> pd.DataFrame:
    """The union of the benchmarks' (kind, item_id) that are COCO items (added items are embedded apart)."""
    items_dir = Path(items_dir)
    coco_ids = {
        "image": set(read_parquet_file(items_dir / "images.parquet", columns=["image_id"])["image_id"]),
        "caption": set(read_parquet_file(items_dir / "captions.parquet", columns=["caption_id"])["caption_id"]),
    }
    union = pd.concat(bench_items, ignore_index=True)[["kind", "item_id"]].drop_duplicates()
    unknown = sorted(set(union["kind"]) - set(coco_ids))
    if unknown:
        raise ValueError(f"benchmark items of kinds {unknown}; expected image or caption")
    keep = [int(i) in coco_ids[k] for k, i in zip(union["kind"], union["item_id"])]
    return union[keep].sort_values(["kind", "item_id"], kind="stable").reset_index(drop=True)
