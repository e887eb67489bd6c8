"""BISON's audit against the world's truth: stage survivor rates and queries that also fit the negative."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itmbench.papers.audit_rows import rate_row, value_row
from itmbench.papers.bison.build import PUBLISHED_STAGE_COUNTS, _split_truth, _world_truth_params
from itmbench.papers.bison.canonical import NONE_CHOICE
from itmbench.papers.bison.config import BisonConfig
from itmbench.world.generate import World, WorldConfig

PUBLISHED_SPLIT_IMAGES = 40_504  # COCO val2014 (Table 2)
PUBLISHED_BISON_IMAGES = 38_680  # images with a BISON example (Table 2, about 95.5%)
PUBLISHED_BISON_CAPTIONS = 45_218  # unique queries (Table 2)


def audit(
    world: World, tables: dict[str, pd.DataFrame], cfg: BisonConfig, *, world_cfg: WorldConfig | None = None
) -> pd.DataFrame:
    """Stage survivor rates and the share of triples whose query also fits the negative, by the world's truth.

    Long form (row, column, value, lo, hi); column 'world' (Wilson intervals on rates, in %) and
    'published' (the paper's counts and conversion rates, no interval). The leak share is
    recomputed from the scene graphs, not read from the world-only columns of the tables.
    """
    margin, max_objects = _world_truth_params(world, world_cfg)
    image_ids, captions, fits = _split_truth(world, cfg.split, margin, max_objects)
    col = {int(i): c for c, i in enumerate(image_ids)}
    row_of = {int(c): r for r, c in enumerate(captions["caption_id"].to_numpy())}
    pairs, ann = tables["pairs"], tables["annotations"]

    def fits_false(caption_ids: np.ndarray, false_ids: np.ndarray) -> np.ndarray:
        try:
            return np.array(
                [bool(fits[row_of[int(c)], col[int(i)]]) for c, i in zip(caption_ids, false_ids)], dtype=bool
            )
        except KeyError as err:
            raise ValueError(f"bison audit: id {err.args[0]} is not in the world's {cfg.split!r} split") from err

    n1 = len(pairs)
    queried = pairs[pairs["chosen_caption_id"] != NONE_CHOICE]
    n2, n3 = len(queried), len(ann)
    leak2 = fits_false(queried["chosen_caption_id"].to_numpy(), queried["negative_image_id"].to_numpy())
    leak3 = fits_false(ann["caption_id"].to_numpy(), ann["false_image_id"].to_numpy())
    has_disc = pairs["n_discriminative"].to_numpy() > 0
    valid2 = ~leak2
    accepted_valid = int(queried["accepted"].to_numpy()[valid2].sum())
    p1, p2, p3 = PUBLISHED_STAGE_COUNTS.values()
    n_images = len(np.unique(ann[["image_id_0", "image_id_1"]].to_numpy()))
    rows = [
        value_row("stage 1: image pairs", "world", n1),
        value_row("stage 1: image pairs", "published", p1),
        value_row("stage 2: query triples", "world", n2),
        value_row("stage 2: query triples", "published", p2),
        value_row("stage 3: verified triples", "world", n3),
        value_row("stage 3: verified triples", "published", p3),
        rate_row("stage 2 survivor rate (%)", "world", n2, n1),
        value_row("stage 2 survivor rate (%)", "published", 100.0 * p2 / p1),
        rate_row("stage 3 survivor rate (%)", "world", n3, n2),
        value_row("stage 3 survivor rate (%)", "published", 100.0 * p3 / p2),
        rate_row("overall survivor rate (%)", "world", n3, n1),
        value_row("overall survivor rate (%)", "published", 100.0 * p3 / p1),
        rate_row("pairs with a discriminative caption (%)", "world", int(has_disc.sum()), n1),
        rate_row("stage-2 queries that also fit the negative (%)", "world", int(leak2.sum()), n2),
        rate_row("BISON queries that also fit the negative (%)", "world", int(leak3.sum()), n3),
        rate_row(
            "valid triples dropped by verification (%)", "world", int(valid2.sum()) - accepted_valid, int(valid2.sum())
        ),
        value_row("images in the split", "world", len(image_ids)),
        value_row("images in the split", "published", PUBLISHED_SPLIT_IMAGES),
        rate_row("images in BISON (% of the split)", "world", n_images, len(image_ids)),
        value_row(
            "images in BISON (% of the split)", "published", 100.0 * PUBLISHED_BISON_IMAGES / PUBLISHED_SPLIT_IMAGES
        ),
        value_row("unique captions", "world", int(ann["caption_id"].nunique())),
        value_row("unique captions", "published", PUBLISHED_BISON_CAPTIONS),
    ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])
