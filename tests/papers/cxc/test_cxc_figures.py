"""CxC's Figures 3-5 and Table 1: their numbers against naive references on small synthetic ratings, the
released figures' tables against the mirror's CSVs counted by hand, Table 1's choice of world pairs, and the
drawing (byte-deterministic, from the computed files only)."""

from __future__ import annotations

import csv
import itertools
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from unit_world import unit_world

from itmbench.cli import main
from itmbench.errors import InputError
from itmbench.io import write_parquet
from itmbench.metrics.correlation import line_fit_bootstrap
from itmbench.papers.cxc import build as cxc_build
from itmbench.papers.cxc import canonical as cxc_canonical
from itmbench.papers.cxc import encoders
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.cxc.figures import write_data_figure
from itmbench.papers.cxc.released import (
    ITEM_COLUMNS,
    SAMPLING_METHODS,
    TASKS,
    CxcThresholds,
    pairs_from_raw,
    raw_schema,
)
from itmbench.papers.cxc.statistics import (
    appendix_figure2_table,
    bench_ratings,
    cxc_positives_per_item,
    cxc_rating_histogram,
    cxc_rating_std,
    figure3_table,
    figure4_table,
)
from itmbench.papers.published import published_wide
from itmbench.params import make_config
from itmbench.sources._common import typed_frame
from itmbench.sources.released import resolve
from itmbench.world.generate import generate_world

# Scores on the bins' edges, the top of the scale and between them.
EDGE_SCORES = [0.0, 0.5, 0.49, 2.5, 2.99, 3.0, 4.5, 4.99, 5.0]


def synthetic_raw(seed: int = 0, n: int = 60) -> dict[tuple[str, str], pd.DataFrame]:
    """Small raw rating tables of every task and split: distinct pairs, scores on and between the bin edges."""
    rng = np.random.default_rng(seed)
    tables = {}
    for task, split in itertools.product(TASKS, ("val", "test")):
        a, b = ITEM_COLUMNS[task]
        pool = [(i, j) for i in range(12) for j in range(12) if (i < j if task != "sits" else True)]
        chosen = [pool[k] for k in rng.choice(len(pool), size=n, replace=False)]
        scores = np.r_[EDGE_SCORES, rng.uniform(0, 5, n - len(EDGE_SCORES)).round(2)]
        methods = SAMPLING_METHODS[task]
        cols = {
            "split": [split] * n,
            a: [f"{a}:{i}" for i, _ in chosen],
            b: [f"{b}:{j}" for _, j in chosen],
            f"{a}_id": [i for i, _ in chosen],
            f"{b}_id": [j for _, j in chosen],
            "agg_score": scores.tolist(),
            "sampling_method": [methods[k % len(methods)] for k in range(n)],
            "line": list(range(2, n + 2)),
        }
        tables[task, split] = typed_frame(cols, raw_schema(task))
    return tables


# --- Figure 3 and Figure 4 against naive references -------------------------------------------------------


@pytest.mark.parametrize("width", [0.5, 1.0, 0.25])
def test_rating_histogram_matches_a_naive_count(width: float) -> None:
    raw = synthetic_raw()
    hist = cxc_rating_histogram(raw, bin_width=width)
    n_bins = int(round(5 / width))
    for (task, split), table in raw.items():
        same = table["sampling_method"].isin(["c2c_cocaption", "c2i_original"])
        groups = {"all": table, "intramodal sampling": table[~same], "same example": table[same]}
        for sampling, group in groups.items():
            expected = [0] * n_bins
            for score in group["agg_score"]:
                for b in range(n_bins):
                    left, right = b * width, (b + 1) * width
                    if left <= score < right or (b == n_bins - 1 and score == right):
                        expected[b] += 1
            got = hist[(hist["task"] == task) & (hist["split"] == split) & (hist["sampling"] == sampling)]
            if group.empty:
                assert got.empty, (task, sampling)  # SIS has no original pairs
                continue
            assert got["count"].tolist() == expected, (task, split, sampling)
            assert got["share"].sum() == pytest.approx(1.0)


KINDS = {"sts": ("caption", "caption"), "sis": ("image", "image"), "sits": ("caption", "image")}


