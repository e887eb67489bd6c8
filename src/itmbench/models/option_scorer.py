"""MCIC's FFNN option scorer (Ding et al. section 4.2): a 2-class feed-forward net per (image, option), argmax over 5.

The paper feeds <DNN(image), Emb(caption)> to a two-hidden-layer ReLU network with a softmax over
{no, yes}, trains it with cross-entropy on every (image, option) pair of the MCIC-COCO train split
(1 true caption + 4 decoys made by Algorithm 1), and answers with the option of highest 'yes'
probability. ADAGRAD, learning rate 0.01, gradients clipped at norm 4, mini-batches of 20.

Here the features are a declared upstream model's item embeddings (`models.<name>.upstream`, by
default the world's `clip`), the decoys of the train split are built by the same Algorithm 1 code
as the dev and test splits (`mcic.build` with splits {train: train}), and the epoch kept is the one
with the best dev accuracy (the paper tunes on dev). Decisions (each an `options` key): `hidden`
256 (the paper's dimension; `hidden2` the second layer's size, 0: the same), `embed` 0 (the inputs as
they come; n > 0: each input first projected linearly to n, the paper's embedding size of Table 4),
`epochs` 10, `batch_size` 500 (20 in the paper; 500 keeps an epoch at 0.3 s on 2 cores, dev accuracy
57.6% vs 58.4% at 100), `input` "concat" (the paper's tuple; "concat_product" adds the elementwise
product), `seed` 0. The pair score is the
'yes' minus 'no' logit (the same argmax as the 'yes' probability).
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from itmbench.io import atomic_path, output_set, write_json
from itmbench.models.spec import ModelSpec, load_checkpoint

log = logging.getLogger(__name__)

FFNN_OPTIONS = {
    "hidden": 256,
    "hidden2": 0,
    "embed": 0,
    "epochs": 10,
    "batch_size": 500,
    "lr": 0.01,
    "clip_norm": 4.0,
    "input": "concat",
    "seed": 0,
}
INPUTS = ("concat", "concat_product")


def ffnn_options(spec: ModelSpec) -> dict[str, Any]:
    """The FFNN's settings from the spec's options (defaults above), naming unknown keys and bad values."""
    unknown = sorted(set(spec.options) - set(FFNN_OPTIONS))
    if unknown:
        raise ValueError(f"models.{spec.name}.options: unknown keys {unknown}; expected some of {sorted(FFNN_OPTIONS)}")
    opts = {**FFNN_OPTIONS, **spec.options}
    if int(opts["hidden2"]) < 0 or int(opts["embed"]) < 0:
        raise ValueError(f"models.{spec.name}.options: invalid {opts}; hidden2 and embed >= 0 (0: none)")
    if opts["input"] not in INPUTS or int(opts["hidden"]) < 1 or int(opts["epochs"]) < 1 or int(opts["batch_size"]) < 1:
        raise ValueError(f"models.{spec.name}.options: invalid {opts}; input one of {INPUTS}, sizes >= 1")
    return opts


class OptionNet(torch.nn.Module):
    """Two hidden ReLU layers and a 2-way output over an (image, caption) feature pair."""

    def __init__(self, dim: int, hidden: int, input_kind: str = "concat", hidden2: int = 0, embed: int = 0) -> None:
        super().__init__()
        self.dim, self.hidden, self.input_kind = dim, hidden, input_kind
        self.hidden2, self.embed = hidden2 or hidden, embed
        if embed:  # Emb(.) of Table 4's sizes: each input projected to `embed` first
            self.image_in = torch.nn.Linear(dim, embed)
            self.caption_in = torch.nn.Linear(dim, embed)
        width = (embed or dim) * (3 if input_kind == "concat_product" else 2)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(width, hidden),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden, self.hidden2),
            torch.nn.ReLU(),
            torch.nn.Linear(self.hidden2, 2),
        )

    def forward(self, image: torch.Tensor, caption: torch.Tensor) -> torch.Tensor:
        """Logits [N, 2] (no, yes)."""
        if self.embed:
            image, caption = self.image_in(image), self.caption_in(caption)
        parts = [image, caption] + ([image * caption] if self.input_kind == "concat_product" else [])
        return self.net(torch.cat(parts, dim=1))


def features_of(cache: Any, kind: str, ids: np.ndarray) -> torch.Tensor:
    """The upstream embeddings of these items (an EmbeddingCache gives numpy) as a CPU tensor."""
    return torch.as_tensor(cache.get(kind, ids))


def pair_margin(net: OptionNet, image: torch.Tensor, caption: torch.Tensor, batch_size: int = 65536) -> np.ndarray:
    """'yes' minus 'no' logit of each row pair (float64)."""
    net.eval()
    out = np.zeros(len(image), dtype=np.float64)
    with torch.no_grad():
        for s in range(0, len(image), batch_size):
            logits = net(image[s : s + batch_size].float(), caption[s : s + batch_size].float())
            out[s : s + len(logits)] = (logits[:, 1] - logits[:, 0]).double().numpy()
    return out


def train_option_net(
    image: torch.Tensor,
    caption: torch.Tensor,
    label: np.ndarray,
    opts: dict[str, Any],
    select: Any = None,
) -> tuple[OptionNet, list[dict[str, Any]]]:
    """Train on (image, caption, yes/no) rows; keep the epoch `select(net)` scores best (the last when None)."""
    torch.manual_seed(int(opts["seed"]))
    hidden2, embed = int(opts.get("hidden2", 0)), int(opts.get("embed", 0))
    net = OptionNet(image.shape[1], int(opts["hidden"]), opts["input"], hidden2, embed)
    opt = torch.optim.Adagrad(net.parameters(), lr=float(opts["lr"]))
    y = torch.from_numpy(np.asarray(label, dtype=np.int64))
    rng = np.random.default_rng([int(opts["seed"]), 41])
    history: list[dict[str, Any]] = []
    best: tuple[float, dict[str, torch.Tensor] | None] = (-np.inf, None)
    bs = int(opts["batch_size"])
    for epoch in range(int(opts["epochs"])):
        t0 = time.time()
        net.train()
        order = torch.from_numpy(rng.permutation(len(y)))
        losses = []
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            loss = torch.nn.functional.cross_entropy(net(image[idx].float(), caption[idx].float()), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), float(opts["clip_norm"]))
            opt.step()
            losses.append(float(loss.detach()))
        score = float(select(net)) if select is not None else float(epoch)
        history.append(
            {
                "epoch": epoch + 1,
                "train_loss": float(np.mean(losses)),
                "select": score,
                "seconds": round(time.time() - t0, 2),
            }
        )
        if score > best[0]:
            best = (score, {k: v.detach().clone() for k, v in net.state_dict().items()})
    if best[1] is not None:
        net.load_state_dict(best[1])
    return net, history


def option_rows(examples: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (image, option) of MCIC examples with its label (1 for the true caption): the 2-class rows."""
    n = len(examples)
    options = np.array([list(v) for v in examples["option_caption_ids"]], dtype=np.int64).reshape(n, -1)
    k = options.shape[1]
    image = np.repeat(examples["image_id"].to_numpy(np.int64), k)
    answer = examples["answer_index"].to_numpy(np.int64)
    label = (np.arange(k)[None, :] == answer[:, None]).astype(np.int64).ravel()
    return image, options.ravel(), label


