"""MCIC's linear baselines (Ding et al. section 4.1): Baseline-I2C, Baseline-C2I and Baseline-LinM as pair scorers.

- I2C ("forward regression"): a linear regressor from image to caption features, fitted on the
  ground-truth (image, true caption) pairs only; an option's score is minus the squared Euclidean
  distance between its caption features and the image's predicted ones (the paper "check[s]
  whether the predicted caption for any given image is closest to its true caption").
- C2I ("backward regression"): a linear regressor from caption to image features on the same
  pairs; an option's score is minus the squared distance between the image predicted from it and
  the real image's features ("the predicted image embedding by the ground-truth caption is the
  closest among predicted ones by decoy captions to the real image embeddings").
- LinM: f(i, c) = i^T Theta c trained by stochastic subgradient steps on Eq. 2's hinge between the
  target and the worst "offending" decoy of each instance; the epoch kept is the one with the best
  dev accuracy (the paper selects "the best model in terms of accuracy on the MCIC-COCO development set").

Features: as the FFNN's, a declared upstream model's item embeddings (`models.<name>.upstream`);
the paper used Inception-v3 image and PV caption vectors, both randomly projected to 256
dimensions (the world's embeddings are smaller than that, so nothing is projected).
Decisions (each an `options` key, default in brackets):
- `kind` ['linm']: which of the three.
- `ridge` [1.0]: the regressions are ridge least squares with this penalty on the weights (not
  the intercept), solved in closed form in float64: deterministic, no epochs.
- `margin` [1.0]: Eq. 2 as printed has no margin, and Theta = 0 minimises it; the hinge here is
  [margin + max_decoy f - f_target]_+, the usual unit margin.
- `epochs` [10], `batch_size` [100] (instances per step), `lr` [10] (plain SGD; the features are unit-norm, so
  at 0.1 Theta hardly leaves its first step: on the tiny world the hinge went 0.999 -> 0.989 in 10 epochs, at
  10 to 0.82, dev accuracy alike), `seed` [0]: LinM's
  training; Theta starts at zero.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from itmbench.io import atomic_path, output_set, write_json
from itmbench.models.option_scorer import check_option_training, option_rows, options_correct
from itmbench.models.spec import ModelSpec, load_checkpoint

KINDS = ("i2c", "c2i", "linm")
LINEAR_OPTIONS: dict[str, Any] = {
    "kind": "linm",
    "ridge": 1.0,
    "margin": 1.0,
    "epochs": 10,
    "batch_size": 100,
    "lr": 10.0,
    "seed": 0,
}


def linear_options(spec: ModelSpec) -> dict[str, Any]:
    """The baseline's settings from the spec's options (defaults above), naming unknown keys and bad values."""
    unknown = sorted(set(spec.options) - set(LINEAR_OPTIONS))
    if unknown:
        raise ValueError(
            f"models.{spec.name}.options: unknown keys {unknown}; expected some of {sorted(LINEAR_OPTIONS)}"
        )
    opts = {**LINEAR_OPTIONS, **spec.options}
    if opts["kind"] not in KINDS or float(opts["ridge"]) < 0 or int(opts["epochs"]) < 1 or int(opts["batch_size"]) < 1:
        raise ValueError(f"models.{spec.name}.options: invalid {opts}; kind one of {KINDS}, ridge >= 0, sizes >= 1")
    return opts


def fit_ridge(x: np.ndarray, y: np.ndarray, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """Least squares y ~ x @ W + b with penalty ridge * |W|^2 (the intercept free): (W [dx, dy], b [dy])."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mx, my = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - mx, y - my
    w = np.linalg.solve(xc.T @ xc + ridge * np.eye(x.shape[1]), xc.T @ yc)
    return w, my - mx @ w


def regression_scores(kind: str, w: np.ndarray, b: np.ndarray, image: np.ndarray, caption: np.ndarray) -> np.ndarray:
    """Minus the squared distance: I2C between the caption and the image's prediction, C2I between the image and the
    caption's prediction (float64, one per row pair)."""
    image = np.asarray(image, dtype=np.float64)
    caption = np.asarray(caption, dtype=np.float64)
    if kind == "i2c":
        return -((image @ w + b - caption) ** 2).sum(axis=1)
    return -((caption @ w + b - image) ** 2).sum(axis=1)


