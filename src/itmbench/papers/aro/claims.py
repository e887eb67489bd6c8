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
  tasks requiring understanding of order and compositionality": the world's NegCLIP (model `negclip`, trainer
  negclip_aro) above both its base `clip` and `clip_ft` (clip fine-tuned by the same recipe without the hard
  negatives, the paper's CLIP-FT) on each of the four sets, by the engine's `above` (with significant
  differences asked for, the default: its interval entirely above theirs, which is conservative: a difference
  the separate intervals do not separate may still be significant). Fails where it is not; undecided where one
  of the three models has no interval.
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
    above,
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


NEGCLIP = "negclip"  # the world's NegCLIP (params.yaml models)
NEGCLIP_BASES = ("clip", "clip_ft")  # the paper's CLIP and CLIP-FT (fine-tuned on COCO without hard negatives)
ARO_SETS = ("vg_relation", "vg_attribution", "coco_order", "flickr30k_order")


def negclip_improves(results: Results, config: ClaimConfig) -> Verdict:
    """NegCLIP's interval entirely above both bases' on each of ARO's four sets."""
    sets: dict[str, Any] = {}
    for metric in ARO_SETS:
        entries = {m: results.metric("aro", m, metric) for m in (NEGCLIP, *NEGCLIP_BASES)}
        missing = [m for m, e in entries.items() if not has_interval(e)]
        if missing:
            return undecided(f"no ARO {metric} interval for {', '.join(missing)} on source {results.source!r}")
        tests = [above(entries[NEGCLIP], entries[b], None, config, results.confidence("aro")) for b in NEGCLIP_BASES]
        sets[metric] = {
            "models": {m: entry_evidence(e) for m, e in entries.items()},
            "above": all(t[0] for t in tests),
            "test": tests[0][1],
        }
    return Verdict(all(s["above"] for s in sets.values()), {"sets": sets})


def explain_negclip(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'NegCLIP's interval above clip and clip_ft's on k of 4 ARO sets', a row per set."""
    sets = evidence["sets"]
    k = sum(s["above"] for s in sets.values())
    summary = f"NegCLIP's interval above {' and '.join(NEGCLIP_BASES)}'s on {k} of {len(sets)} ARO sets"
    rows = tuple(
        (metric, *(n.entry(s["models"][m]) for m in (NEGCLIP, *NEGCLIP_BASES)), "yes" if s["above"] else "no")
        for metric, s in sets.items()
    )
    return Explanation(summary, ("set", NEGCLIP, *NEGCLIP_BASES, "above both"), rows)


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
        explain_negclip,
    ),
)
