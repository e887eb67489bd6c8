"""BISON section 6: a captioning metric as a BISON scorer ("Do caption score differences provide signal for BISON?").

The paper: "we compute a captioning score (e.g., BLEU-4) between the BISON text query and the COCO
reference captions corresponding to both the positive and negative BISON images. When computing the
score for the positive image, we remove the text query from the set of reference captions; for the
negative image, we randomly select four captions from the reference captions (without replacement).
Next, we select the image with the highest captioning score as prediction." Reported: BLEU-4 70.73,
CIDEr-D 70.78, METEOR 74.44, SPICE 62.79 (``published_results.csv``, table "Section 6").

Here, per instance and metric (`score_caption_metric`):

- the candidate is the query caption; the positive image's references are all its captions but the
  query (four for a five-caption image, as in the paper); the negative image's are
  ``negative_references`` (the paper's four) of its captions drawn without replacement, seeded per
  ``bison_id`` (``seed``), so an instance's draw does not depend on the others; every caption the
  captions table holds for the image is a candidate reference (the world's test split, or COCO);
- text is tokenized with `itmbench.metrics.captioning.ptb_tokenize` (the COCO evaluation's
  PTBTokenizer, in Python) and scored by pycocoevalcap (`caption_metric_scores`), or, for SPICE's place,
  by ``tuple_f1``, the world's SPICE analogue (`itmbench.metrics.tuple_f1`: F1 of the query's object,
  attribute and relation tuples against the union of the references', read by the world's parser); it
  reads the world's captions only, so on source=coco the workflow does not plan it
  (`metrics.captioning.WORLD_ONLY`) and the command refuses captions none of which parses;
- CIDEr-D's IDF corpus is every reference set of the evaluation, one document per (instance, image):
  the 2n sets scored in one pycocoevalcap call, which is how the COCO evaluation code computes it
  (over the reference sets of the images it is given) and how the paper's numbers would come out of
  that code run on the BISON set. The paper does not say; IDF over every image of the split is the
  other reading (not offered: pycocoevalcap computes IDF from the entries it scores);
- the prediction is the image with the strictly higher score; a tie predicts nothing
  (``predicted_image_id`` -1) and counts as wrong, as everywhere in BISON here.

Accuracy with a Wilson interval and the ties count come from `itmbench.papers.bison.score.summarize`.
The released annotation file is not in the mirror, and COCO's captions are not either: on COCO the
baseline runs where the coco source's items are (`--config source=coco`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.accuracy import bison_accuracy
from itmbench.metrics.captioning import (
    METRIC_NAMES,
    NOT_POSSIBLE,
    caption_metric_scores,
    ptb_tokenize,
    pycocoevalcap_version,
)
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.bison.config import BisonCaptionMetricsConfig
from itmbench.papers.bison.score import summarize

TUPLE_F1_SCORER = "itmbench.metrics.tuple_f1: tuples read by itmbench.world.parse, not SPICE"
NO_PREDICTION = -1  # a tie: neither image is picked
CAPTION_COLUMNS = ("caption_id", "image_id", "text")
PREDICTION_COLUMNS = [
    "bison_id",
    "caption_id",
    "true_image_id",
    "false_image_id",
    "score_true",
    "score_false",
    "predicted_image_id",
    "correct",
    "n_references_true",
    "n_references_false",
]


def reference_sets(
    annotations: pd.DataFrame, captions: pd.DataFrame, cfg: BisonCaptionMetricsConfig, source: str = "captions"
) -> pd.DataFrame:
    """Per instance: the query text and the caption ids of each image's references (see the module docstring).

    Refuses (InputError naming `source` and the bison_id) a query absent from the captions, a query that is
    not a caption of its true image, and an image left with no reference caption.
    """
    missing = [c for c in CAPTION_COLUMNS if c not in captions.columns]
    if missing:
        raise InputError(f"{source}: no columns {missing}; expected {list(CAPTION_COLUMNS)}")
    text = dict(zip(captions["caption_id"].to_numpy(np.int64), captions["text"].astype(str)))
    owner = dict(zip(captions["caption_id"].to_numpy(np.int64), captions["image_id"].to_numpy(np.int64)))
    by_image: dict[int, np.ndarray] = {
        int(image): np.sort(group.to_numpy(np.int64))
        for image, group in captions.groupby("image_id", sort=True)["caption_id"]
    }
    rows: list[dict[str, Any]] = []
    for ann in annotations.itertuples(index=False):
        bison_id, query = int(ann.bison_id), int(ann.caption_id)
        true_image, false_image = int(ann.true_image_id), int(ann.false_image_id)
        if query not in text:
            raise InputError(f"{source}: bison_id {bison_id}: query caption {query} is not among the captions")
        if owner[query] != true_image:
            raise InputError(
                f"{source}: bison_id {bison_id}: query caption {query} belongs to image {owner[query]}; "
                f"expected a caption of its true image {true_image}"
            )
        positives = by_image[true_image]
        positives = positives[positives != query]
        negatives = by_image.get(false_image, np.zeros(0, dtype=np.int64))
        for image, refs in ((true_image, positives), (false_image, negatives)):
            if len(refs) == 0:
                raise InputError(
                    f"{source}: bison_id {bison_id}: image {image} has no reference caption "
                    f"(the query excluded); expected at least one"
                )
        rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, bison_id]))
        k = min(cfg.negative_references, len(negatives))
        drawn = np.sort(rng.choice(negatives, size=k, replace=False))
        rows.append(
            {
                "bison_id": bison_id,
                "caption_id": query,
                "true_image_id": true_image,
                "false_image_id": false_image,
                "query": text[query],
                "references_true": [text[int(c)] for c in positives],
                "references_false": [text[int(c)] for c in drawn],
            }
        )
    return pd.DataFrame(
        rows,
        columns=["bison_id", "caption_id", "true_image_id", "false_image_id", "query"]
        + ["references_true", "references_false"],
    )


def predictions_from_scores(refs: pd.DataFrame, score_true: np.ndarray, score_false: np.ndarray) -> pd.DataFrame:
    """Per instance: both scores, the image with the strictly higher score (-1 on a tie) and whether it is right."""
    score_true = np.asarray(score_true, dtype=np.float64)
    score_false = np.asarray(score_false, dtype=np.float64)
    true_id = refs["true_image_id"].to_numpy(np.int64)
    false_id = refs["false_image_id"].to_numpy(np.int64)
    predicted = np.where(score_true > score_false, true_id, np.where(score_false > score_true, false_id, NO_PREDICTION))
    return pd.DataFrame(
        {
            "bison_id": refs["bison_id"].to_numpy(np.int64),
            "caption_id": refs["caption_id"].to_numpy(np.int64),
            "true_image_id": true_id,
            "false_image_id": false_id,
            "score_true": score_true,
            "score_false": score_false,
            "predicted_image_id": predicted.astype(np.int64),
            "correct": bison_accuracy(score_true, score_false).correct,
            "n_references_true": refs["references_true"].map(len).to_numpy(np.int64),
            "n_references_false": refs["references_false"].map(len).to_numpy(np.int64),
        },
        columns=PREDICTION_COLUMNS,
    )


def score_caption_metric(
    annotations: pd.DataFrame,
    captions: pd.DataFrame,
    metric: str,
    cfg: BisonCaptionMetricsConfig,
    source: str = "captions",
) -> pd.DataFrame:
    """Per-instance predictions of one captioning metric as a BISON scorer (columns `PREDICTION_COLUMNS`)."""
    refs = reference_sets(annotations, captions, cfg, source)
    query = [ptb_tokenize(q) for q in refs["query"]]
    true_refs = [[ptb_tokenize(r) for r in rs] for rs in refs["references_true"]]
    false_refs = [[ptb_tokenize(r) for r in rs] for rs in refs["references_false"]]
    n = len(refs)
    # one call: CIDEr-D's IDF is over all 2n reference sets of the evaluation
    scores = caption_metric_scores(metric, query + query, true_refs + false_refs)
    return predictions_from_scores(refs, scores[:n], scores[n:])


def caption_metric_summary(
    predictions: pd.DataFrame,
    metric: str,
    cfg: BisonCaptionMetricsConfig,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """The metrics JSON of one caption metric's predictions: BISON accuracy (Wilson), ties, and what was scored."""
    summary = summarize(predictions[["score_true", "score_false"]], n_boot=n_boot, seed=seed, confidence=confidence)
    out = {
        **summary,
        "benchmark": "bison",
        "scorer": f"caption metric {METRIC_NAMES[metric]} ("
        + (TUPLE_F1_SCORER if metric == "tuple_f1" else f"pycocoevalcap {pycocoevalcap_version()}")
        + ")",
        "caption_metric": metric,
        "references": {
            "positive": "every caption of the true image but the query",
            "negative": f"{cfg.negative_references} of the false image's captions, drawn without replacement "
            f"(seed {cfg.seed})",
            "mean_positive": float(predictions["n_references_true"].mean()) if len(predictions) else float("nan"),
            "mean_negative": float(predictions["n_references_false"].mean()) if len(predictions) else float("nan"),
        },
        "tokenizer": "itmbench.metrics.captioning.ptb_tokenize (PTBTokenizer -lowerCase, punctuation dropped)",
        "not_possible": dict(NOT_POSSIBLE),
    }
    if metric == "cider_d":
        out["cider_idf"] = "every reference set of the evaluation, one document per (instance, image)"
    return out
