"""ECCV Caption's claims on hand-made results: where each holds, where it does not, where it cannot be decided."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from itmbench.papers.claims import ClaimConfig, Results, claim, evaluate, explain
from itmbench.papers.eccv.rank_tau import RANK_TAU_COLUMNS
from itmbench.papers.paired import GALLERY_COLUMNS


def verdict(claim_id: str, res: Results, config: ClaimConfig = ClaimConfig()):
    return evaluate(claim("eccv", claim_id), res, config)


def results(tables: dict[str, pd.DataFrame] | None = None, docs: dict[str, Any] | None = None) -> Results:
    return Results("hand-made", {"eccv": docs or {}}, {}, {}, {}, {f"eccv/{k}": v for k, v in (tables or {}).items()})


def tau_row(a: str, b: str, value: float, lo: float, hi: float, minus: tuple[str, str] = ("", "")) -> dict[str, Any]:
    common = {"n_models": 5, "models": "a b c d e", "confidence": 0.95, "n_boot": 100, "seed": 0}
    return {
        "metric_a": a,
        "metric_b": b,
        "minus_a": minus[0],
        "minus_b": minus[1],
        "value": value,
        "lo": lo,
        "hi": hi,
    } | common


def rank_tau_table(map_lo: float, pmrp_lo: float = 0.2) -> pd.DataFrame:
    ref = ("coco_1k_r1", "original_r1")
    rows = [
        tau_row(*ref, 1.0, 0.6, 1.0),
        tau_row("coco_1k_r1", "eccv_map_at_r", 0.2, -0.2, 0.6),
        tau_row(*ref, 0.8, map_lo, 1.2, minus=("coco_1k_r1", "eccv_map_at_r")),
    ]
    for other in ("coco_1k_r1", "eccv_r1", "eccv_map_at_r"):
        rows += [
            tau_row(other, "pmrp", 0.3, -0.1, 0.7),  # stored in the other order: read either way
            tau_row(*ref, 0.7, pmrp_lo, 1.1, minus=(other, "pmrp")),
        ]
    return pd.DataFrame(rows, columns=RANK_TAU_COLUMNS)


def m(value: float) -> dict[str, Any]:
    return {"value": value}


def doc(r1_1k: float, r1_5k: float, map_at_r: float, pmrp: float = 50.0, eccv_r1: float = 60.0) -> dict[str, Any]:
    names = ("coco_1k_r1", "original_r1", "eccv_map_at_r", "pmrp", "eccv_r1")
    return {"metrics": {n: m(v) for n, v in zip(names, (r1_1k, r1_5k, map_at_r, pmrp, eccv_r1))}}


def test_map_at_r_reorders_models_by_the_bootstrap_of_the_tau_difference() -> None:
    v = verdict("map_at_r_reorders_models", results({"rank_tau": rank_tau_table(0.1)}))
    assert v.holds is True and v.evidence["COCO 1K R@1 ~ ECCV mAP@R"]["reference minus"]["lo"] == 0.1
    assert "bootstrap interval (95%) over queries" in v.evidence["test"]
    v = verdict("map_at_r_reorders_models", results({"rank_tau": rank_tau_table(-0.05)}))
    assert v.holds is False
    # the point estimate alone, when significance is not asked for
    v = verdict(
        "map_at_r_reorders_models",
        results({"rank_tau": rank_tau_table(-0.05)}),
        ClaimConfig(significant_differences=False),
    )
    assert v.holds is True
    no_ref = rank_tau_table(0.1).iloc[1:]
    v = verdict("map_at_r_reorders_models", results({"rank_tau": no_ref}))
    assert v.holds is None and "no tau of COCO 1K R@1 ~ COCO 5K R@1" in v.reason


def test_map_at_r_reorders_models_on_point_estimates_without_per_query_scores() -> None:
    same = {"a": doc(10, 5, 20), "b": doc(20, 10, 10), "c": doc(30, 15, 30)}
    v = verdict("map_at_r_reorders_models", results(docs=same))
    assert v.holds is True and v.evidence["test"].startswith("point estimates")
    assert v.evidence["COCO 1K R@1 ~ ECCV mAP@R"]["tau"]["value"] == pytest.approx(1 / 3, abs=1e-4)
    aligned = {"a": doc(10, 5, 10), "b": doc(20, 10, 20), "c": doc(30, 15, 30)}
    assert verdict("map_at_r_reorders_models", results(docs=aligned)).holds is False
    two = {"a": doc(10, 5, 10), "b": doc(20, 10, 20)}
    v = verdict("map_at_r_reorders_models", results(docs=two))
    assert v.holds is None and ">= 3 non-chance models" in v.reason


def test_pmrp_less_correlated() -> None:
    v = verdict("pmrp_less_correlated", results({"rank_tau": rank_tau_table(0.1, pmrp_lo=0.05)}))
    assert v.holds is True and v.evidence["PMRP ~ ECCV R@1"]["tau"]["value"] == 0.3
    shown = explain("eccv", "pmrp_less_correlated", v.holds, v.evidence)
    assert shown.sentence.startswith("Kendall's tau-b over 5 models: 3 of 3 metric pair(s) below the R@K reference")
    assert shown.rows[1] == ("PMRP ~ COCO 1K R@1", "0.30 (-0.10–0.70)", "0.70 (0.05–1.10)", "yes")
    assert verdict("pmrp_less_correlated", results({"rank_tau": rank_tau_table(0.1, pmrp_lo=-0.05)})).holds is False
    v = verdict("pmrp_less_correlated", results({"rank_tau": rank_tau_table(0.1).iloc[:3]}))
    assert v.holds is None and "PMRP" in v.reason


def paired_row(a: str, b: str, metric: str, diff: float, lo: float, hi: float) -> dict[str, Any]:
    return {
        "benchmark": "eccv", "model_a": a, "model_b": b, "metric": metric, "n": 100, "value_a": 50 + diff,
        "value_b": 50.0, "difference": diff, "lo": lo, "hi": hi, "confidence": 0.95, "n_boot": 100, "seed": 0,
        "direction": "",
    }  # fmt: skip


def test_r1_misleads_model_order() -> None:
    reversal = pd.DataFrame(
        [
            paired_row("clip", "vse", "coco_1k_r1", 2.0, 1.0, 3.0),
            paired_row("clip", "vse", "eccv_map_at_r", -1.0, -1.5, -0.5),
            paired_row("clip_coco", "vse", "coco_1k_r1", 2.0, 1.0, 3.0),
            paired_row("clip_coco", "vse", "eccv_map_at_r", 1.0, 0.5, 1.5),
        ],
        columns=GALLERY_COLUMNS,
    )
    v = verdict("r1_misleads_model_order", results({"paired": reversal}))
    assert v.holds is True and v.evidence["n_reversed"] == 1 and v.evidence["clip vs vse"]["reversed"] is True
    same_order = reversal.assign(difference=1.0, lo=0.5, hi=1.5)
    assert verdict("r1_misleads_model_order", results({"paired": same_order})).holds is False
    not_significant = reversal.assign(hi=reversal["hi"].where(reversal["metric"] != "eccv_map_at_r", 0.1))
    assert verdict("r1_misleads_model_order", results({"paired": not_significant})).holds is False
    v = verdict("r1_misleads_model_order", results())
    assert v.holds is None and "report.eccv_paired" in v.reason
    shown = explain(
        "eccv",
        "r1_misleads_model_order",
        True,
        verdict("r1_misleads_model_order", results({"paired": reversal})).evidence,
    )
    assert shown.rows[0] == ("clip vs vse", "2.00 (1.00–3.00)", "-1.00 (-1.50–-0.50)", "yes")


def figure_e2(slope_hi: float) -> pd.DataFrame:
    rows = []
    for direction, metric, hi in (
        ("caption_to_image", "recall_at_1", -0.5),
        ("image_to_caption", "r_precision", slope_hi),
    ):
        for size, value in ((1, 8.0), (2, 5.0), (3, 3.0), (4, 1.5)):
            rows.append(
                {
                    "row": "x",
                    "column": f"|Θ| = {size}",
                    "value": value,
                    "lo": value - 1,
                    "hi": value + 1,
                    "direction": direction,
                    "metric": metric,
                    "quantity": "bias",
                    "size": size,
                    "n_subsets": 5,
                    "slope": -2.1,
                    "slope_lo": -2.5,
                    "slope_hi": hi,
                }  # fmt: skip
            )
    return pd.DataFrame(rows)


def test_bias_falls_with_annotators() -> None:
    v = verdict("bias_falls_with_annotators", results({"figureE2": figure_e2(-1.0)}))
    assert v.holds is True and v.evidence["image_to_caption r_precision"]["B by size"] == [8.0, 5.0, 3.0, 1.5]
    assert verdict("bias_falls_with_annotators", results({"figureE2": figure_e2(0.2)})).holds is False
    old = figure_e2(-1.0).drop(columns=["slope", "slope_lo", "slope_hi"])
    v = verdict("bias_falls_with_annotators", results({"figureE2": old}))
    assert v.holds is None and "no trend columns" in v.reason
    assert verdict("bias_falls_with_annotators", results()).holds is None
    shown = explain(
        "eccv",
        "bias_falls_with_annotators",
        True,
        verdict("bias_falls_with_annotators", results({"figureE2": figure_e2(-1.0)})).evidence,
    )
    assert shown.sentence.startswith("The bias B falls with the number of annotators in 2 of 2 blocks")


def audit(pm_recall_lo: float, pm_precision_hi: float) -> pd.DataFrame:
    rows = []
    for d in ("i2t", "t2i"):
        rows += [
            ("Original (COCO)", f"{d} precision", 100.0, 99.0, 100.0),
            ("Original (COCO)", f"{d} recall", 10.0, 9.5, 10.5),
            ("PM (zeta=0)", f"{d} precision", 1.0, 0.5, pm_precision_hi),
            ("PM (zeta=0)", f"{d} recall", 23.0, pm_recall_lo, 24.0),
            ("PM (zeta=0)", f"{d} positives per query", 1200.0, None, None),
        ]
    return pd.DataFrame(rows, columns=["row", "column", "value", "lo", "hi"])


def test_pm_high_recall_low_precision() -> None:
    v = verdict("pm_high_recall_low_precision", results({"audit": audit(22.0, 1.5)}))
    assert v.holds is True and v.evidence["t2i"]["PM recall"] == {"value": 23.0, "lo": 22.0, "hi": 24.0}
    assert verdict("pm_high_recall_low_precision", results({"audit": audit(10.0, 1.5)})).holds is False  # overlap
    assert verdict("pm_high_recall_low_precision", results({"audit": audit(22.0, 60.0)})).holds is False
    partial = audit(22.0, 1.5).iloc[:3]
    v = verdict("pm_high_recall_low_precision", results({"audit": partial}))
    assert v.holds is None and "no PM and original i2t" in v.reason
    assert verdict("pm_high_recall_low_precision", results()).holds is None
