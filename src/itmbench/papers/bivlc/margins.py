"""BiVLC Figure 4 in the world: how far each model puts the negative image (and caption) from the positive pair.

The paper's Figure 4 is a conceptual diagram (section 5.2, "Why does training with hard negative images
help?"): trained only with hard negative texts, the positive caption (Caption+) may lie closer to the negative
image (Image-) than to its own image (Image+); adding hard negative images pushes Caption+ away from Image-.
The world measures it: per BiVLC instance and model, the margins

- ``caption+``: s(Caption+, Image+) - s(Caption+, Image-) (``s_c0_i0 - s_c0_i1``; > 0 is the paper's Tpos2I),
- ``image+``: s(Image+, Caption+) - s(Image+, Caption-) (``s_c0_i0 - s_c1_i0``; > 0 is Ipos2T),

from the per-instance scores the benchmark writes (`itmbench.papers.bivlc.score`). `figure4_long` gives, per
model and margin, the mean and median (percentile bootstrap intervals over instances), the share of instances
with a positive margin (Wilson interval) and the histogram: the share of instances per bin of ``bins`` equal
bins over the range of the margin pooled over the models (so the models' histograms share their bins; the
last bin holds its upper edge, as numpy's), each share with its Wilson interval.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval, wilson_interval

SCORE_COLUMNS = ("bivlc_id", "in_bivlc", "s_c0_i0", "s_c0_i1", "s_c1_i0")
# margin -> (label, the positive pair's score, the score it is compared with)
MARGINS: dict[str, tuple[str, str, str]] = {
    "caption+": ("s(Caption+, Image+) - s(Caption+, Image-)", "s_c0_i0", "s_c0_i1"),
    "image+": ("s(Image+, Caption+) - s(Image+, Caption-)", "s_c0_i0", "s_c1_i0"),
}
FIGURE4_COLUMNS = ("row", "column", "value", "lo", "hi", "model", "margin", "statistic", "bin_lo", "bin_hi", "n")


def instance_margins(scores: pd.DataFrame, source: str = "scores") -> pd.DataFrame:
    """Per BiVLC instance (rows with in_bivlc, sorted by bivlc_id): bivlc_id and each margin of `MARGINS`.

    Refuses (InputError naming `source`) missing columns, a repeated bivlc_id and a non-finite score.
    """
    missing = [c for c in SCORE_COLUMNS if c not in scores.columns]
    if missing:
        raise InputError(f"{source}: no columns {missing}; expected BiVLC per-instance scores {list(SCORE_COLUMNS)}")
    b = scores[scores["in_bivlc"].to_numpy(bool)].sort_values("bivlc_id", kind="stable")
    ids = b["bivlc_id"].to_numpy(np.int64)
    if len(np.unique(ids)) != len(ids):
        raise InputError(f"{source}: a bivlc_id appears twice; expected one row per BiVLC instance")
    out = pd.DataFrame({"bivlc_id": ids})
    for name, (_, positive, other) in MARGINS.items():
        values = b[positive].to_numpy(np.float64) - b[other].to_numpy(np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            raise InputError(
                f"{source}: bivlc_id {int(ids[np.flatnonzero(bad)[0]])}: {positive} or {other} is not finite; "
                "expected a score for every BiVLC instance"
            )
        out[name] = values
    return out


def bin_edges(pooled: np.ndarray, bins: int) -> np.ndarray:
    """`bins` equal bins over [min, max] of the pooled margins (a degenerate range widened by 0.5 each side)."""
    lo, hi = float(np.min(pooled)), float(np.max(pooled))
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1)


def figure4_long(
    scores: Mapping[str, pd.DataFrame],
    rows: Mapping[str, str],
    bins: int = 30,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Figure 4's numbers per model (`scores`: model -> its per-instance scores) and margin: mean and median
    (bootstrap), share > 0 and the histogram's shares per bin (Wilson), in `FIGURE4_COLUMNS`. The column is the
    model's row name (`rows`) and the margin; the row the statistic or the bin."""
    if not scores:
        raise InputError("BiVLC Figure 4: no model's scores; expected at least one")
    margins = {model: instance_margins(frame, f"the BiVLC scores of {model}") for model, frame in scores.items()}
    empty = [m for m, frame in margins.items() if frame.empty]
    if empty:
        raise InputError(f"the BiVLC scores of {empty[0]}: no BiVLC instance; expected at least one")
    records = []
    for margin in MARGINS:
        edges = bin_edges(np.concatenate([m[margin].to_numpy() for m in margins.values()]), bins)
        for model in margins:  # in the order given (params.yaml report.bivlc_figure4.models)
            values = margins[model][margin].to_numpy(np.float64)
            n = len(values)
            cells = []  # (row, statistic, value, lo, hi, bin_lo, bin_hi)
            for statistic, function in (("mean", np.mean), ("median", np.median)):
                lo, hi = bootstrap_interval(values, function, n_boot, seed, confidence)
                cells.append((statistic, statistic, float(function(values)), lo, hi, np.nan, np.nan))
            k = int((values > 0).sum())
            lo, hi = wilson_interval(k, n, confidence)
            cells.append(("share > 0 (%)", "positive", 100 * k / n, 100 * lo, 100 * hi, np.nan, np.nan))
            for i, count in enumerate(np.histogram(values, bins=edges)[0]):
                lo, hi = wilson_interval(int(count), n, confidence)
                row = f"bin {i + 1:02d} (%)"
                cells.append((row, "bin", 100 * int(count) / n, 100 * lo, 100 * hi, edges[i], edges[i + 1]))
            column = f"{rows.get(model, model)}: {margin}"
            for row, statistic, value, lo, hi, b_lo, b_hi in cells:
                records.append((row, column, value, lo, hi, model, margin, statistic, float(b_lo), float(b_hi), n))
    return pd.DataFrame(records, columns=list(FIGURE4_COLUMNS))


__all__ = ["FIGURE4_COLUMNS", "MARGINS", "bin_edges", "figure4_long", "instance_margins"]
