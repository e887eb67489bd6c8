"""Paired tests over the same queries of the gallery benchmarks (ECCV Caption, CxC): the query bootstrap against a
naive loop, the records, their refusals, the per-query values of both score tables and the CLI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from itmbench.cli import main
from itmbench.io import write_parquet
from itmbench.papers.cxc.score import query_values as cxc_query_values
from itmbench.papers.eccv.score import query_values as eccv_query_values
from itmbench.papers.paired import (
    GALLERY_COLUMNS,
    gallery_records,
    gallery_test,
    percentile_interval,
    query_bootstrap_means,
)


def frame(groups: dict[str, list[float]], name: str = "x") -> pd.DataFrame:
    """One column of per-query values, grouped (the first index level)."""
    index = pd.MultiIndex.from_tuples([(g, i) for g, vs in groups.items() for i in range(len(vs))])
    return pd.DataFrame({name: [v for vs in groups.values() for v in vs]}, index=index)


def naive_replicates(f: pd.DataFrame, n_boot: int, seed: int, chunk: int) -> np.ndarray:
    """A loop over replicates: each group's rows drawn from its own generator, the column's nanmean per group,
    the groups' means averaged (a group with no value left out)."""
    groups = sorted(set(f.index.get_level_values(0)))
    draws = {}
    for g_index, g in enumerate(groups):
        rows = np.flatnonzero(f.index.get_level_values(0) == g)
        rng = np.random.default_rng(np.random.SeedSequence([seed, g_index]))
        idx = np.concatenate(
            [rng.integers(0, len(rows), size=(min(chunk, n_boot - s), len(rows))) for s in range(0, n_boot, chunk)]
        )
        draws[g] = rows[idx]
    out = np.full((n_boot, f.shape[1]), np.nan)
    for b in range(n_boot):
        for c in range(f.shape[1]):
            means = []
            for g in groups:
                v = f.to_numpy()[draws[g][b], c]
                if (~np.isnan(v)).any():
                    means.append(np.nanmean(v))
            out[b, c] = np.mean(means) if means else np.nan
    return out


def test_query_bootstrap_matches_a_naive_loop() -> None:
    f = pd.concat(
        [
            frame({"i2t": [1.0, 0.0, 0.5, 1.0], "t2i": [0.0, 0.0, 1.0, 1.0, 0.25, 0.75]}, "a"),
            frame({"i2t": [np.nan, 2.0, np.nan, 4.0], "t2i": [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]}, "b"),
        ],
        axis=1,
    )
    point, reps = query_bootstrap_means(f, n_boot=37, seed=3, chunk=10)
    assert point == pytest.approx([np.mean([0.625, 0.5]), np.mean([3.0, 6.0])])
    assert reps.shape == (37, 2)
    np.testing.assert_allclose(reps, naive_replicates(f, 37, 3, 10), rtol=1e-12)
    # the chunk size changes nothing: the same draws
    np.testing.assert_allclose(query_bootstrap_means(f, n_boot=37, seed=3, chunk=4)[1], reps, rtol=1e-12)
    # percentile interval: numpy's percentiles of the replicates
    lo, hi = percentile_interval(reps[:, 0], 0.9)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(reps[:, 0], [5, 95])))


def per_query(values: dict[str, list[float]]) -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([("t2i", i) for i in range(len(next(iter(values.values()))))])
    return pd.DataFrame(values, index=index)


def test_gallery_records_difference_interval_and_direction() -> None:
    rng = np.random.default_rng(0)
    a = (rng.random(400) < 0.6).astype(float) * 100
    b = (rng.random(400) < 0.4).astype(float) * 100
    values = {"A": per_query({"r1": a, "map": a / 2}), "B": per_query({"r1": b, "map": a / 2})}
    records = gallery_records("eccv", values, [("A", "B")], ["r1", "map"], n_boot=200, seed=0)
    assert list(records.columns) == GALLERY_COLUMNS
    r1, same = records.iloc[0], records.iloc[1]
    assert r1["difference"] == pytest.approx(a.mean() - b.mean()) and r1["n"] == 400
    assert r1["lo"] > 0 and r1["direction"] == "A above B"
    assert same["difference"] == 0 and same["direction"] == "no significant difference"
    reversed_ = gallery_records("eccv", values, [("B", "A")], ["r1"], n_boot=200, seed=0).iloc[0]
    assert reversed_["direction"] == "A below B"
    # the table read either way round
    test = gallery_test(records, "B", "A", "r1")
    assert test["difference"] == pytest.approx(-r1["difference"]) and test["lo"] == pytest.approx(-r1["hi"])
    assert test["value_a"] == pytest.approx(b.mean()) and gallery_test(records, "A", "C", "r1") is None
    assert gallery_test(None, "A", "B", "r1") is None


