"""ECCV Caption on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.sources.coco_benchmarks import (
    CocoItems,
    NoConfig,
    Released,
    gallery_captions,
    items_table,
    released_path,
    require_in,
)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: NoConfig) -> Released:
    """ECCV Caption's packaged positives over the 5k/25k COCO test gallery of coco_test_ids.npy."""
    from itmbench.papers.eccv import canonical as eccv
    from itmbench.papers.eccv.released import DIRECTIONS, SOURCES, read_association_json

    caption_ids, ids_path = gallery_captions(items, "test", "coco_test_ids", raw_dir)
    image_ids = np.unique(items.image_of_caption(caption_ids))
    frames, stages = [], []
    for source in SOURCES:
        for direction in DIRECTIONS:
            path = released_path(f"eccv_{source}_{direction}", raw_dir)
            pos = read_association_json(path, source, direction)
            q = pos["image_id" if direction == eccv.I2T else "caption_id"].to_numpy()

            def record(i: int, q: np.ndarray = q) -> str:
                return f"key {str(int(q[i]))!r}"

            require_in(
                pos["image_id"].to_numpy(), image_ids, path, record, "image id", f"an image of a caption of {ids_path}"
            )
            items.require_caption_ids(pos["caption_id"].to_numpy(), path, record)
            outside = ~np.isin(pos["caption_id"].to_numpy(np.int64), caption_ids)
            stages += [
                (direction, f"{source} positives", len(pos)),
                (
                    direction,
                    f"{source} positives outside the gallery (kept: the package counts them in R)",
                    int(outside.sum()),
                ),
            ]
            frames.append(pos)
    positives = eccv._sort_positives(pd.concat(frames, ignore_index=True))
    query_df = eccv.released_queries(positives)
    table = items_table(("image", image_ids), ("caption", caption_ids)).astype(eccv.ITEM_COLUMNS)
    counts = query_df.groupby("direction", sort=False).size().to_dict()
    stages = [(d, "queries", int(counts.get(d, 0))) for d in DIRECTIONS] + sorted(
        stages, key=lambda r: (DIRECTIONS.index(r[0]), r[1])
    )
    stage_df = pd.DataFrame(stages, columns=list(eccv.STAGE_COLUMNS)).astype(eccv.STAGE_COLUMNS)
    tables = {"positives": positives, "queries": query_df, "stages": stage_df, "items": table}
    outside = {f"{d}: {st}": n for d, st, n in stages if "outside" in st and n}
    return Released(tables, log={"queries": counts, "positives outside the gallery": outside})
