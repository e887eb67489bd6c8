"""Crisscrossed Captions' six rating CSVs from its world tables: the inverse of `coco.from_released`.

`<task>_<split>.csv` (sts, sis, sits x val, test): the header `caption1,caption2` | `image1,image2` |
`caption,image`, then `agg_score,sampling_method`; one row per rated pair in the table's `line` order
(so the file's line numbers are the world's). Captions are `COCO_val2014:sentid:<COCO caption
annotation id>` (CxC's "sentid" is COCO's annotation id, the id ECCV Caption uses), images their COCO
file names. agg_score is written with the shortest digits that read back as the world's float exactly
(the real files print at most two decimals; a rounded mean could cross a positive threshold).
Not carried: the world-only columns (similarity, truth, the per-rater ratings: the released files hold
the mean only), the construction stages and the build settings of `config` (the coco source writes its
own: the thresholds, score_split and sits_query). A pair the world lists twice (n_rows > 1) has no
released row order to write: refused.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.papers.cxc.released import ITEM_COLUMNS, SPLITS, TASKS
from itmbench.sources.release_format import Release


def _item(column: str, world_id: int, release: Release) -> str:
    if column.startswith("caption"):
        return f"COCO_val2014:sentid:{int(release.ids.caption([world_id])[0])}"
    return release.ids.file_name(world_id)


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: the six CSVs of the world's CxC."""
    files = {}
    for task in TASKS:
        a, b = ITEM_COLUMNS[task]
        table = tables[task]
        for split in SPLITS:
            rows = table[table["split"].astype(str) == split].sort_values("line", kind="stable")
            merged = rows[rows["n_rows"].to_numpy(np.int64) != 1]
            if len(merged):
                raise ValueError(
                    f"cxc {task} {split}: line {int(merged['line'].iloc[0])} averages {int(merged['n_rows'].iloc[0])} "
                    "rows; expected one row per pair (the file's rows of an averaged pair are not known)"
                )
            buf = io.StringIO()
            writer = csv.writer(buf, lineterminator="\n")
            writer.writerow([a, b, "agg_score", "sampling_method"])
            for item_a, item_b, score, method in zip(
                rows[f"{a}_id"].to_numpy(np.int64),
                rows[f"{b}_id"].to_numpy(np.int64),
                rows["agg_score"].to_numpy(np.float64),
                rows["sampling_method"].astype(str),
            ):
                writer.writerow([_item(a, item_a, release), _item(b, item_b, release), repr(float(score)), method])
            files[f"cxc_{task}_{split}"] = buf.getvalue().encode()
    return files