def test_gallery_records_refuse_other_queries() -> None:
    values = {"A": per_query({"r1": [1.0, 0.0, 1.0]}), "B": per_query({"r1": [1.0, 0.0]})}
    with pytest.raises(ValueError, match="not the same ones"):
        gallery_records("cxc", values, [("A", "B")], ["r1"], n_boot=5)
    values = {"A": per_query({"r1": [1.0, np.nan]}), "B": per_query({"r1": [1.0, 0.0]})}
    with pytest.raises(ValueError, match="different queries"):
        gallery_records("cxc", values, [("A", "B")], ["r1"], n_boot=5)
    with pytest.raises(ValueError, match="no per-query scores of model 'C'"):
        gallery_records("cxc", values, [("A", "C")], ["r1"], n_boot=5)


def eccv_scores(hits: list[float]) -> pd.DataFrame:
    n = len(hits)
    return pd.DataFrame(
        {
            "direction": ["image_to_caption"] * 2 + ["caption_to_image"] * (n - 2),
            "query_id": list(range(n)),
            "eccv_query": [True, False] + [True] * (n - 2),
            "coco_1k_r1": hits,
            "original_r1": hits,
            "eccv_map_at_r": [h / 2 if q else np.nan for h, q in zip(hits, [True, False] + [True] * (n - 2))],
        }
    )


def test_eccv_query_values_are_x100_by_direction() -> None:
    v = eccv_query_values(eccv_scores([1.0, 0.0, 1.0, 1.0]))
    assert list(v.columns) == ["coco_1k_r1", "original_r1", "eccv_map_at_r"]
    assert v.loc[("image_to_caption", 1), "eccv_map_at_r"] != v.loc[("image_to_caption", 1), "eccv_map_at_r"]  # NaN
    point, _ = query_bootstrap_means(v, n_boot=3)
    assert point[0] == pytest.approx((50 + 100) / 2)  # the mean of the directions' means, as Table 4


def test_cxc_query_values_per_task_and_positive_set() -> None:
    scores = pd.DataFrame(
        {
            "part": ["retrieval"] * 5 + ["correlation"],
            "task": ["i2t", "i2t", "t2t", "t2t", "t2t", "sts"],
            "positive_set": ["cxc", "cxc", "cxc", "cxc", "coco", ""],
            "query_id": [0, 1, 0, 1, 0, 7],
            "rank": [1, 6, 2, 1, 1, -1],
        }
    )
    v = cxc_query_values(scores)
    assert v.loc[("i2t", 0), "i2t/cxc/R@1"] == 100 and v.loc[("i2t", 1), "i2t/cxc/R@5"] == 0
    assert v.loc[("i2t", 1), "i2t/cxc/R@10"] == 100 and np.isnan(v.loc[("t2t", 1), "t2t/coco/R@1"])
    assert np.isnan(v.loc[("i2t", 0), "t2t/cxc/R@1"])  # another task's column


def test_the_cli_writes_the_table_and_refuses_a_pair_without_scores(tmp_path) -> None:
    for name, hits in (("a", [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]), ("b", [0.0, 0.0, 1.0, 0.0, 0.0, 0.0])):
        write_parquet(tmp_path / f"{name}.parquet", eccv_scores(hits))
    out = tmp_path / "paired.csv"
    args = ["gallery-paired", "--name", "eccv", "--scores", f"a={tmp_path / 'a.parquet'}"]
    args += ["--scores", f"b={tmp_path / 'b.parquet'}", "--config", '{"n_boot": 50}', "--out-csv", str(out)]
    assert main([*args, "--pair", "a=b"]) == 0
    table = pd.read_csv(out)
    assert set(table["metric"]) == {"coco_1k_r1", "original_r1", "eccv_map_at_r"}
    assert out.with_suffix(".md").is_file() and out.with_suffix(".tex").is_file()
    assert main([*args, "--pair", "a=c"]) == 2


