"""BISON on the coco source: its released files mapped onto the COCO items, as the world's canonical tables.

The shared machinery (the COCO items, added items, the registry of the coco source's benchmarks) is
`itmbench.sources.coco_benchmarks`; its docstring says how each benchmark maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from itmbench.sources.coco_benchmarks import (
    CocoItems,
    NoConfig,
    Released,
    UnmappedRecordError,
    items_table,
    released_path,
)


def from_released(raw_dir: str | Path, items: CocoItems, cfg: NoConfig) -> Released:
    """BISON's annotations with every image and caption id checked against the COCO items."""
    from itmbench.papers.bison import canonical as bison
    from itmbench.papers.bison.released import ANNOTATION_SCHEMA, read_bison_annotations

    path = released_path("bison_annotations", raw_dir)
    ann = read_bison_annotations(path)
    ann.attrs = {}
    bison_ids = ann["bison_id"].to_numpy()

    def record(i: int) -> str:
        return f"data[{i}] (bison_id {int(bison_ids[i])})"

    items.require_caption_ids(ann["caption_id"].to_numpy(), path, record)
    names = dict(zip(items.images["image_id"].to_numpy(np.int64), items.images["file_name"].astype(str)))
    for k in (0, 1):
        ids = items.require_image_ids(ann[f"image_id_{k}"].to_numpy(), path, record)
        given = ann[f"image_filename_{k}"].astype(str).to_numpy()
        off = [i for i, (image_id, name) in enumerate(zip(ids, given)) if names[int(image_id)] != name]
        if off:
            i = off[0]
            raise UnmappedRecordError(
                f"{path}: {record(i)}.image_candidates[{k}]: image_filename {given[i]!r}; expected "
                f"{names[int(ids[i])]!r}, the file name of image {int(ids[i])} in {items.images_path}"
            )
    annotations = ann[list(ANNOTATION_SCHEMA)].astype(ANNOTATION_SCHEMA).reset_index(drop=True)
    images = np.concatenate([annotations["image_id_0"].to_numpy(), annotations["image_id_1"].to_numpy()])
    table = items_table(("caption", annotations["caption_id"].to_numpy()), ("image", images))
    tables = {"annotations": annotations, "items": table.astype(bison.ITEM_COLUMNS)}
    return Released(tables, log={"annotations": len(annotations)})
