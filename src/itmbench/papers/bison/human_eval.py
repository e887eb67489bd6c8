"""BISON Figure 4 in the world: the correctness and detailedness of generated captions as a function of their
captioning scores, the world's truth playing the paper's raters (as it plays Table 1's judge).

The paper (section 2, appendix B): annotators rate the captions UpDown generates on COCO val, on a Likert scale
from 1 to 5, for correctness ("Is everything that is described in the caption present in the image?") and, a
second set of annotators *without the image*, for detailedness (the COCO human-evaluation guidelines' measures
3 and 4); Figure 4 plots both against BLEU-4, CIDEr-D, METEOR and SPICE "normalized to lie between 0 and 1";
the averages are 3.266 and 2.203. Here (decisions where the paper is silent or the world differs):

- **Reading a caption.** `itmbench.world.parse.parse_caption` reads the generated text back into the grammar's
  structure; a caption it cannot read scores 1 on both scales and is counted (`readable` false).
- **Correctness** = 1 + 4 x the share of the caption's statements true of its image under the world's truth:
  each mention with its attributes is a statement (count 1: some object of the scene fits it; count k > 1:
  exactly k objects fit it), and a relation is one more (`truth.caption_fits` of the whole caption: two
  distinct objects fit the mentions and the relation holds with the world's margin).
- **Detailedness** = 1 + 4 x the caption's units / `MAX_DETAIL`, judged from the structure alone (no image):
  each mention is one unit (an object) plus one per attribute it claims (shape, colour, size) plus one for a
  number (count > 1); a relation is one unit. `MAX_DETAIL` (9) is the most the grammar states: two mentions
  claiming shape, colour and size, and a relation.
- **Normalisation.** Each score divided by the largest score among the captioner's captions (every score is
  >= 0, so this maps to [0, 1] with the best caption at 1; the paper does not say how it normalised).
- **Bins.** `bins` equal bins over [0, 1] (the last closed): per captioner, metric and scale the mean rating of
  the captions in each bin with a percentile bootstrap interval, and the overall average beside the printed one.
  The paper reads its figure as "captioning scores do not correlate with the correctness of generated captions
  very well": Spearman's rank correlation of each rating with each score says the same in numbers.
  SPICE is not possible here (`metrics.captioning.NOT_POSSIBLE`); its world analogue, Tuple F1
  (`metrics.tuple_f1`), is one of the scores where bison_caption_metrics lists it. It reads the caption with
  the same parser as the ratings do, so its correlation with correctness is in part by construction.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.captioning import METRIC_NAMES
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.parse import parse_caption
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

PANELS = ("correctness", "detailedness")
MAX_DETAIL = 2 * (1 + 3) + 1
RATING_COLUMNS = ("image_id", "caption", "readable", "error", "statements", "true_statements", "units")
FIGURE4_COLUMNS = (
    "row",
    "column",
    "value",
    "lo",
    "hi",
    "model",
    "panel",
    "metric",
    "statistic",
    "bin_lo",
    "bin_hi",
    "n",
)


def mention_true(m: Mention, scene: Scene) -> bool:
    """A mention's statement: count 1, some object fits it; count k > 1, exactly k objects fit it."""
    k = sum(m.matches(o) for o in scene.objects)
    return k >= 1 if m.count == 1 else k == m.count


def statements(structure: CaptionStructure, scene: Scene, margin: float) -> list[bool]:
    """The truth of each statement of a caption: one per mention, then the relation (if any)."""
    out = [mention_true(m, scene) for m in structure.mentions]
    if structure.relation is not None:
        out.append(caption_fits(structure, scene, margin))
    return out


def detail_units(structure: CaptionStructure) -> int:
    """How much a caption states, without the image: per mention 1 + its claimed attributes (+1 for a number),
    +1 for a relation."""
    units = sum(1 + sum(a is not None for a in (m.shape, m.colour, m.size)) + (m.count > 1) for m in structure.mentions)
    return units + (structure.relation is not None)


def correctness(true_statements: int, n_statements: int) -> float:
    """1 + 4 x the share of true statements; 1 for a caption with none read."""
    return 1.0 + 4.0 * true_statements / n_statements if n_statements else 1.0


def detailedness(units: int) -> float:
    """1 + 4 x units / MAX_DETAIL."""
    return 1.0 + 4.0 * units / MAX_DETAIL


def rate_captions(generated: pd.DataFrame, scenes: Mapping[int, Scene], margin: float, source: str) -> pd.DataFrame:
    """Each generated caption read and judged: `RATING_COLUMNS` plus correctness and detailedness."""
    records = []
    for image_id, caption in zip(generated["image_id"].to_numpy(np.int64), generated["caption"].astype(str)):
        scene = scenes.get(int(image_id))
        if scene is None:
            raise InputError(f"{source}: image {int(image_id)} has no scene; expected the world's scenes")
        parsed = parse_caption(caption)
        if parsed.structure is None:
            records.append((int(image_id), caption, False, parsed.error, 0, 0, 0))
            continue
        truth = statements(parsed.structure, scene, margin)
        records.append((int(image_id), caption, True, "", len(truth), sum(truth), detail_units(parsed.structure)))
    out = pd.DataFrame(records, columns=list(RATING_COLUMNS))
    out["correctness"] = [correctness(t, n) for t, n in zip(out["true_statements"], out["statements"])]
    out["detailedness"] = [detailedness(u) if r else 1.0 for u, r in zip(out["units"], out["readable"])]
    return out


