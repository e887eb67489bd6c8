"""MCIC's linear baselines (Baseline-I2C, Baseline-C2I, Baseline-LinM): by hand, against naive forms, end to end."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from itmbench.models.linear_option import (
    LinearOptionScorer,
    bilinear_scores,
    fit_ridge,
    linear_options,
    regression_scores,
    train_linm,
)
from itmbench.models.registry import build_encoder, option_trainer, pick_device
from itmbench.models.spec import model_spec


def _naive_ridge(x, y, ridge):
    """[x, 1] @ [W; b] by the normal equations with the penalty on W only."""
    a = np.hstack([x, np.ones((len(x), 1))])
    penalty = ridge * np.eye(a.shape[1])
    penalty[-1, -1] = 0.0
    sol = np.linalg.solve(a.T @ a + penalty, a.T @ y)
    return sol[:-1], sol[-1]


def test_ridge_equals_the_normal_equations_and_recovers_an_exact_map():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4))
    w_true, b_true = rng.normal(size=(4, 3)), rng.normal(size=3)
    y = x @ w_true + b_true
    w, b = fit_ridge(x, y, 0.0)
    assert np.allclose(w, w_true) and np.allclose(b, b_true)
    y_noisy = y + 0.1 * rng.normal(size=y.shape)
    for ridge in (0.5, 10.0):
        w, b = fit_ridge(x, y_noisy, ridge)
        w_ref, b_ref = _naive_ridge(x, y_noisy, ridge)
        assert np.allclose(w, w_ref) and np.allclose(b, b_ref)


def test_regression_scores_by_hand():
    """W = I, b = 0: I2C and C2I both pick the option nearest the image; -|i - c|^2 by hand."""
    image = np.array([[1.0, 0.0], [1.0, 0.0]])
    caption = np.array([[1.0, 1.0], [3.0, 0.0]])  # squared distances 1 and 4
    w, b = np.eye(2), np.zeros(2)
    assert regression_scores("i2c", w, b, image, caption).tolist() == [-1.0, -4.0]
    # C2I with W = 2I, b = (-1, 0): predictions (1, 2) and (5, 0) against (1, 0): distances 4 and 16
    assert regression_scores("c2i", 2 * np.eye(2), np.array([-1.0, 0.0]), image, caption).tolist() == [-4.0, -16.0]


def test_bilinear_scores_equal_loops():
    rng = np.random.default_rng(1)
    theta, image, caption = rng.normal(size=(3, 4)), rng.normal(size=(6, 3)), rng.normal(size=(6, 4))
    naive = [sum(image[n, d] * theta[d, e] * caption[n, e] for d in range(3) for e in range(4)) for n in range(6)]
    assert bilinear_scores(theta, image, caption) == pytest.approx(naive)


def test_linm_first_step_is_eq2_subgradient_by_hand():
    """From Theta = 0 every instance violates the margin: the step is lr * mean(i (c_target - c_worst)^T)."""
    image = torch.tensor([[[1.0, 0.0]] * 2, [[0.0, 1.0]] * 2], dtype=torch.float64)  # [n=2, k=2, d=2]
    caption = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]], dtype=torch.float64)
    answer = np.array([0, 1])
    opts = {"margin": 1.0, "epochs": 1, "batch_size": 2, "lr": 0.5, "seed": 0}
    theta, history = train_linm(image, caption, answer, opts)
    # instance 0: i = e1, target e1, decoy e2; instance 1: i = e2, target e1, decoy e2 (answer 1 -> caption e1)
    expected = 0.5 * 0.5 * (np.outer([1, 0], [1, -1]) + np.outer([0, 1], [1, -1]))
    assert theta == pytest.approx(expected)
    assert history[0]["train_loss"] == pytest.approx(1.0)  # both at margin 1 with f = 0


def _separable(n=300, k=5, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    images = rng.normal(size=(n, dim))
    options = rng.normal(size=(n, k, dim))
    answer = rng.integers(0, k, size=n)
    options[np.arange(n), answer] = images @ np.diag(np.linspace(0.5, 2.0, dim)) + 0.3 * rng.normal(size=(n, dim))
    ids = np.arange(n * k).reshape(n, k)
    examples = pd.DataFrame(
        {"image_id": np.arange(n), "option_caption_ids": [list(r) for r in ids], "answer_index": answer}
    )

    class Cache:
        def get(self, kind, idx):
            src = images if kind == "image" else options.reshape(n * k, dim)
            return src[np.asarray(idx)].astype(np.float32)

    return examples, Cache()


@pytest.mark.parametrize("kind", ["i2c", "c2i", "linm"])
def test_each_baseline_learns_separable_data_and_scores_pairs_from_its_checkpoint(tmp_path, kind):
    examples, cache = _separable()
    train, dev = examples.iloc[:200], examples.iloc[200:]
    entry = {"family": "linear_option", "trainer": "linear_option", "upstream": "clip", "options": {"kind": kind}}
    spec = model_spec(f"mcic_{kind}", entry)
    assert option_trainer(spec).__name__ == "_train_linear_option"
    out, history = tmp_path / "model.pt", tmp_path / "history.json"
    summary = option_trainer(spec)(spec, train, dev, cache, out, history)
    assert summary["dev_accuracy"] > 80.0, summary  # chance is 20%
    assert json.loads(history.read_text())["kind"] == kind
    scorer = build_encoder(spec, pick_device("cpu"), out)
    assert isinstance(scorer, LinearOptionScorer)
    image_ids = np.repeat(dev["image_id"].to_numpy(), 5)
    caption_ids = np.concatenate(dev["option_caption_ids"].to_list())
    pairs = scorer.score_pairs(None, caption_ids, image_ids, features=cache, batch_size=37).reshape(-1, 5)
    picked = pairs.argmax(axis=1) == dev["answer_index"].to_numpy()
    assert 100 * picked.mean() == pytest.approx(summary["dev_accuracy"])
    again = tmp_path / "again.pt"
    option_trainer(spec)(spec, train, dev, cache, again, tmp_path / "again.json")
    assert (
        torch.load(again, weights_only=True)["state_dict"].keys()
        == torch.load(out, weights_only=True)["state_dict"].keys()
    )
    first, second = (torch.load(p, weights_only=True)["state_dict"] for p in (out, again))
    assert all(torch.equal(first[key], second[key]) for key in first)  # deterministic on CPU


def test_options_are_checked():
    with pytest.raises(ValueError, match="unknown keys \\['hidden'\\]"):
        linear_options(model_spec("m", {"family": "linear_option", "options": {"hidden": 3}}))
    with pytest.raises(ValueError, match="is not one of"):
        linear_options(model_spec("m", {"family": "linear_option", "options": {"kind": "i2i"}}))
    with pytest.raises(ValueError, match="not an MCIC option scorer"):
        option_trainer(model_spec("m", {"family": "coca"}))