def cxc_scores(model_scores: list[float], extra_retrieval: bool = True) -> pd.DataFrame:
    """A CxC scores table: 8 rated STS pairs over 4 queries (the same for every model), and t2t retrieval."""
    n = len(model_scores)
    rated = pd.DataFrame(
        {
            "part": "correlation",
            "task": "sts",
            "positive_set": "",
            "query_id": [q for q in range(n // 2) for _ in range(2)],
            "item_id": list(range(10, 10 + n)),
            "n_positives": 0,
            "rank": -1,
            "agg_score": [0.5, 4.0, 1.0, 3.5, 2.0, 4.5, 0.2, 2.5][:n],
            "model_score": model_scores,
        }
    )
    tasks = ["t2t", "t2t", "i2t", "i2t"] if extra_retrieval else ["t2t", "t2t"]
    retrieval = pd.DataFrame(
        {"part": "retrieval", "task": tasks, "positive_set": "cxc", "query_id": [0, 1, 0, 1][: len(tasks)]}
        | {"item_id": -1, "n_positives": 1, "rank": [1, 3, 2, 1][: len(tasks)], "agg_score": np.nan}
        | {"model_score": np.nan}
    )
    return pd.concat([retrieval, rated], ignore_index=True)


def test_paired_correlations_match_each_models_own_and_a_naive_difference() -> None:
    from scipy.stats import spearmanr

    from itmbench.metrics.correlation import bootstrap_pair_draws, spearman_bootstrap
    from itmbench.papers.cxc.score import paired_correlations

    a = cxc_scores([0.1, 0.9, 0.3, 0.8, 0.2, 0.95, 0.0, 0.5])
    b = cxc_scores([0.9, 0.1, 0.5, 0.4, 0.3, 0.2, 0.6, 0.7], extra_retrieval=False)
    records = paired_correlations({"a": a, "b": b}, [("a", "b")], n_boot=30, seed=2, confidence=0.8)
    assert list(records.columns) == GALLERY_COLUMNS and list(records["metric"]) == ["sts/spearman"]
    r = records.iloc[0]
    rated = a[a["part"] == "correlation"]
    own = spearman_bootstrap(rated["query_id"], rated["agg_score"], rated["model_score"], n_boot=30, seed=2)
    assert r["value_a"] == pytest.approx(own.mean_x100) and r["n"] == 8
    idx = bootstrap_pair_draws(rated["query_id"].to_numpy(), n_boot=30, seed=2)
    h, sa = rated["agg_score"].to_numpy(), rated["model_score"].to_numpy()
    sb = b.loc[b["part"] == "correlation", "model_score"].to_numpy()
    diffs = [100 * (spearmanr(h[i], sa[i]).statistic - spearmanr(h[i], sb[i]).statistic) for i in idx]
    diffs = np.array([d for d in diffs if not np.isnan(d)])
    assert (r["lo"], r["hi"]) == pytest.approx(tuple(np.percentile(diffs, [10, 90])))
    assert r["difference"] == pytest.approx(r["value_a"] - r["value_b"])
    other = b.assign(item_id=b["item_id"] + 100)  # other rated pairs: refused
    with pytest.raises(ValueError, match="different rated pairs"):
        paired_correlations({"a": a, "b": other}, [("a", "b")], n_boot=5)


def test_the_cli_pairs_a_text_only_model_on_what_both_score(tmp_path) -> None:
    write_parquet(tmp_path / "a.parquet", cxc_scores([0.1, 0.9, 0.3, 0.8, 0.2, 0.95, 0.0, 0.5]))
    write_parquet(tmp_path / "b.parquet", cxc_scores([0.9, 0.1, 0.5, 0.4, 0.3, 0.2, 0.6, 0.7], False))
    out = tmp_path / "paired.csv"
    args = ["gallery-paired", "--name", "cxc", "--scores", f"a={tmp_path / 'a.parquet'}"]
    args += ["--scores", f"b={tmp_path / 'b.parquet'}", "--pair", "a=b", "--config", '{"n_boot": 20}']
    assert main([*args, "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert set(table["metric"]) == {"t2t/cxc/R@1", "t2t/cxc/R@5", "t2t/cxc/R@10", "sts/spearman"}  # no i2t: b has none
