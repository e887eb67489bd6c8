"""ECCV's ranking correlations with bootstrap intervals over queries (against scipy and a naive loop), and Figure
E.2's trend slope (against numpy's least-squares fit)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from itmbench.papers.eccv.bias import trend_slope
from itmbench.papers.eccv.rank_tau import RANK_TAU_COLUMNS, rank_tau, rank_tau_table, write_rank_tau

METRICS = ("coco_1k_r1", "original_r1", "eccv_map_at_r")


def model_values(seed: int, skill: float, map_skill: float, n: int = 30) -> pd.DataFrame:
    """Per-query values of one model on the same 2 x n queries (two directions), three metrics."""
    rng = np.random.default_rng(seed)
    index = pd.MultiIndex.from_tuples([(d, q) for d in ("caption_to_image", "image_to_caption") for q in range(n)])
    r1 = (rng.random(2 * n) < skill).astype(float) * 100
    return pd.DataFrame(
        {
            "coco_1k_r1": r1,
            "original_r1": r1 * (rng.random(2 * n) < 0.9),
            "eccv_map_at_r": rng.random(2 * n) * map_skill,
        },
        index=index,
    )


def naive_taus(values: dict[str, pd.DataFrame], n_boot: int, seed: int) -> dict[tuple[str, str], np.ndarray]:
    """Per replicate: each direction's queries drawn from its own generator (as the module), every model's metric
    the mean of its directions' means, scipy's tau-b between two metrics' model values."""
    models = sorted(values)
    first = values[models[0]]
    draws = []
    for g_index, g in enumerate(sorted(set(first.index.get_level_values(0)))):
        rows = np.flatnonzero(first.index.get_level_values(0) == g)
        rng = np.random.default_rng(np.random.SeedSequence([seed, g_index]))
        draws.append(rows[rng.integers(0, len(rows), size=(n_boot, len(rows)))])
    out: dict[tuple[str, str], list[float]] = {}
    for b in range(n_boot):
        metric = {
            (m, k): np.mean([values[m][k].to_numpy()[d[b]].mean() for d in draws]) for m in models for k in METRICS
        }
        for i, x in enumerate(METRICS):
            for y in METRICS[i + 1 :]:
                tau = kendalltau([metric[(m, x)] for m in models], [metric[(m, y)] for m in models], variant="b")
                out.setdefault((x, y), []).append(tau.statistic)
    return {k: np.array(v) for k, v in out.items()}


def test_rank_tau_table_matches_scipy_and_a_naive_bootstrap() -> None:
    values = {
        "a": model_values(0, 0.3, 0.9),
        "b": model_values(1, 0.5, 0.2),
        "c": model_values(2, 0.7, 0.5),
        "d": model_values(3, 0.9, 0.1),
    }
    table = rank_tau_table(values, METRICS, n_boot=40, seed=5, confidence=0.9)
    assert list(table.columns) == RANK_TAU_COLUMNS
    assert len(table) == 3 + 2  # three taus, two differences against the reference
    means = {m: v.groupby(level=0).mean().mean() for m, v in values.items()}
    for x, y in (("coco_1k_r1", "eccv_map_at_r"), ("coco_1k_r1", "original_r1")):
        expected = kendalltau([means[m][x] for m in sorted(values)], [means[m][y] for m in sorted(values)]).statistic
        assert rank_tau(table, x, y)["value"] == pytest.approx(expected)
        assert rank_tau(table, y, x)["value"] == pytest.approx(expected)  # either order
    naive = naive_taus(values, 40, 5)
    got = rank_tau(table, "coco_1k_r1", "eccv_map_at_r")
    assert (got["lo"], got["hi"]) == pytest.approx(
        tuple(np.nanpercentile(naive[("coco_1k_r1", "eccv_map_at_r")], [5, 95]))
    )
    diff = rank_tau(table, "coco_1k_r1", "original_r1", minus=("eccv_map_at_r", "coco_1k_r1"))
    paired = naive[("coco_1k_r1", "original_r1")] - naive[("coco_1k_r1", "eccv_map_at_r")]
    assert diff["value"] == pytest.approx(rank_tau(table, "coco_1k_r1", "original_r1")["value"] - got["value"])
    assert (diff["lo"], diff["hi"]) == pytest.approx(tuple(np.nanpercentile(paired, [5, 95])))
    assert rank_tau(table, "coco_1k_r1", "pmrp") is None and rank_tau(None, "a", "b") is None


def test_rank_tau_table_refusals() -> None:
    two = {"a": model_values(0, 0.3, 0.9), "b": model_values(1, 0.5, 0.2)}
    with pytest.raises(ValueError, match="3 or more models"):
        rank_tau_table(two, METRICS, n_boot=5)
    other = {**two, "c": model_values(2, 0.7, 0.5, n=10)}
    with pytest.raises(ValueError, match="not scored on the same queries"):
        rank_tau_table(other, METRICS, n_boot=5)


def test_trend_slope_is_the_least_squares_slope() -> None:
    sizes = np.array([1.0, 2.0, 3.0, 4.0])
    values = np.array([8.2, 5.1, 3.0, 1.3])
    assert trend_slope(sizes, values) == pytest.approx(np.polyfit(sizes, values, 1)[0])
    rows = np.array([values, values[::-1], [1.0, 1.0, 1.0, np.nan]])
    slopes = trend_slope(sizes, rows)
    assert slopes[:2] == pytest.approx([np.polyfit(sizes, values, 1)[0], -np.polyfit(sizes, values, 1)[0]])
    assert np.isnan(slopes[2])


def test_the_rank_tau_table_is_written_as_csv_markdown_and_latex(tmp_path) -> None:
    values = {f"m{i}": model_values(i, 0.2 + 0.1 * i, 1.0 - 0.1 * i) for i in range(4)}
    table = rank_tau_table(values, METRICS, n_boot=50, seed=0)
    paths = write_rank_tau(table, tmp_path / "rank_tau", "ECCV: ranking correlations")
    assert [p.name for p in paths] == ["rank_tau.csv", "rank_tau.md", "rank_tau.tex"]
    again = pd.read_csv(paths[0])
    assert list(again.columns) == RANK_TAU_COLUMNS and len(again) == len(table)  # what the claims read
    md = paths[1].read_text(encoding="utf-8")
    one = table.iloc[0]
    assert f"| tau({one.metric_a}, {one.metric_b}) | {one.value:.2f} ({one.lo:.2f}–{one.hi:.2f}) |" in md
    diff = table[table["minus_a"].fillna("") != ""].iloc[0]
    assert f"| tau({diff.metric_a}, {diff.metric_b}) - tau({diff.minus_a}, {diff.minus_b}) |" in md
    assert md.count("\n| tau(") == len(table)
    assert "\\begin{tabular}" in paths[2].read_text(encoding="utf-8")
