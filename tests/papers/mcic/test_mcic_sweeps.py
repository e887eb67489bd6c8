"""MCIC Tables 4 and 5 (papers/mcic/sweeps.py, `itmbench mcic-sweep`, `mcic-sweep-table`): the sweeps on a toy
world (deterministic bytes), the caption metrics as pycocoevalcap's, the tables beside the printed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from itmbench.cli import main
from itmbench.papers.mcic.sweeps import (
    SWEEP_COLUMNS,
    caption_metric_rows,
    lambda_gen_sweep,
    size_sweep,
    table4_long,
    table5_long,
)
from itmbench.papers.published import published_value


def _toy(n=60, seed=0):
    """MCIC-like examples: the true option names the image's colour and shape; unit-norm image/caption features."""
    rng = np.random.default_rng(seed)
    colours, shapes = ["red", "blue", "green"], ["circle", "square", "triangle"]
    rows, img, cap = [], {}, {}
    for i in range(n):
        c, s = int(rng.integers(3)), int(rng.integers(3))
        img[i] = (np.eye(6)[c] + np.eye(6)[3 + s]) / math.sqrt(2)
        true = f"a {colours[c]} {shapes[s]}"
        texts = [true] + [f"a {colours[(c + 1 + j) % 3]} {shapes[(s + j) % 3]}" for j in range(4)]
        ids = list(range(5 * i, 5 * i + 5))
        for k, t in zip(ids, texts):
            cc, ss = colours.index(t.split()[1]), shapes.index(t.split()[2])
            cap[k] = (np.eye(6)[cc] + np.eye(6)[3 + ss]) / math.sqrt(2)
        rows.append({"image_id": i, "options": texts, "answer_index": 0, "answer": true, "option_caption_ids": ids})
    frame = pd.DataFrame(rows)

    class Cache:
        def get(self, kind, idx):
            src = img if kind == "image" else cap
            return np.stack([src[int(i)] for i in np.asarray(idx)]).astype(np.float32)

    captions = pd.DataFrame(
        [{"image_id": r["image_id"], "text": t} for r in rows for t in (r["answer"], r["answer"] + " here")]
    )
    evals = {"dev": frame.iloc[40:50], "test": frame.iloc[50:]}
    return frame.iloc[:40], evals, Cache(), captions


def test_sweeps_are_deterministic_and_complete():
    torch.set_num_threads(1)
    train, evals, cache, captions = _toy()
    sizes = {"sizes": [[4, 8, 4], [8, 8, 4]], "epochs": 1, "lambda_gen": 1.0, "seed": 0}
    first = size_sweep(train, evals, cache, sizes)
    assert list(first.columns) == SWEEP_COLUMNS
    assert len(first) == 2 * 2 * 2 and set(first["model"]) == {"ffnn", "vec2seq"}
    assert first["n"].tolist() == [10, 10] * 4
    assert first.to_csv(index=False) == size_sweep(train, evals, cache, sizes).to_csv(index=False)
    lam = {"lambdas": [1.0, 0.0], "size": [4, 8, 4], "epochs": 1, "seed": 0}
    frame = lambda_gen_sweep(train, evals, cache, captions, lam)
    assert frame.to_csv(index=False) == lambda_gen_sweep(train, evals, cache, captions, lam).to_csv(index=False)
    at_zero = frame[frame["lambda_gen"] == 0.0]
    assert set(at_zero["metric"]) == {"accuracy"}  # no caption metric where the projection is never trained
    at_one = frame[frame["lambda_gen"] == 1.0]
    assert set(at_one["metric"]) == {"accuracy", "rouge_l", "cider_d", "distinct_captions"}
    assert at_one[at_one["metric"] == "rouge_l"]["n"].tolist() == [10, 10]  # one caption per image


def test_caption_metrics_are_pycocoevalcaps_means_over_images():
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    generated = {"dev": ["a red circle", "a blue square"], "test": ["a green circle", "a red square"]}
    references = {
        "dev": [["a red circle", "a small red circle"], ["a blue triangle"]],
        "test": [["a green circle", "a circle"], ["a red square", "red square"]],
    }
    rows = pd.DataFrame(caption_metric_rows({"sweep": "lambda_gen"}, generated, references))
    for split in ("dev", "test"):
        gts = dict(enumerate(references[split]))
        res = {i: [c] for i, c in enumerate(generated[split])}
        rouge, rouge_each = Rouge().compute_score(gts, res)
        cider, _ = Cider().compute_score(gts, res)
        got = rows[rows["split"] == split].set_index("metric")
        assert got.loc["rouge_l", "value"] == pytest.approx(rouge)
        assert got.loc["rouge_l", "se"] == pytest.approx(np.std(rouge_each, ddof=1) / math.sqrt(2))
        assert got.loc["cider_d", "value"] == pytest.approx(cider)
        assert got.loc["distinct_captions", "value"] == 2