def count_partners(pairs, kinds: tuple[str, str], threshold: float) -> dict[str, Counter]:
    """Per item kind: Counter(number of distinct positive partners -> items), over every rated item.

    `pairs` yields (a, b, mean rating); with one kind on both sides (STS, SIS) an item is the same item
    whichever column it is in."""
    partners: dict[tuple[str, object], set] = defaultdict(set)
    for a, b, score in pairs:
        partners[kinds[0], a]  # rated, maybe with no positive
        partners[kinds[1], b]
        if score >= threshold:
            partners[kinds[0], a].add(b)
            partners[kinds[1], b].add(a)
    out: dict[str, Counter] = defaultdict(Counter)
    for (kind, _), found in partners.items():
        out[kind][len(found)] += 1
    return out


def naive_positives_per_item(pairs: pd.DataFrame, task: str, threshold: float) -> dict[str, Counter]:
    a, b = ITEM_COLUMNS[task]
    rows = zip(pairs[f"{a}_id"], pairs[f"{b}_id"], pairs["agg_score"])
    return count_partners(rows, KINDS[task], threshold)


def test_positives_per_item_matches_a_naive_count() -> None:
    thresholds = CxcThresholds()
    pairs = {key: pairs_from_raw(table, key[0], thresholds) for key, table in synthetic_raw(1).items()}
    got = cxc_positives_per_item(pairs, thresholds)
    for (task, split), frame in pairs.items():
        expected = naive_positives_per_item(frame, task, thresholds.for_task(task))
        for kind, counter in expected.items():
            rows = got[(got["task"] == task) & (got["split"] == split) & (got["item"] == kind)]
            assert dict(zip(rows["n_positives"], rows["n_items"])) == dict(counter), (task, split, kind)


def test_figure_tables_lay_out_the_counts() -> None:
    raw = synthetic_raw(2)
    table3 = figure3_table(raw, 0.5)
    assert list(table3.columns[:5]) == ["row", "column", "value", "lo", "hi"]
    assert table3["lo"].isna().all() and table3["hi"].isna().all()
    assert table3["row"].iloc[0] == "val STS All" and table3["column"].iloc[0] == "[0.00, 0.50)"
    assert table3["column"].iloc[9] == "[4.50, 5.00]"  # the last bin holds 5
    assert list(dict.fromkeys(table3["split"])) == ["val", "test"]
    sis = table3[(table3["task"] == "sis") & (table3["split"] == "test") & (table3["sampling"] == "all")]
    assert sis["value"].sum() == len(raw["sis", "test"])
    thresholds = CxcThresholds()
    pairs = {key: pairs_from_raw(table, key[0], thresholds) for key, table in raw.items()}
    table4 = figure4_table(pairs, thresholds)
    for (task, split), group in table4.groupby(["task", "split"]):
        for item, sub in group.groupby("item"):
            assert sub["n_positives"].tolist() == list(range(group["n_positives"].max() + 1))  # zeros kept
            weighted = int((sub["n_positives"] * sub["value"]).sum())
            n_positive = int(pairs[task, split]["positive"].sum())
            assert weighted == (2 * n_positive if task != "sits" else n_positive), (task, split, item)
    assert set(table4["row"]) >= {"val STS per caption", "val SIS per image", "test SITS per image"}


# --- the appendix's Figure 2: the raters' standard deviation, against statistics.stdev -----------------------


def with_raters(raw: dict[tuple[str, str], pd.DataFrame], n_raters: int = 3, seed: int = 3):
    """The synthetic tables with per-rater columns rating_0.. (one pair's raters agree: a deviation of 0)."""
    rng = np.random.default_rng(seed)
    out = {}
    for key, table in raw.items():
        table = table.copy()
        ratings = rng.uniform(0, 5, (len(table), n_raters)).round(2)
        ratings[0] = 2.0
        for r in range(n_raters):
            table[f"rating_{r}"] = ratings[:, r]
        out[key] = table
    return out


