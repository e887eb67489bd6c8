"""ECCV Caption appendix E: machine-annotator bias of machine-in-the-loop positives.

The paper builds one version of the positives per subset Theta of the machine annotators
(PVSE, VSRN, PCME, ViLT, CLIP): a candidate pair is in the Theta dataset when a model in Theta
proposed it and the crowd verified it. Relevance is graded (Eq. E.4): "100% YES" -> 1,
"Partially YES" -> 0.5, otherwise 0. Each evaluated model phi gets a score s_Theta(phi)
(graded R@1 or graded R-Precision), and the bias of Theta is (Eq. E.5)
B_Theta = mean over phi of |s_Theta(phi) - s_All(phi)|, split into self-bias (phi in Theta)
and non-self-bias (phi not in Theta).

Decisions where the paper is silent or ambiguous:

- R in graded R-Precision (Eq. E.3, "the total number of matched items") is the *count* of
  items with grade > 0 in that dataset version, not the sum of grades; a query with none
  gets nan (left to the caller to drop).
- Pairs that are positive regardless of the annotators (e.g. the original COCO pairs, if the
  caller wants them) are expressed by listing a pseudo-annotator such as "coco" among their
  proposers and in every subset; nothing is added implicitly.
- B averages over the models present in the "All" scores (in the paper the same five
  models, hence its 1/5); self-bias over those of them in Theta, non-self over the rest.
- Per |Theta|, the figure's numbers are plain means over the subsets of that size supplied;
  the full set is the reference and is never a row (all biases are 0 by definition).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import combinations

import numpy as np

from itmbench.metrics.ranking import (
    Rankings,
    _check_depth,
    _check_unique,
    _lengths,
    _padded_rankings,
    _pair_keys,
)

ANSWER_GRADES: dict[str, float] = {"100% YES": 1.0, "Partially YES": 0.5}


def answer_grade(answer: str) -> float:
    """Graded relevance of one crowd answer (ECCV Eq. E.4): 1, 0.5 or 0."""
    return ANSWER_GRADES.get(answer.strip(), 0.0)


def subset_grades(
    grades: Mapping[int, float],
    proposed_by: Mapping[int, Collection[str]],
    annotators: Collection[str],
) -> dict[int, float]:
    """One query's graded positives in the dataset built from `annotators` only.

    An item keeps its human grade when at least one annotator in the subset proposed it; items
    never proposed by the subset, and items with grade 0, are dropped.
    """
    chosen = set(annotators)
    return {
        int(item): float(g) for item, g in grades.items() if g > 0 and chosen.intersection(proposed_by.get(item, ()))
    }


def graded_relevance_matrix(ranked: Rankings, grades: Sequence[Mapping[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Float (n_queries, K) matrix of m_i(x) grades and per-query counts of items with grade > 0."""
    mat, lengths = _padded_rankings(ranked)
    _check_unique(mat, lengths)
    n, width = mat.shape
    if len(grades) != n:
        raise ValueError(f"got {n} rankings but {len(grades)} grade maps")
    rows = [{int(k): float(v) for k, v in g.items() if v > 0} for g in grades]
    n_pos = np.array([len(r) for r in rows], dtype=np.int64)
    out = np.zeros((n, width), dtype=float)
    if n == 0 or width == 0 or n_pos.sum() == 0:
        return out, n_pos
    pq = np.repeat(np.arange(n, dtype=np.int64), n_pos)
    pitems = np.fromiter((k for r in rows for k in r), dtype=np.int64, count=int(n_pos.sum()))
    pgrade = np.fromiter((v for r in rows for v in r.values()), dtype=float, count=int(n_pos.sum()))
    keys, pos_keys = _pair_keys(mat, pq, pitems)
    order = np.argsort(pos_keys)
    pos_keys, pgrade = pos_keys[order], pgrade[order]
    at = np.clip(np.searchsorted(pos_keys, keys), 0, len(pos_keys) - 1)
    hit = (pos_keys[at] == keys) & (np.arange(width)[None, :] < lengths[:, None])
    out[hit] = pgrade[at[hit]]
    return out, n_pos


def graded_recall_at_1_batch(ranked: Rankings, grades: Sequence[Mapping[int, float]]) -> np.ndarray:
    """Per-query graded R@1 (ECCV Eq. E.2 with E.4): the grade of the top-1 item."""
    m, n_pos = graded_relevance_matrix(ranked, grades)
    top = m[:, 0] if m.shape[1] else np.zeros(m.shape[0])
    return np.where(n_pos > 0, top, np.nan)


