"""MCIC-COCO's released dev/test files from its world tables: the inverse of `coco.from_released`.

`mc_mscoco_<split>.txt`: one example per line in the table's `line` order, tab-separated
`answer_0=..`..`answer_4=..`, `image=COCO_train2014_<id>.jpg` (MCIC names every image so, val2014 ones
too), `example_id=<COCO image id>_<n>` (n of the world's `<image id>_<n>`) and `reference=<answer
index>`. The options are the world's caption texts, as they are (MCIC's are lower-cased, tokenised
COCO captions; the world's are lower-case already). Not carried: world_split and the construction
tables (decoys, construction); the world's option caption ids become the coco source's added captions,
one per distinct text.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from itmbench.papers.mcic.config import N_OPTIONS
from itmbench.sources.release_format import Release

SPLITS = ("dev", "test", "train")


def export(tables: Mapping[str, pd.DataFrame], release: Release) -> dict[str, bytes]:
    """{registry key: file bytes}: one text file per split of the world's MCIC (mcic_dev, mcic_test)."""
    ids = release.ids
    ex = tables["examples"]
    files = {}
    for split, group in ex.groupby(ex["split"].astype(str), sort=True):
        if split not in SPLITS:
            raise ValueError(f"mcic examples of split {split!r}; expected one of {SPLITS}")
        group = group.sort_values("line", kind="stable")
        lines = []
        for row in group.itertuples(index=False):
            fields = [f"answer_{i}={text}" for i, text in enumerate(row.options)]
            for field in fields:
                if "\t" in field or "\n" in field or "\r" in field or len(row.options) != N_OPTIONS:
                    raise ValueError(
                        f"mcic example {row.example_id}: options {list(row.options)}; expected {N_OPTIONS} "
                        "texts without tabs or line breaks (the file's separators)"
                    )
            coco_id = int(ids.image([row.image_id])[0])
            n = str(row.example_id).rpartition("_")[2]
            fields += [f"image={ids.train2014_name(row.image_id)}", f"example_id={coco_id}_{n}"]
            fields.append(f"reference={int(row.answer_index)}")
            lines.append("\t".join(fields) + "\n")
        files[f"mcic_{split}"] = "".join(lines).encode()
    return files