def options_correct(margin: np.ndarray, answer: np.ndarray) -> np.ndarray:
    """Per example (a row of its options' margins), whether the true option's margin is strictly the highest (a tie
    counts as wrong); the MCIC option scorers' selection and sweeps all read it."""
    rows = np.arange(len(margin))
    true = margin[rows, answer]
    others = margin.copy()
    others[rows, answer] = -np.inf
    return true > others.max(axis=1)


def mcic_correct_of(net: OptionNet, examples: pd.DataFrame, cache: Any) -> np.ndarray:
    """Per example, whether the FFNN ranks its true option strictly first over the cache's features."""
    image, caption, label = option_rows(examples)
    margin = pair_margin(net, features_of(cache, "image", image), features_of(cache, "caption", caption))
    return options_correct(margin.reshape(len(examples), -1), examples["answer_index"].to_numpy(np.int64))


def mcic_accuracy_of(net: OptionNet, examples: pd.DataFrame, cache: Any) -> float:
    """Accuracy (%) of argmax over each example's options (a tie counts as wrong)."""
    correct = mcic_correct_of(net, examples, cache)
    return 100.0 * float(np.mean(correct)) if len(correct) else float("nan")


class OptionScorer:
    """A trained FFNN as a cross scorer over an upstream model's item embeddings."""

    item_kinds: tuple[str, ...] = ()
    needs_features = True

    def __init__(self, net: OptionNet) -> None:
        self.net = net

    def score_pairs(
        self, store: Any, caption_ids: np.ndarray, image_ids: np.ndarray, features: Any = None, batch_size: int = 65536
    ) -> np.ndarray:
        """'yes' minus 'no' logit of each (caption, image); features from the upstream embedding cache."""
        if features is None:
            raise ValueError("the FFNN option scorer needs its upstream model's embeddings (--features)")
        return pair_margin(
            self.net,
            features_of(features, "image", np.asarray(image_ids)),
            features_of(features, "caption", np.asarray(caption_ids)),
        )


