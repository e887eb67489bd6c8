"""Regenerated-vs-published tables: the generic comparison, BiVLC Tables 2-4 and the GPT-4V figure from the
released files (mirror), and ECCV Table 5 from Table 4."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bivlc.figures import gpt4v_figure_data, gpt4v_mean_of_orders, plot_gpt4v_accuracy
from itmbench.papers.bivlc.tables import (
    bivlc_long_table,
    load_released_metrics,
    metrics_from_released,
    released_comparison,
    released_scores,
    write_released_tables,
)
from itmbench.papers.eccv.tables import TABLE5_METRICS, table5_comparison, write_table5_comparison
from itmbench.papers.tables import (
    compare,
    comparison_markdown,
    differing_cells,
    printed_precision,
    round_printed,
    status_counts,
    write_comparison,
)

PUBLISHED = pd.DataFrame(
    {
        "table": ["Table 1", "Table 1", "Table 1", "Table 2"],
        "block": ["", "", "", "B"],
        "row": ["m1", "m1", "m2", "m1"],
        "column": ["acc", "rec", "acc", "acc"],
        "value": [75.83, 12.5, 40.0, 9.263],
        "decimals": [2, 1, 1, 3],
        "note": ["", "", "", "three decimals"],
    }
)


def _regenerated(values: list[float], lo: float = np.nan) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "table": ["Table 1", "Table 1", "Table 1", "Table 2", "Table 9"],
            "block": ["", "", "", "B", ""],
            "row": ["m1", "m1", "m2", "m1", "m1"],
            "column": ["acc", "rec", "acc", "acc", "acc"],
            "value": values,
            "lo": [lo] * 5,
            "hi": [np.nan] * 5,
        }
    )


# --- the generic comparison -------------------------------------------------------------------------


def test_compare_rounds_to_the_printed_precision_and_marks_each_cell() -> None:
    out = compare(_regenerated([75.8268, 12.46, 40.06, 44 / 475, 1.0]), "any", published=PUBLISHED)
    assert list(out["status"]) == ["match", "match", "differs", "differs", "not_published"]
    assert list(out["regenerated"]) == [75.83, 12.5, 40.1, 0.093, 1.0]
    assert out["difference"].iloc[2] == pytest.approx(0.1)
    assert out["decimals"].iloc[3] == 3 and out["decimals"].iloc[4] == 2  # default precision where unpublished
    assert math.isnan(out["difference"].iloc[4])
    assert status_counts(out) == {"match": 2, "differs": 2, "not_published": 1}
    assert differing_cells(out) == ["Table 1 /  / m2 / acc: 40.1 vs 40.0", "Table 2 / B / m1 / acc: 0.093 vs 9.263"]


def test_a_column_prints_at_one_precision_the_odd_printed_cell_as_printed() -> None:
    """BiVLC Table 4 prints Open CapPa's Add Group as 9.263 among two-decimal numbers: the world's cells of that
    column were printed at 3 decimals beside 2 (13.559 beside 20.34); now every cell at 2, the 9.263 as printed."""
    published = pd.DataFrame(
        {
            "table": ["Table 4"] * 3,
            "block": ["Add"] * 3,
            "row": ["CLIP", "NegCLIP", "Open CapPa"],
            "column": ["Group"] * 3,
            "value": [39.58, 48.00, 9.263],
            "decimals": [2, 2, 3],
            "note": [""] * 3,
        }
    )
    world = pd.DataFrame(
        {
            "table": ["Table 4"] * 2,
            "block": ["Add"] * 2,
            "row": ["CLIP", "coca"],
            "column": ["Group"] * 2,
            "value": [20.338983, 13.559322],
            "lo": [12.036272, 7.034175],
            "hi": [32.268012, 24.539661],
        }
    )
    assert printed_precision(published) == {("Table 4", "Group"): 2}
    out = compare(world, "any", published=published, expect_equal=False, keep_unregenerated=True)
    assert out.set_index("row")["decimals"].to_dict() == {"CLIP": 2, "NegCLIP": 2, "Open CapPa": 3, "coca": 2}
    md = comparison_markdown(out, "Table 4")
    assert "| coca | 13.56 (7.03–24.54) \\| – \\| – |" in md
    assert "| CLIP | 20.34 (12.04–32.27) \\| 39.58 \\| -19.24 |" in md
    assert "| Open CapPa | – \\| 9.263 \\| – |" in md
    assert "13.559" not in md


def test_a_column_of_counts_and_shares_shows_each_cell_at_its_own_printed_decimals() -> None:
    """BiVLC Table 6: a count row (printed as integers) above a share row (two decimals) in one column; no
    precision has a majority, so a count is not shown as 2610.00."""
    published = pd.DataFrame(
        {
            "table": ["Table 6"] * 2,
            "block": [""] * 2,
            "row": ["# instances", "share (%)"],
            "column": ["Replace Obj"] * 2,
            "value": [570325.0, 15.61],
            "decimals": [0, 2],
            "note": [""] * 2,
        }
    )
    world = pd.DataFrame(
        {
            "table": ["Table 6"] * 2,
            "block": [""] * 2,
            "row": ["# instances", "share (%)"],
            "column": ["Replace Obj"] * 2,
            "value": [2610.0, 26.123],
            "lo": [float("nan"), 25.27],
            "hi": [float("nan"), 26.99],
        }
    )
    assert printed_precision(published) == {}
    md = comparison_markdown(compare(world, "any", published=published, expect_equal=False), "Table 6")
    assert "| # instances | 2610 \\| 570325 \\| -567715 |" in md
    assert "| share (%) | 26.12 (25.27–26.99) \\| 15.61 \\| +10.51 |" in md


def test_compare_accepts_a_table_without_block_lo_hi() -> None:
    frame = pd.DataFrame({"table": ["Table 1"], "row": ["m2"], "column": ["acc"], "value": [39.96]})
    out = compare(frame, "any", published=PUBLISHED)
    assert out["status"].tolist() == ["match"] and out["difference"].tolist() == [0.0]


def test_round_printed_is_what_an_f_string_prints() -> None:
    for value in (75.825, 0.125, 49.06239, 2.675, 99.995):
        assert f"{round_printed(value, 2):.2f}" == f"{value:.2f}"


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (pd.DataFrame({"table": ["T"], "row": ["r"], "value": [1.0]}), "missing columns"),
        (
            pd.DataFrame({"table": ["T", "T"], "row": ["r", "r"], "column": ["c", "c"], "value": [1.0, 2.0]}),
            "more than once",
        ),
        (pd.DataFrame({"table": ["T"], "row": ["r"], "column": ["c"], "value": [np.nan]}), "NaN"),
    ],
)
def test_compare_rejects_bad_regenerated_tables(frame: pd.DataFrame, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compare(frame, "any", published=PUBLISHED)


def test_write_comparison_flags_differing_cells_in_every_format(tmp_path: Path) -> None:
    out = compare(_regenerated([75.8268, 12.46, 40.06, 44 / 475, 1.0], lo=1.0), "any", published=PUBLISHED)
    paths = write_comparison(out, tmp_path / "cmp", "A title")
    assert [p.name for p in paths] == ["cmp.csv", "cmp.md", "cmp.tex"]
    md = paths[1].read_text(encoding="utf-8")
    assert md.count("⚠") == 2 + 1  # two cells and the legend
    assert "75.83 (1.00–" not in md  # an interval needs both ends
    assert "75.83 \\| 75.83 \\| +0.00" in md
    # Table 1's acc is printed at 2 and 1 decimals (no majority): m2's cell at its own printed 1 decimal
    assert "40.1 \\| 40.0 \\| +0.1 ⚠" in md
    assert "2 match, 2 differ" in md and "*Table 2 — B*" in md
    tex = paths[2].read_text(encoding="utf-8")
    assert tex.count("(!)") == 2 + 1 and r"\begin{tabular}" in tex
    csv = pd.read_csv(paths[0])
    assert csv["status"].tolist() == out["status"].tolist()
    again = write_comparison(out, tmp_path / "cmp2", "A title")
    assert again[1].read_text(encoding="utf-8") == md  # deterministic


# --- BiVLC: from metrics JSONs (no mirror needed) ----------------------------------------------------


def _released_frame(flags: np.ndarray, kinds: list[str]) -> pd.DataFrame:
    i0, i1, c0, c1 = (flags[:, j] for j in range(4))
    return pd.DataFrame(
        {
            "type": kinds,
            "text_score_i0": i0,
            "text_score_i1": i1,
            "image_score_c0": c0,
            "image_score_c1": c1,
            "text_score": i0 & i1,
            "image_score": c0 & c1,
            "group_score": i0 & i1 & c0 & c1,
        }
    )


def test_metrics_from_released_use_our_functions_with_wilson_intervals() -> None:
    rng = np.random.default_rng(0)
    flags = rng.random((40, 4)) < 0.7
    kinds = ["replace"] * 20 + ["swap"] * 12 + ["add"] * 8
    frame = _released_frame(flags, kinds)
    correct = pd.DataFrame({"type": kinds, "correct": rng.random(40) < 0.8})
    doc = metrics_from_released(frame, correct, "m")
    i2t = flags[:, 0] & flags[:, 1]
    assert doc["metrics"]["i2t"]["value"] == pytest.approx(100 * i2t.mean())
    lo, hi = wilson_interval(int(i2t.sum()), 40)
    assert (doc["metrics"]["i2t"]["lo"], doc["metrics"]["i2t"]["hi"]) == pytest.approx((100 * lo, 100 * hi))
    swap = np.array(kinds) == "swap"
    assert doc["by_type"]["swap"]["group"]["value"] == pytest.approx(100 * flags[swap].all(axis=1).mean())
    assert doc["metrics"]["sugarcrepe"]["n"] == 40
    long = bivlc_long_table({"m": doc})
    assert len(long) == 4 + 8 + 9
    assert set(long.loc[long["table"] == "Table 4", "block"]) == {"Replace", "Swap", "Add"}
    assert (long["lo"] <= long["value"]).all() and (long["value"] <= long["hi"]).all()


def test_released_scores_reject_a_file_whose_precomputed_scores_disagree() -> None:
    flags = np.array([[True, True, True, True], [True, False, True, True]])
    frame = _released_frame(flags, ["add", "add"])
    assert released_scores(frame)["group"].tolist() == [True, False]
    frame.loc[1, "text_score"] = True
    with pytest.raises(ValueError, match=r"BiVLC_x\.csv: data row 1 column text_score is True"):
        released_scores(frame, "BiVLC_x.csv")


# --- BiVLC: the released rows beside Tables 2-4 (mirror) ----------------------------------------------


@pytest.fixture(scope="module")
def bivlc_compared(mirror_dir: Path) -> pd.DataFrame:
    return released_comparison(mirror_dir)


def test_every_released_bivlc_cell_matches_its_published_cell(bivlc_compared: pd.DataFrame) -> None:
    assert differing_cells(bivlc_compared) == []  # lists any cell that does not match, explicitly
    assert status_counts(bivlc_compared) == {"match": 76, "differs": 0, "not_published": 0}
    per_table = bivlc_compared.groupby("table").size().to_dict()
    assert per_table == {"Table 2": 2 * 4, "Table 3": 4 * 8, "Table 4": 4 * 3 * 3}
    assert set(bivlc_compared["row"]) == {"CLIP", "CLIP_COCO", "CLIP_TROHN-Text", "CLIP_TROHN-Img"}
    cell = bivlc_compared[
        (bivlc_compared["table"] == "Table 3")
        & (bivlc_compared["row"] == "CLIP_TROHN-Img")
        & (bivlc_compared["column"] == "T2I")
    ].iloc[0]
    assert cell["published"] == 71.84 and cell["lo"] < 71.84 < cell["hi"]
    assert (bivlc_compared["n"].isin([2933, 7512]) | (bivlc_compared["table"] == "Table 4")).all()


def test_released_tables_are_written_per_table(mirror_dir: Path, tmp_path: Path) -> None:
    paths = write_released_tables(mirror_dir, tmp_path)
    assert sorted(p.name for p in paths) == sorted(
        f"{stem}_released.{s}"
        for stem in ("table2", "table3", "table4", "table5", "section5_3")
        for s in ("csv", "md", "tex")
    )
    assert "⚠" not in (tmp_path / "table3_released.md").read_text(encoding="utf-8").split("\n", 3)[3]


def test_released_metrics_add_up_by_type(mirror_dir: Path) -> None:
    metrics = load_released_metrics(mirror_dir)
    doc = metrics["CLIP_COCO"]
    assert sum(doc["by_type"][k]["i2t"]["n"] for k in ("replace", "swap", "add")) == 2933
    weighted = sum(doc["by_type"][k]["i2t"]["value"] * doc["by_type"][k]["i2t"]["n"] for k in doc["by_type"]) / 2933
    assert weighted == pytest.approx(doc["metrics"]["i2t"]["value"])


# --- the GPT-4V figure (mirror) ---------------------------------------------------------------------


def test_gpt4v_mean_of_orders_is_the_quoted_92_19(mirror_dir: Path, tmp_path: Path) -> None:
    data = gpt4v_figure_data(mirror_dir)
    assert round(gpt4v_mean_of_orders(data), 2) == 92.19
    overall = data[data["subset"] == "all"].set_index("order")
    assert overall.loc["positive-first", "n"] == overall.loc["negative-first", "n"] == 7512
    assert round(overall.loc["positive-first", "accuracy"], 2) == 90.96
    assert round(overall.loc["negative-first", "accuracy"], 2) == 93.41
    assert overall.loc["mean of orders", "lo"] < 92.19 < overall.loc["mean of orders", "hi"]
    per_subset = data[(data["subset"] != "all") & (data["order"] == "positive-first")]
    assert len(per_subset) == 7 and per_subset["n"].sum() == 7512
    paths = plot_gpt4v_accuracy(data, tmp_path / "gpt4v")
    png, pdf = (p.read_bytes() for p in paths)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and pdf[:5] == b"%PDF-"
    plot_gpt4v_accuracy(data, tmp_path / "gpt4v")
    assert paths[0].read_bytes() == png and paths[1].read_bytes() == pdf  # same numbers, same bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt4v.pdf", "gpt4v.png"]  # no temp file left


# --- ECCV Table 5 from Table 4 -----------------------------------------------------------------------

EXPECTED_FLAGGED = {
    frozenset({"COCO 1K R@1", "PMRP"}),
    frozenset({"COCO 1K R@10", "PMRP"}),
    frozenset({"RSUM", "PMRP"}),
    frozenset({"ECCV R@1", "PMRP"}),
}


def test_eccv_table5_flags_exactly_the_four_pmrp_cells() -> None:
    upper = table5_comparison(upper_only=True)
    assert len(upper) == 66 and status_counts(upper) == {"match": 62, "differs": 4, "not_published": 0}
    flagged = upper[upper["status"] == "differs"]
    assert {frozenset({r, c}) for r, c in zip(flagged["row"], flagged["column"])} == EXPECTED_FLAGGED
    assert set(flagged["difference"]) == {-0.01}
    full = table5_comparison()
    assert len(full) == len(TABLE5_METRICS) * (len(TABLE5_METRICS) - 1) == 132
    assert status_counts(full)["differs"] == 8  # the same 4 pairs, in both printed triangles
    both = full[full["status"] == "differs"]
    assert {frozenset({r, c}) for r, c in zip(both["row"], both["column"])} == EXPECTED_FLAGGED


def test_eccv_table5_comparison_is_written_with_flags(tmp_path: Path) -> None:
    paths = write_table5_comparison(tmp_path / "table5", upper_only=True)
    md = paths[1].read_text(encoding="utf-8")
    assert md.count("⚠") == 4 + 1
    assert "0.44 \\| 0.45 \\| -0.01 ⚠" in md


def test_released_paired_test_of_trohn_img_against_coco(mirror_dir: Path) -> None:
    """The paired test over the released per-instance results: the difference is the printed one (Table 3:
    T2I 71.84 vs 63.89), McNemar's p the binomial test of its discordant counts."""
    from scipy.stats import binomtest

    from itmbench.papers.bivlc.tables import load_released_paired

    records = load_released_paired(mirror_dir, n_boot=200).set_index("metric")
    t2i = records.loc["t2i"]
    assert (t2i["model_a"], t2i["model_b"], t2i["n"]) == ("CLIP_TROHN-Img", "CLIP_COCO", 2933)
    assert round(t2i["accuracy_a"], 2) == 71.84 and round(t2i["accuracy_b"], 2) == 63.89
    assert t2i["difference"] == pytest.approx(100 * (int(t2i["a_only"]) - int(t2i["b_only"])) / 2933)
    assert t2i["p_mcnemar"] == pytest.approx(binomtest(int(t2i["b_only"]), int(t2i["a_only"] + t2i["b_only"])).pvalue)
    assert t2i["lo"] > 0 and set(records["direction"]) == {"A above B"}