def normalised(scores: np.ndarray) -> np.ndarray:
    """Scores divided by their largest (all zero where the largest is not positive)."""
    scores = np.asarray(scores, dtype=np.float64)
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)


def bin_index(x: np.ndarray, bins: int) -> np.ndarray:
    """The bin of each x in [0, 1] among `bins` equal bins (left-closed; the last also closed on the right)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    return np.clip(np.searchsorted(edges, x, side="right") - 1, 0, bins - 1)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN where either side is constant."""
    rx = pd.Series(np.asarray(x, dtype=np.float64)).rank().to_numpy()
    ry = pd.Series(np.asarray(y, dtype=np.float64)).rank().to_numpy()
    if len(rx) < 2 or rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def figure4_long(
    rated: Mapping[str, pd.DataFrame],
    scores: pd.DataFrame,
    metrics: list[str],
    rows: Mapping[str, str],
    published: Mapping[str, float],
    bins: int = 10,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Figure 4's numbers in `FIGURE4_COLUMNS` (`rated`: captioner -> `rate_captions`; `scores`: model,
    image_id and a column per metric, the per-image caption scores): per captioner and scale the average with
    its bootstrap interval, the share of unreadable captions, and per metric the mean rating per bin of the
    normalised score and Spearman's rank correlation of the rating with the score (bootstrap over captions; NaN
    where a resample is constant); the printed averages (`published`: scale -> value) as rows of model 'printed'."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    records = []
    for panel in PANELS:
        if panel in published:
            records.append(("average", f"printed (UpDown): {panel}", published[panel], np.nan, np.nan, "printed"))
            records[-1] += (panel, "", "mean", np.nan, np.nan, np.nan)
    for model in sorted(rated):
        frame = rated[model]
        label = rows.get(model, model)
        mine = scores[scores["model"].astype(str) == model].set_index("image_id")
        ids = frame["image_id"].to_numpy(np.int64)
        absent = ~np.isin(ids, mine.index.to_numpy(np.int64))
        if absent.any():
            raise InputError(
                f"caption scores: no scores of {model}'s caption of image {int(ids[np.flatnonzero(absent)[0]])}; "
                "expected every generated caption scored"
            )
        n = len(frame)
        unreadable = int((~frame["readable"].to_numpy(bool)).sum())
        for panel in PANELS:
            ratings = frame[panel].to_numpy(np.float64)
            lo, hi = bootstrap_interval(ratings, np.mean, n_boot, seed, confidence)
            records.append(("average", f"{label}: {panel}", float(ratings.mean()), lo, hi, model, panel, ""))
            records[-1] += ("mean", np.nan, np.nan, n)
        records.append(("unreadable (%)", f"{label}: correctness", 100 * unreadable / n if n else np.nan))
        records[-1] += (np.nan, np.nan, model, "correctness", "", "unreadable", np.nan, np.nan, n)
        for metric in metrics:
            x = normalised(mine.loc[ids, metric].to_numpy(np.float64))
            which = bin_index(x, bins)
            for panel in PANELS:
                ratings = frame[panel].to_numpy(np.float64)
                column = f"{label}: {panel} by {METRIC_NAMES[metric]}"
                for b in range(bins):
                    part = ratings[which == b]
                    row = f"bin {b + 1:02d} [{edges[b]:.2f}, {edges[b + 1]:.2f}{']' if b == bins - 1 else ')'}"
                    if len(part):
                        value = float(part.mean())
                        lo, hi = bootstrap_interval(part, np.mean, n_boot, seed, confidence)
                    else:
                        value, lo, hi = np.nan, np.nan, np.nan
                    records.append((row, column, value, lo, hi, model, panel, metric, "bin"))
                    records[-1] += (edges[b], edges[b + 1], len(part))
                pairs = np.column_stack([x, ratings])

                def rho(sample: np.ndarray) -> float:
                    return spearman(sample[:, 0], sample[:, 1])

                lo, hi = bootstrap_interval(pairs, rho, n_boot, seed, confidence)
                records.append(("Spearman rho", column, rho(pairs), lo, hi, model, panel, metric, "spearman"))
                records[-1] += (np.nan, np.nan, len(pairs))
    return pd.DataFrame(records, columns=list(FIGURE4_COLUMNS))


__all__ = [
    "FIGURE4_COLUMNS",
    "MAX_DETAIL",
    "PANELS",
    "RATING_COLUMNS",
    "bin_index",
    "correctness",
    "detail_units",
    "detailedness",
    "figure4_long",
    "mention_true",
    "normalised",
    "rate_captions",
    "spearman",
    "statements",
]
