"""ECCV Caption's packaged files from its world tables: the inverse of `coco.from_released`.

- `coco_test_ids.npy`: the gallery's caption ids (the world's test split, by world caption id: each
  image's captions together, as COCO 1K folds take them) as COCO caption annotation ids, int64;
- `<source>_<direction>.json` for source eccv, cxc, original: `{"<query id>": [positive ids]}` of the
  positives table, queries and positives in its (sorted) order, compact as the package writes them.
  The cxc files hold the world's 'cxc' positives (SITS positives union the original pairs: the
  world's ECCV builds them so); an ECCV built without its CxC dependency has none, and the package's
  files cannot be empty, so it cannot be exported.
Not carried: the machine annotations, the construction stages and the plausible-match tables (the PM
files are not among the released files the coco source reads: PMRP is the world's alone).
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.papers.eccv.canonical import I2T
from itmbench.papers.eccv.released import DIRECTIONS, SOURCES
from itmbench.sources.release_format import Release, json_bytes


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: coco_test_ids.npy and the six association files of the world's ECCV."""
    ids = release.ids
    items, pos = tables["items"], tables["positives"]
    gallery = np.sort(items.loc[items["kind"] == "caption", "item_id"].to_numpy(np.int64))
    buf = io.BytesIO()
    np.save(buf, ids.caption(gallery).astype("<i8"), allow_pickle=False)
    files = {"eccv_coco_test_ids": buf.getvalue()}
    for source in SOURCES:
        for direction in DIRECTIONS:
            part = pos[(pos["source"] == source) & (pos["direction"] == direction)]
            if part.empty:
                raise ValueError(
                    f"eccv positives: none of source {source!r} ({direction}); expected some (the package's "
                    f"{source}_{direction}.json cannot be empty: build ECCV with its CxC dependency)"
                )
            images = ids.image(part["image_id"].to_numpy(np.int64))
            captions = ids.caption(part["caption_id"].to_numpy(np.int64))
            query, target = (images, captions) if direction == I2T else (captions, images)
            document: dict[str, list[int]] = {}
            for q, t in zip(query.tolist(), target.tolist()):
                document.setdefault(str(q), []).append(int(t))
            files[f"eccv_{source}_{direction}"] = json_bytes(document, compact=True)
    return files