def bilinear_scores(theta: np.ndarray, image: np.ndarray, caption: np.ndarray) -> np.ndarray:
    """f(i, c) = i^T Theta c of each row pair (float64)."""
    image, caption = np.asarray(image, np.float64), np.asarray(caption, np.float64)
    return np.einsum("nd,de,ne->n", image, np.asarray(theta, np.float64), caption)


def _instance_accuracy(scores: np.ndarray, answer: np.ndarray) -> float:
    """Accuracy (%) of argmax over each instance's options (a tie counts as wrong)."""
    if not len(scores):
        return float("nan")
    return 100.0 * float(np.mean(options_correct(scores, answer)))


def train_linm(
    image: torch.Tensor, caption: torch.Tensor, answer: np.ndarray, opts: dict[str, Any], select: Any = None
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Theta by SGD on Eq. 2 (with a margin) over instances; image/caption [n, k, d] per option; keep the best epoch."""
    n, k, _ = image.shape
    theta = torch.zeros(image.shape[2], caption.shape[2], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([theta], lr=float(opts["lr"]))
    rng = np.random.default_rng([int(opts["seed"]), 43])
    ans = torch.from_numpy(np.array(answer, dtype=np.int64))
    history: list[dict[str, Any]] = []
    best: tuple[float, np.ndarray | None] = (-np.inf, None)
    bs = int(opts["batch_size"])
    for epoch in range(int(opts["epochs"])):
        t0 = time.time()
        order = torch.from_numpy(rng.permutation(n))
        losses = []
        for s in range(0, n, bs):
            idx = order[s : s + bs]
            f = torch.einsum("bkd,de,bke->bk", image[idx].double(), theta, caption[idx].double())
            target = f.gather(1, ans[idx, None]).squeeze(1)
            decoys = f.masked_fill(torch.nn.functional.one_hot(ans[idx], k).bool(), -torch.inf)
            loss = torch.clamp(float(opts["margin"]) + decoys.max(dim=1).values - target, min=0).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        current = theta.detach().numpy().copy()
        score = float(select(current)) if select is not None else float(epoch)
        history.append(
            {
                "epoch": epoch + 1,
                "train_loss": float(np.mean(losses)),
                "select": score,
                "seconds": round(time.time() - t0, 2),
            }
        )
        if score > best[0]:
            best = (score, current)
    assert best[1] is not None
    return best[1], history


class LinearOptionScorer:
    """A fitted I2C / C2I regression or a trained LinM as a cross scorer over an upstream model's item embeddings."""

    item_kinds: tuple[str, ...] = ()
    needs_features = True

    def __init__(self, kind: str, params: dict[str, np.ndarray]) -> None:
        self.kind, self.params = kind, params

    def score_arrays(self, image: np.ndarray, caption: np.ndarray) -> np.ndarray:
        """The score of each (image, caption) feature row pair."""
        if self.kind == "linm":
            return bilinear_scores(self.params["theta"], image, caption)
        return regression_scores(self.kind, self.params["w"], self.params["b"], image, caption)

    def instance_scores(self, image: np.ndarray, caption: np.ndarray) -> np.ndarray:
        """Scores [n, k] of the options of n instances from their features [n, k, d]."""
        n, k = image.shape[:2]
        return self.score_arrays(image.reshape(n * k, -1), caption.reshape(n * k, -1)).reshape(n, k)

    def score_pairs(
        self, store: Any, caption_ids: np.ndarray, image_ids: np.ndarray, features: Any = None, batch_size: int = 65536
    ) -> np.ndarray:
        """The baseline's score of each (caption, image); features from the upstream embedding cache."""
        if features is None:
            raise ValueError("the linear MCIC baselines need their upstream model's embeddings (--features)")
        image_ids, caption_ids = np.asarray(image_ids), np.asarray(caption_ids)
        out = np.zeros(len(image_ids), dtype=np.float64)
        for s in range(0, len(image_ids), batch_size):
            img = features.get("image", image_ids[s : s + batch_size])
            cap = features.get("caption", caption_ids[s : s + batch_size])
            out[s : s + len(img)] = self.score_arrays(img, cap)
        return out


def build_linear_option(spec: ModelSpec, device: Any, checkpoint: str | Path | None) -> LinearOptionScorer:
    """The fitted baseline from its checkpoint."""
    opts = linear_options(spec)
    if checkpoint is None:
        raise ValueError(f"models.{spec.name}: the linear MCIC baseline needs its checkpoint (trainer linear_option)")
    state = load_checkpoint(checkpoint)
    if state.get("kind") != opts["kind"]:
        raise ValueError(
            f"{checkpoint}: a {state.get('kind')!r} checkpoint; expected {opts['kind']!r} (models.{spec.name})"
        )
    params = {k: v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v) for k, v in state["state_dict"].items()}
    return LinearOptionScorer(opts["kind"], params)


