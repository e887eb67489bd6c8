"""MCIC's OPTIMIZE-PV (Ding et al., Algorithm 1, section 3.3): PV-DBOW's dim and epochs chosen by mgs-rank.

The paper: "the optimization step is a grid-search over the hyper-parameters of the PV-DBOW model [19],
which we train using a softmax loss. [...] the hyper-parameters are searched on a grid to minimize
'multiple ground-truth score' rank (mgs-rank): the average rank (under the cosine-distance score) between
c_rc and {c_rl | 1 <= l <= s_r, l != c}. [...] our grid-search over the MCIC-COCO dev dataset yields a
minimum mgs-rank at dim=1024 and epochs=5."

Here, for one grid point (vector_size, epochs):
1. a PV-DBOW model is trained on the captions of `pv_train_split` exactly as the build trains it
   (`itmbench.papers.mcic.build.train_pv`, the point's size and epochs, the other `pv_*` params), and
   every caption of the search split (`pv_search_split`, the paper's dev set: the world's val split)
   gets its inferred vector (`build.infer_pv`);
2. the ranking pool of a caption c is every other caption of the search split (all its images, its own
   image's other captions included: they are what is ranked; c itself left out). Unlike wmgs-rank there
   is no N-best cut: the paper's mgs-rank names none, so every ground truth has a rank;
3. the pool is ranked by cosine similarity to c, highest first, 1..P-1; tied cosines share their mean
   rank (identical texts get identical vectors, and a rank must not depend on caption ids);
4. mgs-rank(c) is the mean rank of c's other ground truths; a caption whose image has no other caption
   in the split has none and does not enter;
5. the split's mgs-rank is the mean over the captions that have one, with its standard error over
   captions (the table's interval). The chosen point is the grid's least mgs-rank; exact ties go to the
   cheaper point (least vector_size x epochs, then fewer epochs, then the smaller vector_size).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy.stats import rankdata

if TYPE_CHECKING:
    from itmbench.papers.mcic.config import MCICConfig
    from itmbench.world.generate import World

PV_SEARCH_COLUMNS = ["vector_size", "epochs", "mgs_rank", "mgs_rank_se", "captions", "pool", "chosen"]


def mgs_ranks(vectors: np.ndarray, image_ids: Sequence[int]) -> np.ndarray:
    """mgs-rank of each caption (NaN where its image has no other caption): the mean rank, by cosine to it,
    of its own image's other captions among all the other captions (ties share their mean rank)."""
    vecs = np.asarray(vectors, dtype=np.float64)
    images = np.asarray(image_ids)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    unit = vecs / np.where(norms > 0, norms, 1.0)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -np.inf)  # itself: ranked last, so the others' ranks are among the others only
    ranks = rankdata(-cos, method="average", axis=1) if cos.size else cos
    co = images[:, None] == images[None, :]
    np.fill_diagonal(co, False)
    counts = co.sum(axis=1)
    sums = np.where(co, ranks, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def choose(table: pd.DataFrame) -> tuple[int, int]:
    """The grid point of least mgs-rank; ties to the cheaper point (vector_size x epochs, then epochs, then size)."""
    if table["mgs_rank"].isna().all():
        raise ValueError(
            "mcic OPTIMIZE-PV: no caption of the search split has another caption of its image; "
            "use a split with several captions per image"
        )
    best = table.loc[table["mgs_rank"] == table["mgs_rank"].min()]
    cost = best["vector_size"] * best["epochs"]
    order = np.lexsort((best["vector_size"].to_numpy(), best["epochs"].to_numpy(), cost.to_numpy()))
    row = best.iloc[int(order[0])]
    return int(row["vector_size"]), int(row["epochs"])


def optimize_pv(
    train_texts: Sequence[str], search_texts: Sequence[str], search_images: Sequence[int], cfg: MCICConfig
) -> tuple[tuple[int, int], pd.DataFrame]:
    """OPTIMIZE-PV: the (vector_size, epochs) of `pv_grid` with the least mgs-rank on the search captions, and
    the table of every grid point (mean mgs-rank, its standard error over captions, the captions ranked)."""
    from itmbench.papers.mcic.build import infer_pv, train_pv
    from itmbench.papers.mcic.config import grid_points

    rows = []
    for size, epochs in grid_points(cfg):
        model = train_pv(train_texts, cfg, (size, epochs))
        per_caption = mgs_ranks(infer_pv(model, search_texts), search_images)
        ranked = per_caption[~np.isnan(per_caption)]
        se = float(ranked.std(ddof=1) / np.sqrt(ranked.size)) if ranked.size >= 2 else float("nan")
        rows.append(
            {
                "vector_size": size,
                "epochs": epochs,
                "mgs_rank": float(ranked.mean()) if ranked.size else float("nan"),
                "mgs_rank_se": se,
                "captions": int(ranked.size),
                "pool": max(len(search_texts) - 1, 0),
            }
        )
    table = pd.DataFrame(rows, columns=PV_SEARCH_COLUMNS[:-1])
    chosen = choose(table)
    table["chosen"] = (table["vector_size"] == chosen[0]) & (table["epochs"] == chosen[1])
    dtypes = {"vector_size": "int64", "epochs": "int64", "mgs_rank": "float64", "mgs_rank_se": "float64"}
    return chosen, table.astype({**dtypes, "captions": "int64", "pool": "int64", "chosen": "bool"})


def optimize_pv_on_world(world: World, cfg: MCICConfig) -> tuple[tuple[int, int], pd.DataFrame]:
    """OPTIMIZE-PV on the world: PV trained on `pv_train_split`'s captions, mgs-rank on `pv_search_split`'s."""
    from itmbench.papers.mcic.build import pv_split_captions

    train = pv_split_captions(world, cfg.pv_train_split)
    search = pv_split_captions(world, cfg.pv_search_split)
    if search.empty:
        raise ValueError(f"mcic OPTIMIZE-PV: the world has no captions in split {cfg.pv_search_split!r}")
    return optimize_pv(train["text"].tolist(), search["text"].tolist(), search["image_id"].tolist(), cfg)
