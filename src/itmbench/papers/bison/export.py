"""BISON's released annotation file from its world tables: the inverse of `coco.from_released`.

`bison_annotations.cocoval2014.json` is `{"info": {...}, "data": [{"bison_id", "caption_id",
"image_candidates": [{"image_id", "image_filename"}, {...}], "true_image_id"}, ...]}`, one record per
annotated triple in the table's order, with COCO ids and file names (`sources.release_format.WorldIds`).
Filled: `info` (a description of the export; the loader keeps it aside). Not carried: the world-only
column caption_fits_false and the construction tables (pairs, stages).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from itmbench.sources.release_format import Release, json_bytes

INFO = {"description": "BISON annotations of the itmbench world (itmbench export-release)", "version": "1.0"}


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: the annotation JSON of the world's BISON."""
    ids = release.ids
    ann = tables["annotations"]
    data = []
    for row in ann.itertuples(index=False):
        candidates = [
            {"image_id": int(ids.image([image_id])[0]), "image_filename": ids.file_name(image_id)}
            for image_id in (row.image_id_0, row.image_id_1)
        ]
        data.append(
            {
                "bison_id": int(row.bison_id),
                "caption_id": int(ids.caption([row.caption_id])[0]),
                "image_candidates": candidates,
                "true_image_id": int(ids.image([row.true_image_id])[0]),
            }
        )
    return {"bison_annotations": json_bytes({"info": INFO, "data": data})}
