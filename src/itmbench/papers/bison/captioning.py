"""BISON Table 4 in the world: the world captioner's generated captions scored by the captioning metrics on the
split BISON is built on, beside its BISON accuracy and the printed captioning systems.

Decisions where the paper is silent or the world differs (stated in the table's title):

- **Generation.** The paper's captioners decode with beam search; the world's captioner (CoCa, trained
  here) decodes greedily (`CaptionerScorer.greedy_captions`): the most probable next word given the image
  and the words so far, until the end token. One caption per image of the split.
- **Metrics.** pycocoevalcap on PTB-tokenised text (`itmbench.metrics.captioning`), each image's captions as
  its references. BLEU-4 is the corpus score (as the COCO evaluation reports it); CIDEr-D is the mean of the
  per-image scores with the IDF over the split's reference sets (what the COCO evaluation computes);
  METEOR is the mean of the per-image scores (the COCO evaluation's aggregate is Meteor's own corpus
  statistic, close to it). SPICE is not possible here (`NOT_POSSIBLE`); beside its printed column, the world
  captioners have the mean per-image Tuple F1, the world's SPICE analogue (`itmbench.metrics.tuple_f1`: the
  caption's object, attribute and relation tuples against the union of its image's captions' tuples; a
  caption the grammar cannot read scores 0), in a column of its own. Intervals: percentile bootstrap over
  images (BLEU-4 recomputed on each resample; CIDEr-D, METEOR and Tuple F1 the resampled mean).
- **BISON.** The captioner's BISON accuracy as the benchmark scores it (mean token log-likelihood), with its
  Wilson interval, from its metrics file.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.captioning import (
    METRIC_NAMES,
    bleu4_from_statistics,
    bleu4_statistics,
    caption_metric_scores,
    corpus_bleu4,
    ptb_tokenize,
)
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, bootstrap_interval, wilson_interval
from itmbench.papers.world_cells import metric_entry

GENERATED_COLUMNS = ("image_id", "caption")
# Table 4's printed columns, in order, and the metric of each
TABLE4_COLUMNS = {
    "BLEU-4": "bleu4",
    "CIDEr": "cider_d",
    "SPICE": "spice",  # the printed systems' only: not possible here
    METRIC_NAMES["tuple_f1"]: "tuple_f1",  # the world captioners' only, beside SPICE: its analogue, not SPICE
    "METEOR": "meteor",
}


def references_of(captions: pd.DataFrame, image_ids: np.ndarray, source: str) -> list[list[str]]:
    """Each image's captions, PTB-tokenised, in the order of `image_ids` (an image without captions is refused)."""
    by_image = {int(i): [ptb_tokenize(t) for t in g["text"].astype(str)] for i, g in captions.groupby("image_id")}
    missing = [int(i) for i in image_ids if int(i) not in by_image]
    if missing:
        raise InputError(f"{source}: image {missing[0]} has no caption in the split; expected the split's images")
    return [by_image[int(i)] for i in image_ids]


def metric_cells(
    generated: pd.DataFrame,
    captions: pd.DataFrame,
    metrics: list[str],
    n_boot: int,
    seed: int,
    confidence: float,
    source: str = "generated captions",
    per_image: pd.DataFrame | None = None,
    per_image_source: str = "the caption scores",
) -> dict[str, tuple[float, float, float]]:
    """Each metric's table value (x100) with its bootstrap interval: metric -> (value, lo, hi).

    `per_image`: these captions' per-image scores as `per_image_scores` wrote them (image_id and a column x100 per
    metric, Figure 8's), read for every metric but the corpus BLEU-4 instead of running the metrics again."""
    image_ids = generated["image_id"].to_numpy(np.int64)
    candidates = [ptb_tokenize(c) for c in generated["caption"].astype(str)]
    references = references_of(captions, image_ids, source)
    given = None if per_image is None else _aligned_per_image(per_image, image_ids, metrics, per_image_source)
    out: dict[str, tuple[float, float, float]] = {}
    for metric in metrics:
        if given is not None and metric != "bleu4":
            scores = given[metric].to_numpy(np.float64)
            lo, hi = bootstrap_interval(scores, np.mean, n_boot, seed, confidence)
            out[metric] = (float(scores.mean()), lo, hi)
            continue
        if metric == "bleu4":
            value = corpus_bleu4(candidates, references)
            stats = bleu4_statistics(candidates, references)  # corpus BLEU of a resample: its rows' sums

            def statistic(sample: np.ndarray, stats: np.ndarray = stats) -> float:
                return bleu4_from_statistics(stats[sample].sum(axis=0))

            lo, hi = bootstrap_interval(np.arange(len(candidates)), statistic, n_boot, seed, confidence)
        else:
            per_image = caption_metric_scores(metric, candidates, references)
            value = float(per_image.mean())
            lo, hi = bootstrap_interval(per_image, np.mean, n_boot, seed, confidence)
        out[metric] = (100 * value, 100 * lo, 100 * hi)
    return out


