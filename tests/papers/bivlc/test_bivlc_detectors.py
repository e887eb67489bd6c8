"""BiVLC Table 5 and Section 5.3 (the synthetic-vs-natural detectors, GPT-4V on SugarCrepe): the detector procedure
against a naive per-instance reference on synthetic outputs, and the real values from the released files (mirror)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.errors import InputError
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bivlc.detectors import (
    detection_accuracy_flags,
    detector_comparisons,
    pair_rows,
    sugarcrepe_detector_correct,
    synthetic_call,
)
from itmbench.papers.bivlc.figures import gpt4v_figure_data
from itmbench.papers.bivlc.released import read_detector_results
from itmbench.papers.bivlc.tables import detector_comparison, detector_long, gpt4v_long, load_detector_results
from itmbench.papers.tables import differing_cells, status_counts


def _outputs(n: int, seed: int, images: bool = True, batch: int = 3) -> pd.DataFrame:
    """Synthetic detector outputs in the released layout: per batch of instances, its positives then its negatives."""
    rng = np.random.default_rng(seed)
    c = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9], size=(n, 2))  # ties and the 0.5 boundary on purpose
    i = rng.choice([0.2, 0.5, 0.6, 0.8], size=(n, 2))
    rows = []
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        for k, label in ((0, 0.0), (1, 1.0)):
            for j in range(start, stop):
                rows.append({"text_pred": c[j, k], "img_pred": i[j, k] if images else np.nan, "label": bool(label)})
    frame = pd.DataFrame(rows)
    return frame.assign(id=range(len(frame)), model="synthetic")


def _naive(frame: pd.DataFrame, batch: int = 3) -> dict[str, list[bool]]:
    """The released evaluation loop, instance by instance, from the file's batch layout."""
    out: dict[str, list[bool]] = {k: [] for k in ("text", "img", "ipos", "ineg", "tpos", "tneg", "i2t", "t2i", "g")}
    for _, row in frame.iterrows():  # detection: round(p) == label, rounding half to even (0.5 -> 0)
        out["text"].append(float(np.round(row["text_pred"])) == float(row["label"]))
        out["img"].append(float(np.round(row["img_pred"])) == float(row["label"]))
    records = frame.to_dict("records")
    n = len(records) // 2
    k = 0
    for start in range(0, n, batch):
        size = min(batch, n - start)
        chunk = records[2 * start : 2 * start + 2 * size]
        for j in range(size):
            pos, neg = chunk[j], chunk[size + j]
            c0, i0, c1, i1 = pos["text_pred"], pos["img_pred"], neg["text_pred"], neg["img_pred"]
            ipos = round(i0) == 0 and c0 < c1
            ineg = round(i1) == 1 and c0 < c1
            tpos = round(c0) == 0 and i0 < i1
            tneg = round(c1) == 1 and i0 < i1
            for key, value in (("ipos", ipos), ("ineg", ineg), ("tpos", tpos), ("tneg", tneg)):
                out[key].append(value)
            out["i2t"].append(ipos and ineg)
            out["t2i"].append(tpos and tneg)
            out["g"].append(ipos and ineg and tpos and tneg)
            k += 1
    assert k == n
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_detector_procedure_equals_the_naive_released_loop(seed: int) -> None:
    frame = _outputs(11, seed)
    naive = _naive(frame)
    pairs = pair_rows(frame, "synthetic")
    scores = detector_comparisons(pairs)
    assert list(scores.ipos2t) == naive["ipos"] and list(scores.ineg2t) == naive["ineg"]
    assert list(scores.tpos2i) == naive["tpos"] and list(scores.tneg2i) == naive["tneg"]
    assert list(scores.i2t) == naive["i2t"] and list(scores.t2i) == naive["t2i"] and list(scores.group) == naive["g"]
    flags = detection_accuracy_flags(pairs)  # natural rows then synthetic rows: the same counts as row order
    assert flags["text_detection"].sum() == sum(naive["text"]) and len(flags["text_detection"]) == 22
    assert flags["img_detection"].sum() == sum(naive["img"])


def test_threshold_calls_one_half_natural_as_torch_round_does() -> None:
    assert list(synthetic_call(np.array([0.49, 0.5, 0.5000001, 1.0, 0.0]))) == [False, False, True, True, False]
    assert list(synthetic_call(np.array([0.3, 0.7]), threshold=0.8)) == [False, False]


def test_detector_long_gives_wilson_intervals_and_the_published_layout() -> None:
    frame = _outputs(11, 3)
    naive = _naive(frame)
    sugar = _outputs(9, 4, images=False)
    long = detector_long({"CLIP_Det": frame}, {"CLIP_Det": sugar}).set_index(["table", "row", "column"])
    cell = long.loc[("Table 5", "CLIP_Det", "I2T")]
    k = sum(naive["i2t"])
    lo, hi = wilson_interval(k, 11)
    assert cell["value"] == pytest.approx(100 * k / 11) and cell["n"] == 11
    assert (cell["lo"], cell["hi"]) == pytest.approx((100 * lo, 100 * hi))
    text = long.loc[("Table 5", "CLIP_Det", "Text detection acc")]
    assert text["n"] == 22 and text["value"] == pytest.approx(100 * np.mean(naive["text"]))
    sc = long.loc[("Section 5.3", "CLIP_Det", "SugarCrepe")]
    pairs = pair_rows(sugar, "sugar", images=False)
    expected = [a < b for a, b in zip(pairs.c0, pairs.c1)]
    assert sc["value"] == pytest.approx(100 * np.mean(expected)) and sc["n"] == 9
    assert list(sugarcrepe_detector_correct(pairs)) == expected


