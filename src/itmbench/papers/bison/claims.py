"""BISON's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

Each reads a table the run writes (`TABLES`, under results/<source>/tables/bison/) and, for the system
comparison, the paired tests of BISON's items (`report.bison_paired`, rule `bison_paired`):

- `r1_errors_not_errors` (Section 2, Table 1): of the retrieval model's text-to-image R@1 "errors" (original
  positives), the share the judge (in the world: the truth) marks correct is above one half: the lower end of
  its Wilson interval (`score.confidence`) above 50%, from Table 1's counts.
- `caption_scores_miss_a_quarter` (Section 6): every captioning metric used as a BISON scorer errs at least 25%
  of the time: the upper end of each accuracy's interval (Wilson, as Section 6's table gives it) below 75%.
- `scan_t2i_outperforms` (Section 4.2, Table 3): the model with the best image-retrieval R@1 (SCAN t2i in the
  paper) is above every other image-text model (contrastive or generative) on BISON: by the paired test over
  the same BISON items where the run paired the two, else by non-overlapping intervals
  (`papers.accuracy_claims.above_every`). The paper's "in terms of all quality measures" is checked on BISON, the
  measure of this paper; the retrieval columns only pick the model.
- `features_boost_every_measure` (Appendix, Tables 6 and 7): the paper's stronger features raise every measure of
  every system. Which of the world's two image towers is the stronger is not known beforehand, so the claim's
  content is checked: for every system of Table 7 (`report.bison_feature_pairs`) one tower is above the other on
  BISON (the paired test over the same BISON items, else non-overlapping intervals) and on each retrieval
  column (non-overlapping intervals: the retrieval scores are not paired here), and it is the same tower for
  every system. A measure on which the towers do not differ, or differ the other way, fails it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.papers.accuracy_claims import above_every, counted_entry, explain_above_every, model_above
from itmbench.papers.bison.tables import TABLE3_COLUMNS, TABLE7_BLOCKS
from itmbench.papers.claims import (
    Claim,
    ClaimConfig,
    Explanation,
    Numbers,
    Results,
    Verdict,
    above,
    entry_evidence,
    undecided,
)

TABLES = ("table1", "table3", "table7", "section6")

HUMAN_CORRECT = "Recall@1 Incorrect, Human Correct"
HUMAN_INCORRECT = "Recall@1 Incorrect, Human Incorrect"
R1_COLUMN = "Image retrieval R@1"
CAPTION_ERROR_SHARE = 25.0  # Section 6: "at least 25% of the time"


def _cell(table: pd.DataFrame, row: str, column: str) -> pd.Series | None:
    part = table[(table["row"] == row) & (table["column"] == column) & table["value"].notna()]
    return None if part.empty else part.iloc[0]


def _level(results: Results, config: ClaimConfig) -> float:
    return results.confidence("bison") or config.confidence


def bison_r1_errors_not_errors(results: Results, config: ClaimConfig) -> Verdict:
    """More than half of the R@1 errors are correct retrievals: the Wilson lower bound of the share above 50%."""
    table = results.table("bison", "table1")
    if table is None:
        return undecided(
            f"no BISON Table 1 on source {results.source!r} (the run writes it for report.bison_table1_model)"
        )
    correct, wrong = _cell(table, HUMAN_CORRECT, "Number"), _cell(table, HUMAN_INCORRECT, "Number")
    if correct is None or wrong is None:
        return undecided("BISON Table 1 has no counts of R@1 errors")
    errors = int(correct["value"]) + int(wrong["value"])
    if errors == 0:
        return undecided("the retrieval model makes no R@1 error, so there is no share to judge", errors=0)
    level = _level(results, config)
    share = counted_entry(int(correct["value"]), errors, level)
    model = correct.get("model")
    evidence = {
        "model": None if model is None or pd.isna(model) else str(model),
        "errors": errors,
        "correct": int(correct["value"]),
        "share": {k: round(float(v), 4) for k, v in share.items() if k != "n"},
        "threshold": 50.0,
        "test": f"Wilson interval ({100 * level:g}%) of the share: lower end above 50%",
    }
    return Verdict(bool(share["lo"] > 50.0), evidence)


def explain_r1_errors_not_errors(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'Of model's k R@1 errors, c are correct retrievals: share s (lo–hi), lower end above/not above 50%'."""
    share = evidence["share"]
    sentence = (
        f"Of {evidence.get('model') or 'the model'}'s {evidence['errors']} text-to-image R@1 errors, "
        f"{evidence['correct']} are correct retrievals by the judge: {n.entry(share)}%, its lower end "
        f"{'above' if holds else 'not above'} 50% (test: {evidence['test']})"
    )
    rows = (
        ("R@1 errors", str(evidence["errors"])),
        ("of which correct", str(evidence["correct"])),
        ("share correct (%)", n.entry(share)),
    )
    return Explanation(sentence, ("number", "value"), rows)


