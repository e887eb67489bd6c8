"""ARO on the coco source: VG-Relation and VG-Attribution from the authors' released files, as added items.

Each test case's image is `images/<image_path>` of `vgr_vga_images.zip`, cropped to the case's box as the
authors' `VG_Relation.__getitem__` does (PIL's `crop((x, y, x + w, y + h))` of the RGB image), and added as
a PNG image (identical crops once); its true and false captions are added texts. The Order sets are not
built here: no released file holds them (the authors draw the perturbations at load time with spaCy's tagger
on Karpathy's captions and Flickr30k's images, docs/aro.md). The shared machinery is
`itmbench.sources.coco_benchmarks`.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
from PIL import Image

from itmbench.papers.aro.canonical import TABLES
from itmbench.papers.aro.released import BOX, read_aro_vg_json
from itmbench.papers.registry import ARO_IMAGES_KEY, ARO_VG_KEYS
from itmbench.sources._common import SourceFormatError
from itmbench.sources.coco_benchmarks import AddedItems, CocoItems, Released, items_table, released_path
from itmbench.sources.release_format import encode_image
from itmbench.sources.released import check_released

IMAGE_FOLDER = "images"  # the zip's folder of the images (the authors unzip it into their ARO root)


@dataclass(frozen=True)
class AroCocoConfig:
    """ARO from its released files: the first id of the added images and texts."""

    SECTION: ClassVar[str] = "coco_benchmarks.aro"

    id_offset: int


def crop(data: bytes, box: tuple[float, float, float, float]) -> np.ndarray:
    """The RGB pixels of an encoded image cropped to (x, y, w, h), as the authors' `__getitem__` crops."""
    x, y, w, h = box
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB").crop((x, y, x + w, y + h)))


def _member(archive: zipfile.ZipFile, names: set[str], image_path: str, path: Path, where: str) -> bytes:
    member = f"{IMAGE_FOLDER}/{image_path}"
    if member not in names:
        raise SourceFormatError(path, f"{where}.image_path", f"an image of {archive.filename} ({member})", image_path)
    return archive.read(member)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: AroCocoConfig) -> Released:
    """VG-Relation then VG-Attribution, each test case one instance with options [true, false] (the world's order;
    the scorer applies the authors' tie rule), the cropped images and captions added (split test)."""
    del items  # VG's images are not COCO's: every item is added
    added = AddedItems(cfg.id_offset)
    instances: list[tuple] = []
    options: list[tuple] = []
    zip_path = released_path(ARO_IMAGES_KEY, raw_dir)
    check_released(zip_path)
    if not zipfile.is_zipfile(zip_path):
        raise SourceFormatError(
            zip_path,
            "file",
            "a zip archive of the VG images (Google Drive serves a confirmation page to a plain "
            "download of a file this large: fetch it with gdown, as the authors do)",
        )
    with zipfile.ZipFile(zip_path) as archive:
        names = set(archive.namelist())
        decoded: dict[str, bytes] = {}
        for dataset, key in ARO_VG_KEYS.items():
            path = released_path(key, raw_dir)
            frame = read_aro_vg_json(path, dataset)
            for row in frame.itertuples(index=False):
                where = f"item {row.id}"
                if row.image_path not in decoded:
                    decoded[row.image_path] = _member(archive, names, row.image_path, path, where)
                pixels = crop(decoded[row.image_path], tuple(getattr(row, b) for b in BOX))
                image_id = added.image(encode_image(pixels), "test", zip_path, f"{where}: {row.image_path} cropped")
                iid = len(instances)
                true_id = added.caption(row.true_caption, "test")
                instances.append((iid, dataset, row.label, image_id, true_id, row.true_caption, 2))
                options.append((iid, 0, "true", true_id, row.true_caption))
                options.append((iid, 1, "false", added.caption(row.false_caption, "test"), row.false_caption))
    inst = pd.DataFrame(instances, columns=list(TABLES["instances"]))
    opts = pd.DataFrame(options, columns=list(TABLES["options"]))
    tables = {
        "instances": inst.astype({c: "int64" for c in ("id", "image_id", "caption_id", "n_options")}),
        "options": opts.astype({c: "int64" for c in ("id", "option", "caption_id")}),
        "items": items_table(("image", inst["image_id"].to_numpy()), ("caption", opts["caption_id"].to_numpy()), "str"),
    }
    log = {
        **{dataset: int((inst["dataset"] == dataset).sum()) for dataset in ARO_VG_KEYS},
        "added_images": len(added.image_records()),
        "added_captions": len(added.caption_table()),
    }
    return Released(tables, added, log)
