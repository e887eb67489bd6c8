"""ECCV Caption's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scipy.stats import kendalltau

from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, entry_evidence, undecided


def eccv_extended_positives_raise_recall(results: Results, config: ClaimConfig) -> Verdict:
    """ECCV R@1 (extended positives) > COCO R@1 (original positives) for every non-chance model."""
    evidence: dict[str, Any] = {}
    holds = []
    for model in results.models("eccv"):
        if results.kind(model) == "chance":
            continue
        eccv, original = results.metric("eccv", model, "eccv_r1"), results.metric("eccv", model, "original_r1")
        if eccv is None or original is None:
            continue
        evidence[model] = {"ECCV R@1": entry_evidence(eccv), "COCO R@1": entry_evidence(original)}
        holds.append(eccv["value"] > original["value"])
    if not holds:
        return undecided(f"no non-chance model with ECCV R@1 and COCO R@1 on source {results.source!r}")
    return Verdict(all(holds), {"n_models": len(holds), "n_raised": int(sum(holds)), **evidence})


def eccv_map_at_r_reorders_models(results: Results, config: ClaimConfig) -> Verdict:
    """Kendall tau-b between the model rankings by ECCV mAP@R and by R@1 is below 1."""
    models = [m for m in results.models("eccv") if results.kind(m) != "chance"]
    usable = [m for m in models if results.value("eccv", m, "eccv_map_at_r") is not None]
    r1 = next((r for r in config.eccv_r1_metrics if all(results.value("eccv", m, r) is not None for m in usable)), None)
    if not usable or r1 is None:
        return undecided(
            f"no non-chance model with ECCV mAP@R and an R@1 among {list(config.eccv_r1_metrics)} "
            f"on source {results.source!r}"
        )
    if len(usable) < config.min_models_for_ranking:
        return undecided(
            f"ranking needs >= {config.min_models_for_ranking} non-chance models with ECCV results; "
            f"source {results.source!r} has {len(usable)} ({usable})",
            n_models=len(usable),
        )
    x = [results.value("eccv", m, "eccv_map_at_r") for m in usable]
    y = [results.value("eccv", m, r1) for m in usable]
    tau = float(kendalltau(x, y, variant="b").statistic)
    return Verdict(bool(tau < 1), {"tau_b": round(tau, 4), "r1_metric": r1, "n_models": len(usable)})


R1_LABELS = {"coco_1k_r1": "COCO 1K R@1", "original_r1": "COCO 5K R@1"}


def explain_extended_positives_raise_recall(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'ECCV Caption R@1 is above COCO R@1 for k of m non-chance models', a row per model."""
    models = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))
    raised = [m for m in models if evidence[m]["ECCV R@1"]["value"] > evidence[m]["COCO R@1"]["value"]]
    sentence = (
        f"ECCV Caption R@1 is above COCO R@1 (point estimates) for {evidence.get('n_raised', len(raised))} of "
        f"{evidence.get('n_models', len(models))} non-chance models"
    )
    if len(raised) < len(models):
        sentence += f"; not for {', '.join(m for m in models if m not in raised)}"
    rows = tuple(
        (m, n.entry(evidence[m]["ECCV R@1"]), n.entry(evidence[m]["COCO R@1"]), "yes" if m in raised else "no")
        for m in models
    )
    return Explanation(sentence, ("model", "ECCV R@1", "COCO R@1", "ECCV above"), rows)


def explain_map_at_r_reorders_models(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'Kendall's tau-b between the rankings by ECCV mAP@R and by R@1 is t', the three numbers."""
    r1 = R1_LABELS.get(str(evidence.get("r1_metric")), str(evidence.get("r1_metric")))
    tau = f"{float(evidence['tau_b']):.2f}"
    sentence = (
        f"Kendall's tau-b between the rankings of {evidence.get('n_models')} non-chance models by ECCV mAP@R "
        f"and by {r1} is {tau} ({'below 1: the rankings differ' if holds else 'the rankings are the same'})"
    )
    rows = (("models ranked", str(evidence.get("n_models"))), ("R@1 compared", r1), ("Kendall's tau-b", tau))
    return Explanation(sentence, ("number", "value"), rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "eccv",
        "extended_positives_raise_recall",
        "correcting the false negatives of MS-COCO raises R@K: ECCV Caption R@1 is above COCO R@1 for every model",
        "Table 4, as the table shows it (ECCV R@1 vs COCO 5K R@1)",
        eccv_extended_positives_raise_recall,
        explain_extended_positives_raise_recall,
    ),
    Claim(
        "eccv",
        "map_at_r_reorders_models",
        "the rankings change when we shift to the ECCV mAP@R (COCO R@1 and ECCV mAP@R show a low correlation)",
        "Abstract, Section 5 (Table 5: tau = 0.47 for COCO 1K R@1)",
        eccv_map_at_r_reorders_models,
        explain_map_at_r_reorders_models,
    ),
)
