"""What a world release's files are made of: world ids as COCO's, images encoded, zips and JSON bytes.

The pieces every exporter shares (`itmbench.sources.export` writes the release; each paper's `export.export`
makes its files with these): `WorldIds` maps the world's ids onto COCO's (the ids section of
`itmbench.sources.export`'s docstring says how), `Release` carries them with the world's pixels and the image
format, `zip_bytes` and `json_bytes` write members and documents byte for byte the same for equal inputs.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

IMAGE_ID_OFFSET = 1
CAPTION_ID_OFFSET = 1_000_000
IMAGE_FORMATS = ("png", "jpeg")
JPEG_QUALITY = 95
COCO_SPLIT = {"train": "train2014", "val": "val2014", "test": "val2014"}
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # every member's timestamp: equal worlds give equal zips


# ----------------------------------------------------------------------------------------------
# Ids and names


@dataclass(frozen=True)
class WorldIds:
    """How the world's image and caption ids become COCO ids, Karpathy sentids and COCO file names."""

    splits: pd.Series  # world image id -> world split (train, val, test)
    image_offset: int = IMAGE_ID_OFFSET
    caption_offset: int = CAPTION_ID_OFFSET

    @staticmethod
    def of(image_table: pd.DataFrame) -> WorldIds:
        """The ids of a world's image table (image_id, split)."""
        splits = pd.Series(
            image_table["split"].astype(str).to_numpy(), index=image_table["image_id"].to_numpy(np.int64)
        )
        unknown = sorted(set(splits) - set(COCO_SPLIT))
        if unknown:
            raise ValueError(f"world images of splits {unknown}; expected {sorted(COCO_SPLIT)}")
        return WorldIds(splits)

    def image(self, world_ids: Any) -> np.ndarray:
        """COCO image ids of world image ids (of the world's own images, checked)."""
        ids = np.asarray(world_ids, dtype=np.int64)
        unknown = ~np.isin(ids, self.splits.index.to_numpy())
        if unknown.any():
            raise ValueError(f"image id {int(ids[unknown][0])} is not an image of the world; expected a world image")
        return ids + self.image_offset

    def caption(self, world_ids: Any) -> np.ndarray:
        """COCO caption annotation ids of world caption ids."""
        return np.asarray(world_ids, dtype=np.int64) + self.caption_offset

    def sentid(self, world_ids: Any) -> np.ndarray:
        """Karpathy sentids of world caption ids (the world's own ids)."""
        return np.asarray(world_ids, dtype=np.int64)

    def coco_split(self, world_id: int) -> str:
        """train2014 or val2014: the COCO 2014 split holding the image."""
        return COCO_SPLIT[self.splits.loc[int(world_id)]]

    def file_name(self, world_id: int) -> str:
        """The image's COCO 2014 file name, COCO_val2014_000000000071.jpg."""
        return f"COCO_{self.coco_split(world_id)}_{int(self.image([world_id])[0]):012d}.jpg"

    def train2014_name(self, world_id: int) -> str:
        """COCO_train2014_<id>.jpg, as MCIC names every image (val2014 ones too)."""
        return f"COCO_train2014_{int(self.image([world_id])[0]):012d}.jpg"

    def val2017_name(self, world_id: int) -> str:
        """<id>.jpg, a COCO 2017 file name (SugarCrepe's and BiVLC's)."""
        return f"{int(self.image([world_id])[0]):012d}.jpg"


def encode_image(pixels: np.ndarray, image_format: str = "png") -> bytes:
    """An RGB uint8 image as PNG (lossless) or JPEG (quality JPEG_QUALITY) bytes."""
    from PIL import Image

    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image format {image_format!r}; expected one of {IMAGE_FORMATS}")
    buf = io.BytesIO()
    image = Image.fromarray(np.ascontiguousarray(pixels, dtype=np.uint8), mode="RGB")
    if image_format == "png":
        image.save(buf, format="PNG")
    else:
        image.save(buf, format="JPEG", quality=JPEG_QUALITY)
    return buf.getvalue()


@dataclass(frozen=True)
class Release:
    """What every exporter reads: the ids, the world's pixels (by world image id) and the image format."""

    ids: WorldIds
    pixels: np.ndarray  # [N, H, W, 3] uint8, row = world image id
    image_format: str = "png"

    def __post_init__(self) -> None:
        if self.image_format not in IMAGE_FORMATS:
            raise ValueError(f"image format {self.image_format!r}; expected one of {IMAGE_FORMATS}")

    def image_bytes(self, world_id: int) -> bytes:
        """The encoded bytes of a world image."""
        return encode_image(np.asarray(self.pixels[int(world_id)]), self.image_format)

    def encode(self, pixels: np.ndarray) -> bytes:
        """The encoded bytes of an image that is not the world's (an added one)."""
        return encode_image(pixels, self.image_format)


def zip_bytes(members: Sequence[tuple[str, bytes]], compress: bool = True) -> bytes:
    """A zip of (name, bytes) members with fixed timestamps (the same members give the same bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def json_bytes(document: Any, indent: int | None = None, compact: bool = False) -> bytes:
    """UTF-8 JSON text of a document (no NaN): compact separators as the ECCV package writes, or indented."""
    separators = (",", ":") if compact else None
    return json.dumps(document, indent=indent, separators=separators, allow_nan=False, ensure_ascii=False).encode()