def test_bad_detector_outputs_are_refused_naming_the_file() -> None:
    frame = _outputs(4, 0)
    with pytest.raises(InputError, match="f.csv: 4 natural .* and 3 synthetic"):
        pair_rows(frame.iloc[:-1], "f.csv")
    bad = frame.copy()
    bad.loc[2, "text_pred"] = 1.5
    with pytest.raises(InputError, match=r"f.csv: data row 2 column text_pred: expected a probability in \[0, 1\]"):
        pair_rows(bad, "f.csv")
    with pytest.raises(InputError, match="column img_pred"):
        pair_rows(_outputs(4, 0, images=False), "f.csv", images=True)  # BiVLC needs the image detector
    with pytest.raises(InputError, match="missing columns"):
        pair_rows(frame.drop(columns="label"), "f.csv")


def test_gpt4v_cell_is_the_overall_mean_of_orders() -> None:
    data = pd.DataFrame(
        {
            "subset": ["all", "all", "all", "add_att"],
            "order": ["positive-first", "negative-first", "mean of orders", "positive-first"],
            "n": [10, 10, 20, 4],
            "n_correct": [9, 8, 17, 4],
            "accuracy": [90.0, 80.0, 85.0, 100.0],
            "lo": [60.0, 50.0, 70.0, 50.0],
            "hi": [99.0, 95.0, 95.0, 100.0],
        }
    )
    cell = gpt4v_long(data).iloc[0]
    assert (cell["row"], cell["column"], cell["value"], cell["lo"], cell["hi"], cell["n"]) == (
        "GPT-4V",
        "SugarCrepe",
        85.0,
        70.0,
        95.0,
        10,
    )
    with pytest.raises(ValueError, match="mean of orders"):
        gpt4v_long(data[data["order"] != "mean of orders"])


# --- the released files (mirror) ----------------------------------------------------------------------

DETECTORS = "raw.githubusercontent.com/IMirandaM/BiVLC/main/src/Detectors/results"


def test_trohn_img_detector_text_accuracy_is_the_printed_61_34(mirror_dir: Path) -> None:
    frame = read_detector_results(mirror_dir / DETECTORS / "BiVLC_Classifier_CORRECT_CLIP_TROHN-Img.csv")
    naive = np.mean([(p > 0.5) == lab for p, lab in zip(frame["text_pred"], frame["label"])])
    assert round(100 * naive, 2) == 61.34
    flags = detection_accuracy_flags(pair_rows(frame, "TROHN-Img/Det"))
    assert round(100 * flags["text_detection"].mean(), 2) == 61.34 and flags["img_detection"].all()


@pytest.fixture(scope="module")
def compared(mirror_dir: Path) -> pd.DataFrame:
    return detector_comparison(mirror_dir, gpt4v_figure_data(mirror_dir))


def test_released_table5_and_section53_against_the_printed_numbers(compared: pd.DataFrame) -> None:
    # CLIP_Det: the released outputs give 57.30 text accuracy (printed 57.00) and miss 3 of 5,866 images
    # (99.95; printed 100.00); every other regenerated cell equals its printed value
    assert differing_cells(compared) == [
        "Table 5 /  / CLIP_Det / Text detection acc: 57.30 vs 57.00",
        "Table 5 /  / CLIP_Det / Img detection acc: 99.95 vs 100.00",
    ]
    assert status_counts(compared) == {"match": 11, "differs": 2, "not_published": 0, "not_regenerated": 7}
    cells = compared.set_index(["table", "row", "column"])
    assert cells.loc[("Table 5", "CLIP_TROHN-Img/Det", "I2T"), "regenerated"] == 75.04
    assert cells.loc[("Table 5", "CLIP_TROHN-Img/Det", "I2T"), "n"] == 2933
    assert cells.loc[("Table 5", "CLIP_Det", "Text detection acc"), "n"] == 5866
    gpt4v = cells.loc[("Section 5.3", "GPT-4V", "SugarCrepe")]
    assert gpt4v["status"] == "match" and gpt4v["lo"] < 92.19 < gpt4v["hi"] and gpt4v["n"] == 7512
    assert cells.loc[("Section 5.3", "CLIP_TROHN-Img/Det", "SugarCrepe"), "regenerated"] == 77.65
    assert cells.loc[("Table 5", "Random", "Group"), "status"] == "not_regenerated"


def test_released_detector_rows_pair_instances_of_bivlc(mirror_dir: Path) -> None:
    bivlc, sugarcrepe = load_detector_results(mirror_dir)
    assert {len(pair_rows(f, r)) for r, f in bivlc.items()} == {2933}
    assert {len(pair_rows(f, r, images=False)) for r, f in sugarcrepe.items()} == {7512}
