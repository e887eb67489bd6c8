"""MCIC's OPTIMIZE-SCORE (Ding et al., Algorithm 1, section 3.3): the lambda of Score chosen by wmgs-rank.

The paper: "the OPTIMIZE-SCORE(PV, Score) step is a grid-search over the lambda parameter of the
Score function [...] searched on a grid to minimize the 'weighted multiple ground-truths score' rank
(wmgs-rank): the average rank (under the Score) between c_rc and {c_rl | l != c}, relative to the top
N-best closest-cosine neighbors in PV. [...] if given five ground-truths for image i_r, and when
considering c_r1, ground-truths c_r2 to c_r5 are ranking at #4, #10, #16, and #22 (in top-500
closest-cosine neighbors in PV), then wmgs-rank(c_r1) = 13 (the average of these ranks). Our
grid-search over the MCIC-COCO dev dataset yields a minimum wmgs-rank at lambda=0.3."

Here, for one lambda of the grid:
1. each caption c of the search split has its N nearest captions in the pool by PV cosine (itself
   excluded, its own image's other captions included: they are what is ranked; ties by pool order);
2. each of the N is scored by Eq. 1 against c, Score = 0 if BLEU(c', c) >= L else
   lambda * cos_PV + (1 - lambda) * BLEU (the same Score that then picks the decoys), and ranked by
   Score, highest first, 1..N; tied scores share their mean rank (so the zeros of Eq. 1's threshold
   do not depend on caption ids);
3. wmgs-rank(c) is the mean rank of c's other ground truths that lie in its N-best; a ground truth
   outside the N-best has no rank (the paper ranks "in top-500 closest-cosine neighbors"), and a
   caption with none inside has no wmgs-rank. Which ground truths are inside depends on the cosine
   only, so every lambda is averaged over the same captions and ranks;
4. the dataset's wmgs-rank is the mean over the captions that have one (with its standard error over
   captions, for the table's interval). The chosen lambda is the grid's least wmgs-rank; ties go to
   the smallest lambda.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from itmbench.papers.mcic.canonical import TABLE_COLUMNS

LAMBDA_SEARCH_COLUMNS = TABLE_COLUMNS["lambda_search"]


@dataclass(frozen=True)
class Neighbourhoods:
    """Per search caption, its N-best PV neighbours' cosine, BLEU against it, and whether each is a co-caption."""

    cos: np.ndarray  # [T, N] float64
    bleu: np.ndarray  # [T, N] float64
    same_image: np.ndarray  # [T, N] bool


def eq1_score(cos: np.ndarray, bleu: np.ndarray, lam: float, threshold: float) -> np.ndarray:
    """Eq. 1: 0 where BLEU >= L, else lambda * cos + (1 - lambda) * BLEU."""
    return np.where(bleu >= threshold, 0.0, lam * cos + (1.0 - lam) * bleu)


def wmgs_ranks(nb: Neighbourhoods, lam: float, threshold: float) -> np.ndarray:
    """wmgs-rank of each search caption at this lambda (NaN where none of its ground truths is in its N-best)."""
    score = eq1_score(nb.cos, nb.bleu, lam, threshold)
    ranks = rankdata(-score, method="average", axis=1) if score.size else score
    counts = nb.same_image.sum(axis=1)
    sums = np.where(nb.same_image, ranks, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _standard_error(values: np.ndarray) -> float:
    """Standard error of a mean over captions (NaN under two captions)."""
    return float(values.std(ddof=1) / np.sqrt(values.size)) if values.size >= 2 else float("nan")


def optimize_score(nb: Neighbourhoods, grid: Sequence[float], threshold: float) -> tuple[float, pd.DataFrame]:
    """OPTIMIZE-SCORE: the grid's lambda of least mean wmgs-rank, and the table of every grid point."""
    if len(grid) == 0:
        raise ValueError("mcic lambda_grid: expected at least one lambda")
    rows = []
    for lam in grid:
        per_caption = wmgs_ranks(nb, float(lam), threshold)
        ranked = ~np.isnan(per_caption)
        rows.append(
            {
                "lambda": float(lam),
                "wmgs_rank": float(per_caption[ranked].mean()) if ranked.any() else float("nan"),
                "wmgs_rank_se": _standard_error(per_caption[ranked]),
                "captions": int(ranked.sum()),
                "ranked_ground_truths": int(nb.same_image[ranked].sum()),
            }
        )
    table = pd.DataFrame(rows, columns=LAMBDA_SEARCH_COLUMNS[:-1])
    if table["wmgs_rank"].isna().all():
        raise ValueError(
            "mcic OPTIMIZE-SCORE: no caption of the search split has another ground truth among its "
            "N-best PV neighbours; raise `neighbourhood` or use a split with several captions per image"
        )
    best = table["wmgs_rank"].min()
    chosen = float(table.loc[table["wmgs_rank"] == best, "lambda"].min())
    table["chosen"] = table["lambda"] == chosen
    table = table.sort_values("lambda", kind="stable").reset_index(drop=True)
    dtypes = {"lambda": "float64", "wmgs_rank": "float64", "wmgs_rank_se": "float64", "captions": "int64"}
    return chosen, table.astype({**dtypes, "ranked_ground_truths": "int64", "chosen": "bool"})
