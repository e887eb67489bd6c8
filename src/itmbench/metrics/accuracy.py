"""Per-instance accuracies: BISON, MCIC/DMC, BiVLC (I2T, T2I, Group, four comparisons), SugarCrepe.

Every comparison is strict: a tie between the true and a wrong option counts as wrong, so a
model that outputs a constant score scores 0, not chance. NaN scores raise ``ValueError``
(a NaN would otherwise silently count as wrong). Aggregates are fractions in [0, 1] with a
Wilson interval and the binomial standard error; ``*_percent`` give the papers' x100 units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, binomial_standard_error, wilson_interval


@dataclass(frozen=True)
class Accuracy:
    """Per-instance correctness and its aggregate: accuracy, Wilson interval, binomial SE."""

    correct: np.ndarray
    n: int
    successes: int
    accuracy: float
    ci_low: float
    ci_high: float
    standard_error: float
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def percent(self) -> float:
        """Accuracy x100, as the papers print it."""
        return 100.0 * self.accuracy

    @property
    def ci_percent(self) -> tuple[float, float]:
        """Wilson interval x100."""
        return (100.0 * self.ci_low, 100.0 * self.ci_high)

    @property
    def standard_error_percent(self) -> float:
        """Binomial standard error x100: the '±' of the MCIC paper."""
        return 100.0 * self.standard_error


def accuracy_from_correct(correct: ArrayLike, confidence: float = DEFAULT_CONFIDENCE) -> Accuracy:
    """Aggregate per-instance booleans into accuracy with a Wilson interval and binomial SE."""
    c = np.asarray(correct)
    if c.dtype != bool:
        if not np.isin(c, (0, 1)).all():
            raise ValueError("per-instance correctness must be boolean or 0/1")
        c = c.astype(bool)
    c = c.ravel()
    n = int(c.size)
    k = int(c.sum())
    p = k / n if n else float("nan")
    lo, hi = wilson_interval(k, n, confidence)
    return Accuracy(c, n, k, p, lo, hi, binomial_standard_error(p, n), confidence)


def _scores(x: ArrayLike, name: str) -> np.ndarray:
    """Float score array without NaN (NaN would silently count as wrong)."""
    a = np.asarray(x, dtype=float)
    bad = np.isnan(a)
    if bad.any():
        first = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"{name}: {int(bad.sum())} NaN scores (first at flat index {first})")
    return a


def _pairwise_correct(score_pos: ArrayLike, score_neg: ArrayLike) -> np.ndarray:
    """score_pos > score_neg elementwise, shapes checked, ties wrong."""
    p = _scores(score_pos, "score_pos")
    q = _scores(score_neg, "score_neg")
    if p.shape != q.shape:
        raise ValueError(f"score shapes differ: {p.shape} vs {q.shape}")
    return p > q


def bison_accuracy(score_pos: ArrayLike, score_neg: ArrayLike, confidence: float = DEFAULT_CONFIDENCE) -> Accuracy:
    """BISON: a caption picks the higher-scoring of its two images; a tie counts as wrong."""
    return accuracy_from_correct(_pairwise_correct(score_pos, score_neg), confidence)


def sugarcrepe_accuracy(score_pos: ArrayLike, score_neg: ArrayLike, confidence: float = DEFAULT_CONFIDENCE) -> Accuracy:
    """SugarCrepe: s(image, positive caption) > s(image, negative caption), strict."""
    return accuracy_from_correct(_pairwise_correct(score_pos, score_neg), confidence)


def multiple_choice_correct(scores: ArrayLike, answer: ArrayLike) -> np.ndarray:
    """Per-instance: the true option's score is strictly above every other option's (ties wrong)."""
    s = _scores(scores, "scores")
    if s.ndim != 2:
        raise ValueError(f"scores must be (n_instances, n_options), got shape {s.shape}")
    a = np.asarray(answer, dtype=np.int64).ravel()
    if a.shape[0] != s.shape[0]:
        raise ValueError(f"{s.shape[0]} score rows but {a.shape[0]} answers")
    if a.size and (a.min() < 0 or a.max() >= s.shape[1]):
        raise ValueError(f"answer indices must lie in [0, {s.shape[1]})")
    rows = np.arange(s.shape[0])
    true = s[rows, a]
    others = s.copy()
    others[rows, a] = -np.inf
    return true > others.max(axis=1)


def mcic_accuracy(scores: ArrayLike, answer: ArrayLike, confidence: float = DEFAULT_CONFIDENCE) -> Accuracy:
    """MCIC/DMC: pick the true caption among 5 options by score; SE is the paper's '±'."""
    return accuracy_from_correct(multiple_choice_correct(scores, answer), confidence)


