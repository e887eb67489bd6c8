"""ECCV appendix E: graded relevance, subset datasets, bias quantities (Table E.1 example)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from itmbench.metrics.annotator_bias import (
    annotator_subsets,
    answer_grade,
    bias_by_subset_size,
    graded_r_precision_batch,
    graded_recall_at_1_batch,
    graded_relevance_matrix,
    mean_graded_metric,
    model_bias,
    non_self_bias,
    self_bias,
    subset_grades,
)
from itmbench.metrics.ranking import r_precision_batch

MODELS = ["PVSE", "VSRN", "PCME", "ViLT", "CLIP"]
# Table E.1a, text-to-image R@1: rows = evaluated model, columns = annotators used (+ All).
TABLE_E1A = {
    "PVSE": [76.5, 63.6, 67.6, 45.3, 42.0, 76.6],
    "VSRN": [68.0, 80.1, 69.0, 51.1, 47.2, 80.1],
    "PCME": [67.7, 64.3, 77.3, 46.0, 44.1, 77.4],
    "ViLT": [59.5, 59.8, 58.8, 62.0, 49.3, 72.4],
    "CLIP": [51.7, 51.5, 52.6, 42.8, 49.3, 64.3],
}


def column(j):
    return {phi: row[j] for phi, row in TABLE_E1A.items()}


def test_worked_example_bias_of_pvse():
    """Eq. E.6: B_{PVSE} = 9.5; self-bias 0.1; non-self-bias 11.8 (appendix E.3)."""
    pvse, full = column(0), column(5)
    assert round(model_bias(pvse, full), 1) == 9.5
    assert round(self_bias(pvse, full, {"PVSE"}), 1) == 0.1
    assert round(non_self_bias(pvse, full, {"PVSE"}), 1) == 11.8


def test_bias_decomposes_into_self_and_non_self():
    full = column(5)
    for j, name in enumerate(MODELS):
        sub = column(j)
        b = model_bias(sub, full)
        s, ns = self_bias(sub, full, {name}), non_self_bias(sub, full, {name})
        assert b == pytest.approx((s + 4 * ns) / 5)
        assert ns > s  # Table E.1: each annotator's dataset favours that annotator


def test_bias_by_subset_size_averages_subsets_and_skips_the_full_set():
    full = frozenset(MODELS)
    scores = {full: column(5)}
    for j, name in enumerate(MODELS):
        scores[frozenset({name})] = column(j)
    rng = np.random.default_rng(0)
    for pair in itertools.combinations(MODELS, 2):
        scores[frozenset(pair)] = {phi: v + rng.normal() for phi, v in column(5).items()}
    out = bias_by_subset_size(scores, MODELS)
    assert sorted(out) == [1, 2]
    assert out[1]["n_subsets"] == 5
    assert out[2]["n_subsets"] == 10
    expected = np.mean([model_bias(column(j), column(5)) for j in range(5)])
    assert out[1]["bias"] == pytest.approx(expected)
    with pytest.raises(KeyError):
        bias_by_subset_size({frozenset({"PVSE"}): column(0)}, MODELS)


def test_annotator_subsets_are_the_proper_non_empty_subsets():
    subs = annotator_subsets(MODELS)
    assert len(subs) == 2**5 - 2
    assert frozenset(MODELS) not in subs
    assert len(set(subs)) == len(subs)


def test_answer_grades():
    assert answer_grade("100% YES") == 1.0
    assert answer_grade("Partially YES") == 0.5
    assert answer_grade("Partially NO") == 0.0
    assert answer_grade("100% NO") == 0.0


def test_subset_grades_keep_only_items_the_subset_proposed():
    grades = {1: 1.0, 2: 0.5, 3: 1.0, 4: 0.0}
    proposed = {1: {"PVSE"}, 2: {"CLIP", "ViLT"}, 3: {"coco"}, 4: {"PVSE"}}
    assert subset_grades(grades, proposed, {"PVSE"}) == {1: 1.0}
    assert subset_grades(grades, proposed, {"PVSE", "CLIP"}) == {1: 1.0, 2: 0.5}
    assert subset_grades(grades, proposed, {"coco", "ViLT"}) == {2: 0.5, 3: 1.0}


def naive_graded(ranking, grades):
    g = {k: v for k, v in grades.items() if v > 0}
    if not g:
        return np.nan, np.nan
    r = len(g)
    m = [g.get(int(x), 0.0) for x in list(ranking)[:r]]
    return g.get(int(ranking[0]), 0.0), sum(m) / r


def test_graded_metrics_match_naive_reference():
    rng = np.random.default_rng(1)
    ranked, grades = [], []
    for _ in range(200):
        ranked.append(rng.permutation(40)[:30])
        items = rng.choice(40, size=int(rng.integers(0, 12)), replace=False)
        grades.append({int(i): float(rng.choice([0.0, 0.5, 1.0])) for i in items})
    r1 = graded_recall_at_1_batch(ranked, grades)
    rp = graded_r_precision_batch(ranked, grades)
    ref = np.array([naive_graded(r, g) for r, g in zip(ranked, grades, strict=True)])
    np.testing.assert_allclose(r1, ref[:, 0], equal_nan=True)
    np.testing.assert_allclose(rp, ref[:, 1], equal_nan=True)
    assert mean_graded_metric(ranked, grades, "r_precision") == pytest.approx(np.nanmean(ref[:, 1]))
    assert set(np.unique(r1[~np.isnan(r1)])) <= {0.0, 0.5, 1.0}


def test_graded_r_precision_with_full_grades_equals_binary_r_precision():
    rng = np.random.default_rng(2)
    ranked = [rng.permutation(50)[:20] for _ in range(50)]
    pos = [rng.choice(50, size=int(rng.integers(1, 15)), replace=False) for _ in range(50)]
    grades = [{int(i): 1.0 for i in p} for p in pos]
    np.testing.assert_allclose(graded_r_precision_batch(ranked, grades), r_precision_batch(ranked, pos))


def test_partial_yes_counts_half_and_r_counts_items():
    # R = 2 (one full, one partial positive); top-2 holds both -> (1 + 0.5) / 2
    m, n_pos = graded_relevance_matrix([[7, 8, 9]], [{8: 1.0, 7: 0.5, 3: 0.0}])
    assert m.tolist() == [[0.5, 1.0, 0.0]]
    assert n_pos.tolist() == [2]
    assert graded_r_precision_batch([[7, 8, 9]], [{8: 1.0, 7: 0.5}])[0] == 0.75
    assert graded_recall_at_1_batch([[7, 8, 9]], [{8: 1.0, 7: 0.5}])[0] == 0.5
    with pytest.raises(ValueError):
        graded_r_precision_batch([[7]], [{8: 1.0, 7: 0.5}])
