"""Each paper's tables filled from the world beside the published numbers, and the world figures.

Metrics are hand-built in the world's JSON shape, so every expected cell is worked out by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from itmbench.cli import main
from itmbench.metrics.intervals import wilson_interval
from itmbench.negatives.captions import SUBSETS
from itmbench.papers.published import published_value
from itmbench.papers.tables import compare, comparison_markdown, status_counts
from itmbench.papers.world import (
    WORLD_TABLES,
    check_rows,
    read_world_metrics,
    world_comparison,
    world_long,
    write_world_paper_tables,
)
from itmbench.papers.world_figures import WORLD_FIGURES, world_figure, write_world_paper_figures

MODELS = ("clip", "random", "vse")


def _entry(value: float, n: int = 1000, half: float = 2.0) -> dict:
    return {"value": value, "lo": value - half, "hi": value + half, "n": n}


def _bivlc(model: str, base: float) -> dict:
    names = ("sugarcrepe", "i2t", "t2i", "group", "ipos2t", "ineg2t", "tpos2i", "tneg2i")
    metrics = {name: _entry(base + i) for i, name in enumerate(names)}
    by_type = {kind: {name: _entry(base + 10 * j + i) for i, name in enumerate(names)} for j, kind in
               enumerate(("replace", "swap", "add"))}  # fmt: skip
    chance = {"i2t": 25.0, "t2i": 25.0, "group": 100 / 6, "sugarcrepe": 50.0}
    return {"benchmark": "bivlc", "model": model, "confidence": 0.95, "metrics": metrics, "by_type": by_type,
            "chance": chance}  # fmt: skip


def _retrieval(model: str, r1_original: float, r1_truth: float, n: int = 200) -> dict:
    def block(r1: float) -> dict:
        return {d: {"R@1": _entry(r1, n), "R@5": _entry(r1 + 10, n), "R@10": _entry(r1 + 20, n),
                    "MedR": _entry(9.0, n, 1.0)} for d in ("i2t", "t2i")}  # fmt: skip

    return {
        "benchmark": "retrieval",
        "model": model,
        "metrics": {"original": block(r1_original), "truth": block(r1_truth)},
    }


def _eccv(model: str, values: dict[str, float]) -> dict:
    return {"benchmark": "eccv", "model": model, "confidence": 0.95,
            "metrics": {name: _entry(v, 259) for name, v in values.items()}}  # fmt: skip


def _cxc(model: str, base: float) -> dict:
    metrics = {}
    for direction in ("i2t", "t2i", "t2t", "i2i"):
        for positives in ("coco", "cxc"):
            for k, offset in (("R@1", 0.0), ("R@5", 10.0), ("R@10", 20.0)):
                metrics[f"{direction}/{positives}/{k}"] = _entry(base + offset)
            metrics[f"{direction}/{positives}/MedR"] = _entry(12.0, half=1.0)
    for name in ("sts", "sis", "sits"):
        metrics[f"{name}/spearman"] = {**_entry(base + 30), "std": 1.25}
    return {"benchmark": "cxc", "model": model, "confidence": 0.95, "metrics": metrics}


PRIOR = {"dev": [10.0, 30.0, 20.0, 20.0, 20.0], "test": [15.0, 25.0, 20.0, 20.0, 20.0]}


def _mcic(model: str, dev: float) -> dict:
    return {"benchmark": "mcic", "model": model, "confidence": 0.95, "chance": 20.0,
            "metrics": {"accuracy_dev": _entry(dev, 100), "accuracy_test": _entry(dev - 5, 400)},
            "standard_error": {"accuracy_dev": 100 * math.sqrt(dev / 100 * (1 - dev / 100) / 100)},
            "answer_position_prior": PRIOR}  # fmt: skip


ECCV_VALUES = {  # three models; random last on everything
    "clip": {"original_r1": 3.0, "original_r5": 10.0, "original_r10": 20.0, "cxc_r1": 4.0, "eccv_r1": 12.0,
             "eccv_r_precision": 9.0, "eccv_map_at_r": 3.0, "pmrp": 8.0},
    "vse": {"original_r1": 2.0, "original_r5": 12.0, "original_r10": 22.0, "cxc_r1": 3.0, "eccv_r1": 14.0,
            "eccv_r_precision": 8.0, "eccv_map_at_r": 3.5, "pmrp": 7.0},
    "random": {"original_r1": 0.1, "original_r5": 0.5, "original_r10": 1.0, "cxc_r1": 0.1, "eccv_r1": 0.5,
               "eccv_r_precision": 0.2, "eccv_map_at_r": 0.1, "pmrp": 0.2},
}  # fmt: skip


def _metrics() -> dict[str, dict[str, dict]]:
    return {
        "bivlc": {m: _bivlc(m, b) for m, b in zip(MODELS, (20.0, 25.0, 30.0))},
        "bison": {m: {"benchmark": "bison", "model": m, "confidence": 0.95, "chance": 50.0,
                      "metrics": {"bison": _entry(v, 650)}} for m, v in zip(MODELS, (89.5, 52.8, 85.4))},
        "retrieval": {"clip": _retrieval("clip", 10.0, 40.0), "random": _retrieval("random", 0.5, 3.0),
                      "vse": _retrieval("vse", 8.0, 30.0)},
        "eccv": {m: _eccv(m, ECCV_VALUES[m]) for m in MODELS},
        "cxc": {m: _cxc(m, b) for m, b in zip(MODELS, (5.0, 0.5, 4.0))},
        "mcic": {m: _mcic(m, v) for m, v in zip(MODELS, (52.0, 21.0, 50.0))},
        "sugarcrepe": {m: _sugarcrepe(m, b) for m, b in zip(MODELS, (80.0, 50.0, 70.0))},
        "aro": {m: _aro(m, b) for m, b in zip(MODELS, (60.0, 50.0, 55.0))},
    }  # fmt: skip


def _aro(model: str, base: float) -> dict:
    names = ("vg_relation", "vg_attribution", "coco_order", "flickr30k_order", "vg_relation:above")
    return {"benchmark": "aro", "model": model, "confidence": 0.95,
            "metrics": {name: _entry(base + i / 2) for i, name in enumerate(names)}}  # fmt: skip


def _sugarcrepe(model: str, base: float) -> dict:
    names = ("pooled", "mean_over_subtypes", *SUBSETS)
    return {"benchmark": "sugarcrepe", "model": model, "confidence": 0.95, "chance": 50.0,
            "metrics": {name: _entry(base + i / 2) for i, name in enumerate(names)}}  # fmt: skip


def _cell(compared: pd.DataFrame, table: str, row: str, column: str, block: str = "") -> pd.Series:
    hit = compared[
        (compared["table"] == table) & (compared["block"] == block) & (compared["row"] == row)
        & (compared["column"] == column)
    ]  # fmt: skip
    assert len(hit) == 1, (table, block, row, column, len(hit))
    return hit.iloc[0]


# --- the generic comparison, extended --------------------------------------------------------------------

PUBLISHED = pd.DataFrame(
    {
        "table": ["Table 1"] * 4,
        "block": [""] * 4,
        "row": ["A", "A", "B", "B"],
        "column": ["acc", "med r", "acc", "med r"],
        "value": [75.8, 3.0, 40.0, 5.0],
        "decimals": [1, 0, 1, 0],
        "note": [""] * 4,
    }
)


def test_world_comparison_keeps_printed_cells_without_a_counterpart_and_flags_nothing() -> None:
    regenerated = pd.DataFrame(
        {
            "table": ["Table 1"] * 3,
            "block": [""] * 3,
            "row": ["w2", "A", "A"],
            "column": ["acc", "med r", "acc"],
            "value": [30.04, 7.6, 12.26],
            "lo": [28.0, 6.0, 10.0],
            "hi": [32.0, 9.0, 14.0],
            "model": ["w2", "w1", "w1"],
        }  # fmt: skip
    )
    out = compare(regenerated, "any", published=PUBLISHED, expect_equal=False, keep_unregenerated=True)
    # printed rows first, in printed order, then the world's own rows; both printed cells of B kept
    assert list(zip(out["row"], out["column"])) == [
        ("A", "acc"), ("A", "med r"), ("B", "acc"), ("B", "med r"), ("w2", "acc")
    ]  # fmt: skip
    assert list(out["status"]) == ["compared", "compared", "not_regenerated", "not_regenerated", "not_published"]
    a_acc = out.iloc[0]
    assert a_acc["regenerated"] == 12.3 and a_acc["published"] == 75.8 and a_acc["difference"] == pytest.approx(-63.5)
    assert out.iloc[1]["decimals"] == 0 and out.iloc[1]["difference"] == 5.0  # 8 - 3 at the printed precision
    assert out.iloc[4]["decimals"] == 1  # an unprinted cell takes its column's printed decimals
    assert math.isnan(out.iloc[2]["value"]) and math.isnan(out.iloc[2]["difference"])
    assert status_counts(out) == {"match": 0, "differs": 0, "not_published": 1, "compared": 2, "not_regenerated": 2}
    md = comparison_markdown(out, "t", caption="a different world")
    assert "a different world" in md and "⚠" not in md.split("\n", 6)[-1]
    assert "| A ← w1 | 12.3 (10.0–14.0) \\| 75.8 \\| -63.5 | 8 (6–9) \\| 3 \\| +5 |" in md
    assert "| B | – \\| 40.0 \\| – | – \\| 5 \\| – |" in md
    assert "| w2 | 30.0 (28.0–32.0) \\| – \\| – |  |" in md


def test_compare_without_the_new_options_is_unchanged() -> None:
    regenerated = pd.DataFrame({"table": ["Table 1"], "row": ["A"], "column": ["acc"], "value": [75.84]})
    out = compare(regenerated, "any", published=PUBLISHED)
    assert list(out["status"]) == ["match"] and len(out) == 1
    assert status_counts(out) == {"match": 1, "differs": 0, "not_published": 0}


# --- the row mapping ------------------------------------------------------------------------------------


def test_rows_must_be_printed_and_filled_once() -> None:
    assert check_rows("bivlc", {"clip": "CLIP_COCO"}) == {"clip": "CLIP_COCO"}
    with pytest.raises(ValueError, match="'CLIP COCO'.*does not print"):
        check_rows("bivlc", {"clip": "CLIP COCO"})
    with pytest.raises(ValueError, match="filled by both"):
        check_rows("cxc", {"de_i2t": "DE_I2T", "vse": "DE_I2T"})
    # one params file maps each source's models: only the models a run scores may not share a row
    both = {"clip": "CLIP", "vit_b_32": "CLIP"}
    assert check_rows("bivlc", both, {"bivlc": {"vit_b_32": {}, "random": {}}}) == {"vit_b_32": "CLIP"}
    with pytest.raises(ValueError, match="row 'CLIP' is filled by both 'clip' and 'vit_b_32'"):
        check_rows("bivlc", both, {"bivlc": {"vit_b_32": {}, "clip": {}}})


# --- each paper ---------------------------------------------------------------------------------------


def test_bivlc_mapped_model_sits_in_the_printed_row_beside_the_published_value() -> None:
    rows = {"clip": "CLIP_COCO", "random": "Random"}
    out = world_comparison("bivlc", _metrics(), rows)
    cell = _cell(out, "Table 2", "CLIP_COCO", "I2T")
    published = published_value("bivlc", "Table 2", "CLIP_COCO", "I2T")
    assert cell["value"] == 21.0 and cell["lo"] == 19.0 and cell["model"] == "clip"
    assert cell["published"] == published and cell["difference"] == pytest.approx(round(21.0 - published, 2))
    assert cell["status"] == "compared"
    # an unmapped world model is a row of its own; a printed model with no world counterpart stays, unfilled
    assert _cell(out, "Table 2", "vse", "Group")["status"] == "not_published"
    negclip = _cell(out, "Table 2", "NegCLIP", "Group")
    assert negclip["status"] == "not_regenerated"
    assert negclip["published"] == published_value("bivlc", "Table 2", "NegCLIP", "Group")
    assert math.isnan(negclip["value"])
    assert _cell(out, "Table 4", "Random", "T2I", block="Swap")["value"] == 25.0 + 10 + 2
    assert set(out["status"]) == {"compared", "not_published", "not_regenerated"}


def test_mcic_table3_carries_the_binomial_error_and_the_prior_row() -> None:
    out = world_comparison("mcic", _metrics(), {})
    assert _cell(out, "Table 3", "clip", "Dev ±")["value"] == pytest.approx(100 * math.sqrt(0.52 * 0.48 / 100))
    assert _cell(out, "Table 3", "clip", "Test")["value"] == 47.0
    prior_row = "answer-position prior (always option 1, chosen on dev)"  # dev prior peaks at position 1
    test = _cell(out, "Table 3", prior_row, "Test")
    assert test["value"] == 25.0  # the test share of the position chosen on dev
    lo, hi = wilson_interval(100, 400)
    assert (test["lo"], test["hi"]) == pytest.approx((100 * lo, 100 * hi))
    assert _cell(out, "Table 3", prior_row, "Test ±")["value"] == pytest.approx(100 * math.sqrt(0.25 * 0.75 / 400))
    assert _cell(out, "Table 3", "FFNN", "Test")["status"] == "not_regenerated"


def test_mcic_prior_must_be_one_per_benchmark() -> None:
    metrics = _metrics()
    metrics["mcic"]["vse"]["answer_position_prior"] = {"dev": [20.0] * 5, "test": [20.0] * 5}
    with pytest.raises(ValueError, match="answer_position_prior"):
        world_long("mcic", metrics)


def test_bison_table1_counts_errors_that_the_truth_calls_correct() -> None:
    out = world_comparison("bison", _metrics(), {}, options={"bison_table1_model": "clip"})
    # t2i R@1 10% original, 40% truth, n = 200: 180 errors, of which 60 retrieve a fitting image
    correct = "Recall@1 Incorrect, Human Correct"
    assert _cell(out, "Table 1", correct, "Number")["value"] == 60
    share = _cell(out, "Table 1", correct, "Percentage")
    assert share["value"] == pytest.approx(100 / 3) and share["published"] == 56.1
    assert share["difference"] == pytest.approx(33.3 - 56.1)
    assert _cell(out, "Table 1", "Recall@1 Incorrect, Human Incorrect", "Number")["value"] == 120
    assert _cell(out, "Table 3", "clip", "BISON")["value"] == 89.5
    assert _cell(out, "Table 3", "clip", "Image retrieval R@5")["value"] == 20.0
    metrics = _metrics()
    metrics["retrieval"]["clip"]["metrics"]["truth"]["t2i"]["R@1"]["value"] = 5.0
    with pytest.raises(ValueError, match="below the original"):
        world_long("bison", metrics, options={"bison_table1_model": "clip"})
    with pytest.raises(ValueError, match="no such model"):
        world_long("bison", _metrics(), options={"bison_table1_model": "scan"})


def test_bison_table7_lays_out_each_system_on_two_image_towers() -> None:
    metrics = _metrics()  # clip and vse score BISON and retrieval: a system on the "ViT" and "ResNet" tower
    out = world_comparison("bison", metrics, {}, options={"bison_feature_pairs": [["clip", "vse"]]})
    vit = _cell(out, "Table 7", "clip / vse", "BISON", block="ViT image tower")
    resnet = _cell(out, "Table 7", "clip / vse", "BISON", block="ResNet image tower")
    assert (vit["value"], vit["model"], resnet["value"], resnet["model"]) == (89.5, "clip", 85.4, "vse")
    cells = out[(out["table"] == "Table 7") & (out["block"] == "ResNet image tower")]
    assert cells["column"].tolist() == [
        "Image retrieval R@1", "Image retrieval R@5", "Caption retrieval R@1", "Caption retrieval R@5", "BISON"
    ]  # fmt: skip
    assert _cell(out, "Table 7", "clip / vse", "Image retrieval R@1", block="ResNet image tower")["value"] == 8.0
    # the printed systems stay, under the paper's feature sets, beside the world's
    printed = _cell(out, "Table 7", "ConvNet+BoW", "BISON", block="ResNet-IN")
    assert printed["status"] == "not_regenerated" and printed["published"] == 77.96
    # Table 3 unchanged by it; without pairs no world cell in Table 7
    plain = world_comparison("bison", metrics, {})
    assert plain[plain["table"] == "Table 3"].equals(out[out["table"] == "Table 3"])
    assert plain[(plain["table"] == "Table 7") & plain["value"].notna()].empty
    with pytest.raises(ValueError, match=r"bison_feature_pairs \['clip', 'random_rn'\]: no metrics"):
        world_long("bison", metrics, options={"bison_feature_pairs": [["clip", "random_rn"]]})


def _caption_metric(metric: str, value: float) -> dict:
    return {"benchmark": "bison", "caption_metric": metric, "confidence": 0.95, "chance": 50.0,
            "metrics": {"bison": _entry(value, 650)}}  # fmt: skip


def test_bison_section6_lays_out_the_caption_metric_baseline(tmp_path: Path) -> None:
    metrics = _metrics()
    values = (("meteor", 83.5), ("bleu4", 70.5), ("cider_d", 90.0), ("tuple_f1", 95.0))
    metrics["bison_caption_metrics"] = {m: _caption_metric(m, v) for m, v in values}
    out = world_comparison("bison", metrics, {})
    section6 = out[out["table"] == "Section 6"]
    assert set(section6["block"]) == {"Caption-metric baseline"} and set(section6["column"]) == {"BISON accuracy"}
    # rows in the printed order, each beside its published value; SPICE printed, not regenerated here
    # the world's SPICE analogue is a row of its own, under SPICE's: SPICE keeps its printed value alone
    analogue = "Tuple F1 (world SPICE analogue)"
    assert section6["row"].tolist() == ["BLEU-4", "CIDEr-D", "METEOR", "SPICE", analogue]  # beside SPICE
    tuple_f1 = _cell(out, "Section 6", analogue, "BISON accuracy", block="Caption-metric baseline")
    assert (tuple_f1["value"], tuple_f1["model"]) == (95.0, "tuple_f1") and np.isnan(tuple_f1["published"])
    bleu = _cell(out, "Section 6", "BLEU-4", "BISON accuracy", block="Caption-metric baseline")
    assert (bleu["value"], bleu["published"], bleu["model"]) == (70.5, 70.73, "bleu4")
    assert bleu["difference"] == pytest.approx(70.5 - 70.73)
    assert _cell(out, "Section 6", "METEOR", "BISON accuracy", block="Caption-metric baseline")["value"] == 83.5
    spice = _cell(out, "Section 6", "SPICE", "BISON accuracy", block="Caption-metric baseline")
    assert spice["status"] == "not_regenerated" and spice["published"] == 62.79
    # the caption metrics are no models: Table 3 has no row for them
    assert not set(out[out["table"] == "Table 3"]["model"].dropna()) & {"bleu4", "cider_d", "meteor"}
    # the written table: its own row header, and the caption says why SPICE is missing
    files = _write_metrics(tmp_path / "m")
    for metric, doc in metrics["bison_caption_metrics"].items():
        path = tmp_path / "m" / "bison_caption_metrics" / f"{metric}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        files.append(path)
    write_world_paper_tables("bison", files, tmp_path / "t")
    md = (tmp_path / "t" / "section6.md").read_text()
    assert "| caption metric | BISON accuracy |" in md and "CoreNLP" in md and "a stand-in for SPICE, not SPICE" in md
    assert "| BLEU-4 ← bleu4 | 70.50 (68.50–72.50) \\| 70.73 \\| -0.23 |" in md
    assert (tmp_path / "t" / "section6.tex").exists() and (tmp_path / "t" / "section6.csv").exists()
    metrics["bison_caption_metrics"]["rouge"] = _caption_metric("rouge", 60.0)
    with pytest.raises(ValueError, match="unknown captioning metric 'rouge'"):
        world_long("bison", metrics)


def test_eccv_table5_is_kendall_tau_over_the_image_text_models() -> None:
    kinds = {"random": "chance"}
    out = world_comparison("eccv", _metrics(), {"clip": "CLIP ViT-B/32", "vse": "VSE++"}, kinds)
    tau = _cell(out, "Table 5", "ECCV R@1", "ECCV mAP@R")
    # two models (random is chance): clip < vse on both -> tau = 1; against COCO 5K R@1 (clip > vse) -> -1
    assert tau["value"] == 1.0 and tau["published"] == published_value("eccv", "Table 5", "ECCV R@1", "ECCV mAP@R")
    assert _cell(out, "Table 5", "COCO 5K R@1", "ECCV mAP@R")["value"] == -1.0
    assert _cell(out, "Table 5", "COCO 1K R@1", "RSUM")["status"] == "not_regenerated"
    # with random counted as a model, the three-model tau is scipy's
    out3 = world_comparison("eccv", _metrics(), {}, {"random": "contrastive"})
    expected = kendalltau([3.0, 0.1, 2.0], [8.0, 0.2, 7.0], variant="b").statistic
    assert _cell(out3, "Table 5", "COCO 5K R@1", "PMRP")["value"] == pytest.approx(expected)
    r1 = _cell(out, "Table 4", "VSE++", "R@1", block="ECCV Caption")
    assert r1["value"] == 14.0 and r1["model"] == "vse" and r1["status"] == "compared"
    assert _cell(out, "Table 4", "VSE++", "1K R@1", block="COCO")["status"] == "not_regenerated"


def test_eccv_coco_1k_and_rsum_fill_table4_and_join_table5_when_every_model_has_them() -> None:
    metrics = _metrics()
    for model, (r1, rsum) in {"clip": (6.0, 120.0), "vse": (5.0, 130.0), "random": (0.5, 6.0)}.items():
        doc = metrics["eccv"][model]["metrics"]
        doc.update({"coco_1k_r1": _entry(r1, 259), "coco_1k_r5": _entry(2 * r1, 259)})
        doc.update({"coco_1k_r10": _entry(3 * r1, 259), "coco_1k_rsum": _entry(rsum, 259)})
    out = world_comparison("eccv", metrics, {"clip": "CLIP ViT-B/32", "vse": "VSE++"}, {"random": "chance"})
    assert _cell(out, "Table 4", "VSE++", "1K R@1", block="COCO")["value"] == 5.0
    rsum = _cell(out, "Table 4", "VSE++", "RSUM", block="COCO")
    assert rsum["value"] == 130.0 and rsum["status"] == "compared"
    # clip > vse by 1K R@1, vse > clip by RSUM: tau = -1 over the two image-text models
    assert _cell(out, "Table 5", "COCO 1K R@1", "RSUM")["value"] == -1.0
    assert _cell(out, "Table 5", "COCO 1K R@1", "ECCV R@1")["value"] == -1.0
    del metrics["eccv"]["vse"]["metrics"]["coco_1k_rsum"]  # one model lacks it: RSUM leaves Table 5 only
    out = world_comparison("eccv", metrics, {"clip": "CLIP ViT-B/32", "vse": "VSE++"}, {"random": "chance"})
    assert _cell(out, "Table 5", "COCO 1K R@1", "RSUM")["status"] == "not_regenerated"
    assert _cell(out, "Table 5", "COCO 1K R@1", "ECCV R@1")["value"] == -1.0


def test_eccv_table5_ranks_models_without_pmrp_by_the_metrics_they_have() -> None:
    """The coco source has no PMRP (it needs the world's truth): its models are still ranked, PMRP's pairs are
    not regenerated, and the ranking figure draws them."""
    from itmbench.papers.eccv.figures import eccv_figure
    from itmbench.papers.eccv.tables import eccv_table5_models

    metrics = _metrics()
    for model in metrics["eccv"]:
        del metrics["eccv"][model]["metrics"]["pmrp"]
    assert eccv_table5_models(metrics, {"random": "chance"}) == ["clip", "vse"]
    out = world_comparison("eccv", metrics, {"clip": "CLIP ViT-B/32", "vse": "VSE++"}, {"random": "chance"})
    assert _cell(out, "Table 5", "ECCV R@1", "ECCV mAP@R")["value"] == 1.0
    assert _cell(out, "Table 5", "COCO 5K R@1", "PMRP")["status"] == "not_regenerated"
    eccv_figure(metrics, {}, {"random": "chance"})  # two ranked models: drawn, not refused


def test_eccv_figure_with_one_image_text_model_draws_its_two_metrics_and_says_why_no_ranks() -> None:
    """A user's one checkpoint (coco.only_models: [mine, random]): one panel, its R@1 and mAP@R with their
    intervals, the title saying the rank comparison needs two image-text models (and Table 5's caption why it
    has no cell); `random` is not one, so with it alone there is nothing to draw."""
    from itmbench.papers.eccv.figures import eccv_figure
    from itmbench.papers.eccv.tables import world_table_notes

    metrics = _metrics()
    assert "ranking needs" not in world_table_notes(metrics, {"random": "chance"})["Table 5"]
    del metrics["eccv"]["vse"]
    note = world_table_notes(metrics, {"random": "chance"})["Table 5"]  # Table 5's caption says why it is empty
    assert note.endswith(
        "No cell regenerated: a ranking needs >= 2 image-text models, this run has 1 ('random' is none)."
    )
    fig = eccv_figure(metrics, {"clip": "CLIP ViT-B/32"}, {"random": "chance"})
    assert len(fig.axes) == 1
    ax = fig.axes[0]
    doc = metrics["eccv"]["clip"]["metrics"]
    assert [b.get_height() for b in ax.patches] == [doc["original_r1"]["value"], doc["eccv_map_at_r"]["value"]]
    whiskers = sorted(tuple(seg[:, 1]) for c in ax.collections for seg in c.get_segments())
    ends = [(doc[n]["lo"], doc[n]["hi"]) for n in ("original_r1", "eccv_map_at_r")]
    assert whiskers == sorted(ends)
    assert ax.get_title() == "clip (CLIP ViT-B/32) (95% intervals)"
    assert "needs >= 2 image-text models" in fig._suptitle.get_text()
    del metrics["eccv"]["clip"]
    with pytest.raises(ValueError, match="'random' is none"):
        eccv_figure(metrics, {}, {"random": "chance"})


def test_cxc_tables_read_every_direction_and_the_correlation_spread() -> None:
    out = world_comparison("cxc", _metrics(), {"vse": "VSE++"})
    assert _cell(out, "Table 2", "VSE++", "Text → Image R@10", block="CxC")["value"] == 24.0
    med = _cell(out, "Table 2", "VSE++", "Image → Text med r", block="MS-COCO")
    printed = published_value("cxc", "Table 2", "VSE++", "Image → Text med r", block="MS-COCO")
    assert med["decimals"] == 0 and med["regenerated"] == 12 and med["published"] == printed
    assert med["difference"] == 12 - printed
    assert _cell(out, "Table 4", "clip", "Image → Image R@5")["value"] == 15.0
    assert _cell(out, "Table 5", "VSE++", "SITS ±")["value"] == 1.25
    assert _cell(out, "Table 5", "VSE++", "STS")["value"] == 34.0


# --- files and the CLI -----------------------------------------------------------------------------------


def _write_metrics(root: Path) -> list[Path]:
    paths = []
    for bench, docs in _metrics().items():
        for model, doc in docs.items():
            path = root / bench / f"{model}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc))
            paths.append(path)
    return paths


def test_written_tables_are_csv_md_tex_per_printed_table(tmp_path: Path) -> None:
    files = _write_metrics(tmp_path / "metrics")
    paths = write_world_paper_tables("cxc", files, tmp_path / "out", {"vse": "VSE++"})
    assert sorted(p.name for p in paths) == sorted(
        f"{s}.{e}" for s in WORLD_TABLES["cxc"] for e in ("csv", "md", "tex")
    )
    csv = pd.read_csv(tmp_path / "out" / "table5.csv")
    assert set(csv["table"]) == {"Table 5"} and {"published", "difference", "status", "model"} <= set(csv.columns)
    tex = (tmp_path / "out" / "table2.tex").read_text()
    assert r"VSE++ $\leftarrow$ vse" in tex and "for direction, not equality" in tex


def test_cli_writes_each_paper_and_names_a_bad_row(tmp_path: Path, capsys) -> None:
    files = [str(p) for p in _write_metrics(tmp_path / "m")]
    bivlc = [f for f in files if "/bivlc/" in f]
    assert main(["world-paper-tables", *bivlc, "--paper", "bivlc", "--rows", '{"clip": "CLIP_COCO"}',
                 "--out-dir", str(tmp_path / "t")]) == 0  # fmt: skip
    assert "CLIP_COCO ← clip" in (tmp_path / "t" / "table3.md").read_text()
    assert main(["world-paper-tables", *bivlc, "--paper", "bivlc", "--rows", '{"clip": "CLIP-COCO"}',
                 "--out-dir", str(tmp_path / "t2")]) == 2  # fmt: skip
    assert "CLIP-COCO" in capsys.readouterr().err and not (tmp_path / "t2").exists()
    assert main(["world-paper-tables", *bivlc, "--paper", "bison", "--out-dir", str(tmp_path / "t3")]) == 2
    assert (
        main(["world-paper-figures", *bivlc, "--paper", "bivlc", "--dpi", "60", "--out-dir", str(tmp_path / "f")]) == 0
    )
    assert (tmp_path / "f" / "scores.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "f" / "scores.pdf").read_bytes()[:5] == b"%PDF-"


def test_claims_of_one_paper(tmp_path: Path) -> None:
    _write_metrics(tmp_path / "m")
    out = tmp_path / "claims" / "bivlc.csv"
    assert main(["claims", "--metrics-dir", str(tmp_path / "m"), "--paper", "bivlc", "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert len(table) >= 1 and set(table["paper"]) == {"bivlc"}


# --- figures ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("paper", sorted(WORLD_FIGURES))
def test_figures_are_byte_identical_from_the_same_metrics(tmp_path: Path, paper: str) -> None:
    files = _write_metrics(tmp_path / "m")
    kinds = {"random": "chance"}
    first = write_world_paper_figures(paper, files, tmp_path / "a", {}, kinds, dpi=60)
    second = write_world_paper_figures(paper, files, tmp_path / "b", {}, kinds, dpi=60)
    assert [p.name for p in first] == [f"{s}.{e}" for s in WORLD_FIGURES[paper] for e in ("png", "pdf")]
    for a, b in zip(first, second):
        assert a.read_bytes() == b.read_bytes(), a.name
    pdf = first[1].read_bytes()
    assert b"CreationDate" not in pdf


@pytest.mark.parametrize("paper", sorted(WORLD_FIGURES))
def test_figure_titles_state_the_level_the_metrics_were_computed_at(paper: str) -> None:
    metrics = _metrics()
    for docs in metrics.values():
        for doc in docs.values():
            doc["confidence"] = 0.9
    fig = world_figure(paper, WORLD_FIGURES[paper][0], metrics, {}, {"random": "chance"})
    titles = [ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""]
    assert any("90% intervals" in t for t in titles), titles
    assert not any("95%" in t for t in titles), titles


def test_figure_dpi_sets_the_png_size(tmp_path: Path) -> None:
    from PIL import Image

    files = _write_metrics(tmp_path / "m")
    small = write_world_paper_figures("bison", files, tmp_path / "s", dpi=50)[0]
    large = write_world_paper_figures("bison", files, tmp_path / "l", dpi=100)[0]
    with Image.open(small) as a, Image.open(large) as b:
        assert b.size[0] == 2 * a.size[0] and np.isclose(b.size[1], 2 * a.size[1], atol=1)


def test_read_world_metrics_names_a_malformed_file(tmp_path: Path) -> None:
    bad = tmp_path / "bivlc" / "clip.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"model": "clip"}))
    with pytest.raises(ValueError, match=r"bivlc/clip.json.*'metrics'"):
        read_world_metrics([bad])
