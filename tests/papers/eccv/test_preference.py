"""ECCV Section 4.1: the Bradley-Terry scores refitted from Table D.1, D.1's labelling, and the claim."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from itmbench.papers.claims import ClaimConfig, Results, claim, claims_table, evaluate, published_results
from itmbench.papers.eccv import preference
from itmbench.papers.published import load_published


@pytest.fixture(scope="module")
def eccv() -> pd.DataFrame:
    return load_published("eccv")


def relabelled_d1(eccv: pd.DataFrame, mapping: dict[str, str]) -> pd.DataFrame:
    """The published table with D.1's row and column letters renamed by `mapping`."""
    out = eccv.copy()
    d1 = out["table"] == preference.D1
    letters = out.loc[d1, "row"].str.split(":", n=1).str[0]
    out.loc[d1, "row"] = letters.map(mapping)
    out.loc[d1, "column"] = out.loc[d1, "column"].map(mapping)
    return out


def test_the_five_rankings_metrics_are_the_printed_worked_examples():
    m = preference.ranking_metrics()
    assert m["mAP@R"].round(1).tolist() == [66.0, 12.5, 10.3, 2.5, 0.0]
    assert m["R@1"].tolist() == [0.0, 100.0, 0.0, 0.0, 0.0] and m["R@5"].tolist() == [100.0, 100.0, 0.0, 100.0, 0.0]


def test_table_d1_as_labelled_gives_the_printed_scores_to_other_rows(eccv):
    result = preference.fit(eccv, n_boot=100)
    assert result.as_printed.round(2).to_dict() == {"A": 10.66, "B": 4.89, "C": 70.85, "D": 13.15, "E": 0.44}
    assert result.reproduced and result.relabelling == {"A": "C", "B": "D", "C": "A", "D": "B", "E": "E"}
    assert result.scores.round(2).tolist() == preference.printed_scores(eccv).tolist()
    assert (result.lo < result.scores).all() and (result.scores < result.hi).all()


def test_a_table_labelled_as_the_text_needs_no_relabelling(eccv):
    swapped = relabelled_d1(eccv, {"A": "C", "B": "D", "C": "A", "D": "B", "E": "E"})
    result = preference.fit(swapped, n_boot=50)
    assert result.reproduced and result.relabelling == {t: t for t in preference.LABELS}
    assert "as labelled reproduces" in preference.section41_caption(result)


def test_no_relabelling_reproducing_the_print_keeps_the_labels(eccv):
    off = eccv.copy()
    off.loc[(off["table"] == preference.TABLE) & (off["row"] == "A"), "value"] = 71.0
    result = preference.fit(off, n_boot=50)
    assert not result.reproduced and result.relabelling == {t: t for t in preference.LABELS}
    assert "no relabelling" in preference.section41_caption(result)


def test_the_written_table_matches_every_printed_score(eccv, tmp_path):
    paths = preference.write_section41(tmp_path / "section41", eccv, n_boot=100)
    table = pd.read_csv(paths[0])
    scores = table[(table["block"] == preference.BLOCK) & (table["column"] == preference.SCORE)]
    assert scores["status"].tolist() == ["match"] * 5 and scores["d1_row"].tolist() == ["C", "D", "A", "B", "E"]
    assert "only relabelling that reproduces them is: A is D.1's row C" in paths[1].read_text(encoding="utf-8")
    again = preference.write_section41(tmp_path / "again" / "section41", eccv, n_boot=100)
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(paths, again))


def test_the_claim_holds_on_the_published_numbers_and_says_how_d1_reads():
    table = claims_table(published_results()).set_index("claim")
    row = table.loc["map_at_r_matches_human_preference"]
    evidence = json.loads(row["evidence"])
    assert row["holds"] is True and evidence["preference order"] == "A > B > C > D > E"
    assert evidence["preference order, Table D.1 as labelled"] == "C > D > A > B > E"
    assert evidence["B - C"]["difference"]["lo"] > 0


def test_the_claim_fails_when_a_difference_is_not_above_zero(eccv):
    long = preference.section41_long(preference.fit(eccv, n_boot=100))
    diffs = long["block"] == preference.DIFFERENCES
    long.loc[diffs & (long["row"] == "B - C"), "lo"] = -0.5
    check = claim("eccv", "map_at_r_matches_human_preference")
    verdict = evaluate(check, Results("published", {}, tables={"eccv/section41": long}))
    assert verdict.holds is False and verdict.evidence["B - C"]["above"] is False
    loose = evaluate(
        check, Results("published", {}, tables={"eccv/section41": long}), ClaimConfig(significant_differences=False)
    )
    assert loose.holds is True
    swapped = long.copy()
    scores = (swapped["block"] == preference.BLOCK) & (swapped["column"] == preference.SCORE)
    swapped.loc[scores & (swapped["row"] == "C"), "value"] = 20.0  # C above B: the order is not mAP@R's
    assert evaluate(check, Results("published", {}, tables={"eccv/section41": swapped})).holds is False


def test_the_world_cannot_decide_it():
    verdict = evaluate(claim("eccv", "map_at_r_matches_human_preference"), Results("world", {}))
    assert verdict.holds is None and "Table D.1" in verdict.reason