def _aligned_per_image(per_image: pd.DataFrame, image_ids: np.ndarray, metrics: list[str], source: str) -> pd.DataFrame:
    """`per_image`'s rows in the order of `image_ids`: one per image, every metric of `metrics` but BLEU-4."""
    wanted = [m for m in metrics if m != "bleu4"]
    missing = [m for m in wanted if m not in per_image.columns]
    if missing:
        raise InputError(f"{source}: no column {missing[0]!r}; expected a score per image for each of {wanted}")
    repeated = per_image["image_id"][per_image["image_id"].duplicated()]
    if len(repeated):
        raise InputError(f"{source}: image {int(repeated.iloc[0])} has two rows; expected one row per image")
    rows = per_image.set_index("image_id")
    have, want = set(int(i) for i in rows.index), set(int(i) for i in image_ids)
    if have != want:
        odd = min(want - have) if want - have else min(have - want)
        raise InputError(
            f"{source}: image {odd} is {'missing' if odd in want else 'not one the captioner captioned'}; expected a "
            f"row for each of the {len(want)} images the captioner captioned and no other"
        )
    return rows.loc[image_ids, wanted]


def table4_long(
    cells: Mapping[str, Mapping[str, tuple[float, float, float]]],
    bison: Mapping[str, Mapping],
    published: Mapping[str, pd.DataFrame],
    rows: Mapping[str, str],
) -> pd.DataFrame:
    """BISON Table 4: the printed systems (`published`: block -> `published_wide` of the block) and beneath them
    each world captioner's metrics (`cells`: model -> metric -> (value, lo, hi)) and BISON accuracy
    (`bison`: model -> its BISON metrics JSON). Extra columns block, source ('printed' or the model)."""
    records = printed_records(published)
    for model in sorted(cells):
        label = f"world: {rows.get(model, model)}"
        for column, metric in TABLE4_COLUMNS.items():
            value, lo, hi = cells[model].get(metric, (np.nan, np.nan, np.nan))
            records.append((label, column, value, lo, hi, "world", model))
        entry = metric_entry(bison[model], "bison", f"bison/{model}.json")
        if entry is None:
            raise InputError(f"bison/{model}.json: no 'bison' metric; expected the captioner's BISON accuracy")
        records.append((label, "BISON", entry["value"], entry["lo"], entry["hi"], "world", model))
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi", "block", "source"])


def printed_records(published: Mapping[str, pd.DataFrame]) -> list[tuple]:
    """The printed systems of a captioning table (block -> `published_wide` of the block) as its long records:
    row "block: system" (the system alone in the unnamed block, Human's), no interval, source 'printed'."""
    records = []
    for block, wide in published.items():
        for row, values in wide.iterrows():
            label = f"{block}: {row}" if block else str(row)
            for column in wide.columns:
                records.append((label, column, float(values[column]), np.nan, np.nan, block or "Human", "printed"))
    return records


# --- Figure 8: the captioning scores of correct and incorrect BISON predictions --------------------------------
#
# The paper (appendix, "Does BISON accuracy predict captioning scores?"): for each COCO-BISON example the
# captioner classifies correctly (or incorrectly), the caption it generates for the *positive* image is scored
# against that image's references; Figure 8 shows the two distributions per metric. Here: the captioner's own
# BISON predictions (its per-instance scores: a tie is wrong), its greedy caption of each image of the split
# scored as in Table 4 (each image's captions as references, CIDEr-D's IDF over the split's reference sets; BLEU-4
# per caption, pycocoevalcap's sentence score), x100. SPICE is not possible here (`NOT_POSSIBLE`); its world
# analogue Tuple F1 (`itmbench.metrics.tuple_f1`) is one more metric where bison_caption_metrics lists it.

BISON_SCORE_COLUMNS = ("bison_id", "true_image_id", "correct")
FIGURE8_GROUPS = ("correct", "incorrect")
FIGURE8_COLUMNS = (
    "row",
    "column",
    "value",
    "lo",
    "hi",
    "model",
    "metric",
    "group",
    "statistic",
    "bin_lo",
    "bin_hi",
    "n",
)
DIFFERENCE = "correct - incorrect"


def per_image_scores(
    generated: pd.DataFrame, captions: pd.DataFrame, metrics: list[str], source: str = "generated captions"
) -> pd.DataFrame:
    """Each generated caption's score (x100) per metric against its image's captions: image_id and a column
    per metric (every image of `generated` in one pycocoevalcap call: CIDEr-D's IDF over their reference sets)."""
    image_ids = generated["image_id"].to_numpy(np.int64)
    if len(np.unique(image_ids)) != len(image_ids):
        raise InputError(f"{source}: an image_id appears twice; expected one generated caption per image")
    candidates = [ptb_tokenize(c) for c in generated["caption"].astype(str)]
    references = references_of(captions, image_ids, source)
    out = pd.DataFrame({"image_id": image_ids})
    for metric in metrics:
        out[metric] = 100 * caption_metric_scores(metric, candidates, references)
    return out


