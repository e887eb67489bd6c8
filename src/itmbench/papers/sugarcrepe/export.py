"""SugarCrepe's seven released subset files from its world tables: the inverse of `coco.from_released`.

`data/<subset>.json` for each of the seven subsets: `{"<id>": {"filename", "caption",
"negative_caption"}}` indented as the real files are, keys the world's instance ids in their order
(the real files number each subset from 0; any distinct digits are a key), `filename` the COCO
val2017 name of the image. Not carried: the world's caption ids (SugarCrepe names none: the coco source
adds each distinct text as a caption), the world-only columns (negative_structure, edit) and the
construction tables (edits, stages).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.registry import SUGARCREPE_KEYS
from itmbench.sources.release_format import Release, json_bytes


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: the seven subset files of the world's SugarCrepe."""
    inst = tables["instances"]
    files = {}
    for subset in SUBSETS:
        part = inst[inst["subset"].astype(str) == subset].sort_values("id", kind="stable")
        if part.empty:
            raise ValueError(f"sugarcrepe: no instance of subset {subset!r}; expected some (its file cannot be empty)")
        document = {
            str(int(i)): {"filename": release.ids.val2017_name(image_id), "caption": str(c), "negative_caption": str(n)}
            for i, image_id, c, n in zip(
                part["id"].to_numpy(np.int64),
                part["image_id"].to_numpy(np.int64),
                part["caption"],
                part["negative_caption"],
            )
        }
        files[SUGARCREPE_KEYS[subset]] = json_bytes(document, indent=4)
    return files
