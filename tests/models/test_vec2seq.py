"""MCIC's Vec2seq + FFNN (models/vec2seq.py): Eq. 4 against a naive per-example loss, lambda_gen = 0 leaves the
output projection untrained, greedy decoding of a hand-set model, deterministic training, its scorer."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch

from itmbench.models.registry import build_encoder, option_trainer, pick_device
from itmbench.models.spec import model_spec
from itmbench.models.vec2seq import (
    BOS,
    EOS,
    PAD,
    UNK,
    Vec2SeqNet,
    Vec2SeqScorer,
    build_vocabulary,
    encode_captions,
    eq4_loss,
    greedy_decode,
    vec2seq_options,
    words,
)

VOCAB = ["<pad>", "<bos>", "<eos>", "<unk>", "red", "blue", "circle", "square"]


def _net(seed: int = 0, max_len: int = 3) -> Vec2SeqNet:
    torch.manual_seed(seed)
    return Vec2SeqNet(dim=4, vocab_size=len(VOCAB), embed=5, hidden1=6, hidden2=3, layers=2, max_len=max_len)


def test_words_vocabulary_and_encoding_follow_the_papers_preprocessing():
    assert words("A Red-circle, 2 squares!") == ["a", "red", "circle", "squares"]
    vocab = build_vocabulary(["red circle", "Red square", "blue circle", "red"], min_count=2)
    assert vocab == ["<pad>", "<bos>", "<eos>", "<unk>", "red", "circle"]  # by count, then alphabetically
    inputs, targets = encode_captions(["red blue circle square", "circle"], vocab, max_len=3)
    assert inputs.tolist() == [[BOS, 4, UNK, 5], [BOS, 5, PAD, PAD]]  # truncated to 3 words; blue is <unk>
    assert targets.tolist() == [[4, UNK, 5, EOS], [5, EOS, PAD, PAD]]


def _naive_eq4(net, image, texts, label, lam):
    """Eq. 4 one pair at a time: -log FN_y(O^e, O^d_:) of every pair, + lambda * sum_l -log softmax(w O^d_l)[w_l]
    over the true captions' tokens and <EOS>; divided by the number of pairs."""
    total = 0.0
    width = net.dims["embed"]
    for k, text in enumerate(texts):
        inputs, targets = encode_captions([text], VOCAB, net.dims["max_len"])
        enc, state = net.encode(image[k : k + 1])
        n = int((inputs != PAD).sum())
        outs = []
        for step in range(n):  # the decoder one step at a time
            x = torch.cat([net.word_in(inputs[:, step : step + 1]), enc.unsqueeze(1)], dim=2)
            o, state = net.decoder(x, state)
            outs.append(o[0, 0])
        padded = outs + [torch.zeros(width)] * (net.dims["max_len"] + 1 - n)
        logits = net.ffnn(torch.cat([enc[0], *padded]))
        total = total - torch.log_softmax(logits, dim=0)[int(label[k])]
        if int(label[k]) == 1:
            for step in range(n):
                total = total - lam * torch.log_softmax(net.out(outs[step]), dim=0)[int(targets[0, step])]
    return total / len(texts)


def test_eq4_equals_a_naive_per_pair_loss_and_excludes_decoys_from_generation():
    net = _net()
    image = torch.randn(4, 4, generator=torch.Generator().manual_seed(1))
    texts = ["red circle", "blue square circle", "square", "red red blue"]
    label = torch.tensor([1, 0, 0, 1])
    inputs, targets = encode_captions(texts, VOCAB, 3)
    for lam in (0.0, 1.0, 2.5):
        loss, cls, gen = eq4_loss(net, image, inputs, targets, label, lam)
        assert float(loss.detach()) == pytest.approx(
            float(_naive_eq4(net, image, texts, label, lam).detach()), rel=1e-5
        )
        assert float(loss) == pytest.approx((cls + lam * gen) / 4, rel=1e-6)
    # the generation term reads the true captions only: changing a decoy's text changes only the first term
    other = ["red circle", "circle circle circle", "red", "red red blue"]
    o_inputs, o_targets = encode_captions(other, VOCAB, 3)
    _, _, gen_other = eq4_loss(net, image, o_inputs, o_targets, label, 1.0)
    assert gen_other == pytest.approx(gen, rel=1e-6)
    no_true = torch.zeros(4, dtype=torch.long)
    assert eq4_loss(net, image, inputs, targets, no_true, 3.0)[2] == 0.0


