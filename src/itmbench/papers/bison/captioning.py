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
  statistic, close to it). SPICE is not possible here (`NOT_POSSIBLE`). Intervals: percentile bootstrap
  over images (BLEU-4 recomputed on each resample; CIDEr-D and METEOR the resampled mean).
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
from itmbench.metrics.intervals import bootstrap_interval
from itmbench.papers.world_cells import metric_entry

GENERATED_COLUMNS = ("image_id", "caption")
# Table 4's printed columns, in order, and the metric of each
TABLE4_COLUMNS = {"BLEU-4": "bleu4", "CIDEr": "cider_d", "SPICE": "spice", "METEOR": "meteor"}


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
) -> dict[str, tuple[float, float, float]]:
    """Each metric's table value (x100) with its bootstrap interval: metric -> (value, lo, hi)."""
    image_ids = generated["image_id"].to_numpy(np.int64)
    candidates = [ptb_tokenize(c) for c in generated["caption"].astype(str)]
    references = references_of(captions, image_ids, source)
    out: dict[str, tuple[float, float, float]] = {}
    for metric in metrics:
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


def table4_long(
    cells: Mapping[str, Mapping[str, tuple[float, float, float]]],
    bison: Mapping[str, Mapping],
    published: Mapping[str, pd.DataFrame],
    rows: Mapping[str, str],
) -> pd.DataFrame:
    """BISON Table 4: the printed systems (`published`: block -> `published_wide` of the block) and beneath them
    each world captioner's metrics (`cells`: model -> metric -> (value, lo, hi)) and BISON accuracy
    (`bison`: model -> its BISON metrics JSON). Extra columns block, source ('printed' or the model)."""
    records = []
    for block, wide in published.items():
        for row, values in wide.iterrows():
            label = f"{block}: {row}" if block else str(row)
            for column in wide.columns:
                records.append((label, column, float(values[column]), np.nan, np.nan, block or "Human", "printed"))
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


__all__ = ["GENERATED_COLUMNS", "METRIC_NAMES", "TABLE4_COLUMNS", "metric_cells", "references_of", "table4_long"]
