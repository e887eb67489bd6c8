"""A tiny COCO made by the tests: Karpathy's dataset_coco.json, the 2014 caption annotations and image zips."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
from PIL import Image

# (cocoid, coco split, Karpathy split, (width, height))
IMAGES = [
    (9, "train2014", "train", (80, 60)),
    (25, "train2014", "train", (64, 96)),
    (30, "train2014", "restval", (70, 70)),
    (42, "val2014", "train", (90, 64)),
    (49, "val2014", "val", (64, 80)),
    (73, "val2014", "val", (100, 64)),
    (74, "val2014", "test", (64, 64)),
    (77, "val2014", "test", (65, 99)),
]
COLOURS = ["red", "green", "blue", "yellow", "purple"]


def caption_text(image_id: int, k: int) -> str:
    return f"A {COLOURS[(image_id + k) % 5]} square number {k} in picture {image_id}."


def jpeg(image_id: int, size: tuple[int, int]) -> bytes:
    rng = np.random.default_rng(image_id)
    pixels = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def file_name(coco_split: str, image_id: int) -> str:
    return f"COCO_{coco_split}_{image_id:012d}.jpg"


def make_tiny_coco(root: Path, captions_per_image: int = 5, drop_annotation: int | None = None) -> dict[str, Path]:
    """Write the four zips under root; returns their paths (keys: karpathy, captions, train2014, val2014)."""
    root.mkdir(parents=True, exist_ok=True)
    paths = {
        "karpathy": root / "caption_datasets.zip",
        "captions": root / "annotations_trainval2014.zip",
        "train2014": root / "train2014.zip",
        "val2014": root / "val2014.zip",
    }
    karpathy, anns = [], {"train2014": [], "val2014": []}
    sentid, ann_id = 0, 1000
    for imgid, (cocoid, coco_split, split, _) in enumerate(IMAGES):
        sents = []
        for k in range(captions_per_image):
            text = caption_text(cocoid, k)
            sents.append({"raw": text, "tokens": text.lower().split(), "imgid": imgid, "sentid": sentid})
            if (cocoid, k) != (drop_annotation, 0):
                anns[coco_split].append({"id": ann_id, "image_id": cocoid, "caption": " " + text + " "})
            sentid += 1
            ann_id += 7
        karpathy.append(
            {
                "filepath": coco_split,
                "filename": file_name(coco_split, cocoid),
                "imgid": imgid,
                "split": split,
                "sentences": sents,
                "sentids": [s["sentid"] for s in sents],
                "cocoid": cocoid,
            }
        )
    with zipfile.ZipFile(paths["karpathy"], "w") as zf:
        zf.writestr("dataset_coco.json", json.dumps({"images": karpathy, "dataset": "coco"}))
    with zipfile.ZipFile(paths["captions"], "w") as zf:
        for coco_split, items in anns.items():
            zf.writestr(f"annotations/captions_{coco_split}.json", json.dumps({"annotations": items}))
    for coco_split in ("train2014", "val2014"):
        with zipfile.ZipFile(paths[coco_split], "w") as zf:
            for cocoid, cs, _, size in IMAGES:
                if cs == coco_split:
                    zf.writestr(f"{coco_split}/{file_name(coco_split, cocoid)}", jpeg(cocoid, size))
    return paths
