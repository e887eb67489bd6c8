"""ARO's VG-Relation and VG-Attribution files from its world tables: the inverse of `coco.from_released`.

`visual_genome_relation.json` and `visual_genome_attribution.json`: a JSON list of the world's test cases of the
set in instance order, each `{"image_path", "bbox_x", "bbox_y", "bbox_w", "bbox_h", "true_caption",
"false_caption"}` and `relation_name` (VG-Relation) or `attributes` (VG-Attribution, the label's two colours);
`vgr_vga_images.zip`: each image once, `images/<COCO image id>.jpg` (the world's image in the release's
format). The box is the whole image: the world's VG sets are scored on whole images (its scenes hold only
the objects the caption names and a few others; docs/aro.md), so the crop gives back the world's pixels. Not
carried: the Order sets (no released file holds them: the authors perturb at load time) and the
construction table (candidates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.papers.aro.coco import IMAGE_FOLDER
from itmbench.papers.registry import ARO_IMAGES_KEY, ARO_VG_KEYS
from itmbench.sources.release_format import Release, json_bytes, zip_bytes


def _label_field(dataset: str, label: str) -> tuple[str, Any]:
    if dataset == "vg_relation":
        return "relation_name", label
    attributes = label.split("_")
    if len(attributes) != 2:
        raise ValueError(f"aro: VG-Attribution label {label!r}; expected '<attribute>_<attribute>'")
    return "attributes", attributes


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: the two VG sets' JSON lists and their images' zip."""
    inst, opts = tables["instances"], tables["options"]
    false_text = opts[opts["kind"].astype(str) == "false"].set_index("id")["text"]
    height, width = (int(n) for n in release.pixels.shape[1:3])
    files: dict[str, bytes] = {}
    images: dict[int, str] = {}
    for dataset, key in ARO_VG_KEYS.items():
        part = inst[inst["dataset"].astype(str) == dataset].sort_values("id", kind="stable")
        if part.empty:
            raise ValueError(f"aro: no instance of {dataset!r}; expected some (its file cannot be empty)")
        records = []
        for iid, label, image_id, caption in zip(
            part["id"].to_numpy(np.int64),
            part["label"].astype(str),
            part["image_id"].to_numpy(np.int64),
            part["caption"],
        ):
            name = images.setdefault(int(image_id), f"{int(release.ids.image([image_id])[0])}.jpg")
            field, value = _label_field(dataset, label)
            records.append(
                {
                    "image_path": name,
                    "bbox_x": 0,
                    "bbox_y": 0,
                    "bbox_w": width,
                    "bbox_h": height,
                    "true_caption": str(caption),
                    "false_caption": str(false_text.loc[int(iid)]),
                    field: value,
                }
            )
        files[key] = json_bytes(records)
    members = [(f"{IMAGE_FOLDER}/{name}", release.image_bytes(i)) for i, name in sorted(images.items())]
    files[ARO_IMAGES_KEY] = zip_bytes(members)
    return files
