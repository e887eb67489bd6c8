"""MCIC's Tables 4 and 5 in the world: the FFNN and the Vec2seq + FFNN trained over a size grid, and the Vec2seq +
FFNN over a lambda_gen grid with the ROUGE-L and CIDEr of its greedy captions; each sweep one job, one long CSV.

Table 4 (section 5.3): for each [embedding, hidden-1, hidden-2] of `mcic_sweeps.sizes.sizes`, the FFNN
(`models.option_scorer`, its inputs projected to the embedding size, its hidden layers the two
sizes) and the Vec2seq + FFNN (`models.vec2seq`, GRU state and word/image embeddings of the
embedding size, FFNN hidden layers the two sizes, lambda_gen `mcic_sweeps.sizes.lambda_gen`); the
other settings are each model's defaults, `epochs` epochs with the best dev epoch kept.
Table 5 (section 5.4): the Vec2seq + FFNN of size `mcic_sweeps.lambda_gen.size` for each lambda_gen
of `lambdas`; its greedy caption of every dev and test image is scored against all the world's
captions of that image (the paper: the ~5 COCO references) by pycocoevalcap's ROUGE-L and CIDEr
(CIDEr-D, the COCO server's "CIDEr"; its IDF over the split's reference sets), after the COCO
evaluation's tokenization (`metrics.captioning.ptb_tokenize`). No caption metric at lambda_gen = 0,
where the output projection is never trained (the paper prints '-'). A world column the paper has
not: the number of distinct greedy captions over the split's images (how much they depend on the image).

Accuracy is per example (the true option has the highest 'yes' margin), with Wilson intervals;
ROUGE-L and CIDEr are means over images with normal intervals (mean +- z * standard error).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.papers.published import published_value

log = logging.getLogger(__name__)

SWEEP_COLUMNS = [
    "sweep",
    "model",
    "embed",
    "hidden1",
    "hidden2",
    "lambda_gen",
    "split",
    "metric",
    "value",
    "se",
    "n",
    "best_epoch",
]
SPLITS = ("dev", "test")
MODEL_NAMES = {"ffnn": "FFNN", "vec2seq": "Vec2seq+FFNN"}
CAPTION_METRICS = {"rouge_l": "ROUGE-L", "cider_d": "CIDEr"}


def _accuracy_rows(base: dict[str, Any], correct: Mapping[str, np.ndarray]) -> list[dict[str, Any]]:
    rows = []
    for split in SPLITS:
        c = np.asarray(correct[split], dtype=float)
        n = len(c)
        p = float(c.mean()) if n else math.nan
        se = math.sqrt(p * (1 - p) / n) if n else math.nan
        rows.append({**base, "split": split, "metric": "accuracy", "value": 100 * p, "se": 100 * se, "n": n})
    return rows


def _ffnn_variant(train: pd.DataFrame, evals: Mapping[str, pd.DataFrame], features: Any, size: Sequence[int],
                  epochs: int, seed: int) -> tuple[dict[str, np.ndarray], int]:  # fmt: skip
    import torch

    from itmbench.models.option_scorer import (
        FFNN_OPTIONS,
        features_of,
        mcic_accuracy_of,
        mcic_correct_of,
        option_rows,
        train_option_net,
    )

    embed, h1, h2 = (int(v) for v in size)
    opts = {**FFNN_OPTIONS, "embed": embed, "hidden": h1, "hidden2": h2, "epochs": int(epochs), "seed": int(seed)}
    image, caption, label = option_rows(train)
    img, cap = features_of(features, "image", image), features_of(features, "caption", caption)

    torch.manual_seed(int(seed))
    net, history = train_option_net(img, cap, label, opts, lambda n: mcic_accuracy_of(n, evals["dev"], features))
    best = max(history, key=lambda h: h["select"])["epoch"]
    return {split: mcic_correct_of(net, evals[split], features) for split in SPLITS}, int(best)


def caption_metric_rows(
    base: dict[str, Any], generated: Mapping[str, Sequence[str]], references: Mapping[str, Sequence[Sequence[str]]]
) -> list[dict[str, Any]]:
    """ROUGE-L and CIDEr of each split's generated captions against its reference sets: mean, se over images."""
    from itmbench.metrics.captioning import caption_metric_scores, ptb_tokenize

    rows = []
    for split in SPLITS:
        cands = [ptb_tokenize(c) for c in generated[split]]
        refs = [[ptb_tokenize(r) for r in rs] for rs in references[split]]
        for metric in CAPTION_METRICS:
            scores = caption_metric_scores(metric, cands, refs)
            n = len(scores)
            se = float(scores.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
            rows.append({**base, "split": split, "metric": metric, "value": float(scores.mean()), "se": se, "n": n})
        distinct = len(set(generated[split]))  # how much the captions depend on the image
        rows.append({**base, "split": split, "metric": "distinct_captions", "value": distinct, "se": math.nan,
                     "n": len(cands)})  # fmt: skip
    return rows


def _vec2seq_variant(
    train: pd.DataFrame,
    evals: Mapping[str, pd.DataFrame],
    features: Any,
    size: Sequence[int],
    lambda_gen: float,
    epochs: int,
    seed: int,
    captions: pd.DataFrame | None,
) -> tuple[dict[str, np.ndarray], int, dict[str, list[str]], dict[str, list[list[str]]]]:
    from itmbench.models.option_scorer import features_of
    from itmbench.models.vec2seq import accuracy_correct, greedy_decode, train_vec2seq_net, vec2seq_options

    embed, h1, h2 = (int(v) for v in size)
    opts = vec2seq_options(
        None,
        {"embed": embed, "hidden1": h1, "hidden2": h2, "lambda_gen": float(lambda_gen), "epochs": int(epochs),
         "seed": int(seed)},
    )  # fmt: skip
    net, vocab, history = train_vec2seq_net(train, features, opts, evals["dev"])
    best = max(history, key=lambda h: h["select"])["epoch"]
    correct = {split: accuracy_correct(net, evals[split], features, vocab) for split in SPLITS}
    generated: dict[str, list[str]] = {}
    references: dict[str, list[list[str]]] = {}
    if captions is not None:
        by_image = captions.groupby("image_id")["text"].apply(list)
        for split in SPLITS:
            images = np.unique(evals[split]["image_id"].to_numpy(np.int64))
            missing = [int(i) for i in images if int(i) not in by_image.index]
            if missing:
                raise ValueError(f"captions: no reference caption of {split} image {missing[0]}; expected the world's")
            generated[split] = greedy_decode(net, features_of(features, "image", images), vocab)
            references[split] = [list(by_image.loc[int(i)]) for i in images]
    return correct, int(best), generated, references


def size_sweep(
    train: pd.DataFrame, evals: Mapping[str, pd.DataFrame], features: Any, config: Mapping[str, Any]
) -> pd.DataFrame:
    """Table 4's long rows: accuracy per (model, size, split)."""
    rows: list[dict[str, Any]] = []
    lam = float(config["lambda_gen"])
    for size in config["sizes"]:
        embed, h1, h2 = (int(v) for v in size)
        t0 = time.process_time()
        correct, best = _ffnn_variant(train, evals, features, size, int(config["epochs"]), int(config["seed"]))
        base = {"sweep": "sizes", "model": "ffnn", "embed": embed, "hidden1": h1, "hidden2": h2,
                "lambda_gen": math.nan, "best_epoch": best}  # fmt: skip
        rows += _accuracy_rows(base, correct)
        correct, best, _, _ = _vec2seq_variant(
            train, evals, features, size, lam, int(config["epochs"]), int(config["seed"]), None
        )
        rows += _accuracy_rows({**base, "model": "vec2seq", "lambda_gen": lam, "best_epoch": best}, correct)
        log.info("size %s: both models trained in %.1f CPU s", list(size), time.process_time() - t0)
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def lambda_gen_sweep(
    train: pd.DataFrame,
    evals: Mapping[str, pd.DataFrame],
    features: Any,
    captions: pd.DataFrame,
    config: Mapping[str, Any],
) -> pd.DataFrame:
    """Table 5's long rows: accuracy per split and lambda_gen, ROUGE-L and CIDEr of the greedy captions (lambda > 0)."""
    rows: list[dict[str, Any]] = []
    embed, h1, h2 = (int(v) for v in config["size"])
    for lam in sorted(float(v) for v in config["lambdas"]):
        t0 = time.process_time()
        correct, best, generated, references = _vec2seq_variant(
            train, evals, features, config["size"], lam, int(config["epochs"]), int(config["seed"]),
            captions if lam > 0 else None,
        )  # fmt: skip
        base = {"sweep": "lambda_gen", "model": "vec2seq", "embed": embed, "hidden1": h1, "hidden2": h2,
                "lambda_gen": lam, "best_epoch": best}  # fmt: skip
        rows += _accuracy_rows(base, correct)
        if lam > 0:
            rows += caption_metric_rows(base, generated, references)
        log.info("lambda_gen %g: trained and scored in %.1f CPU s", lam, time.process_time() - t0)
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def check_sweep(frame: pd.DataFrame, sweep: str, where: str) -> pd.DataFrame:
    """A sweep CSV as written by `size_sweep` / `lambda_gen_sweep`, refused with its file and first bad record."""
    from itmbench.errors import InputError

    missing = [c for c in SWEEP_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{where}: missing columns {missing}; expected {SWEEP_COLUMNS}")
    bad = frame[frame["sweep"] != sweep]
    if len(bad):
        raise InputError(f"{where}: record {int(bad.index[0])} has sweep {bad['sweep'].iloc[0]!r}; expected {sweep!r}")
    if frame.empty:
        raise InputError(f"{where}: no records; expected the {sweep} sweep's results")
    return frame


def _interval(r: Mapping[str, Any], confidence: float) -> tuple[float, float]:
    from scipy.stats import norm

    value, n = float(r["value"]), int(r["n"])
    if r["metric"] == "accuracy":
        lo, hi = wilson_interval(round(value * n / 100), n, confidence)
        return 100 * lo, 100 * hi
    z = float(norm.ppf(0.5 + confidence / 2))
    return value - z * float(r["se"]), value + z * float(r["se"])


def _size_label(embed: int, h1: int, h2: int) -> str:
    return f"{embed}-{h1}-{h2}"


def table4_long(frame: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Table 4: the world's rows (model, sizes; dev and test accuracy with intervals, test '±' the binomial standard
    error), then the printed rows."""
    records: list[dict[str, Any]] = []

    def add(row: str, column: str, value: float, lo: float = math.nan, hi: float = math.nan) -> None:
        records.append({"row": row, "column": column, "value": value, "lo": lo, "hi": hi})

    acc = frame[frame["metric"] == "accuracy"]
    for model in ("ffnn", "vec2seq"):
        part = acc[acc["model"] == model]
        for (embed, h1, h2), group in part.groupby(["embed", "hidden1", "hidden2"], sort=True):
            row = f"world {MODEL_NAMES[model]} {_size_label(int(embed), int(h1), int(h2))}"
            for column, value in (("dim", embed), ("hidden-1", h1), ("hidden-2", h2)):
                add(row, column, float(value))
            for r in group.sort_values("split").to_dict("records"):
                column = "Dev" if r["split"] == "dev" else "Test"
                add(row, column, float(r["value"]), *_interval(r, confidence))
                if column == "Test":
                    add(row, "Test ±", float(r["se"]))
    for block in ("FFNN", "Vec2seq+FFNN (lambda_gen = 1.0)"):
        for size in ((64, 64, 16), (256, 64, 16), (256, 256, 64), (512, 512, 128), (1024, 1024, 256),
                     (2048, 2048, 512)):  # fmt: skip
            label = _size_label(*size)
            row = f"published {block.split(' ')[0]} {label}"
            for column in ("dim", "hidden-1", "hidden-2", "Dev", "Test", "Test ±"):
                add(row, column, published_value("mcic", "Table 4", label, column, block=block))
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi"])


PUBLISHED_LAMBDAS = ("0.0", "0.1", "1.0", "2.0", "4.0", "8.0", "16.0")
TABLE5_COLUMNS = ("Acc Dev", "Acc Test", "Acc Test ±", "ROUGE-L Dev", "ROUGE-L Test", "CIDEr Dev", "CIDEr Test")
WORLD_COLUMNS = ("distinct Dev", "distinct Test")  # distinct greedy captions over the split's images: not printed


def table5_long(frame: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Table 5: per lambda_gen the world's dev/test accuracy (Wilson), ROUGE-L and CIDEr (normal over images), then
    the printed rows ('-' where the paper prints none)."""
    records: list[dict[str, Any]] = []

    def add(row: str, column: str, value: float, lo: float = math.nan, hi: float = math.nan) -> None:
        records.append({"row": row, "column": column, "value": value, "lo": lo, "hi": hi})

    for lam, group in frame.groupby("lambda_gen", sort=True):
        row = f"world λgen = {float(lam):g}"
        cells = {(r["metric"], r["split"]): r for r in group.to_dict("records")}
        for metric, name in (("accuracy", "Acc"), *CAPTION_METRICS.items(), ("distinct_captions", "distinct")):
            for split, column in (("dev", "Dev"), ("test", "Test")):
                r = cells.get((metric, split))
                if r is None:
                    add(row, f"{name} {column}", math.nan)
                    continue
                lo, hi = _interval(r, confidence) if metric != "distinct_captions" else (math.nan, math.nan)
                add(row, f"{name} {column}", float(r["value"]), lo, hi)
                if metric == "accuracy" and split == "test":
                    add(row, "Acc Test ±", float(r["se"]))
    for lam in PUBLISHED_LAMBDAS:
        row = f"published λgen = {float(lam):g}"
        for column in TABLE5_COLUMNS:
            try:
                value = published_value("mcic", "Table 5", lam, column)
            except KeyError:  # printed '-' (no caption metric at lambda_gen = 0)
                value = math.nan
            add(row, column, value)
    long = pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi"])
    order = {c: i for i, c in enumerate(TABLE5_COLUMNS + WORLD_COLUMNS)}
    long["_o"] = long["column"].map(order)
    return long.sort_values(["_o"], kind="stable").drop(columns="_o").reset_index(drop=True)


TABLE4_TITLE = (
    "MCIC-COCO Table 4 (section 5.3): dev and test accuracy (%) of the FFNN and the Vec2seq+FFNN per (embedding, "
    "hidden-1, hidden-2) size, trained on the world's MCIC train split, beside the paper's"
)
TABLE5_TITLE = (
    "MCIC-COCO Table 5 (section 5.4): the Vec2seq+FFNN per lambda_gen, dev and test accuracy (%) and ROUGE-L / CIDEr "
    "of its greedy captions against the world's captions of each image, beside the paper's"
)
