"""ARO's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

The sentences are the paper's abstract and introduction (the parts of its text that could be retrieved:
docs/aro.md), each decided on the world's ARO metrics of every image-text model (kinds contrastive and
generative), at the level of the metrics' intervals:

- `relation_not_above_chance`: "poor relational understanding", read with the introduction's "many models fail
  to perform beyond chance level": at least half of the image-text models have a VG-Relation macro accuracy
  whose interval reaches down to chance (50%): lo <= 50.
- `attribution_not_above_chance`: "can blunder when linking objects to their attributes", read the same way on
  VG-Attribution's macro accuracy.
- `order_insensitive`: "a severe lack of order sensitivity": for at least half of the image-text models, on
  COCO-Order, the true caption is chosen over its four perturbations in fewer than half of the items (the
  Wilson upper bound below 50%).
- `negclip_improves`: "composition-aware hard negative mining ... significantly improves the performance on
  tasks requiring understanding of order and compositionality": undecided until NegCLIP is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itmbench.papers.claims import (
    Claim,
    ClaimConfig,
    Explanation,
    Numbers,
    Results,
    Verdict,
    entry_evidence,
    has_interval,
    undecided,
)

IMAGE_TEXT_KINDS = ("contrastive", "generative")
CHANCE = {"vg_relation": 50.0, "vg_attribution": 50.0}
ORDER_LEVEL = 50.0  # `order_insensitive`: the true caption chosen in fewer than half of the items
TABLES = ()


def _share(results: Results, metric: str, fails: Any, what: str) -> Verdict:
    """Holds when at least half of the image-text models with an interval of `metric` fail (`fails(entry)`)."""
    evidence: dict[str, Any] = {}
    for model in results.models("aro", IMAGE_TEXT_KINDS):
        entry = results.metric("aro", model, metric)
        if has_interval(entry):
            evidence[model] = {**entry_evidence(entry), "fails": bool(fails(entry))}
    if not evidence:
        return undecided(f"no image-text model with an ARO {metric} interval on source {results.source!r}")
    failing = sum(e["fails"] for e in evidence.values())
    return Verdict(2 * failing >= len(evidence), {"metric": metric, "what": what, "models": evidence})


def relation_not_above_chance(results: Results, config: ClaimConfig) -> Verdict:
    """At least half of the image-text models not above chance on VG-Relation (macro accuracy's lo <= 50)."""
    return _share(results, "vg_relation", lambda e: e["lo"] <= CHANCE["vg_relation"], "not above chance (50%)")


def attribution_not_above_chance(results: Results, config: ClaimConfig) -> Verdict:
    """At least half of the image-text models not above chance on VG-Attribution (macro accuracy's lo <= 50)."""
    return _share(results, "vg_attribution", lambda e: e["lo"] <= CHANCE["vg_attribution"], "not above chance (50%)")


def order_insensitive(results: Results, config: ClaimConfig) -> Verdict:
    """At least half of the image-text models choose the true caption in fewer than half of COCO-Order's items."""
    return _share(results, "coco_order", lambda e: e["hi"] < ORDER_LEVEL, f"below {ORDER_LEVEL:g}%")


def negclip_improves(results: Results, config: ClaimConfig) -> Verdict:
    """NegCLIP above its base CLIP on VG-Relation, VG-Attribution and the Order sets: needs a NegCLIP model."""
    return undecided("needs NegCLIP (composition-aware hard negatives), which is not built as a baseline family yet")


def explain_undecided(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """A claim the world cannot decide yet: its reason is the sentence."""
    return Explanation("NegCLIP is not built: the claim waits for it.")


def explain_share(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'k of m image-text models are <what> on <metric>', a row per model."""
    models = evidence["models"]
    k = sum(e["fails"] for e in models.values())
    summary = f"{k} of {len(models)} image-text models are {evidence['what']} on ARO {evidence['metric']}"
    rows = tuple((m, n.entry(e), "yes" if e["fails"] else "no") for m, e in sorted(models.items()))
    return Explanation(summary, ("model", evidence["metric"], evidence["what"]), rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "aro",
        "relation_not_above_chance",
        "state-of-the-art VLMs ... have poor relational understanding",
        "Abstract; Introduction (many models fail to perform beyond chance level)",
        relation_not_above_chance,
        explain_share,
    ),
    Claim(
        "aro",
        "attribution_not_above_chance",
        "state-of-the-art VLMs ... can blunder when linking objects to their attributes",
        "Abstract; Introduction (many models fail to perform beyond chance level)",
        attribution_not_above_chance,
        explain_share,
    ),
    Claim(
        "aro",
        "order_insensitive",
        "state-of-the-art VLMs ... demonstrate a severe lack of order sensitivity",
        "Abstract",
        order_insensitive,
        explain_share,
    ),
    Claim(
        "aro",
        "negclip_improves",
        "a simple-to-implement modification of contrastive learning significantly improves the performance on tasks "
        "requiring understanding of order and compositionality",
        "Abstract (NegCLIP)",
        negclip_improves,
        explain_undecided,
    ),
)