def build_option_scorer(spec: ModelSpec, device: Any, checkpoint: str | Path | None) -> OptionScorer:
    """The trained FFNN from its checkpoint."""
    opts = ffnn_options(spec)
    if checkpoint is None:
        raise ValueError(f"models.{spec.name}: the FFNN option scorer needs its trained checkpoint (trainer ffnn)")
    state = load_checkpoint(checkpoint)
    dims = state.get("dims")
    if not isinstance(dims, dict) or not {"dim", "hidden"} <= set(dims):
        raise ValueError(f"{checkpoint}: expected an FFNN checkpoint with 'dims' {{dim, hidden}}")
    net = OptionNet(
        int(dims["dim"]), int(dims["hidden"]), opts["input"], int(dims.get("hidden2", 0)), int(dims.get("embed", 0))
    )
    net.load_state_dict(state["state_dict"])
    return OptionScorer(net)


def check_option_training(spec: ModelSpec, train_examples: pd.DataFrame, what: str) -> None:
    """Refuse to train an MCIC option scorer (`what`: the FFNN, a linear baseline, the Vec2seq + FFNN) without
    the upstream model whose features it reads, or without train examples."""
    if spec.upstream is None:
        raise ValueError(f"models.{spec.name}: {what} needs an `upstream` model whose embeddings are its features")
    if train_examples.empty:
        raise ValueError(f"models.{spec.name}: no MCIC train examples to train on")


def train_ffnn(
    spec: ModelSpec,
    train_examples: pd.DataFrame,
    dev_examples: pd.DataFrame,
    features: Any,
    out_path: str | Path,
    history_path: str | Path,
) -> dict[str, Any]:
    """Train the FFNN on MCIC train examples over upstream features; keep the best dev epoch; write checkpoint."""
    opts = ffnn_options(spec)
    check_option_training(spec, train_examples, "the FFNN")
    t0 = time.time()
    image, caption, label = option_rows(train_examples)
    img, cap = features_of(features, "image", image), features_of(features, "caption", caption)
    select = (lambda net: mcic_accuracy_of(net, dev_examples, features)) if len(dev_examples) else None
    net, history = train_option_net(img, cap, label, opts, select)
    best = max(history, key=lambda h: h["select"])
    with output_set(files=[out_path, history_path]):  # the model and its history together or not at all
        with atomic_path(out_path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
            torch.save(
                {
                    "state_dict": net.state_dict(),
                    "dims": {
                        "dim": int(img.shape[1]),
                        "hidden": int(opts["hidden"]),
                        "hidden2": int(opts["hidden2"]),
                        "embed": int(opts["embed"]),
                    },
                    "spec": asdict(spec),
                    "trainer": "ffnn",
                    "best_epoch": best["epoch"],
                },
                fh,
            )
        summary = {
            "model": spec.name,
            "trainer": "ffnn",
            "upstream": spec.upstream,
            "options": opts,
            "train_examples": len(train_examples),
            "train_pairs": len(label),
            "best_epoch": best["epoch"],
            "dev_accuracy": best["select"] if select is not None else None,
            "history": history,
            "seconds": round(time.time() - t0, 2),
        }
        write_json(history_path, summary)
    return summary