def test_lambda_gen_zero_gives_the_output_projection_no_gradient():
    net = _net()
    image = torch.randn(3, 4, generator=torch.Generator().manual_seed(2))
    inputs, targets = encode_captions(["red circle", "blue", "square circle"], VOCAB, 3)
    label = torch.tensor([1, 0, 1])
    eq4_loss(net, image, inputs, targets, label, 0.0)[0].backward()
    assert net.out.weight.grad is None or float(net.out.weight.grad.abs().sum()) == 0.0
    assert net.out.bias.grad is None or float(net.out.bias.grad.abs().sum()) == 0.0
    assert float(net.decoder.weight_hh_l0.grad.abs().sum()) > 0  # the classification term still trains the rest
    net.zero_grad()
    eq4_loss(net, image, inputs, targets, label, 1.0)[0].backward()
    assert float(net.out.weight.grad.abs().sum()) > 0


def test_greedy_decoding_of_a_hand_set_model():
    """Output projection w set so that the argmax follows the step: 'red', 'circle', then <EOS>; the second image
    (sign flipped in the image projection) says 'blue' first. Hand-set: a one-layer GRU whose state only counts
    steps and copies the image's sign."""
    torch.manual_seed(0)
    net = Vec2SeqNet(dim=1, vocab_size=len(VOCAB), embed=3, hidden1=2, hidden2=2, layers=1, max_len=4)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.image_in.weight[:] = torch.tensor([[1.0], [0.0], [0.0]])  # embed[0] = image value (x 1 = sqrt(dim))
        # encoder: update gate 0, candidate = tanh(W x): h = tanh(10 * image) in unit 0
        net.encoder.weight_ih_l0[6:9] = torch.diag(torch.tensor([10.0, 0.0, 0.0]))
        net.encoder.bias_ih_l0[3:6] = -20.0  # update gate z = sigmoid(-20) ~ 0: take the candidate
        net.encoder.bias_ih_l0[0:3] = 20.0  # reset gate 1
        # decoder: keep unit 0 (z = 1), count steps in units 1-2 through the word embeddings
        net.decoder.bias_ih_l0[3:6] = torch.tensor([20.0, -20.0, -20.0])
        net.decoder.bias_ih_l0[0:3] = 20.0
        net.word_in.weight[BOS] = torch.tensor([1.0, 0.0, 0.0])
        net.word_in.weight[4] = torch.tensor([0.0, 1.0, 0.0])  # red -> unit 1
        net.word_in.weight[5] = torch.tensor([0.0, 1.0, 0.0])  # blue -> unit 1
        net.word_in.weight[6] = torch.tensor([0.0, 0.0, 1.0])  # circle -> unit 2
        net.decoder.weight_ih_l0[6:9, :3] = torch.diag(torch.tensor([0.0, 10.0, 10.0]))
        # w: after <BOS> (units 1, 2 ~ 0): red if unit 0 > 0 else blue; after a colour: circle; after circle: <EOS>
        net.out.weight[4] = torch.tensor([5.0, -5.0, -5.0])
        net.out.weight[5] = torch.tensor([-5.0, -5.0, -5.0])
        net.out.bias[5] = -1.0
        net.out.bias[4] = -1.0
        net.out.weight[6] = torch.tensor([0.0, 10.0, -10.0])
        net.out.weight[EOS] = torch.tensor([0.0, -10.0, 10.0])
    captions = greedy_decode(net, torch.tensor([[1.0], [-1.0]]), VOCAB)
    assert captions == ["red circle", "blue circle"]
    assert greedy_decode(net, torch.tensor([[1.0]]), VOCAB, max_len=1) == ["red"]