def _per_instance(features: Any, examples: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Image and caption features [n, 5, d] of every option of the examples, and the answer positions."""
    image, caption, _ = option_rows(examples)
    n = len(examples)
    img = np.asarray(features.get("image", image), dtype=np.float64)
    cap = np.asarray(features.get("caption", caption), dtype=np.float64)
    return (
        img.reshape(n, -1, img.shape[1]),
        cap.reshape(n, -1, cap.shape[1]),
        examples["answer_index"].to_numpy(np.int64),
    )


def train_linear_option(
    spec: ModelSpec,
    train_examples: pd.DataFrame,
    dev_examples: pd.DataFrame,
    features: Any,
    out_path: str | Path,
    history_path: str | Path,
) -> dict[str, Any]:
    """Fit I2C / C2I (ground-truth pairs of the train split) or train LinM (every option; best dev epoch); write it."""
    opts = linear_options(spec)
    check_option_training(spec, train_examples, "the linear MCIC baseline")
    t0 = time.time()
    kind = opts["kind"]
    img, cap, answer = _per_instance(features, train_examples)
    rows = np.arange(len(answer))
    history: list[dict[str, Any]] = []
    if kind in ("i2c", "c2i"):
        x, y = (img[rows, answer], cap[rows, answer]) if kind == "i2c" else (cap[rows, answer], img[rows, answer])
        w, b = fit_ridge(x, y, float(opts["ridge"]))
        params = {"w": w, "b": b}
    else:
        dev = _per_instance(features, dev_examples) if len(dev_examples) else None

        def select(theta: np.ndarray) -> float:
            d_img, d_cap, d_ans = dev  # type: ignore[misc]
            return _instance_accuracy(LinearOptionScorer("linm", {"theta": theta}).instance_scores(d_img, d_cap), d_ans)

        theta, history = train_linm(torch.from_numpy(img), torch.from_numpy(cap), answer, opts, select if dev else None)
        params = {"theta": theta}
    scorer = LinearOptionScorer(kind, params)
    train_acc = _instance_accuracy(scorer.instance_scores(img, cap), answer)
    dev_acc = None
    if len(dev_examples):
        d_img, d_cap, d_ans = _per_instance(features, dev_examples)
        dev_acc = _instance_accuracy(scorer.instance_scores(d_img, d_cap), d_ans)
    with output_set(files=[out_path, history_path]):  # the model and its history together or not at all
        with atomic_path(out_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
            torch.save(
                {
                    "state_dict": {key: torch.from_numpy(np.ascontiguousarray(v)) for key, v in params.items()},
                    "kind": kind,
                    "spec": asdict(spec),
                    "trainer": "linear_option",
                },
                fh,
            )
        summary = {
            "model": spec.name,
            "trainer": "linear_option",
            "kind": kind,
            "upstream": spec.upstream,
            "options": opts,
            "train_examples": len(train_examples),
            "train_accuracy": train_acc,
            "dev_accuracy": dev_acc,
            "best_epoch": max(history, key=lambda h: h["select"])["epoch"] if history else None,
            "history": history,
            "seconds": round(time.time() - t0, 2),
        }
        write_json(history_path, summary)
    return summary