def mcic_accuracy_from_predictions(
    predicted: ArrayLike, answer: ArrayLike, confidence: float = DEFAULT_CONFIDENCE
) -> Accuracy:
    """MCIC/DMC accuracy when a model outputs an option index (e.g. the FFNN's argmax)."""
    p = np.asarray(predicted).ravel()
    a = np.asarray(answer).ravel()
    if p.shape != a.shape:
        raise ValueError(f"{p.size} predictions but {a.size} answers")
    return accuracy_from_correct(p == a, confidence)


def constant_answer_accuracy(answer: ArrayLike, n_options: int = 5) -> np.ndarray:
    """Accuracy of always answering position j, for each j: the positional prior of MCIC."""
    a = np.asarray(answer, dtype=np.int64).ravel()
    return np.bincount(a, minlength=n_options)[:n_options] / max(a.size, 1)


BIVLC_SCORE_NAMES = ("i2t", "t2i", "group", "ipos2t", "ineg2t", "tpos2i", "tneg2i")


@dataclass(frozen=True)
class BiVLCScores:
    """Per-instance BiVLC booleans: I2T, T2I, Group and the four single comparisons."""

    i2t: np.ndarray
    t2i: np.ndarray
    group: np.ndarray
    ipos2t: np.ndarray
    ineg2t: np.ndarray
    tpos2i: np.ndarray
    tneg2i: np.ndarray

    def accuracies(self, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Accuracy]:
        """Aggregate each of the seven scores (BiVLC Tables 2-4 columns)."""
        return {k: accuracy_from_correct(getattr(self, k), confidence) for k in BIVLC_SCORE_NAMES}


def bivlc_scores_from_comparisons(
    ipos2t: ArrayLike, ineg2t: ArrayLike, tpos2i: ArrayLike, tneg2i: ArrayLike
) -> BiVLCScores:
    """Combine single comparisons: I2T = Ipos2T & Ineg2T, T2I = Tpos2I & Tneg2I, Group = both."""
    a, b, c, d = (np.asarray(x).astype(bool).ravel() for x in (ipos2t, ineg2t, tpos2i, tneg2i))
    i2t = a & b
    t2i = c & d
    return BiVLCScores(i2t, t2i, i2t & t2i, a, b, c, d)


def bivlc_scores(s_c0_i0: ArrayLike, s_c0_i1: ArrayLike, s_c1_i0: ArrayLike, s_c1_i1: ArrayLike) -> BiVLCScores:
    """BiVLC per-instance scores from s(C0,I0), s(C0,I1), s(C1,I0), s(C1,I1); strict '>'.

    C0, I0 are the positive caption and image, C1, I1 the negative ones.

    Ipos2T: s(C0,I0) > s(C1,I0); Ineg2T: s(C1,I1) > s(C0,I1); Tpos2I: s(C0,I0) > s(C0,I1);
    Tneg2I: s(C1,I1) > s(C1,I0) (BiVLC appendix D). Random scores give 25 / 25 / 16.67.
    """
    s00 = _scores(s_c0_i0, "s_c0_i0")
    s01 = _scores(s_c0_i1, "s_c0_i1")
    s10 = _scores(s_c1_i0, "s_c1_i0")
    s11 = _scores(s_c1_i1, "s_c1_i1")
    if not (s00.shape == s01.shape == s10.shape == s11.shape):
        raise ValueError("the four BiVLC score arrays must have the same shape")
    return bivlc_scores_from_comparisons(s00 > s10, s11 > s01, s00 > s01, s11 > s10)
