"""BISON's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, entry_evidence, undecided


def bison_model_beats_chance(results: Results, config: ClaimConfig) -> Verdict:
    """Some non-chance model's BISON accuracy has its interval above 50%."""
    evidence: dict[str, Any] = {}
    best = None
    for model in results.models("bison"):
        if results.kind(model) in ("chance", "human"):
            continue
        entry = results.metric("bison", model, "bison")
        if entry is None:
            continue
        lo = entry.get("lo")
        if lo is None or pd.isna(lo):
            n = int(entry["n"])
            lo = 100 * wilson_interval(round(float(entry["value"]) * n / 100), n, config.confidence)[0]
        evidence[model] = {**entry_evidence(entry), "lo": round(float(lo), 4)}
        if best is None or lo > evidence[best]["lo"]:
            best = model
    if best is None:
        return undecided(f"no non-chance model's BISON accuracy on source {results.source!r}")
    return Verdict(
        bool(evidence[best]["lo"] > config.bison_chance), {"chance": config.bison_chance, "best": best, **evidence}
    )


def explain_model_beats_chance(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'The best model by its lower bound, X, scores a (lo–hi): its lower bound is above chance', a row per model."""
    chance = float(evidence.get("chance", 50.0))
    best = str(evidence.get("best"))
    models = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))
    e = evidence[best]
    sentence = (
        f"The best model by its interval's lower bound, {best}, scores {n.entry(e)}: its lower bound "
        f"{n.value(e['lo'])} is {'above' if holds else 'not above'} chance ({chance:g}%)"
    )
    rows = tuple(
        (
            m,
            n.entry(evidence[m]),
            n.value(evidence[m]["lo"]),
            "yes" if float(evidence[m]["lo"]) > chance else "no",
        )
        for m in models
    )
    return Explanation(sentence, ("model", "BISON accuracy", "lower bound", "above chance"), rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "bison",
        "model_beats_chance",
        "a caption-matching model beats chance (50%) on BISON",
        "Tables 3-4, as the tables show it",
        bison_model_beats_chance,
        explain_model_beats_chance,
    ),
)
