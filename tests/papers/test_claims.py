"""Each paper's claims as executable checks: every claim on hand-made results where it holds, where it does
not, and where it cannot be decided; the world's JSON files; the published tables; the released files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from scipy.stats import binomtest

from itmbench.errors import InputError
from itmbench.papers.claims import (
    CLAIM_ORDER,
    ClaimConfig,
    Results,
    claim,
    claims_table,
    evaluate,
    explain,
    load_world_results,
    published_results,
    registered_claims,
    released_results,
    write_claims_table,
)


def m(value: float, lo: float | None = None, hi: float | None = None, n: int = 100) -> dict[str, Any]:
    entry: dict[str, Any] = {"value": value, "n": n}
    if lo is not None:
        entry.update(lo=lo, hi=hi)
    return entry


def results(
    benchmark: str, docs: dict[str, dict[str, Any]], kinds: dict[str, str] | None = None, **roles: str
) -> Results:
    return Results("hand-made", {benchmark: docs}, kinds or {}, roles)


def verdict(paper: str, claim_id: str, res: Results, config: ClaimConfig = ClaimConfig()):
    return evaluate(claim(paper, claim_id), res, config)


# --- BiVLC ------------------------------------------------------------------------------------------


def bivlc_doc(i2t: float, t2i: float) -> dict[str, Any]:
    return {"metrics": {"i2t": m(i2t), "t2i": m(t2i)}}


def test_bivlc_t2i_below_i2t() -> None:
    kinds = {"a": "contrastive", "b": "contrastive", "capper": "generative"}
    holds = results("bivlc", {"a": bivlc_doc(80, 60), "b": bivlc_doc(70, 69.9), "capper": bivlc_doc(40, 50)}, kinds)
    v = verdict("bivlc", "t2i_below_i2t", holds)
    assert v.holds is True and set(v.evidence) == {"a", "b"}  # the generative model is not checked
    assert v.evidence["a"]["gap"] == 20
    fails = results("bivlc", {"a": bivlc_doc(80, 60), "b": bivlc_doc(60, 61)}, kinds)
    assert verdict("bivlc", "t2i_below_i2t", fails).holds is False
    none = results("bivlc", {"capper": bivlc_doc(40, 50)}, kinds)
    v = verdict("bivlc", "t2i_below_i2t", none)
    assert v.holds is None and "no contrastive model" in v.reason


def test_bivlc_hard_negative_images_raise_t2i() -> None:
    docs = {"coco": bivlc_doc(80, 60), "trohn": bivlc_doc(85, 70)}
    docs["coco"]["by_type"] = {"swap": {"t2i": m(20)}}
    docs["trohn"]["by_type"] = {"swap": {"t2i": m(31)}}
    v = verdict(
        "bivlc", "hard_negative_images_raise_t2i", results("bivlc", docs, bivlc_coco="coco", bivlc_trohn_img="trohn")
    )
    assert v.holds is True and v.evidence["gain"] == 10 and v.evidence["gain swap"] == 11
    docs["trohn"]["metrics"]["t2i"] = m(59)
    v = verdict(
        "bivlc", "hard_negative_images_raise_t2i", results("bivlc", docs, bivlc_coco="coco", bivlc_trohn_img="trohn")
    )
    assert v.holds is False and v.evidence["gain"] == -1
    v = verdict(
        "bivlc", "hard_negative_images_raise_t2i", results("bivlc", docs, bivlc_coco="coco", bivlc_trohn_img="absent")
    )
    assert v.holds is None and "absent" in v.reason


def test_the_bivlc_claims_need_a_difference_beyond_chance_where_there_are_intervals() -> None:
    """'significantly lower', 'greatly benefits': a gain inside the noise does not make the claim hold."""
    kinds = {"a": "contrastive"}
    overlap = {"metrics": {"i2t": m(32.5, 29.9, 35.2), "t2i": m(32.3, 29.7, 35.1)}}
    v = verdict("bivlc", "t2i_below_i2t", results("bivlc", {"a": overlap}, kinds))
    assert v.holds is False and v.evidence["a"]["test"] == "intervals do not overlap"
    apart = {"metrics": {"i2t": m(40, 37, 43), "t2i": m(30, 27, 33)}}
    assert verdict("bivlc", "t2i_below_i2t", results("bivlc", {"a": apart}, kinds)).holds is True
    # the paired interval decides over the two marginal ones: overlapping intervals, a paired gap above 0
    overlap["metrics"]["i2t_minus_t2i"] = m(0.2, 0.05, 0.4)
    v = verdict("bivlc", "t2i_below_i2t", results("bivlc", {"a": overlap}, kinds))
    assert v.holds is True and v.evidence["a"]["test"] == "paired interval of the difference above 0"
    apart["metrics"]["i2t_minus_t2i"] = m(10, -0.5, 20)
    assert verdict("bivlc", "t2i_below_i2t", results("bivlc", {"a": apart}, kinds)).holds is False
    # the world's default run: TROHN-Img's T2I 0.25 above the control's, inside both intervals
    docs = {"coco": {"metrics": {"t2i": m(31.67, 29.08, 34.38)}}, "trohn": {"metrics": {"t2i": m(31.92, 29.33, 34.64)}}}
    res = results("bivlc", docs, bivlc_coco="coco", bivlc_trohn_img="trohn")
    v = verdict("bivlc", "hard_negative_images_raise_t2i", res)
    assert v.holds is False and v.evidence["gain"] == pytest.approx(0.25)
    assert v.evidence["test"] == "intervals do not overlap"
    v = verdict("bivlc", "hard_negative_images_raise_t2i", res, ClaimConfig(significant_differences=False))
    assert v.holds is True and v.evidence["test"] == "point estimates"
    docs["trohn"]["metrics"]["t2i"] = m(38.0, 35.1, 40.9)
    assert verdict("bivlc", "hard_negative_images_raise_t2i", res).holds is True
    # the test names the level the metrics' intervals were computed at (params.yaml score.confidence)
    for doc in docs.values():
        doc["confidence"] = 0.9
    assert verdict("bivlc", "hard_negative_images_raise_t2i", res).evidence["test"] == "intervals (90%) do not overlap"
    overlap["confidence"] = 0.95
    v = verdict("bivlc", "t2i_below_i2t", results("bivlc", {"a": overlap}, kinds))
    assert v.evidence["a"]["test"] == "paired interval (95%) of the difference above 0"


def paired_record(difference: float, lo: float, hi: float, p: float, a_only: int, b_only: int) -> dict[str, Any]:
    return {
        "n": 1000, "difference": difference, "lo": lo, "hi": hi, "p_mcnemar": p, "a_only": a_only,
        "b_only": b_only, "confidence": 0.95,
    }  # fmt: skip


def test_the_trohn_img_claim_uses_the_paired_test_where_per_instance_scores_gave_one() -> None:
    """Overlapping marginal intervals, yet a paired gain beyond chance: the paired test decides."""
    docs = {"coco": {"metrics": {"t2i": m(31.0, 28.2, 33.9)}}, "trohn": {"metrics": {"t2i": m(34.0, 31.1, 37.0)}}}
    res = Results("hand-made", {"bivlc": docs}, {}, {"bivlc_coco": "coco", "bivlc_trohn_img": "trohn"})
    assert verdict("bivlc", "hard_negative_images_raise_t2i", res).holds is False  # the intervals overlap
    paired = {"bivlc/trohn/coco/t2i": paired_record(3.0, 1.2, 4.8, 0.0021, 50, 20)}
    res = Results("hand-made", {"bivlc": docs}, {}, {"bivlc_coco": "coco", "bivlc_trohn_img": "trohn"}, paired)
    v = verdict("bivlc", "hard_negative_images_raise_t2i", res)
    assert v.holds is True
    assert v.evidence["test"] == (
        "paired over the same 1000 instances: bootstrap interval (95%) of the difference above 0 "
        "and exact McNemar p < 0.05"
    )
    assert v.evidence["paired"] == {
        "difference": {"value": 3.0, "lo": 1.2, "hi": 4.8}, "p_mcnemar": 0.0021, "n": 1000, "a_only": 50,
        "b_only": 20,
    }  # fmt: skip
    shown = explained("bivlc", "hard_negative_images_raise_t2i", res)
    assert "paired difference 3.00 (1.20–4.80), exact McNemar p = 0.002 (50 instances only trohn gets right" in (
        shown.sentence
    )
    assert ("exact McNemar p", "0.002") in shown.rows
    # both tests must reject: an interval above 0 with McNemar's p above alpha does not make the claim hold
    res.paired["bivlc/trohn/coco/t2i"] = paired_record(3.0, 0.1, 5.9, 0.06, 40, 25)
    assert verdict("bivlc", "hard_negative_images_raise_t2i", res).holds is False
    res.paired["bivlc/trohn/coco/t2i"] = paired_record(-0.5, -2.0, 1.0, 0.6, 30, 35)
    v = verdict("bivlc", "hard_negative_images_raise_t2i", res, ClaimConfig(significant_differences=False))
    assert v.holds is False and v.evidence["test"] == "point estimates over the same 1000 instances"


# --- ECCV -------------------------------------------------------------------------------------------


def eccv_doc(eccv_r1: float, original_r1: float, map_at_r: float | None = None) -> dict[str, Any]:
    doc = {"metrics": {"eccv_r1": m(eccv_r1), "original_r1": m(original_r1), "coco_1k_r1": m(original_r1)}}
    if map_at_r is not None:
        doc["metrics"]["eccv_map_at_r"] = m(map_at_r)
    return doc


# ECCV's claims: tests/papers/eccv/test_eccv_claims.py (their per-query tables); the two below read its metrics.


# --- CxC, MCIC, BISON -------------------------------------------------------------------------------


def cxc_doc(i2t: float, t2t: float, i2i: float) -> dict[str, Any]:
    return {"metrics": {"i2t/cxc/R@1": m(i2t), "t2t/cxc/R@1": m(t2t), "i2i/cxc/R@1": m(i2i)}}


def test_cxc_intramodal_below_i2t() -> None:
    assert verdict("cxc", "intramodal_below_i2t", results("cxc", {"a": cxc_doc(55, 42, 38)})).holds is True
    v = verdict("cxc", "intramodal_below_i2t", results("cxc", {"a": cxc_doc(55, 42, 38), "b": cxc_doc(5, 3, 16)}))
    assert v.holds is False and v.evidence["b"]["i2i"]["value"] == 16
    assert (
        verdict("cxc", "intramodal_below_i2t", results("cxc", {"a": {"metrics": {"i2t/cxc/R@1": m(5)}}})).holds is None
    )


def test_mcic_prior_not_uniform() -> None:
    skewed = {"answer_position_prior": {"dev": [16.7, 18.8, 20.3, 22.7, 21.6]}, "n": {"dev": 9999}}
    v = verdict("mcic", "position_prior_not_uniform", results("mcic", {"x": skewed}))
    assert v.holds is True and v.evidence["dev"]["most_frequent_position"] == 3 and v.evidence["dev"]["p"] < 1e-10
    flat = {
        "answer_position_prior": {"dev": [20.2, 19.8, 20.0, 20.1, 19.9]},
        "metrics": {"accuracy_dev": m(50, n=1000)},
    }
    v = verdict("mcic", "position_prior_not_uniform", results("mcic", {"x": flat}))
    assert v.holds is False and v.evidence["dev"]["n"] == 1000
    assert verdict("mcic", "position_prior_not_uniform", results("mcic", {"x": {"metrics": {}}})).holds is None


# --- registry, table, sources -------------------------------------------------------------------------


def test_registry_and_table(tmp_path: Path) -> None:
    n = len(registered_claims())
    assert len({(c.paper, c.id) for c in registered_claims()}) == n
    assert {c.paper for c in registered_claims()} == {"bison", "mcic", "eccv", "bivlc", "cxc", "sugarcrepe", "aro"}
    per_paper = {p: sum(c.paper == p for c in registered_claims()) for p in CLAIM_ORDER}
    assert n >= 25 and min(per_paper.values()) >= 3, per_paper  # issue 32: at least 25, at least 3 a paper
    with pytest.raises(KeyError, match="no claim"):
        claim("bivlc", "nonsense")
    table = claims_table(results("cxc", {"a": cxc_doc(55, 42, 38)}))
    assert list(table.columns) == ["paper", "claim", "text", "where", "source", "holds", "evidence", "reason"]
    assert table.set_index("claim").loc["intramodal_below_i2t", "holds"] is True
    assert table["holds"].isna().sum() == n - 1  # every other claim has nothing to check here
    assert json.loads(table.set_index("claim").loc["intramodal_below_i2t", "evidence"])["n_models"] == 1
    paths = write_claims_table(table, tmp_path / "claims", "Claims")
    md = paths[1].read_text(encoding="utf-8")
    assert md.count("| undecided |") == n - 1 and md.count("| holds |") == 1 and md.count("Undecided: ") == n - 1
    assert '{"' not in md  # the evidence is read as sentences and tables, not as JSON
    assert "for 1 of 1 non-chance models: holds." in md


def _write_world_json(root: Path, benchmark: str, model: str, doc: dict[str, Any]) -> None:
    path = root / benchmark / f"{model}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def test_world_results_are_read_from_the_metrics_folder(tmp_path: Path) -> None:
    _write_world_json(tmp_path, "bivlc", "clip", {"metrics": {"i2t": m(35, 32, 38), "t2i": m(28, 26, 31)}})
    _write_world_json(tmp_path, "bivlc", "random", {"metrics": {"i2t": m(25, 22, 28), "t2i": m(26, 23, 29)}})
    _write_world_json(tmp_path, "bison", "clip", {"metrics": {"bison": m(90.9, 88.5, 92.9, n=650)}})
    # a killed score job's temp file beside them (half-written JSON) is no metrics file
    (tmp_path / "bivlc" / ".vse.json.itmbench-tmp-host-1-abc.json").write_text('{"metrics": {', encoding="utf-8")
    world = load_world_results(tmp_path)
    assert sorted(world.metrics["bivlc"]) == ["clip", "random"]
    assert world.kind("clip") == "contrastive" and world.kind("random") == "chance"
    table = claims_table(world).set_index("claim")
    assert table.loc["t2i_below_i2t", "holds"] is True  # random's T2I > I2T does not count
    assert table.loc["r1_errors_not_errors", "holds"] is None  # BISON's claims read its tables: none here
    assert table.loc["hard_negative_images_raise_t2i", "holds"] is None
    assert "clip_trohn_img" in table.loc["hard_negative_images_raise_t2i", "reason"]
    with pytest.raises(FileNotFoundError):
        load_world_results(tmp_path / "absent")


def test_the_tables_a_papers_claims_read_are_keyed_by_paper_and_name(tmp_path: Path) -> None:
    _write_world_json(tmp_path / "metrics", "bison", "clip", {"metrics": {"bison": m(90.9, 88.5, 92.9, n=650)}})
    table = tmp_path / "tables" / "bison" / "table1.csv"
    table.parent.mkdir(parents=True)
    table.write_text("row,column,value\nclip,R@1,41.5\n", encoding="utf-8")
    world = load_world_results(tmp_path / "metrics", table_files=[table])
    assert world.table("bison", "table1").to_dict("records") == [{"row": "clip", "column": "R@1", "value": 41.5}]
    assert world.table("bison", "table2") is None and world.table("eccv", "table1") is None
    empty = tmp_path / "tables" / "eccv" / "table5.csv"
    empty.parent.mkdir(parents=True)
    empty.write_text("row,column,value\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"table5\.csv: expected a table CSV with rows"):
        load_world_results(tmp_path / "metrics", table_files=[empty])
    with pytest.raises(InputError, match=r"absent\.csv: expected a table CSV"):
        load_world_results(tmp_path / "metrics", table_files=[tmp_path / "absent.csv"])


def test_claims_on_the_published_tables() -> None:
    table = claims_table(published_results()).set_index("claim")
    assert table.loc["t2i_below_i2t", "holds"] is True
    assert set(json.loads(table.loc["t2i_below_i2t", "evidence"])) == {
        "CLIP",
        "CLIP_COCO",
        "NegCLIP",
        "GNM",
        "CLIP_TROHN-Text",
        "CLIP_TROHN-Img",
    }
    gain = json.loads(table.loc["hard_negative_images_raise_t2i", "evidence"])["gain"]
    assert table.loc["hard_negative_images_raise_t2i", "holds"] is True and gain == pytest.approx(71.84 - 63.89)
    tau = json.loads(table.loc["map_at_r_reorders_models", "evidence"])  # Table 5's printed taus, recomputed
    assert tau["n_models"] == 25 and round(tau["COCO 1K R@1 ~ ECCV mAP@R"]["tau"]["value"], 2) == 0.47
    assert round(tau["tau reference"]["value"], 2) == 0.89 and table.loc["map_at_r_reorders_models", "holds"] is True
    pmrp = json.loads(table.loc["pmrp_less_correlated", "evidence"])
    assert round(pmrp["PMRP ~ ECCV mAP@R"]["tau"]["value"], 2) == 0.20 and table.loc["pmrp_less_correlated", "holds"]
    assert table.loc["intramodal_below_i2t", "holds"] is True
    assert table.loc["trohn_img_improves_over_base", "holds"] is True  # BiVLC Table 3's SugarCrepe column
    assert table.loc["position_prior_not_uniform", "holds"] is None


def test_claims_on_the_released_files(mirror_dir: Path) -> None:
    table = claims_table(released_results(mirror_dir)).set_index("claim")
    assert table.loc["t2i_below_i2t", "holds"] is True
    assert table.loc["hard_negative_images_raise_t2i", "holds"] is True
    trohn = json.loads(table.loc["hard_negative_images_raise_t2i", "evidence"])
    assert round(trohn["gain"], 2) == pytest.approx(7.94)
    # the released per-instance results pair the two models over the same 2,933 instances
    assert trohn["test"].startswith("paired over the same 2933 instances")
    assert (trohn["paired"]["a_only"], trohn["paired"]["b_only"]) == (403, 170)
    assert trohn["paired"]["p_mcnemar"] == pytest.approx(binomtest(170, 573, 0.5).pvalue, rel=1e-3)
    assert trohn["paired"]["difference"]["lo"] > 0 and trohn["paired"]["difference"]["value"] == pytest.approx(7.9441)
    prior = json.loads(table.loc["position_prior_not_uniform", "evidence"])
    assert table.loc["position_prior_not_uniform", "holds"] is True
    assert round(prior["dev"]["shares"][3], 1) == 22.7 and prior["dev"]["n"] == 9999  # always answering 3: 22.7%
    undecided = table[table["holds"].isna()]
    # no released model outputs (ARO's: its authors release no per-item scores)
    gallery = {c.id for c in registered_claims() if c.paper in ("eccv", "cxc", "aro")}
    assert set(undecided.index) == gallery | {
        "noise_holds_trohn_img_back",  # the paper trained no TROHN-Img model without its noise
        "ffnn_bigger_is_worse",  # MCIC and BISON release no model outputs
        "vec2seq_bigger_is_better",
        "vec2seq_above_ffnn",
        "r1_errors_not_errors",
        "caption_scores_miss_a_quarter",
        "scan_t2i_outperforms",
        "features_boost_every_measure",
    }
    assert isinstance(table, pd.DataFrame)


# --- the evidence for a reader ------------------------------------------------------------------------


def explained(paper: str, claim_id: str, res: Results, config: ClaimConfig = ClaimConfig()):
    v = verdict(paper, claim_id, res, config)
    return explain(paper, claim_id, v.holds, json.dumps(v.evidence), v.reason)


def test_every_claim_reads_as_a_sentence_and_a_table() -> None:
    assert all(c.explain is not None for c in registered_claims())


def test_a_comparison_reads_as_one_sentence_ending_with_the_verdict() -> None:
    docs = {"vse": {"metrics": {"t2i": m(60.4, 56.3, 64.3)}}, "clip": {"metrics": {"t2i": m(75.0, 71.2, 78.5)}}}
    res = results("bivlc", docs, bivlc_coco="vse", bivlc_trohn_img="clip")
    shown = explained("bivlc", "hard_negative_images_raise_t2i", res)
    assert shown.sentence == (
        "clip's T2I 75.00 (71.20–78.50) is above vse's 60.40 (56.30–64.30) "
        "(test: intervals do not overlap; gain +14.60): holds."
    )  # BiVLC prints two decimals
    assert shown.header == ("number", "value")
    assert shown.rows[:3] == (
        ("vse T2I (control)", "60.40 (56.30–64.30)"),
        ("clip T2I (trained with hard negative images)", "75.00 (71.20–78.50)"),
        ("gain", "+14.60"),
    )
    docs["clip"]["metrics"]["t2i"] = m(62.0, 58.0, 66.0)
    assert explained("bivlc", "hard_negative_images_raise_t2i", res).sentence == (
        "clip's T2I 62.00 (58.00–66.00) is not above vse's 60.40 (56.30–64.30) "
        "(test: intervals do not overlap; gain +1.60): does not hold."
    )


def test_each_papers_claims_read_at_its_printed_precision() -> None:
    kinds = {"a": "contrastive", "b": "contrastive"}
    shown = explained(
        "bivlc", "t2i_below_i2t", results("bivlc", {"a": bivlc_doc(80, 60), "b": bivlc_doc(60, 61)}, kinds)
    )
    assert shown.sentence == (
        "T2I is below I2T (test: point estimates) for 1 of 2 contrastive models (a); not for b: does not hold."
    )
    assert shown.rows == (("a", "80.00", "60.00", "+20.00", "yes"), ("b", "60.00", "61.00", "-1.00", "no"))
    shown = explained("cxc", "intramodal_below_i2t", results("cxc", {"a": cxc_doc(55, 42, 38), "b": cxc_doc(5, 3, 16)}))
    assert shown.sentence == (
        "Text → Text and Image → Image R@1 are both below Image → Text R@1 (test: point estimates) for 1 of 2 "
        "non-chance models (a); not for b: does not hold."
    )  # CxC prints one decimal
    assert shown.rows[1] == ("b", "5.0", "3.0", "16.0", "no")
    swapped = {"a": eccv_doc(50, 10, 5), "b": eccv_doc(60, 20, 6), "c": eccv_doc(70, 30, 5.5)}
    shown = explained("eccv", "map_at_r_reorders_models", results("eccv", swapped))
    assert shown.sentence == (
        "Kendall's tau-b over 3 models: 1 of 1 metric pair(s) below the R@K reference (COCO 1K R@1 ~ COCO 5K R@1, "
        "tau 1.00) (test: point estimates (no per-query scores: no interval)): holds."
    )
    skewed = {"answer_position_prior": {"dev": [16.7, 18.8, 20.3, 22.7, 21.6]}, "n": {"dev": 9999}}
    shown = explained("mcic", "position_prior_not_uniform", results("mcic", {"x": skewed}))
    assert shown.sentence.startswith(
        "A chi-square test of the answer positions against the uniform prior rejects it at alpha = 0.01 on 1 of 1 "
        "splits (dev: chi2 = "
    ) and shown.sentence.endswith("): holds.")
    assert shown.rows[0][:4] == ("dev", "9999", "16.7, 18.8, 20.3, 22.7, 21.6", "3")


def test_an_undecided_claim_reads_as_its_reason_and_odd_evidence_as_its_numbers() -> None:
    two = {"a": eccv_doc(50, 10, 5), "b": eccv_doc(60, 20, 6)}
    shown = explained("eccv", "map_at_r_reorders_models", results("eccv", two))
    assert shown.sentence.startswith("Undecided: ranking needs >= 3 non-chance models") and shown.rows == (
        ("n_models", "2"),
    )
    # evidence of another shape than the claim's explainer reads: its numbers, one a row
    odd = explain(
        "bivlc", "hard_negative_images_raise_t2i", "True", '{"gain": 1.5, "x": {"value": 2, "lo": 1, "hi": 3}}'
    )
    assert odd.sentence == "The claim holds; the numbers below." and odd.rows == (
        ("gain", "1.50"),
        ("x", "2.00 (1.00–3.00)"),
    )


def test_the_markdown_reads_the_same_from_the_written_csv(tmp_path: Path) -> None:
    """Another tool reads the CSV: the evidence column stays JSON, and explains the same once read back."""
    table = claims_table(published_results())
    paths = write_claims_table(table, tmp_path / "claims", "Claims")
    back = pd.read_csv(paths[0], keep_default_na=False)
    for (_, a), (_, b) in zip(table.iterrows(), back.iterrows()):
        assert json.loads(b["evidence"]) == json.loads(a["evidence"])
        assert explain(b["paper"], b["claim"], b["holds"], b["evidence"], b["reason"]) == explain(
            a["paper"], a["claim"], a["holds"], a["evidence"], a["reason"]
        )
    md = paths[1].read_text(encoding="utf-8")
    assert "| COCO 1K R@1 ~ ECCV mAP@R | 0.47 | – | yes |" in md  # Table 5's 0.47, recomputed from Table 4
    assert "CLIP_TROHN-Img's T2I 71.84 is above CLIP_COCO's 63.89 (test: point estimates; gain +7.95" in md