def _world(n=120, seed=0):
    """Examples whose true option names the image's colour and shape; decoys name other ones."""
    rng = np.random.default_rng(seed)
    colours, shapes = ["red", "blue", "green"], ["circle", "square", "triangle"]
    feats, rows = [], []
    for i in range(n):
        c, s = int(rng.integers(3)), int(rng.integers(3))
        feats.append(np.eye(6)[c] + np.eye(6)[3 + s])
        true = f"a {colours[c]} {shapes[s]}"
        decoys = [f"a {colours[(c + 1 + j) % 3]} {shapes[(s + j) % 3]}" for j in range(4)]
        answer = int(rng.integers(5))
        options = decoys[:answer] + [true] + decoys[answer:]
        rows.append({"image_id": i, "options": options, "answer_index": answer, "answer": true,
                     "option_caption_ids": list(range(5 * i, 5 * i + 5))})  # fmt: skip
    images = np.asarray(feats, dtype=np.float32) / math.sqrt(2)

    class Cache:
        def get(self, kind, idx):
            assert kind == "image"
            return images[np.asarray(idx)]

    class Store:
        def texts(self, ids):
            return [rows[int(i) // 5]["options"][int(i) % 5] for i in ids]

    return pd.DataFrame(rows), Cache(), Store()


def test_training_is_deterministic_learns_and_scores_from_its_checkpoint(tmp_path):
    torch.set_num_threads(1)  # as the workflow runs it (and fast on a shared machine)
    examples, cache, store = _world()
    train, dev = examples.iloc[:90], examples.iloc[90:]
    entry = {"family": "vec2seq", "trainer": "ffnn", "upstream": "clip",
             "options": {"epochs": 12, "batch_size": 50, "lr": 0.1, "min_count": 1, "max_len": 4}}  # fmt: skip
    spec = model_spec("vec2seq", entry)
    assert option_trainer(spec).__name__ == "_train_vec2seq"
    out, history = tmp_path / "model.pt", tmp_path / "history.json"
    summary = option_trainer(spec)(spec, train, dev, cache, out, history)
    assert summary["dev_accuracy"] > 50.0, summary  # chance is 20%
    doc = json.loads(history.read_text())
    assert doc["options"]["lambda_gen"] == 1.0 and doc["vocabulary"] == 4 + 7  # specials + a, 3 colours, 3 shapes
    scorer = build_encoder(spec, pick_device("cpu"), out)
    assert isinstance(scorer, Vec2SeqScorer)
    image_ids = np.repeat(dev["image_id"].to_numpy(), 5)
    caption_ids = np.concatenate(dev["option_caption_ids"].to_list())
    margins = scorer.score_pairs(store, caption_ids, image_ids, features=cache, batch_size=7).reshape(-1, 5)
    picked = margins.argmax(axis=1) == dev["answer_index"].to_numpy()
    assert 100 * picked.mean() == pytest.approx(summary["dev_accuracy"])
    again = tmp_path / "again.pt"
    option_trainer(spec)(spec, train, dev, cache, again, tmp_path / "again.json")
    first, second = (torch.load(p, weights_only=False) for p in (out, again))
    assert first["vocab"] == second["vocab"]
    assert all(torch.equal(first["state_dict"][k], second["state_dict"][k]) for k in first["state_dict"])


def test_options_are_checked():
    with pytest.raises(ValueError, match="unknown keys \\['hidden'\\]"):
        vec2seq_options(model_spec("v", {"family": "vec2seq", "upstream": "clip", "options": {"hidden": 3}}))
    with pytest.raises(ValueError, match="lambda_gen >= 0"):
        vec2seq_options(None, {"lambda_gen": -1.0})
