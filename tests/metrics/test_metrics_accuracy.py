"""BISON, MCIC, BiVLC and SugarCrepe accuracies: strict comparisons, intervals, paper numbers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from itmbench.metrics.accuracy import (
    BIVLC_SCORE_NAMES,
    accuracy_from_correct,
    bison_accuracy,
    bivlc_scores,
    bivlc_scores_from_comparisons,
    constant_answer_accuracy,
    mcic_accuracy,
    mcic_accuracy_from_predictions,
    multiple_choice_correct,
    sugarcrepe_accuracy,
)
from itmbench.metrics.intervals import wilson_interval

# --- BISON / SugarCrepe -----------------------------------------------------------------------


def test_bison_picks_higher_score_and_tie_is_wrong():
    acc = bison_accuracy([0.9, 0.1, 0.5, -1.0], [0.2, 0.3, 0.5, -2.0])
    assert acc.correct.tolist() == [True, False, False, True]
    assert acc.successes == 2
    assert acc.n == 4
    assert acc.accuracy == 0.5
    assert acc.percent == 50.0
    assert (acc.ci_low, acc.ci_high) == wilson_interval(2, 4)


def test_constant_scorer_gets_zero_not_chance():
    s = np.zeros(1000)
    assert bison_accuracy(s, s).accuracy == 0.0
    assert sugarcrepe_accuracy(s, s).accuracy == 0.0
    assert mcic_accuracy(np.zeros((10, 5)), np.zeros(10, dtype=int)).accuracy == 0.0


def test_nan_scores_raise():
    with pytest.raises(ValueError, match="score_neg: 1 NaN"):
        bison_accuracy([1.0, 2.0], [0.0, np.nan])
    with pytest.raises(ValueError, match="NaN"):
        bivlc_scores([1.0], [0.0], [np.nan], [1.0])


def test_shape_mismatch_raises():
    with pytest.raises(ValueError, match="shapes differ"):
        sugarcrepe_accuracy([1.0, 2.0], [0.0])


def test_wilson_interval_contains_accuracy_and_narrows_with_n():
    rng = np.random.default_rng(0)
    small = accuracy_from_correct(rng.random(100) < 0.7)
    large = accuracy_from_correct(rng.random(10_000) < 0.7)
    for acc in (small, large):
        assert acc.ci_low < acc.accuracy < acc.ci_high
    assert (large.ci_high - large.ci_low) < (small.ci_high - small.ci_low) / 5
    assert accuracy_from_correct([1, 0, 1]).successes == 2
    with pytest.raises(ValueError):
        accuracy_from_correct([0, 2])


# --- MCIC / DMC -------------------------------------------------------------------------------


def test_multiple_choice_matches_naive_reference_with_ties():
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 4, size=(500, 5)).astype(float)  # many ties on purpose
    answer = rng.integers(0, 5, size=500)
    ours = multiple_choice_correct(scores, answer)
    ref = [all(row[a] > row[j] for j in range(5) if j != a) for row, a in zip(scores, answer, strict=True)]
    assert ours.tolist() == ref
    assert 0 < ours.sum() < 500


@pytest.mark.parametrize(
    ("split", "n", "accuracies", "printed_pm"),
    [
        ("dev", 9_999, [19.6, 32.8, 44.6, 56.3, 60.5], [0.4, 0.5, 0.5, 0.5, 0.5]),
        ("test", 10_253, [19.3, 32.0, 44.5, 55.1, 59.0], [0.4, 0.5, 0.5, 0.5, 0.5]),
    ],
)
def test_mcic_table3_plus_minus_is_binomial_standard_error(split, n, accuracies, printed_pm):
    """MCIC Table 3 (Baseline-I2C ... Vec2seq+FFNN): '±' = 100 sqrt(p(1-p)/n), to 1 decimal."""
    for acc_pct, pm in zip(accuracies, printed_pm, strict=True):
        k = round(acc_pct / 100 * n)
        correct = np.zeros(n, dtype=bool)
        correct[:k] = True
        acc = mcic_accuracy_from_predictions(np.where(correct, 2, 0), np.full(n, 2))
        assert round(acc.percent, 1) == acc_pct
        assert round(acc.standard_error_percent, 1) == pm


def test_mcic_scores_and_prediction_paths_agree():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(300, 5))
    answer = rng.integers(0, 5, size=300)
    a = mcic_accuracy(scores, answer)
    b = mcic_accuracy_from_predictions(scores.argmax(axis=1), answer)
    assert a.successes == b.successes
    assert a.standard_error == pytest.approx(np.sqrt(a.accuracy * (1 - a.accuracy) / 300))
    with pytest.raises(ValueError, match="answer indices"):
        mcic_accuracy(scores, np.full(300, 5))


def test_mcic_dev_positional_prior(github_raw):
    """Options are sorted alphabetically: always answering position 3 scores 22.7% on dev."""
    path = github_raw / "google/mcic-coco/master/data/mc_mscoco_dev.txt"
    answers = []
    with path.open() as fh:
        for line in fh:
            fields = dict(kv.split("=", 1) for kv in line.rstrip("\n").split("\t"))
            answers.append(int(fields["reference"]))
    prior = constant_answer_accuracy(answers)
    assert len(answers) == 9_999
    assert int(np.argmax(prior)) == 3
    assert round(100 * prior.max(), 1) == 22.7
    assert prior.sum() == pytest.approx(1.0)


# --- BiVLC ------------------------------------------------------------------------------------


def naive_bivlc(s00, s01, s10, s11):
    ipos2t, ineg2t = s00 > s10, s11 > s01
    tpos2i, tneg2i = s00 > s01, s11 > s10
    i2t = ipos2t and ineg2t
    t2i = tpos2i and tneg2i
    return [i2t, t2i, i2t and t2i, ipos2t, ineg2t, tpos2i, tneg2i]


def test_bivlc_matches_naive_reference_on_all_orderings_and_ties():
    """Every assignment of values {0,1,2} to the four scores (ties included)."""
    combos = np.array(list(itertools.product(range(3), repeat=4)), dtype=float)
    ours = bivlc_scores(*combos.T)
    for row, (s00, s01, s10, s11) in enumerate(combos):
        expected = naive_bivlc(s00, s01, s10, s11)
        got = [bool(getattr(ours, name)[row]) for name in BIVLC_SCORE_NAMES]
        assert got == expected, (s00, s01, s10, s11)


def test_bivlc_argument_order_matters():
    # s(C0,I0)=3, s(C0,I1)=2, s(C1,I0)=0, s(C1,I1)=1: I2T holds (3>0, 1>2 fails) -> False;
    # T2I: 3>2 and 1>0 -> True.
    out = bivlc_scores([3.0], [2.0], [0.0], [1.0])
    assert out.ipos2t[0] and not out.ineg2t[0]
    assert out.tpos2i[0] and out.tneg2i[0]
    assert not out.i2t[0] and out.t2i[0] and not out.group[0]


def test_bivlc_random_scores_land_on_published_chance_levels():
    """Random: I2T 25, T2I 25, Group 16.67, each single comparison 50 (BiVLC Tables 2-3)."""
    rng = np.random.default_rng(42)
    n = 60_000
    accs = bivlc_scores(*rng.normal(size=(4, n))).accuracies()
    expected = {"i2t": 0.25, "t2i": 0.25, "group": 1 / 6}
    expected.update({k: 0.5 for k in ("ipos2t", "ineg2t", "tpos2i", "tneg2i")})
    for name, p in expected.items():
        se = np.sqrt(p * (1 - p) / n)
        assert abs(accs[name].accuracy - p) < 4 * se, name


def test_sugarcrepe_random_is_half():
    rng = np.random.default_rng(9)
    acc = sugarcrepe_accuracy(rng.normal(size=40_000), rng.normal(size=40_000))
    assert abs(acc.accuracy - 0.5) < 4 * np.sqrt(0.25 / 40_000)


BIVLC_TABLE3 = {
    # released results file stem: (SugarCrepe, I2T, T2I, Group, Ipos2T, Ineg2T, Tpos2I, Tneg2I)
    "ViT-B-32": (76.56, 75.83, 52.40, 49.06, 84.32, 89.50, 69.21, 82.82),  # CLIP
    "CLIP_COCO": (84.66, 82.75, 63.89, 60.96, 89.06, 91.75, 72.79, 90.86),
    "CLIP_TROHN-Text": (93.40, 78.18, 62.19, 57.48, 93.25, 83.87, 71.05, 90.59),
    "CLIP_TROHN-Img": (89.40, 88.54, 71.84, 69.25, 92.12, 95.33, 81.45, 90.15),
}


@pytest.mark.parametrize("model", sorted(BIVLC_TABLE3))
def test_bivlc_table3_from_released_single_comparisons(github_raw, model):
    """Combining the released four comparisons reproduces the released I2T/T2I/Group columns
    and BiVLC Table 3 to the printed precision (2,933 instances; SugarCrepe 7,512)."""
    pd = pytest.importorskip("pandas")
    base = github_raw / "IMirandaM/BiVLC/main/results"
    df = pd.read_csv(base / f"BiVLC_{model}.csv")
    flag = {c: df[c].astype(str).eq("True").to_numpy() for c in df.columns if "score" in c}
    out = bivlc_scores_from_comparisons(
        flag["text_score_i0"], flag["text_score_i1"], flag["image_score_c0"], flag["image_score_c1"]
    )
    np.testing.assert_array_equal(out.i2t, flag["text_score"])
    np.testing.assert_array_equal(out.t2i, flag["image_score"])
    np.testing.assert_array_equal(out.group, flag["group_score"])
    accs = out.accuracies()
    sugar = pd.read_csv(base / f"SUGARCREPE_CORRECT_{model}.csv")["correct"].to_numpy()
    got = [accuracy_from_correct(sugar).percent] + [accs[k].percent for k in BIVLC_SCORE_NAMES]
    assert len(df) == 2_933
    assert len(sugar) == 7_512
    assert [round(x, 2) for x in got] == list(BIVLC_TABLE3[model])


def test_wilson_z_is_scipy_norm_ppf_exactly():
    """The interval takes its normal quantile from scipy.special.ndtri (lighter to import than scipy.stats):
    the same bits as scipy.stats.norm.ppf, so intervals did not move when the import changed."""
    from scipy import stats

    def naive_wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
        z = float(stats.norm.ppf(0.5 + confidence / 2.0))
        p = k / n
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))

    for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
        for k, n in ((0, 10), (3, 10), (650, 650), (603, 650), (1, 1_000_000)):
            assert wilson_interval(k, n, confidence) == naive_wilson(k, n, confidence), (confidence, k, n)
