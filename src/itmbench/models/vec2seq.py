"""MCIC's Vec2seq + FFNN option scorer (Ding et al. section 4.3, Eq. 4): a GRU caption decoder started from the
image, an FFNN over the encoder and decoder outputs giving 'yes'/'no' per (image, option), trained jointly.

The paper encodes the image into a one-cell RNN encoder and reads the option caption with an RNN
decoder started from the encoder's state (two-layer GRU cells); the encoder output O^e and the
concatenated decoder outputs O^d_: feed a two-hidden-layer ReLU FFNN with a softmax over {no, yes}.
The loss (Eq. 4) is the FFNN's cross-entropy over every (image, option) pair plus lambda_gen times
the token negative log-likelihood (output projection w) of the true caption only: decoys are
excluded from the generation term. Greedy decoding from an image gives its generated caption.

Here (each decision an `options` key, defaults in `VEC2SEQ_OPTIONS`):
- the image vector is the declared upstream model's image embedding (`models.<name>.upstream`, the
  world's `clip`; Inception-v3's 2048-d vector in the paper), projected to `embed` (the image
  embedding matrix of Theta), the one step of the encoder's input;
- words: the paper's preprocessing (non-alphabetic characters removed, lower case, white-space
  tokens, truncated to `max_len` tokens, the paper's 30), a vocabulary of the words occurring at
  least `min_count` times (the paper's 5) in the true captions of the MCIC train split (the world's
  train captions), the others <UNK>; the decoder reads <BOS> w_1 .. w_n and predicts w_1 .. w_n <EOS>;
- the GRU's state size is `embed` (the paper's "embedding size" of the RNN model), `layers` 2;
- O^d_: is the decoder outputs at the max_len + 1 input positions, zero past the caption's end, so
  the FFNN's input has a fixed width embed * (max_len + 2); its hidden layers are `hidden1`, `hidden2`;
- Eq. 4 is a sum over pairs and tokens; a mini-batch's loss is that sum divided by its number of
  pairs (the ratio of the two terms is the paper's);
- ADAGRAD (lr `lr`, the paper's 0.01), gradients clipped at norm `clip_norm` 4, `batch_size` pairs
  per step (the paper 20), `epochs` passes over the train pairs, the epoch of best dev accuracy
  kept (as the world's FFNN, `option_scorer`); `seed` seeds initialisation and shuffling.
The pair score is the 'yes' minus 'no' logit.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from itmbench.io import atomic_path, output_set, write_json
from itmbench.models.option_scorer import check_option_training, features_of, option_rows, options_correct
from itmbench.models.spec import ModelSpec, load_checkpoint

log = logging.getLogger(__name__)

VEC2SEQ_OPTIONS: dict[str, Any] = {
    "embed": 16,
    "hidden1": 64,
    "hidden2": 16,
    "layers": 2,
    "max_len": 30,
    "min_count": 5,
    "lambda_gen": 1.0,
    "epochs": 3,
    "batch_size": 500,
    "lr": 0.01,
    "clip_norm": 4.0,
    "seed": 0,
}
PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
_NON_ALPHA = re.compile(r"[^a-z]+")


def vec2seq_options(spec: ModelSpec | None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The model's settings: defaults, the spec's options, then `overrides`; unknown keys and bad values named."""
    given = {**(spec.options if spec is not None else {}), **(overrides or {})}
    name = spec.name if spec is not None else "vec2seq"
    unknown = sorted(set(given) - set(VEC2SEQ_OPTIONS))
    if unknown:
        raise ValueError(f"models.{name}.options: unknown keys {unknown}; expected some of {sorted(VEC2SEQ_OPTIONS)}")
    opts = {**VEC2SEQ_OPTIONS, **given}
    ints = ("embed", "hidden1", "hidden2", "layers", "max_len", "min_count", "epochs", "batch_size")
    if any(int(opts[k]) < 1 for k in ints) or float(opts["lambda_gen"]) < 0 or float(opts["lr"]) <= 0:
        raise ValueError(f"models.{name}.options: invalid {opts}; expected {list(ints)} >= 1, lambda_gen >= 0, lr > 0")
    return opts


def words(text: str) -> list[str]:
    """The paper's preprocessing: non-alphabetic characters removed, lower case, white-space tokens."""
    return _NON_ALPHA.sub(" ", str(text).lower()).split()


def build_vocabulary(texts: Iterable[str], min_count: int) -> list[str]:
    """The specials, then the words occurring at least `min_count` times, by falling count then alphabetically."""
    counts = Counter(w for t in texts for w in words(t))
    kept = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return [*SPECIALS, *kept]


