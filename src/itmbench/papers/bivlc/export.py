"""BiVLC's released files from its world tables: the inverse of `coco.from_released`.

- `source_data/SugarCrepe/test_SugarCrepe.csv` (BiVLC's copy of SugarCrepe): `filename` (the COCO
  val2017 name of the image), caption, negative_caption, type, subtype, every field quoted as the
  real file quotes them; one row per SugarCrepe instance of the world, in its order;
- the Hugging Face parquet shards `data/test-0000{0,1}-of-00002.parquet`: one row per BiVLC instance
  in the world's order (the first half in shard 0), columns image, caption, negative_caption,
  negative_image, type, subtype; both images as the Hugging Face Image feature stores them, a
  `{bytes, path}` struct (path null), encoded as the release's images are (PNG by default).
Not carried: the construction tables (edits, candidates, stages), the world-only columns
(negative_structure, edit, chosen_candidate, judged_ambiguous), and the link of a BiVLC instance
to its SugarCrepe row (the released BiVLC has none: the coco source scores an instance on its own
items and records the SugarCrepe row it matches by text).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.sources.release_format import Release

SHARDS = ("bivlc_hf_test_0", "bivlc_hf_test_1")
CSV_COLUMNS = ("filename", "caption", "negative_caption", "type", "subtype")


def _sugarcrepe_csv(sugarcrepe: pd.DataFrame, release: Release) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in sugarcrepe.itertuples(index=False):
        name = release.ids.val2017_name(row.image_id)
        writer.writerow([name, row.caption, row.negative_caption, row.type, row.subtype])
    return buf.getvalue().encode()


def _extra_pixels(extra_images: pd.DataFrame) -> dict[int, np.ndarray]:
    """The world's added images (extra_images: image_size, pixels) as arrays by image id."""
    out = {}
    for image_id, size, raw in zip(extra_images["image_id"], extra_images["image_size"], extra_images["pixels"]):
        out[int(image_id)] = np.frombuffer(bytes(raw), dtype=np.uint8).reshape(int(size), int(size), 3)
    return out


def _parquet(rows: pd.DataFrame, images: list[bytes], negatives: list[bytes]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])

    def column(data: list[bytes]) -> pa.Array:
        return pa.array([{"bytes": b, "path": None} for b in data], type=image_type)

    table = pa.table(
        {
            "image": column(images),
            "caption": pa.array(rows["caption"].astype(str).tolist(), type=pa.string()),
            "negative_caption": pa.array(rows["negative_caption"].astype(str).tolist(), type=pa.string()),
            "negative_image": column(negatives),
            "type": pa.array(rows["type"].astype(str).tolist(), type=pa.string()),
            "subtype": pa.array(rows["subtype"].astype(str).tolist(), type=pa.string()),
        }
    )
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: test_SugarCrepe.csv and the two parquet shards of the world's BiVLC."""
    files = {"bivlc_sugarcrepe_test": _sugarcrepe_csv(tables["sugarcrepe"], release)}
    inst = tables["instances"]
    extra = _extra_pixels(tables["extra_images"])
    world_images = set(release.ids.splits.index.tolist())

    def encoded(image_id: int) -> bytes:
        if int(image_id) in world_images:
            return release.image_bytes(int(image_id))
        if int(image_id) not in extra:
            raise ValueError(f"bivlc instance image {int(image_id)}: neither a world image nor an extra image")
        return release.encode(extra[int(image_id)])

    half = (len(inst) + 1) // 2
    for key, part in zip(SHARDS, (inst.iloc[:half], inst.iloc[half:]), strict=True):
        if part.empty:
            raise ValueError(f"bivlc: {len(inst)} instances; expected at least 2 (one per Hugging Face shard)")
        images = [encoded(i) for i in part["image"].to_numpy(np.int64)]
        negatives = [encoded(i) for i in part["negative_image"].to_numpy(np.int64)]
        files[key] = _parquet(part, images, negatives)
    return files
