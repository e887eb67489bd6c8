"""BiVLC's synthetic-vs-natural detectors (Section 5.3, Table 5): accuracies and detector-based retrieval.

The paper trains two detectors, CLIP_Det (the pretrained CLIP encoders) and CLIP_TROHN-Img/Det
(CLIP_TROHN-Img's), each a sigmoid neuron over a frozen encoder's embedding (image CLS, text EOT),
and asks whether CLIP_TROHN-Img merely tells synthetic from natural. The released per-row outputs
(`src/Detectors/results/*_Classifier_*.csv`, read by `itmbench.papers.bivlc.released.read_detector_results`)
hold, per caption (and, for BiVLC, per image), the detector's probability of *synthetic*
(text_pred, img_pred) and the truth (label: 0 natural, 1 synthetic).

Row layout (from the released evaluation code, `Detector_utils.dataset` and
`Detector_evaluation_BiVLC.py`): batches of the BiVLC test instances in order, each batch its
positives (caption+, image+; label 0) then its negatives (caption-, image-; label 1). The k-th
label-0 row and the k-th label-1 row are instance k (`pair_rows`); the SugarCrepe files hold
captions only (caption+, caption-).

Decisions (the paper states none of them; each is what the released code does):
- threshold: a probability p is called synthetic when p > `DETECTOR_THRESHOLD` = 0.5. The released
  code compares `torch.round(p)` / `np.round(p)` with the label; both round half to even, so 0.5 is
  called natural, which is exactly `p > 0.5`;
- the detection accuracies (Table 5's "Text detection acc", "Img detection acc") are over every row
  (2 x 2,933 captions or images), the share whose call equals the label;
- detector-based retrieval (Table 5's I2T, T2I, Group; `detector_comparisons`), with c0, c1 the text
  detector's probabilities of caption+ and caption-, i0, i1 the image detector's of image+ and image-:
  Ipos2T = (image+ called natural) and c0 < c1; Ineg2T = (image- called synthetic) and c0 < c1;
  Tpos2I = (caption+ called natural) and i0 < i1; Tneg2I = (caption- called synthetic) and i0 < i1;
  I2T, T2I and Group combine them as for the models (`metrics.accuracy.bivlc_scores_from_comparisons`).
  The comparisons are strict: a tie is wrong;
- the detectors' SugarCrepe accuracy (quoted in Section 5.3: 74.59 and 77.65) is the share of
  instances with c0 < c1 (caption+ judged less synthetic than caption-).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.accuracy import BiVLCScores, bivlc_scores_from_comparisons

DETECTOR_THRESHOLD = 0.5
DETECTOR_COLUMNS = ("text_pred", "img_pred", "label")


@dataclass(frozen=True)
class DetectorPairs:
    """A detector's outputs paired by instance: probabilities of synthetic of caption+/- and image+/- (NaN: none)."""

    c0: np.ndarray
    c1: np.ndarray
    i0: np.ndarray
    i1: np.ndarray

    def __len__(self) -> int:
        return len(self.c0)


def _probabilities(values: np.ndarray, source: str, column: str, allow_nan: bool) -> np.ndarray:
    """The column's probabilities, checked to lie in [0, 1] (NaN only where allowed)."""
    out = np.asarray(values, dtype=float)
    allowed = np.isnan(out) if allow_nan else np.zeros(len(out), dtype=bool)
    bad = ~allowed & ~((out >= 0) & (out <= 1))  # NaN fails the range test
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InputError(f"{source}: data row {row} column {column}: expected a probability in [0, 1], got {out[row]}")
    return out


def pair_rows(frame: pd.DataFrame, source: str = "detector results", images: bool = True) -> DetectorPairs:
    """Pair the k-th label-0 row with the k-th label-1 row (instance k), as the released evaluation does.

    `images` requires img_pred everywhere (the BiVLC files); without it the image arrays are NaN.
    """
    missing = [c for c in DETECTOR_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{source}: missing columns {missing}; expected {list(DETECTOR_COLUMNS)}")
    label = frame["label"].to_numpy(dtype=bool)
    n_natural, n_synthetic = int((~label).sum()), int(label.sum())
    if n_natural != n_synthetic or n_natural == 0:
        raise InputError(
            f"{source}: {n_natural} natural (label 0) and {n_synthetic} synthetic (label 1) rows; "
            "expected as many of each, one of each per instance"
        )
    text = _probabilities(frame["text_pred"].to_numpy(), source, "text_pred", allow_nan=False)
    image = _probabilities(frame["img_pred"].to_numpy(), source, "img_pred", allow_nan=not images)
    return DetectorPairs(c0=text[~label], c1=text[label], i0=image[~label], i1=image[label])


def synthetic_call(probability: np.ndarray, threshold: float = DETECTOR_THRESHOLD) -> np.ndarray:
    """Whether each probability is called synthetic (p > threshold; 0.5 itself is natural, as torch.round)."""
    return np.asarray(probability, dtype=float) > threshold


def detection_correct(probability: np.ndarray, label: np.ndarray, threshold: float = DETECTOR_THRESHOLD) -> np.ndarray:
    """Per row, whether the detector's call (synthetic or natural) equals the label."""
    return synthetic_call(probability, threshold) == np.asarray(label, dtype=bool)


def detection_accuracy_flags(pairs: DetectorPairs, threshold: float = DETECTOR_THRESHOLD) -> dict[str, np.ndarray]:
    """Per-row correctness of the text and image detectors over all rows (natural rows, then synthetic rows)."""
    label = np.r_[np.zeros(len(pairs), bool), np.ones(len(pairs), bool)]
    out = {"text_detection": detection_correct(np.r_[pairs.c0, pairs.c1], label, threshold)}
    if not (np.isnan(pairs.i0).any() or np.isnan(pairs.i1).any()):
        out["img_detection"] = detection_correct(np.r_[pairs.i0, pairs.i1], label, threshold)
    return out


def detector_comparisons(pairs: DetectorPairs, threshold: float = DETECTOR_THRESHOLD) -> BiVLCScores:
    """The detector-based BiVLC scores per instance (Ipos2T, Ineg2T, Tpos2I, Tneg2I and I2T, T2I, Group)."""
    caption_order = pairs.c0 < pairs.c1  # caption+ judged less synthetic than caption-
    image_order = pairs.i0 < pairs.i1
    return bivlc_scores_from_comparisons(
        ~synthetic_call(pairs.i0, threshold) & caption_order,
        synthetic_call(pairs.i1, threshold) & caption_order,
        ~synthetic_call(pairs.c0, threshold) & image_order,
        synthetic_call(pairs.c1, threshold) & image_order,
    )


def sugarcrepe_detector_correct(pairs: DetectorPairs) -> np.ndarray:
    """Per SugarCrepe instance, whether caption+ is judged less synthetic than caption- (strict)."""
    return pairs.c0 < pairs.c1
