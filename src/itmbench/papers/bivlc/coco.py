"""BiVLC on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from itmbench.papers.registry import BIVLC_HF_KEYS
from itmbench.sources.coco_benchmarks import AddedItems, CocoItems, Released, items_table, released_path


@dataclass(frozen=True)
class BivlcCocoConfig:
    """BiVLC from its released files: the first id of the added images and texts."""

    SECTION: ClassVar[str] = "coco_benchmarks.bivlc"

    id_offset: int

    def __post_init__(self) -> None:
        if self.id_offset < 1:
            raise ValueError(f"coco_benchmarks.bivlc: id_offset {self.id_offset}; expected a positive integer")


def _norm(text: str) -> str:
    """Case-, space- and punctuation-insensitive text (BiVLC reformatted SugarCrepe's captions)."""
    return re.sub(r"[^a-z0-9]+", " ", str(text).lower()).strip()


def _image_bytes(value: Any, file: Any, where: str) -> bytes:
    """Encoded bytes of an image cell of the Hugging Face parquet ({bytes, path} struct, or bytes)."""
    data = value.get("bytes") if isinstance(value, Mapping) else value
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise ValueError(f"{file}: {where}: expected an image struct with its bytes, got {str(value)[:80]!r}")
    return bytes(data)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: BivlcCocoConfig) -> Released:
    """SugarCrepe (BiVLC's copy) on COCO images and BiVLC's instances with their own images, as added items."""
    from itmbench.papers.bivlc import canonical as bivlc
    from itmbench.papers.bivlc.released import read_bivlc_table, read_sugarcrepe_csv

    added = AddedItems(cfg.id_offset)
    sc_path = released_path("bivlc_sugarcrepe_test", raw_dir)
    sc = read_sugarcrepe_csv(sc_path)
    names = sc["filename"].to_numpy()
    items.require_image_ids(sc["image_id"].to_numpy(), sc_path, lambda i: f"line {i + 2} column filename {names[i]!r}")
    sc["caption_id"] = np.array([added.caption(t, "test") for t in sc["caption"]], dtype=np.int64)
    sc["negative_caption_id"] = np.array([added.caption(t, "test") for t in sc["negative_caption"]], dtype=np.int64)
    sc["in_bivlc"] = False
    sc["bivlc_id"] = np.full(len(sc), -1, dtype=np.int64)
    columns = [c for c in bivlc.TABLES["sugarcrepe"] if c not in bivlc.WORLD_ONLY_COLUMNS["sugarcrepe"]]
    sugarcrepe = sc[columns].astype({"subset": "str", "type": "str", "subtype": "str", "filename": "str"})
    sugarcrepe = sugarcrepe.astype({"caption": "str", "negative_caption": "str"})

    match: dict[tuple[str, str, str, str], int] = {}
    for row in sc.itertuples(index=False):
        key = (row.type, row.subtype, _norm(row.caption), _norm(row.negative_caption))
        match[key] = -1 if key in match else int(row.id)  # several candidates: no match
    inst: dict[str, list] = {c: [] for c in (*bivlc.TABLES["instances"], "sugarcrepe_match")}
    for key in BIVLC_HF_KEYS:
        path = released_path(key, raw_dir)
        table = read_bivlc_table(path)
        for row in table.itertuples(index=False):
            where = f"row {int(row.id)}"
            inst["id"].append(len(inst["id"]))
            for col in ("image", "negative_image"):
                data = _image_bytes(getattr(row, col), path, f"{where} column {col}")
                inst[col].append(added.image(data, "test", path, f"{where} column {col}"))
            for col in ("caption", "negative_caption", "type", "subtype"):
                inst[col].append(getattr(row, col))
            inst["caption_id"].append(added.caption(row.caption, "test"))
            inst["negative_caption_id"].append(added.caption(row.negative_caption, "test"))
            inst["sugarcrepe_id"].append(-1)
            inst["sugarcrepe_match"].append(
                match.get((row.type, row.subtype, _norm(row.caption), _norm(row.negative_caption)), -1)
            )
    instances = pd.DataFrame(inst).astype(
        {c: "int64" for c in ("id", "image", "negative_image", "caption_id", "negative_caption_id", "sugarcrepe_id")}
        | {"sugarcrepe_match": "int64"}
    )
    images = np.concatenate([sugarcrepe["image_id"].to_numpy(), instances["image"], instances["negative_image"]])
    captions = np.concatenate(
        [
            sugarcrepe["caption_id"].to_numpy(),
            sugarcrepe["negative_caption_id"].to_numpy(),
            instances["caption_id"].to_numpy(),
            instances["negative_caption_id"].to_numpy(),
        ]
    )
    tables = {
        "sugarcrepe": sugarcrepe.reset_index(drop=True),
        "instances": instances,
        "items": items_table(("image", images), ("caption", captions), dtype="str"),
    }
    log = {
        "sugarcrepe": len(sugarcrepe),
        "bivlc": len(instances),
        "bivlc_matched_to_sugarcrepe": int((instances["sugarcrepe_match"] >= 0).sum()),
        "added_images": len(added.image_records()),
        "added_captions": len(added.caption_table()),
    }
    return Released(tables, added, log)