def bison_caption_scores_miss_a_quarter(results: Results, config: ClaimConfig) -> Verdict:
    """Every caption metric's BISON accuracy has its interval's upper end below 75% (errs >= 25% of the time)."""
    table = results.table("bison", "section6")
    if table is None:
        return undecided(f"no BISON Section 6 table (caption metrics as BISON scorers) on source {results.source!r}")
    rows = table[(table["column"] == "BISON accuracy") & table["value"].notna()]
    if rows.empty:
        return undecided("BISON Section 6's table has no caption metric's accuracy")
    ceiling = 100.0 - CAPTION_ERROR_SHARE
    level = _level(results, config)
    evidence: dict[str, Any] = {"ceiling": ceiling}
    missed = []
    for r in rows.itertuples(index=False):
        entry = {"value": round(float(r.value), 4)}
        if not (pd.isna(r.lo) or pd.isna(r.hi)):
            entry.update(lo=round(float(r.lo), 4), hi=round(float(r.hi), 4))
        upper = entry.get("hi", entry["value"])
        evidence[str(r.row)] = {**entry, "below": bool(upper < ceiling)}
        if not upper < ceiling:
            missed.append(str(r.row))
    evidence["not_below"] = missed
    evidence["test"] = f"upper end of each accuracy's Wilson interval ({100 * level:g}%) below {ceiling:g}%"
    return Verdict(not missed, evidence)