def instance_caption_scores(per_image: pd.DataFrame, bison_scores: pd.DataFrame, source: str) -> pd.DataFrame:
    """Per BISON instance: bison_id, whether the captioner predicted it correctly, and each metric's score of
    the caption generated for its positive image (refused, naming `source`, where that image has none)."""
    scores = per_image.set_index("image_id")
    true_images = bison_scores["true_image_id"].to_numpy(np.int64)
    absent = ~np.isin(true_images, scores.index.to_numpy(np.int64))
    if absent.any():
        i = int(np.flatnonzero(absent)[0])
        raise InputError(
            f"{source}: bison_id {int(bison_scores['bison_id'].iloc[i])}: no generated caption of its positive image "
            f"{int(true_images[i])}; expected the captions of the split BISON is built on"
        )
    out = pd.DataFrame(
        {"bison_id": bison_scores["bison_id"].to_numpy(np.int64), "correct": bison_scores["correct"].to_numpy(bool)}
    )
    for metric in scores.columns:
        out[metric] = scores.loc[true_images, metric].to_numpy(np.float64)
    return out


def mean_difference(
    a: np.ndarray, b: np.ndarray, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE
) -> tuple[float, float, float]:
    """mean(a) - mean(b) with a stratified percentile bootstrap interval (each group resampled within itself)."""
    rng = np.random.default_rng(seed)
    boots = rng.choice(a, size=(n_boot, len(a))).mean(axis=1) - rng.choice(b, size=(n_boot, len(b))).mean(axis=1)
    lo, hi = np.percentile(boots, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(a.mean() - b.mean()), float(lo), float(hi)


def figure8_long(
    instances: Mapping[str, pd.DataFrame],
    metrics: list[str],
    rows: Mapping[str, str],
    bins: int = 20,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Figure 8's numbers (`instances`: captioner -> `instance_caption_scores`), in `FIGURE8_COLUMNS`: per
    captioner, metric and group (correct, incorrect) the mean and median (percentile bootstrap) and the share of
    instances per bin (Wilson; `bins` equal bins over [0, the metric's largest score over captioners]); per
    captioner and metric the difference of the groups' means (`mean_difference`). A group without
    instances has no statistics (n 0)."""
    records = []
    for metric in metrics:
        top = max(float(frame[metric].max()) for frame in instances.values()) if instances else 0.0
        edges = np.linspace(0.0, top if top > 0 else 1.0, bins + 1)
        for model in sorted(instances):
            frame = instances[model]
            values, correct = frame[metric].to_numpy(np.float64), frame["correct"].to_numpy(bool)
            label = f"{rows.get(model, model)}: {METRIC_NAMES[metric]}"
            for group, mask in zip(FIGURE8_GROUPS, (correct, ~correct)):
                part, n = values[mask], int(mask.sum())
                cells = []  # (row, statistic, value, lo, hi, bin_lo, bin_hi)
                if n:
                    for statistic, function in (("mean", np.mean), ("median", np.median)):
                        lo, hi = bootstrap_interval(part, function, n_boot, seed, confidence)
                        cells.append((statistic, statistic, float(function(part)), lo, hi, np.nan, np.nan))
                    for i, count in enumerate(np.histogram(part, bins=edges)[0]):
                        lo, hi = wilson_interval(int(count), n, confidence)
                        row = f"bin {i + 1:02d} (%)"
                        cells.append((row, "bin", 100 * int(count) / n, 100 * lo, 100 * hi, edges[i], edges[i + 1]))
                cells.append(("instances", "n", float(n), np.nan, np.nan, np.nan, np.nan))
                for row, statistic, value, lo, hi, b_lo, b_hi in cells:
                    records.append(
                        (row, f"{label} {group}", value, lo, hi, model, metric, group, statistic, b_lo, b_hi, n)
                    )
            if correct.any() and (~correct).any():
                value, lo, hi = mean_difference(values[correct], values[~correct], n_boot, seed, confidence)
                records.append(
                    ("mean", f"{label} {DIFFERENCE}", value, lo, hi, model, metric, DIFFERENCE, "mean")
                    + (np.nan, np.nan, len(values))
                )
    return pd.DataFrame(records, columns=list(FIGURE8_COLUMNS))


__all__ = [
    "BISON_SCORE_COLUMNS",
    "FIGURE8_COLUMNS",
    "GENERATED_COLUMNS",
    "METRIC_NAMES",
    "TABLE4_COLUMNS",
    "figure8_long",
    "instance_caption_scores",
    "mean_difference",
    "metric_cells",
    "per_image_scores",
    "references_of",
    "table4_long",
]