def graded_r_precision_batch(
    ranked: Rankings, grades: Sequence[Mapping[int, float]], strict: bool = True
) -> np.ndarray:
    """Per-query graded R-Precision (Eq. E.3 with E.4): (1/R) sum_{i<=R} m_i, R = #grade>0."""
    m, n_pos = graded_relevance_matrix(ranked, grades)
    if strict:
        _check_depth(_lengths(ranked), n_pos, "graded R-Precision")
    width = m.shape[1]
    within = np.arange(width)[None, :] < n_pos[:, None]
    total = np.where(within, m, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_pos > 0, total / np.maximum(n_pos, 1), np.nan)


def _abs_gaps(
    subset_scores: Mapping[str, float], all_scores: Mapping[str, float], models: Collection[str]
) -> np.ndarray:
    """|s_Theta(phi) - s_All(phi)| for the given models."""
    missing = [phi for phi in models if phi not in subset_scores]
    if missing:
        raise KeyError(f"no subset score for model(s) {missing}")
    return np.array([abs(subset_scores[phi] - all_scores[phi]) for phi in models], dtype=float)


def model_bias(subset_scores: Mapping[str, float], all_scores: Mapping[str, float]) -> float:
    """B_Theta (ECCV Eq. E.5): mean over the evaluated models of |s_Theta(phi) - s_All(phi)|."""
    return float(np.mean(_abs_gaps(subset_scores, all_scores, list(all_scores))))


def self_bias(
    subset_scores: Mapping[str, float], all_scores: Mapping[str, float], annotators: Collection[str]
) -> float:
    """Bias onto the subset's own models: mean |s_Theta - s_All| over phi in Theta (nan if none)."""
    own = [phi for phi in all_scores if phi in set(annotators)]
    return float(np.mean(_abs_gaps(subset_scores, all_scores, own))) if own else float("nan")


def non_self_bias(
    subset_scores: Mapping[str, float], all_scores: Mapping[str, float], annotators: Collection[str]
) -> float:
    """Bias onto the other models: mean |s_Theta - s_All| over phi not in Theta (nan if none)."""
    rest = [phi for phi in all_scores if phi not in set(annotators)]
    return float(np.mean(_abs_gaps(subset_scores, all_scores, rest))) if rest else float("nan")


def annotator_subsets(annotators: Sequence[str], max_size: int | None = None) -> list[frozenset[str]]:
    """Every non-empty proper subset of the annotators, by size (the Theta of Figure E.2)."""
    top = len(annotators) - 1 if max_size is None else max_size
    return [frozenset(c) for k in range(1, top + 1) for c in combinations(annotators, k)]


def bias_by_subset_size(
    scores_by_subset: Mapping[frozenset[str], Mapping[str, float]],
    all_annotators: Collection[str],
) -> dict[int, dict[str, float]]:
    """Figure E.2: per |Theta|, mean B, self-bias and non-self-bias over the supplied subsets.

    ``scores_by_subset[Theta][phi]`` is s_Theta(phi); the key ``frozenset(all_annotators)`` is
    the "All" reference and must be present.
    """
    full = frozenset(all_annotators)
    if full not in scores_by_subset:
        raise KeyError("scores_by_subset lacks the reference key frozenset(all_annotators)")
    ref = scores_by_subset[full]
    rows: dict[int, dict[str, list[float]]] = {}
    for theta, scores in scores_by_subset.items():
        theta = frozenset(theta)
        if theta == full:
            continue
        if not theta <= full:
            raise ValueError(f"subset {sorted(theta)} has annotators outside {sorted(full)}")
        acc = rows.setdefault(len(theta), {"bias": [], "self_bias": [], "non_self_bias": []})
        acc["bias"].append(model_bias(scores, ref))
        acc["self_bias"].append(self_bias(scores, ref, theta))
        acc["non_self_bias"].append(non_self_bias(scores, ref, theta))
    out: dict[int, dict[str, float]] = {}
    for k, acc in sorted(rows.items()):
        out[k] = {name: float(np.nanmean(v)) for name, v in acc.items()}
        out[k]["n_subsets"] = float(len(acc["bias"]))
    return out


def mean_graded_metric(ranked: Rankings, grades: Sequence[Mapping[int, float]], metric: str = "r_precision") -> float:
    """Mean over queries (nan-free) of a graded metric: 'recall_at_1' or 'r_precision'."""
    fns = {"recall_at_1": graded_recall_at_1_batch, "r_precision": graded_r_precision_batch}
    if metric not in fns:
        raise ValueError(f"metric must be one of {sorted(fns)}, got {metric!r}")
    return float(np.nanmean(fns[metric](ranked, grades)))