def explain_caption_scores_miss_a_quarter(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'k of m caption metrics err at least 25% of the time (test)', a row per metric."""
    metrics = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))
    below = [m for m in metrics if evidence[m]["below"]]
    sentence = (
        f"{len(below)} of {len(metrics)} captioning metrics used as BISON scorers err at least "
        f"{100 - float(evidence['ceiling']):g}% of the time (test: {evidence['test']})"
    )
    if evidence["not_below"]:
        sentence += f"; not {', '.join(evidence['not_below'])}"
    rows = tuple((m, n.entry(evidence[m]), "yes" if evidence[m]["below"] else "no") for m in metrics)
    return Explanation(sentence, ("caption metric", "BISON accuracy", "below the ceiling"), rows)


def bison_scan_t2i_outperforms(results: Results, config: ClaimConfig) -> Verdict:
    """The best model by image-retrieval R@1 is above every other image-text model on BISON (module docstring)."""
    table = results.table("bison", "table3")
    if table is None:
        return undecided(f"no BISON Table 3 (retrieval R@1 beside BISON) on source {results.source!r}")
    if "model" not in table.columns:
        return undecided("BISON Table 3 names no model per row")
    wanted = ("contrastive", "generative")
    r1 = table[(table["column"] == R1_COLUMN) & table["value"].notna() & table["model"].notna()]
    candidates = {
        str(r.model): float(r.value)
        for r in r1.itertuples(index=False)
        if results.kind(str(r.model)) in wanted and results.metric("bison", str(r.model), "bison") is not None
    }
    if len(candidates) < 2:
        return undecided(
            f"needs two image-text models with image-retrieval R@1 and BISON accuracy; source {results.source!r} "
            f"has {sorted(candidates)}"
        )
    best = max(sorted(candidates), key=lambda m: candidates[m])
    others = [m for m in results.models("bison", wanted) if m != best]
    holds, evidence = above_every(
        results, "bison", best, others, "bison", lambda m: results.metric("bison", m, "bison"), config
    )
    if holds is None:
        return undecided(f"no other image-text model with BISON accuracy besides {best}")
    r1_best = candidates[best]
    return Verdict(holds, {"best": best, "r1": {m: round(v, 4) for m, v in sorted(candidates.items())},
                           "best_r1": round(r1_best, 4), **evidence})  # fmt: skip


def explain_scan_t2i_outperforms(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'X, best by image-retrieval R@1 (r), is above k of m other models on BISON (tests)', a row per competitor."""
    lead = f"{evidence['best']}, best by image-retrieval R@1 ({n.value(evidence['best_r1'])}),"
    return explain_above_every(evidence, n, lead, "image-text models on BISON")


def bison_features_boost_every_measure(results: Results, config: ClaimConfig) -> Verdict:
    """One image tower above the other on every measure of every Table 7 system (module docstring)."""
    table = results.table("bison", "table7")
    if table is None or "model" not in table.columns:
        return undecided(f"no BISON Table 7 (systems on two image towers) on source {results.source!r}")
    cells = table[table["block"].isin(TABLE7_BLOCKS) & table["value"].notna() & table["model"].notna()]
    if cells.empty:
        return undecided(f"BISON Table 7 has no world cells on source {results.source!r} (report.bison_feature_pairs)")
    level = _level(results, config)
    evidence: dict[str, Any] = {}
    winners: set[str] = set()

    for system, part in cells.groupby("row", sort=False):
        by = {(str(r.block), str(r.column)): r for r in part.itertuples(index=False)}
        models = {block: str(part.loc[part["block"] == block, "model"].iloc[0]) for block in TABLE7_BLOCKS}
        per: dict[str, Any] = {"models": models}
        for column in TABLE3_COLUMNS:
            if not all((block, column) in by for block in TABLE7_BLOCKS):
                return undecided(f"BISON Table 7's {system} has no {column} on both towers")
            (first, second) = (by[(block, column)] for block in TABLE7_BLOCKS)
            ea, eb = ({"value": r.value, "lo": r.lo, "hi": r.hi} for r in (first, second))
            if column == "BISON":
                a, b = models[TABLE7_BLOCKS[0]], models[TABLE7_BLOCKS[1]]
                up = model_above(results, "bison", a, b, "bison", ea, eb, config)[1]
                down = model_above(results, "bison", b, a, "bison", eb, ea, config)[1]
                first_above, second_above, test = up["above"], down["above"], up["test"]
            else:
                first_above, test = above(ea, eb, None, config, level)
                second_above = above(eb, ea, None, config, level)[0]
            tower = TABLE7_BLOCKS[0] if first_above else TABLE7_BLOCKS[1] if second_above else None
            per[column] = {
                TABLE7_BLOCKS[0]: entry_evidence(ea),
                TABLE7_BLOCKS[1]: entry_evidence(eb),
                "above": tower or "neither",
                "test": test,
            }
            winners.add(tower or "neither")
        evidence[str(system)] = per
    holds = len(winners) == 1 and "neither" not in winners
    evidence["tower above"] = ", ".join(sorted(winners))
    return Verdict(holds, evidence)


def explain_features_boost_every_measure(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'The tower above on every measure: ...', a row per (system, measure)."""
    systems = [k for k, v in evidence.items() if isinstance(v, Mapping) and "models" in v]
    sentence = (
        f"Each measure of {len(systems)} system(s) on the two image towers; the tower above: "
        f"{evidence.get('tower above')} (BISON by the paired test over the same items, retrieval by intervals)"
    )
    rows = tuple(
        (
            s,
            c,
            n.entry(evidence[s][c][TABLE7_BLOCKS[0]]),
            n.entry(evidence[s][c][TABLE7_BLOCKS[1]]),
            evidence[s][c]["above"],
        )
        for s in systems
        for c in TABLE3_COLUMNS
        if c in evidence[s]
    )
    return Explanation(sentence, ("system", "measure", *TABLE7_BLOCKS, "above"), rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "bison",
        "r1_errors_not_errors",
        "more than half of the \u201cerrors\u201d made by the SCAN t2i system are, in fact, not errors",
        "Section 2 (Table 1); the world's judge is the truth, on report.bison_table1_model's retrieval",
        bison_r1_errors_not_errors,
        explain_r1_errors_not_errors,
    ),
    Claim(
        "bison",
        "caption_scores_miss_a_quarter",
        "predictions based on captioning scores select the incorrect BISON image at least 25% of the time",
        "Section 6 (Do caption score differences provide signal for BISON?)",
        bison_caption_scores_miss_a_quarter,
        explain_caption_scores_miss_a_quarter,
    ),
    Claim(
        "bison",
        "scan_t2i_outperforms",
        "we find that the SCANt2i system outperforms the competing systems in terms of all quality measures",
        "Section 4.2 (Table 3); the world's model with the best image-retrieval R@1 stands for SCAN t2i, on BISON",
        bison_scan_t2i_outperforms,
        explain_scan_t2i_outperforms,
    ),
    Claim(
        "bison",
        "features_boost_every_measure",
        "using the ResNeXt-IG-3.5B feature provides a boost in performance for all systems across all the "
        "evaluation measures",
        "Appendix (Visual Features), Tables 6 and 7; the world's two image towers, ViT and ResNet, on Table 7",
        bison_features_boost_every_measure,
        explain_features_boost_every_measure,
    ),
)