def encode_captions(texts: Sequence[str], vocab: Sequence[str], max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoder inputs (<BOS> w_1..w_n) and targets (w_1..w_n <EOS>), [N, max_len + 1] each, PAD after; n <= max_len."""
    index = {w: i for i, w in enumerate(vocab)}
    inputs = np.full((len(texts), max_len + 1), PAD, dtype=np.int64)
    targets = np.full((len(texts), max_len + 1), PAD, dtype=np.int64)
    for r, text in enumerate(texts):
        ids = [index.get(w, UNK) for w in words(text)[:max_len]]
        inputs[r, : len(ids) + 1] = [BOS, *ids]
        targets[r, : len(ids) + 1] = [*ids, EOS]
    return torch.from_numpy(inputs), torch.from_numpy(targets)


class Vec2SeqNet(torch.nn.Module):
    """Image -> one-step GRU encoder -> GRU decoder over a caption; FFNN over (O^e, O^d_:); output projection w."""

    def __init__(
        self, dim: int, vocab_size: int, embed: int, hidden1: int, hidden2: int, layers: int, max_len: int
    ) -> None:
        super().__init__()
        self.dims = {
            "dim": dim,
            "vocab_size": vocab_size,
            "embed": embed,
            "hidden1": hidden1,
            "hidden2": hidden2,
            "layers": layers,
            "max_len": max_len,
        }
        self.image_in = torch.nn.Linear(dim, embed)
        self.word_in = torch.nn.Embedding(vocab_size, embed, padding_idx=PAD)
        self.encoder = torch.nn.GRU(embed, embed, num_layers=layers, batch_first=True)
        # each decoder step reads its word and the single attention state, the encoder output (section 4.3)
        self.decoder = torch.nn.GRU(2 * embed, embed, num_layers=layers, batch_first=True)
        self.out = torch.nn.Linear(embed, vocab_size)  # w: decoder output -> vocabulary
        self.ffnn = torch.nn.Sequential(  # u
            torch.nn.Linear(embed * (max_len + 2), hidden1),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden1, hidden2),
            torch.nn.ReLU(),
            torch.nn.Linear(hidden2, 2),
        )

    def encode(self, image: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """O^e [N, embed] and the encoder's final state [layers, N, embed]."""
        scaled = image * math.sqrt(self.dims["dim"])  # a unit-norm embedding -> components of variance ~1
        out, state = self.encoder(self.image_in(scaled).unsqueeze(1))
        return out[:, 0], state

    def step_inputs(self, tokens: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        """The decoder's input at each step: the word's embedding and the image memory O^e."""
        return torch.cat([self.word_in(tokens), enc.unsqueeze(1).expand(-1, tokens.shape[1], -1)], dim=2)

    def forward(self, image: torch.Tensor, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(FFNN logits [N, 2] (no, yes), decoder outputs O^d [N, T, embed], zero past each caption's end)."""
        enc, state = self.encode(image)
        dec, _ = self.decoder(self.step_inputs(inputs, enc), state)
        dec = dec * (inputs != PAD).unsqueeze(-1).to(dec.dtype)
        return self.ffnn(torch.cat([enc, dec.flatten(1)], dim=1)), dec


def eq4_loss(
    net: Vec2SeqNet,
    image: torch.Tensor,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    label: torch.Tensor,
    lambda_gen: float,
) -> tuple[torch.Tensor, float, float]:
    """Eq. 4 over a batch of pairs, divided by the number of pairs: (loss, classification sum, generation sum).

    Classification: -log FN_y(O^e, O^d_:) of every pair; generation: -log softmax_v(w O^d_l) of each token
    (and <EOS>) of the pairs whose label is 1 (the true captions) only."""
    logits, dec = net(image, inputs)
    cls = torch.nn.functional.cross_entropy(logits, label, reduction="sum")
    true = label == 1
    tok = net.out(dec[true])
    gen = torch.nn.functional.cross_entropy(
        tok.reshape(-1, tok.shape[-1]), targets[true].reshape(-1), ignore_index=PAD, reduction="sum"
    )
    loss = (cls + float(lambda_gen) * gen) / max(len(label), 1)
    return loss, float(cls.detach()), float(gen.detach())


def pair_margin(net: Vec2SeqNet, image: torch.Tensor, inputs: torch.Tensor, batch_size: int = 4096) -> np.ndarray:
    """'yes' minus 'no' logit of each (image, caption) row (float64)."""
    net.eval()
    out = np.zeros(len(image), dtype=np.float64)
    with torch.no_grad():
        for s in range(0, len(image), batch_size):
            logits, _ = net(image[s : s + batch_size].float(), inputs[s : s + batch_size])
            out[s : s + len(logits)] = (logits[:, 1] - logits[:, 0]).double().numpy()
    return out


def greedy_decode(net: Vec2SeqNet, image: torch.Tensor, vocab: Sequence[str], max_len: int | None = None) -> list[str]:
    """Each image's caption by greedy decoding from <BOS>: the argmax word until <EOS> or max_len words."""
    net.eval()
    limit = int(net.dims["max_len"] if max_len is None else max_len)
    n = len(image)
    with torch.no_grad():
        enc, state = net.encode(image.float())
        token = torch.full((n, 1), BOS, dtype=torch.long)
        chosen = torch.full((n, limit), PAD, dtype=torch.long)
        done = torch.zeros(n, dtype=torch.bool)
        for step in range(limit):
            out, state = net.decoder(net.step_inputs(token, enc), state)
            nxt = net.out(out[:, -1]).argmax(dim=-1)
            done = done | (nxt == EOS)
            chosen[:, step] = torch.where(done, torch.full_like(nxt, PAD), nxt)
            if bool(done.all()):
                break
            token = nxt.unsqueeze(1)
    return [" ".join(vocab[i] for i in row if i != PAD) for row in chosen.tolist()]


def example_rows(
    examples: pd.DataFrame, cache: Any, vocab: Sequence[str], max_len: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, np.ndarray]:
    """Every (image, option) of MCIC examples: image features, decoder inputs and targets, labels."""
    image_ids, _, label = option_rows(examples)
    texts = [str(t) for opts in examples["options"] for t in opts]
    if len(texts) != len(label):
        raise ValueError(f"{len(texts)} option texts for {len(label)} options; expected one text per option")
    inputs, targets = encode_captions(texts, vocab, max_len)
    return features_of(cache, "image", image_ids).float(), inputs, targets, label


def accuracy_correct(net: Vec2SeqNet, examples: pd.DataFrame, cache: Any, vocab: Sequence[str]) -> np.ndarray:
    """Per example, whether the true option has the highest margin (a tie counts as wrong)."""
    if examples.empty:
        return np.zeros(0, dtype=bool)
    image, inputs, _, _ = example_rows(examples, cache, vocab, int(net.dims["max_len"]))
    margin = pair_margin(net, image, inputs).reshape(len(examples), -1)
    return options_correct(margin, examples["answer_index"].to_numpy(np.int64))


def train_vec2seq_net(
    train_examples: pd.DataFrame,
    features: Any,
    opts: dict[str, Any],
    dev_examples: pd.DataFrame | None = None,
) -> tuple[Vec2SeqNet, list[str], list[dict[str, Any]]]:
    """Train on every (image, option) of the train examples by Eq. 4; keep the epoch of best dev accuracy (the last
    when there is no dev). Returns the net, its vocabulary and the per-epoch history."""
    if train_examples.empty:
        raise ValueError("no MCIC train examples to train the Vec2seq + FFNN on")
    vocab = build_vocabulary(train_examples["answer"].astype(str), int(opts["min_count"]))
    max_len = int(opts["max_len"])
    image, inputs, targets, label = example_rows(train_examples, features, vocab, max_len)
    torch.manual_seed(int(opts["seed"]))
    net = Vec2SeqNet(
        image.shape[1], len(vocab), int(opts["embed"]), int(opts["hidden1"]), int(opts["hidden2"]), int(opts["layers"]),
        max_len,
    )  # fmt: skip
    opt = torch.optim.Adagrad(net.parameters(), lr=float(opts["lr"]))
    y = torch.from_numpy(np.asarray(label, dtype=np.int64))
    rng = np.random.default_rng([int(opts["seed"]), 43])
    bs, lam = int(opts["batch_size"]), float(opts["lambda_gen"])
    history: list[dict[str, Any]] = []
    best: tuple[float, dict[str, torch.Tensor] | None] = (-np.inf, None)
    for epoch in range(int(opts["epochs"])):
        t0 = time.time()
        net.train()
        order = torch.from_numpy(rng.permutation(len(y)))
        cls_sum = gen_sum = 0.0
        for s in range(0, len(order), bs):
            idx = order[s : s + bs]
            loss, c, g = eq4_loss(net, image[idx], inputs[idx], targets[idx], y[idx], lam)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), float(opts["clip_norm"]))
            opt.step()
            cls_sum, gen_sum = cls_sum + c, gen_sum + g
        has_dev = dev_examples is not None and len(dev_examples) > 0
        score = 100.0 * float(accuracy_correct(net, dev_examples, features, vocab).mean()) if has_dev else epoch
        history.append(
            {
                "epoch": epoch + 1,
                "classification_loss": cls_sum / len(y),
                "generation_loss": gen_sum / max(int(y.sum()), 1),
                "select": float(score),
                "seconds": round(time.time() - t0, 2),
            }
        )
        if score > best[0]:
            best = (float(score), {k: v.detach().clone() for k, v in net.state_dict().items()})
    if best[1] is not None:
        net.load_state_dict(best[1])
    return net, vocab, history


class Vec2SeqScorer:
    """A trained Vec2seq + FFNN as a cross scorer: upstream image embeddings, caption texts from the item store."""

    item_kinds: tuple[str, ...] = ()
    needs_features = True

    def __init__(self, net: Vec2SeqNet, vocab: Sequence[str]) -> None:
        self.net, self.vocab = net, list(vocab)

    def score_pairs(
        self, store: Any, caption_ids: np.ndarray, image_ids: np.ndarray, features: Any = None, batch_size: int = 4096
    ) -> np.ndarray:
        """'yes' minus 'no' logit of each (caption, image)."""
        if features is None:
            raise ValueError("the Vec2seq + FFNN scorer needs its upstream model's embeddings (--features)")
        caption_ids, image_ids = np.asarray(caption_ids, np.int64), np.asarray(image_ids, np.int64)
        if len(caption_ids) != len(image_ids):
            raise ValueError(f"{len(caption_ids)} caption ids for {len(image_ids)} image ids; expected equal")
        inputs, _ = encode_captions(store.texts(caption_ids), self.vocab, int(self.net.dims["max_len"]))
        return pair_margin(self.net, features_of(features, "image", image_ids).float(), inputs, batch_size)


def save_vec2seq(path: str | Path, net: Vec2SeqNet, vocab: Sequence[str], extra: dict[str, Any]) -> None:
    """The checkpoint: weights, sizes, vocabulary and whatever `extra` records."""
    with atomic_path(path, suffix=".pt") as tmp, open(tmp, "wb") as fh:
        torch.save({"state_dict": net.state_dict(), "dims": net.dims, "vocab": list(vocab), **extra}, fh)


def build_vec2seq(spec: ModelSpec, device: Any, checkpoint: str | Path | None) -> Vec2SeqScorer:
    """The trained Vec2seq + FFNN from its checkpoint."""
    vec2seq_options(spec)
    if checkpoint is None:
        raise ValueError(f"models.{spec.name}: the Vec2seq + FFNN scorer needs its trained checkpoint (trainer ffnn)")
    state = load_checkpoint(checkpoint)
    dims, vocab = state.get("dims"), state.get("vocab")
    keys = {"dim", "vocab_size", "embed", "hidden1", "hidden2", "layers", "max_len"}
    if not isinstance(dims, dict) or not keys <= set(dims) or not isinstance(vocab, list):
        raise ValueError(f"{checkpoint}: expected a Vec2seq + FFNN checkpoint with 'dims' {sorted(keys)} and 'vocab'")
    net = Vec2SeqNet(**{k: int(dims[k]) for k in keys})
    net.load_state_dict(state["state_dict"])
    return Vec2SeqScorer(net, vocab)


def train_vec2seq(
    spec: ModelSpec,
    train_examples: pd.DataFrame,
    dev_examples: pd.DataFrame,
    features: Any,
    out_path: str | Path,
    history_path: str | Path,
) -> dict[str, Any]:
    """Train the Vec2seq + FFNN on MCIC train examples (`itmbench train-ffnn`); write its checkpoint and history."""
    opts = vec2seq_options(spec)
    check_option_training(spec, train_examples, "the Vec2seq + FFNN")
    t0 = time.time()
    net, vocab, history = train_vec2seq_net(train_examples, features, opts, dev_examples)
    best = max(history, key=lambda h: h["select"])
    with output_set(files=[out_path, history_path]):
        save_vec2seq(out_path, net, vocab, {"spec": asdict(spec), "trainer": "ffnn", "best_epoch": best["epoch"]})
        write_json(
            history_path,
            {
                "model": spec.name,
                "trainer": "ffnn",
                "family": spec.family,
                "upstream": spec.upstream,
                "options": opts,
                "vocabulary": len(vocab),
                "train_examples": len(train_examples),
                "best_epoch": best["epoch"],
                "dev_accuracy": best["select"] if len(dev_examples) else None,
                "history": history,
                "seconds": round(time.time() - t0, 2),
            },
        )
    return {"best_epoch": best["epoch"], "dev_accuracy": best["select"] if len(dev_examples) else None}