def _sizes_frame():
    rows = []
    for model, lam in (("ffnn", math.nan), ("vec2seq", 1.0)):
        for split, value, n in (("dev", 40.0, 1250), ("test", 50.0, 2403)):
            se = 100 * math.sqrt(value / 100 * (1 - value / 100) / n)
            rows.append(["sizes", model, 8, 16, 4, lam, split, "accuracy", value, se, n, 2])
    return pd.DataFrame(rows, columns=SWEEP_COLUMNS)


def test_table4_layout_beside_the_printed_values():
    long = table4_long(_sizes_frame())
    wide = long.pivot(index="row", columns="column", values="value")
    assert wide.loc["world FFNN 8-16-4", "Dev"] == 40.0 and wide.loc["world Vec2seq+FFNN 8-16-4", "hidden-2"] == 4
    cell = long[(long["row"] == "world FFNN 8-16-4") & (long["column"] == "Test")].iloc[0]
    assert cell["lo"] < 50.0 < cell["hi"]  # Wilson interval
    assert wide.loc["published FFNN 256-64-16", "Test"] == published_value(
        "mcic", "Table 4", "256-64-16", "Test", block="FFNN"
    )
    assert wide.loc["published Vec2seq+FFNN 2048-2048-512", "Dev"] == 63.4
    assert wide.loc["published Vec2seq+FFNN 256-64-16", "Test"] == published_value(
        "mcic", "Table 3", "Vec2seq+FFNN", "Test"
    )
    assert list(dict.fromkeys(long["row"]))[:2] == ["world FFNN 8-16-4", "world Vec2seq+FFNN 8-16-4"]


def test_table5_layout_beside_the_printed_values():
    rows = []
    for lam in (0.0, 4.0):
        for split in ("dev", "test"):
            rows.append(["lambda_gen", "vec2seq", 16, 64, 16, lam, split, "accuracy", 30.0, 1.3, 1250, 1])
            if lam:
                rows.append(["lambda_gen", "vec2seq", 16, 64, 16, lam, split, "cider_d", 0.2, 0.01, 250, 1])
                rows.append(["lambda_gen", "vec2seq", 16, 64, 16, lam, split, "rouge_l", 0.4, 0.01, 250, 1])
                rows.append(["lambda_gen", "vec2seq", 16, 64, 16, lam, split, "distinct_captions", 3, math.nan, 250, 1])
    long = table5_long(pd.DataFrame(rows, columns=SWEEP_COLUMNS))
    wide = long.pivot(index="row", columns="column", values="value")
    assert math.isnan(wide.loc["world λgen = 0", "CIDEr Dev"])
    assert wide.loc["world λgen = 4", "CIDEr Test"] == 0.2
    assert wide.loc["world λgen = 4", "distinct Dev"] == 3 and math.isnan(
        wide.loc["published λgen = 4", "distinct Dev"]
    )
    cell = long[(long["row"] == "world λgen = 4") & (long["column"] == "ROUGE-L Dev")].iloc[0]
    assert cell["lo"] == pytest.approx(0.4 - 1.959964 * 0.01, rel=1e-5)
    assert wide.loc["published λgen = 4", "CIDEr Dev"] == 0.989
    assert math.isnan(wide.loc["published λgen = 0", "ROUGE-L Test"])  # printed '-'
    assert list(dict.fromkeys(long["column"]))[:3] == ["Acc Dev", "Acc Test", "Acc Test ±"]


def test_table_command_writes_three_files_and_refuses_another_sweeps_csv(tmp_path, capsys):
    data = tmp_path / "sizes.csv"
    _sizes_frame().to_csv(data, index=False)
    out = tmp_path / "t" / "table4.csv"
    assert main(["mcic-sweep-table", "--sweep", "sizes", "--data", str(data), "--out-csv", str(out)]) == 0
    assert all(out.with_suffix(s).exists() for s in (".csv", ".md", ".tex"))
    assert "| world FFNN 8-16-4 |" in out.with_suffix(".md").read_text()
    rc = main(["mcic-sweep-table", "--sweep", "lambda_gen", "--data", str(data), "--out-csv", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err
    assert rc == 2 and str(data) in err and "record 0" in err and "'lambda_gen'" in err
