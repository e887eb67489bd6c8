"""Spot values and the internal consistency each paper's printed numbers allow."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from itmbench.papers.published import load_published, published_value, published_wide

# ---------------------------------------------------------------- BISON


def test_bison_spot_values() -> None:
    assert published_value("bison", "Table 3", "SCAN t2i", "BISON") == 85.89
    assert published_value("bison", "Table 4", "UpDown", "BISON", block="Self-critical sequence loss") == 84.27
    assert published_value("bison", "Table 7", "SCAN i2t", "BISON", block="ResNeXt-IG-3.5B") == 86.66
    baseline = published_wide("bison", "Section 6", "Caption-metric baseline")["BISON accuracy"]
    assert baseline.to_dict() == {"BLEU-4": 70.73, "CIDEr-D": 70.78, "METEOR": 74.44, "SPICE": 62.79}


def test_bison_table1_counts_and_percentages() -> None:
    table = published_wide("bison", "Table 1")
    counts = table["Number"]
    assert counts.sum() == 376  # "all 376 retrieval errors"
    assert counts["Recall@1 Incorrect, Human Correct"] == 211
    for row, count in counts.items():
        assert table.loc[row, "Percentage"] == round(100 * count / 376, 1)


@pytest.mark.parametrize(
    ("table", "block"), [("Table 3", ""), ("Table 7", "ResNet-IN"), ("Table 7", "ResNeXt-IG-3.5B")]
)
def test_bison_retrieval_tables(table: str, block: str) -> None:
    wide = published_wide("bison", table, block)
    # Section 4.2: "the BISON score of all systems is higher than their recall@1"
    assert (wide["BISON"] > wide["Image retrieval R@1"]).all()
    assert (wide["Image retrieval R@5"] > wide["Image retrieval R@1"]).all()
    assert (wide["Caption retrieval R@5"] > wide["Caption retrieval R@1"]).all()


def test_bison_human_rows_are_shared_and_perfect() -> None:
    human4 = published_wide("bison", "Table 4").loc["Human"]
    human6 = published_wide("bison", "Table 6").loc["Human"]
    assert human4.equals(human6)
    assert human4["BISON"] == 100.0


@pytest.mark.parametrize("block", ["Cross-entropy loss", "Self-critical sequence loss"])
def test_bison_captioners_rank_alike_on_every_measure(block: str) -> None:
    # Section 4.2 on Table 4: "the ranking of the three systems is identical across all evaluation scores"
    # (not so in appendix Table 6: with ResNet-IN features ShowAttTell has the best cross-entropy BLEU-4)
    wide = published_wide("bison", "Table 4", block)
    for column in wide.columns:
        assert list(wide[column].sort_values().index) == ["ShowTell", "ShowAttTell", "UpDown"], column


# ---------------------------------------------------------------- MCIC

MCIC_N = {"Dev": 9999, "Test": 10253}  # Table 1 instances per split


def _binomial_se(percent: float, n: int) -> float:
    p = percent / 100
    return 100 * math.sqrt(p * (1 - p) / n)


def test_mcic_spot_values() -> None:
    assert published_value("mcic", "Table 3", "Baseline-I2C", "Dev") == 19.6
    assert published_value("mcic", "Table 5", "4.0", "CIDEr Dev") == 0.989
    assert published_value("mcic", "Section 3.4", "1-human system", "Accuracy%", block="Human performance") == 81.1
    assert published_value("mcic", "Section 3.4", "3-human system", "Accuracy%", block="Human performance") == 82.8


def test_mcic_human_table() -> None:
    table = published_wide("mcic", "Table 2")
    assert table.loc["at least 1 out of 3", "# instances"] + table.loc["0 out of 3", "# instances"] == 1000
    answered = table.drop(index="0 out of 3")  # that row's accuracy is 0 by definition, not 69/1000
    assert (answered["Accuracy%"] == (answered["# instances"] / 10).round(1)).all()
    assert table.loc["0 out of 3", "Accuracy%"] == 0.0
    human = published_wide("mcic", "Section 3.4", "Human performance")
    for row in human.index:
        assert human.loc[row, "Accuracy%"] == round(100 * human.loc[row, "Correct"] / human.loc[row, "Total"], 1)
    assert human.loc["3-human system", "Accuracy%"] == table.loc["at least 2 out of 3", "Accuracy%"]


def test_mcic_plus_minus_is_the_binomial_standard_error() -> None:
    frame = load_published("mcic")
    pm = frame[frame["column"].str.endswith(" ±")]
    assert len(pm) == 2 * 5 + 2 * 6 + 7
    for _, cell in pm.iterrows():
        base = cell["column"].removesuffix(" ±")
        split = "Test" if base.endswith("Test") else "Dev"
        acc = published_value("mcic", cell["table"], cell["row"], base, cell["block"])
        assert cell["value"] == round(_binomial_se(acc, MCIC_N[split]), 1), (cell["table"], cell["row"], base)


def test_mcic_tables_agree_with_each_other() -> None:
    table3 = published_wide("mcic", "Table 3")
    ffnn = published_wide("mcic", "Table 4", "FFNN")
    vec2seq = published_wide("mcic", "Table 4", "Vec2seq+FFNN (lambda_gen = 1.0)")
    for name, block in (("FFNN", ffnn), ("Vec2seq+FFNN", vec2seq)):
        assert block.loc["256-64-16", "Dev"] == table3.loc[name, "Dev"]
        assert block.loc["256-64-16", "Test"] == table3.loc[name, "Test"]
        for label, row in block.iterrows():
            assert label == f"{row['dim']:.0f}-{row['hidden-1']:.0f}-{row['hidden-2']:.0f}"
    table5 = published_wide("mcic", "Table 5")
    assert table5.loc["1.0", "Acc Dev"] == vec2seq.loc["2048-2048-512", "Dev"] == 63.4
    assert table5.loc["1.0", "Acc Test"] == vec2seq.loc["2048-2048-512", "Test"] == 60.8


def test_mcic_dev_is_above_test_for_generation_metrics() -> None:
    table5 = published_wide("mcic", "Table 5").dropna()
    assert (table5["CIDEr Dev"] > table5["CIDEr Test"]).all()
    assert (table5["ROUGE-L Dev"] > table5["ROUGE-L Test"]).all()
    assert table5["CIDEr Dev"].idxmax() == "4.0" == table5["ROUGE-L Dev"].idxmax()


# ---------------------------------------------------------------- ECCV Caption

# Table 4 PMRP differs from the mean of Tables D.2 and D.3 for these 11 models (a paper inconsistency;
# Table 5 follows Table 4). Every other Table 4 cell is the mean of its two modalities.
ECCV_PMRP_NOT_MEAN = {
    "CLIP ViT-B/32",
    "CLIP ViT-B/16",
    "CLIP ViT-L/14",
    "VinVL (zero-shot)",
    "VinVL",
    "ViLT (zero-shot)",
    "ViLT",
    "BLIP",
    "PVSE K=1, No NM",
    "PVSE K=1, Semi-hard NM",
    "PVSE K=1, Hardest NM",
}
ECCV_TABLE4_FROM_D = {
    ("ECCV Caption", "mAP@R"): ("ECCV", "mAP@R"),
    ("ECCV Caption", "R-P"): ("ECCV", "R-P"),
    ("ECCV Caption", "R@1"): ("ECCV", "R@1"),
    ("CxC", "R@1"): ("CxC", "R@1"),
    ("COCO", "1K R@1"): ("COCO 1K", "R@1"),
    ("COCO", "5K R@1"): ("COCO 5K", "R@1"),
    ("COCO", "PMRP"): ("COCO", "PMRP"),
}


def _eccv_models() -> list[str]:
    return published_wide("eccv", "Table 4", "ECCV Caption").index.tolist()


def _eccv_appendix(table: str, block: str) -> pd.DataFrame:
    wide = published_wide("eccv", table, block)
    wide.index = _eccv_models()  # same 25 models in the same order
    return wide


def test_eccv_spot_values() -> None:
    assert published_value("eccv", "Table 4", "PCME (CutMix pre-trained)", "R@1", block="ECCV Caption") == 78.67
    assert published_value("eccv", "Table 4", "VinVL", "RSUM", block="COCO") == 555.5
    assert published_value("eccv", "Table 5", "ECCV R-Precision", "ECCV mAP@R") == 0.90
    assert published_value("eccv", "Table D.3", "PVSE K=2", "R-P", block="ECCV") == 60.6


def test_eccv_table4_is_the_mean_of_both_modalities() -> None:
    mismatches = set()
    for (block4, column4), (block_d, column_d) in ECCV_TABLE4_FROM_D.items():
        table4 = published_wide("eccv", "Table 4", block4)[column4]
        mean = (_eccv_appendix("Table D.2", block_d)[column_d] + _eccv_appendix("Table D.3", block_d)[column_d]) / 2
        for model in table4.index:
            if abs(table4[model] - mean[model]) > 0.005 + 1e-9:
                mismatches.add((model, column4))
    assert mismatches == {(model, "PMRP") for model in ECCV_PMRP_NOT_MEAN}


def test_interpreted_cells_carry_a_note() -> None:
    eccv = load_published("eccv")
    pmrp = eccv[(eccv["table"] == "Table 4") & (eccv["column"] == "PMRP")]
    assert set(pmrp[pmrp["note"].str.contains("not the mean")]["row"]) == ECCV_PMRP_NOT_MEAN
    mcic = load_published("mcic")
    rouge = mcic[mcic["column"].str.startswith("ROUGE-L")]
    assert len(rouge) == 12 and rouge["note"].str.contains("read as Dev").all()
    bivlc = load_published("bivlc")
    assert bivlc[bivlc["value"] == 9.263]["note"].str.contains("three decimals").all()


def test_eccv_rsum_is_the_sum_of_the_six_coco_1k_recalls() -> None:
    rsum = published_wide("eccv", "Table 4", "COCO")["RSUM"]
    total = _eccv_appendix("Table D.2", "COCO 1K").sum(axis=1) + _eccv_appendix("Table D.3", "COCO 1K").sum(axis=1)
    assert np.allclose(rsum, total, atol=0.05 + 1e-9)


@pytest.mark.parametrize("table", ["Table D.2", "Table D.3"])
def test_eccv_recalls_grow_with_k(table: str) -> None:
    for block in ("COCO 1K", "COCO 5K"):
        wide = published_wide("eccv", table, block)
        assert ((wide["R@1"] < wide["R@5"]) & (wide["R@5"] < wide["R@10"])).all()
    coco_1k, coco_5k = published_wide("eccv", table, "COCO 1K"), published_wide("eccv", table, "COCO 5K")
    assert (coco_1k["R@1"] > coco_5k["R@1"]).all()  # 1K galleries are easier


def _map_at_r(relevant: list[bool], r: int) -> float:
    hits, total = 0, 0.0
    for i, rel in enumerate(relevant[:r], start=1):
        if rel:
            hits += 1
            total += hits / i
    return 100 * total / r


def test_eccv_worked_map_at_r_examples() -> None:
    r = 8
    rankings = {
        "(A) only top-1 is wrong": [False] + [True] * 8,
        "(B) only top-1 is correct": [True] + [False] * 8,
        "(C) top-1 to 5 are wrong": [False] * 5 + [True] * 8,
        "(D) only top-5 is correct": [False] * 4 + [True] + [False] * 8,
    }
    table = published_wide("eccv", "Section 4.1", "mAP@R worked example (R = 8)")
    for name, ranking in rankings.items():
        assert round(_map_at_r(ranking, r), 1) == table.loc[name, "mAP@R"], name
        assert 100 * any(ranking[:1]) == table.loc[name, "R@1"]
        assert 100 * any(ranking[:5]) == table.loc[name, "R@5"]


def test_eccv_user_study_tables() -> None:
    preferences = published_wide("eccv", "Table D.1")
    assert preferences.to_numpy().sum() == 40 * 10 * 8  # 3,200 binary preferences
    assert preferences.loc["A: only top-1 is wrong", "B"] == 231
    assert preferences.loc["B: only top-1 is correct", "A"] == 89
    scores = published_wide("eccv", "Section 4.1", "Bradley-Terry preference score")["score"]
    assert scores.sum() == pytest.approx(100, abs=0.02)
    assert list(scores.sort_values(ascending=False).index) == ["A", "B", "C", "D", "E"]


def test_eccv_bias_tables() -> None:
    recall = published_wide("eccv", "Table E.1", "(a) Text-to-Image Recall@1")
    precision = published_wide("eccv", "Table E.1", "(b) Text-to-Image R-Precision")
    for table in (recall, precision):
        for annotator in ["PVSE", "VSRN", "PCME", "ViLT", "CLIP"]:
            assert table.loc[annotator, annotator] == table[annotator].max()  # caption: diagonal is best
    gaps = (recall["PVSE"] - recall["All"]).abs()
    example = published_wide("eccv", "Appendix E.3", "Recall@1, annotators {PVSE}").loc["PVSE"]
    assert example["bias"] == round(gaps.mean(), 1)
    assert example["self-bias"] == round(gaps["PVSE"], 1)
    assert example["non-self-bias"] == round(gaps.drop("PVSE").mean(), 1)


def test_eccv_annotator_kendall_is_symmetric() -> None:
    taus = published_wide("eccv", "Table A.1", "(a) Kendall's τ")
    assert np.allclose(taus.to_numpy(), taus.to_numpy().T, equal_nan=True)


def test_eccv_model_wise_answers_sum_to_100_and_yes_falls_with_rank() -> None:
    for model in ["PVSE", "VSRN", "PCME", "ViLT", "CLIP"]:
        shares = published_wide("eccv", "Table B.2", model)
        assert np.allclose(shares[["Yes", "Weak yes", "Weak no", "No"]].sum(axis=1), 100.0, atol=0.2), model
        yes = shares.loc[["1", "2", "3", "4", "5"], "Yes"]
        assert yes.is_monotonic_decreasing, model  # the text: "Yes" ratios decrease as the rank goes down
        assert shares.loc["1", "Yes"] + shares.loc["1", "Weak yes"] > 80.0, model  # "exceed 80% for all five"


# ---------------------------------------------------------------- BiVLC

BIVLC_INSTANCES = {"Replace": 2099, "Swap": 359, "Add": 475}  # Table 1 retrieval examples / 4
BIVLC_TOTAL = 2933
SUGARCREPE_TOTAL = 7512


def _bivlc_main_blocks() -> list[pd.DataFrame]:
    blocks = [published_wide("bivlc", table) for table in ("Table 2", "Table 3", "Table 5")]
    blocks += [published_wide("bivlc", "Table 4", block) for block in BIVLC_INSTANCES]
    return blocks


def test_bivlc_spot_values() -> None:
    assert published_value("bivlc", "Table 2", "VQAScore-XXL", "Group") == 76.47
    assert published_value("bivlc", "Table 3", "CLIP_TROHN-Img", "Tpos2I") == 81.45
    assert published_value("bivlc", "Table 4", "Open CapPa", "Group", block="Add") == 9.263
    assert published_value("bivlc", "Table 2", "Random", "Group") == 16.67


def test_bivlc_group_never_above_i2t_or_t2i() -> None:
    for wide in _bivlc_main_blocks():
        assert (wide["Group"] <= wide[["I2T", "T2I"]].min(axis=1)).all()
        assert (wide["Group"] >= wide["I2T"] + wide["T2I"] - 100 - 1e-9).all()


def test_bivlc_direction_scores_within_their_single_comparisons() -> None:
    table = published_wide("bivlc", "Table 3")
    for score, (pos, neg) in {"I2T": ("Ipos2T", "Ineg2T"), "T2I": ("Tpos2I", "Tneg2I")}.items():
        assert (table[score] <= table[[pos, neg]].min(axis=1)).all(), score
        assert (table[score] >= table[pos] + table[neg] - 100 - 1e-9).all(), score


def test_bivlc_tables_agree_on_shared_cells() -> None:
    table2, table3 = published_wide("bivlc", "Table 2"), published_wide("bivlc", "Table 3")
    shared = table2.index.intersection(table3.index)
    assert len(shared) == 5  # Random, CLIP, CLIP_COCO, NegCLIP, GNM
    assert table2.loc[shared].equals(table3.loc[shared, table2.columns])
    sota = published_wide("bivlc", "Section 5.3", "SugarCrepe state of the art")["SugarCrepe"]
    assert sota["VQAScore-XXL"] == table2.loc["VQAScore-XXL", "SugarCrepe"]
    assert sota["GPT-4V"] == 92.19


def test_bivlc_overall_is_the_instance_weighted_mean_of_the_categories() -> None:
    overall = pd.concat([published_wide("bivlc", "Table 2"), published_wide("bivlc", "Table 3")])
    overall = overall[~overall.index.duplicated()]
    blocks = {block: published_wide("bivlc", "Table 4", block) for block in BIVLC_INSTANCES}
    models = [m for m in blocks["Replace"].index if m != "Random"]
    assert len(models) == 9
    for model in models:
        for metric in ("I2T", "T2I", "Group"):
            weighted = sum(n * blocks[b].loc[model, metric] for b, n in BIVLC_INSTANCES.items()) / BIVLC_TOTAL
            assert abs(weighted - overall.loc[model, metric]) <= 0.01, (model, metric)


def _is_fraction_of(value: float, decimals: int, n: int) -> bool:
    k = round(value * n / 100)
    return any(round(100 * j / n, decimals) == round(value, decimals) for j in (k - 1, k, k + 1))


def test_bivlc_model_scores_are_counts_over_the_instances() -> None:
    frame = load_published("bivlc")
    cells = frame[~frame["row"].isin(["Random", "Human"]) & (frame["column"] != "Text detection acc")]
    for _, cell in cells.iterrows():
        if cell["column"] == "SugarCrepe":
            n = SUGARCREPE_TOTAL
        elif cell["table"] == "Table 4":
            n = BIVLC_INSTANCES[cell["block"]]
        else:
            n = BIVLC_TOTAL
        where = (cell["table"], cell["block"], cell["row"], cell["column"])
        assert _is_fraction_of(cell["value"], cell["decimals"], n), where
    human = published_wide("bivlc", "Table 2").loc["Human", ["I2T", "T2I", "Group"]]
    assert all(_is_fraction_of(v, 2, 500) for v in human)  # 500 sampled instances


# ---------------------------------------------------------------- CxC

CXC_DIRECTIONS = ["Image → Text", "Text → Image", "Text → Text", "Image → Image"]


def test_cxc_spot_values() -> None:
    assert published_value("cxc", "Table 5", "DE_T2T+I2T", "SITS") == 61.9
    assert published_value("cxc", "Table 5", "DE_T2T+I2T", "SITS ±") == 1.3
    assert published_value("cxc", "Table 4", "SimCLRv2", "Image → Image R@10") == 68.1
    assert published_value("cxc", "Table 2", "VSRN-paper", "Text → Image R@1", block="MS-COCO") == 40.5


@pytest.mark.parametrize(
    ("table", "block"), [("Table 2", "MS-COCO"), ("Table 2", "CxC"), ("Table 3", ""), ("Table 4", "")]
)
def test_cxc_recall_grows_with_k(table: str, block: str) -> None:
    wide = published_wide("cxc", table, block)
    for direction in CXC_DIRECTIONS:
        if f"{direction} R@1" in wide:
            r1, r5, r10 = (wide[f"{direction} R@{k}"] for k in (1, 5, 10))
            assert ((r1 < r5) & (r5 < r10)).all(), direction


@pytest.mark.parametrize("table", ["Table 2", "Appendix Table 3"])
def test_cxc_extra_positives_never_lower_recall(table: str) -> None:
    coco, cxc = published_wide("cxc", table, "MS-COCO"), published_wide("cxc", table, "CxC")
    rows, columns = coco.index.intersection(cxc.index), coco.columns.intersection(cxc.columns)
    assert len(rows) >= 4
    for column in columns:
        if "R@" in column:
            assert (cxc.loc[rows, column] >= coco.loc[rows, column]).all(), column
        else:  # median rank of the first positive
            assert (cxc.loc[rows, column] <= coco.loc[rows, column]).dropna().all(), column


def test_cxc_ablation_baseline_matches_the_main_tables() -> None:
    ablation = published_wide("cxc", "Appendix Table 3", "CxC").loc["DE_I2T (baseline)"]
    main = pd.concat(
        [
            published_wide("cxc", "Table 2", "CxC").loc["DE_I2T"],
            published_wide("cxc", "Table 3").loc["DE_I2T"],
            published_wide("cxc", "Table 4").loc["DE_I2T"],
        ]
    )
    assert ablation.to_dict() == main[ablation.index].to_dict()
    coco = published_wide("cxc", "Appendix Table 3", "MS-COCO").loc["DE_I2T (baseline)"]
    coco_main = published_wide("cxc", "Table 2", "MS-COCO").loc["DE_I2T"]
    shared = [c for c in coco.index if c in coco_main.index]
    assert len(shared) == 4
    assert coco[shared].to_dict() == coco_main[shared].to_dict()


def test_cxc_correlations() -> None:
    table = published_wide("cxc", "Table 5")
    for task in ("STS", "SIS", "SITS"):
        present = table[task].notna()
        assert (table.loc[present, f"{task} ±"] > 0).all()
        assert table[f"{task} ±"].notna().equals(present)
        assert table[task].max() < 100
    assert table["SIS"].idxmax() == "DE_I2T"  # "it has the highest SIS (81.3)"