@pytest.mark.parametrize("width", [0.25, 0.5, 0.1])
def test_rating_std_matches_statistics_stdev_binned_by_hand(width: float) -> None:
    import statistics as pystats

    tables = with_raters(synthetic_raw(4))
    hist = cxc_rating_std(tables, bin_width=width)
    per_pair = {
        key: [pystats.stdev(row) for row in table[["rating_0", "rating_1", "rating_2"]].itertuples(index=False)]
        for key, table in tables.items()
    }
    top = max(max(v) for v in per_pair.values())
    n_bins = int(top // width) + 1
    for (task, split), table in tables.items():
        same = table["sampling_method"].isin(["c2c_cocaption", "c2i_original"]).tolist()
        stds = per_pair[task, split]
        groups = {
            "all": stds,
            "intramodal sampling": [s for s, o in zip(stds, same) if not o],
            "same example": [s for s, o in zip(stds, same) if o],
        }
        for sampling, values in groups.items():
            got = hist[(hist["task"] == task) & (hist["split"] == split) & (hist["sampling"] == sampling)]
            if not values:
                assert got.empty, (task, sampling)
                continue
            expected = [0] * n_bins
            for v in values:
                b = 0
                while not (b * width <= v < (b + 1) * width):
                    b += 1
                expected[b] += 1
            assert got["count"].tolist() == expected, (task, split, sampling)
    first_bins = hist[(hist["bin_left"] == 0.0) & (hist["sampling"] == "all")]
    assert (first_bins["count"] >= 1).all()  # each table's agreeing pair


def test_appendix_figure2_needs_each_raters_rating(tmp_path: Path) -> None:
    raw = synthetic_raw(5)
    with pytest.raises(ValueError, match="no per-rater columns rating_0"):
        cxc_rating_std(raw)
    one = with_raters(raw, n_raters=2)
    key = next(iter(one))
    one[key].loc[3, "rating_1"] = np.nan
    with pytest.raises(ValueError, match=r"row 3: 1 rating\(s\); a standard deviation needs at least two"):
        cxc_rating_std(one)
    table = appendix_figure2_table(with_raters(raw), 0.5)
    assert table["row"].iloc[0] == "val STS All" and table["column"].iloc[0] == "[0.00, 0.50)"
    data = tmp_path / "appendix_figure2.csv"
    table.to_csv(data, index=False)
    first = write_data_figure("appendix_figure2", data, tmp_path / "a" / "f.png", "world", "val")
    second = write_data_figure("appendix_figure2", data, tmp_path / "b" / "f.png", "world", "val")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    out = tmp_path / "released.csv"
    argv = ["cxc-figure-data", "--figure", "appendix_figure2", "--raw", str(tmp_path), "--out-csv", str(out)]
    assert main(argv) == 2 and not out.exists()  # the released files hold one mean per pair


# --- the released figures against the mirror's CSVs, counted by hand -----------------------------------------


def _hand_read(mirror: Path, task: str, split: str) -> list[tuple[str, str, float, str]]:
    with open(resolve(f"cxc_{task}_{split}", mirror), encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        next(reader)
        return [(a, b, float(score), method) for a, b, score, method in reader]


@pytest.fixture(scope="module")
def released_tables(mirror_dir: Path, tmp_path_factory) -> dict[str, pd.DataFrame]:
    out = tmp_path_factory.mktemp("released_cxc")
    tables = {}
    for figure in ("figure3", "figure4"):
        argv = [
            "cxc-figure-data",
            "--figure",
            figure,
            "--raw",
            str(mirror_dir),
            "--out-csv",
            str(out / f"{figure}.csv"),
        ]
        assert main(argv) == 0
        tables[figure] = pd.read_csv(out / f"{figure}.csv")
        assert (out / f"{figure}.md").is_file() and (out / f"{figure}.tex").is_file()
    tables["dir"] = out
    return tables


def test_released_figure3_counts_every_row_of_the_csvs(released_tables, mirror_dir: Path) -> None:
    table = released_tables["figure3"]
    for task, split in itertools.product(TASKS, ("val", "test")):
        rows = _hand_read(mirror_dir, task, split)
        counts: Counter = Counter()
        for _, _, score, method in rows:
            b = min(int(score * 2), 9)  # 0.5-wide bins of [0, 5], 5 in the last
            counts["all", b] += 1
            group = "same example" if method in ("c2c_cocaption", "c2i_original") else "intramodal sampling"
            counts[group, b] += 1
        got = table[(table["task"] == task) & (table["split"] == split)]
        found = {
            (s, int(round(left * 2))): int(v) for s, left, v in zip(got["sampling"], got["bin_left"], got["value"])
        }
        assert {k: v for k, v in found.items() if v} == dict(counts), (task, split)
        assert got.loc[got["sampling"] == "all", "value"].sum() == len(rows)
    # the rows are appendix Table 1's annotations: 44,009 STS ratings in validation (published_statistics.csv)
    val_sts = table[(table["task"] == "sts") & (table["split"] == "val") & (table["sampling"] == "all")]
    assert val_sts["value"].sum() == 44009


def test_released_figure4_counts_positive_partners_by_hand(released_tables, mirror_dir: Path) -> None:
    table = released_tables["figure4"]
    thresholds = {"sts": 3.0, "sis": 2.5, "sits": 3.0}
    for task, split in itertools.product(TASKS, ("val", "test")):
        ratings: dict[tuple[str, str], list[float]] = defaultdict(list)
        for a, b, score, _ in _hand_read(mirror_dir, task, split):
            key = (a, b) if task == "sits" else tuple(sorted((a, b)))  # (a,b)/(b,a) is one pair, its ratings averaged
            ratings[key].append(score)
        means = [(a, b, sum(scores) / len(scores)) for (a, b), scores in ratings.items()]
        expected = count_partners(means, KINDS[task], thresholds[task])
        got = table[(table["task"] == task) & (table["split"] == split)]
        assert set(got["item"]) == set(expected)
        for kind, counter in expected.items():
            rows = got[got["item"] == kind]
            found = {int(n): int(v) for n, v in zip(rows["n_positives"], rows["value"]) if v}
            assert found == {n: v for n, v in counter.items() if v}, (task, split, kind)


def test_released_figures_draw_from_their_tables_byte_identically(released_tables, tmp_path: Path) -> None:
    for figure in ("figure3", "figure4"):
        data = released_tables["dir"] / f"{figure}.csv"
        first = write_data_figure(figure, data, tmp_path / "a" / f"{figure}.png", "released files", "val")
        second = write_data_figure(figure, data, tmp_path / "b" / f"{figure}.png", "released files", "val")
        assert [p.suffix for p in first] == [".png", ".pdf"]
        for p, q in zip(first, second):
            assert p.read_bytes() == q.read_bytes() and p.stat().st_size > 5000
        if figure == "figure3":
            test = write_data_figure(figure, data, tmp_path / "c" / f"{figure}.png", "released files", "test")
            assert test[0].read_bytes() != first[0].read_bytes()  # the split is drawn, not fixed
    with pytest.raises(InputError, match="no rows of split 'train'"):
        write_data_figure("figure3", released_tables["dir"] / "figure3.csv", tmp_path / "d.png", "released", "train")


# --- Figure 5 and Table 1 ------------------------------------------------------------------------------------


def synthetic_scores(n: int = 40, seed: int = 0) -> pd.DataFrame:
    """A scores file as score-benchmark writes it: STS correlation rows (and a retrieval row that is ignored)."""
    rng = np.random.default_rng(seed)
    sts = rng.uniform(0, 5, n).round(2)
    rows = {
        "part": ["retrieval"] + ["correlation"] * n,
        "task": ["t2t"] + ["sts"] * n,
        "positive_set": ["cxc"] + [""] * n,
        "query_id": np.r_[0, np.arange(n)],
        "item_id": np.r_[-1, np.arange(n) + 100],
        "n_positives": np.zeros(n + 1, dtype=np.int64),
        "rank": np.r_[1, -np.ones(n, dtype=np.int64)],
        "agg_score": np.r_[np.nan, sts],
        "model_score": np.r_[np.nan, 0.1 * sts + rng.normal(0, 0.1, n)],
    }
    return pd.DataFrame(rows)


def test_figure5_samples_pairs_and_fits_them() -> None:
    sts = encoders.sts_scores(synthetic_scores(), "scores.parquet")
    assert len(sts) == 40 and list(sts.columns) == ["caption1_id", "caption2_id", "sts", "cosine"]
    points = encoders.figure5_points(sts, 25, seed=3)
    assert len(points) == 25 and points["caption1_id"].is_monotonic_increasing  # file order kept
    assert points.equals(encoders.figure5_points(sts, 25, seed=3))
    assert not points.equals(encoders.figure5_points(sts, 25, seed=4))
    assert len(encoders.figure5_points(sts, 1000, seed=3)) == 40  # all when fewer than asked
    fit = encoders.figure5_table(points, "BoW ← bow", n_boot=100, seed=3, confidence=0.95).set_index("column")
    expected = line_fit_bootstrap(points["sts"], points["cosine"], n_boot=100, seed=3, confidence=0.95)
    assert fit.loc["pairs", "value"] == 25
    for column, key in (("slope", "slope"), ("intercept", "intercept"), ("Pearson r", "pearson")):
        assert tuple(fit.loc[column, ["value", "lo", "hi"]]) == pytest.approx(expected[key])
    assert fit.loc["Spearman ρ", "value"] == pytest.approx(stats.spearmanr(points["sts"], points["cosine"]).statistic)
    with pytest.raises(InputError, match="no STS correlation rows"):
        encoders.sts_scores(synthetic_scores().iloc[:1], "one.parquet")


def test_table1_takes_the_nearest_world_pair_once_each_with_its_raters_interval() -> None:
    published = pd.DataFrame(
        {"STS": [5.0, 3.1, 3.1], "BoW": [0.98, 0.94, 0.5], "USE": [0.99, 0.39, 0.2]},
        index=["a b / a b c", "x y / z", "p / q"],
    )
    keys = {"caption1_id": [1, 3, 5, 7], "caption2_id": [2, 4, 6, 8]}
    sts = [4.6, 3.0, 3.2, 1.0]
    bow = pd.DataFrame({**keys, "sts": sts, "cosine": [0.9, 0.8, 0.7, 0.6]})
    use = pd.DataFrame({**keys, "sts": sts, "cosine": [0.5, 0.4, 0.3, 0.2]})
    ratings = np.array([[4.0, 5.0, 4.8, 4.6, 4.6], [3, 3, 3, 3, 3], [2.0, 4.4, 3.2, 3.0, 3.4], [1, 1, 1, 1, 1]])
    pairs = pd.DataFrame({**keys, "agg_score": sts, **{f"rating_{r}": ratings[:, r] for r in range(5)}})
    captions = {i: f"caption {i}" for i in range(1, 9)}
    long = encoders.table1_long(published, {"BoW": ("bow", bow), "USE": ("de_t2t", use)}, pairs, captions, 0.9,
                                {"STS": 1, "BoW": 2, "USE": 2})  # fmt: skip
    world = long[long["source"] == "world"]
    chosen = world.drop_duplicates("pair")[["pair", "caption1_id", "caption2_id"]].values.tolist()
    # 5.0 -> 4.6; 3.1 -> 3.0 and 3.2 tie: the lowest ids (3, 4); the second 3.1 -> the other one (5, 6)
    assert chosen == [[1, 1, 2], [2, 3, 4], [3, 5, 6]]
    cell = world[(world["pair"] == 1) & (world["column"] == "STS")].iloc[0]
    lo, hi = stats.t.interval(0.9, 4, loc=ratings[0].mean(), scale=stats.sem(ratings[0]))
    assert (cell["value"], cell["lo"], cell["hi"]) == pytest.approx((4.6, lo, min(hi, 5.0)))
    constant = world[(world["pair"] == 2) & (world["column"] == "STS")].iloc[0]
    assert constant["lo"] == constant["hi"] == 3.0  # raters who agree: no spread
    assert world[(world["pair"] == 3) & (world["column"] == "BoW")]["value"].item() == 0.7
    assert world[(world["pair"] == 3) & (world["column"] == "USE")]["model"].item() == "de_t2t"
    assert world[(world["pair"] == 1) & (world["column"] == "Caption 2")]["note"].item() == "caption 2"
    printed = long[long["source"] == "printed"]
    assert printed[(printed["pair"] == 1) & (printed["column"] == "Caption 2")]["note"].item() == "a b c"
    assert printed[(printed["pair"] == 1) & (printed["column"] == "STS")]["note"].item() == "5.0"  # as printed
    assert list(dict.fromkeys(long["row"])) == ["1 printed", "1 world", "2 printed", "2 world", "3 printed", "3 world"]
    with pytest.raises(InputError, match="printed encoders"):
        encoders.table1_long(published, {"BoW": ("bow", bow)}, pairs, captions)


def test_table1_reads_the_printed_pairs() -> None:
    printed = published_wide("cxc", "Table 1")
    assert list(printed.columns) == ["STS", "BoW", "USE"] and len(printed) == 6
    assert all(" / " in label for label in printed.index)


# --- the commands on a small world ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world_files(tmp_path_factory) -> Path:
    """A small world's CxC folder, its captions, and two text models' CxC scores (made-up cosines)."""
    root = tmp_path_factory.mktemp("cxc_world")
    world_cfg = unit_world(n_train=2, n_val=20, n_test=30)
    world = generate_world(world_cfg)
    tables = cxc_build.build(world, make_config(CxcConfig), world_cfg=world_cfg)
    cxc_canonical.write(tables, root / "cxc")
    write_parquet(root / "captions.parquet", world.caption_table[["caption_id", "image_id", "split", "text"]])
    sts = tables["sts"][tables["sts"]["split"] == "test"]
    rng = np.random.default_rng(0)
    for model, noise in (("bow", 0.3), ("de_t2t", 0.1)):
        n = len(sts)
        frame = pd.DataFrame(
            {
                "part": "correlation",
                "task": "sts",
                "positive_set": "",
                "query_id": sts["caption1_id"].to_numpy(np.int64),
                "item_id": sts["caption2_id"].to_numpy(np.int64),
                "n_positives": np.zeros(n, dtype=np.int64),
                "rank": -np.ones(n, dtype=np.int64),
                "agg_score": sts["agg_score"].to_numpy(),
                "model_score": sts["agg_score"].to_numpy() / 5 + rng.normal(0, noise, n),
            }
        )
        write_parquet(root / f"{model}.parquet", frame)
    return root


def test_the_commands_compute_and_draw_the_worlds_figures(world_files: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    for figure in ("figure3", "figure4"):
        argv = ["cxc-figure-data", "--figure", figure, "--bench", str(world_files / "cxc")]
        assert main([*argv, "--config", '{"rating_bin_width": 1.0}', "--out-csv", str(out / f"{figure}.csv")]) == 0
    table3 = pd.read_csv(out / "figure3.csv")
    ratings, _ = bench_ratings(cxc_canonical.read(world_files / "cxc"))
    assert table3["bin_right"].max() == 5.0 and table3["column"].nunique() == 5  # 1-wide bins
    assert table3.loc[table3["sampling"] == "all", "value"].sum() == sum(len(t) for t in ratings.values())
    assert "(world)" in (out / "figure3.md").read_text().splitlines()[0]
    config = '{"encoders": {"BoW": "bow", "USE": "de_t2t"}, "bow_sample": 50, "seed": 1}'
    argv = ["cxc-encoder-sts", "--scores", str(world_files / "bow.parquet"), "--config", config, "--n-boot", "50"]
    assert main([*argv, "--out-points", str(out / "points.csv"), "--out-csv", str(out / "figure5.csv")]) == 0
    assert len(pd.read_csv(out / "points.csv")) == 50
    fit = pd.read_csv(out / "figure5.csv").set_index("column")
    assert fit.loc["pairs", "value"] == 50 and fit.loc["Pearson r", "value"] > 0
    argv = ["cxc-table1", "--bench", str(world_files / "cxc"), "--captions", str(world_files / "captions.parquet")]
    argv += ["--scores", f"bow={world_files / 'bow.parquet'}", "--scores", f"de_t2t={world_files / 'de_t2t.parquet'}"]
    assert main([*argv, "--out-csv", str(out / "table1.csv")]) == 0
    table1 = pd.read_csv(out / "table1.csv")
    assert table1["row"].nunique() == 12 and set(table1["source"]) == {"printed", "world"}
    assert (out / "table1.md").read_text().count("| ") > 12 and (out / "table1.tex").is_file()
    for figure, extra in (("figure3", []), ("figure4", []), ("figure5", ["--points", str(out / "points.csv")])):
        png = out / "figures" / f"{figure}.png"
        argv = ["cxc-figure", "--figure", figure, "--data", str(out / f"{figure}.csv"), *extra, "--source", "world"]
        assert main([*argv, "--out-png", str(png)]) == 0
        assert png.stat().st_size > 5000 and png.with_suffix(".pdf").is_file()


def test_the_commands_refuse_bad_input_naming_it(world_files: Path, tmp_path: Path, capsys) -> None:
    argv = ["cxc-table1", "--bench", str(world_files / "cxc"), "--captions", str(world_files / "captions.parquet")]
    assert main([*argv, "--scores", f"bow={world_files / 'bow.parquet'}", "--out-csv", str(tmp_path / "t.csv")]) == 2
    assert "de_t2t" in capsys.readouterr().err and not (tmp_path / "t.csv").exists()
    argv = ["cxc-figure-data", "--figure", "figure3", "--out-csv", str(tmp_path / "f.csv")]
    assert main(argv) == 2 and "give one of --raw" in capsys.readouterr().err
    argv = ["cxc-figure", "--figure", "figure5", "--data", str(world_files / "captions.parquet"), "--source", "world"]
    assert main([*argv, "--out-png", str(tmp_path / "f.png")]) == 2
    assert str(world_files / "captions.parquet") in capsys.readouterr().err
    argv = ["cxc-figure-data", "--figure", "figure3", "--bench", str(world_files / "cxc"), "--config"]
    assert main([*argv, '{"rating_bin_width": 0.7}', "--out-csv", str(tmp_path / "f.csv")]) == 2
    assert "rating_bin_width" in capsys.readouterr().err
