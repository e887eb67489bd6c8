"""CxC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, entry_evidence, undecided


def cxc_intramodal_below_i2t(results: Results, config: ClaimConfig) -> Verdict:
    """CxC t2t and i2i R@1 are below CxC i2t R@1 for every non-chance model that has all three."""
    evidence: dict[str, Any] = {}
    holds = []
    for model in results.models("cxc"):
        if results.kind(model) == "chance":
            continue
        entries = {task: results.metric("cxc", model, f"{task}/cxc/R@1") for task in ("i2t", "t2t", "i2i")}
        if any(e is None for e in entries.values()):
            continue
        evidence[model] = {task: entry_evidence(e) for task, e in entries.items()}
        i2t = entries["i2t"]["value"]
        holds.append(entries["t2t"]["value"] < i2t and entries["i2i"]["value"] < i2t)
    if not holds:
        return undecided(f"no non-chance model with CxC i2t, t2t and i2i R@1 on source {results.source!r}")
    return Verdict(all(holds), {"n_models": len(holds), **evidence})


def explain_intramodal_below_i2t(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'Text -> Text and Image -> Image R@1 are both below Image -> Text R@1 for k of m models', a row per model."""
    models = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))

    def below(m: str) -> bool:
        e = evidence[m]
        return e["t2t"]["value"] < e["i2t"]["value"] and e["i2i"]["value"] < e["i2t"]["value"]

    fits = [m for m in models if below(m)]
    sentence = (
        f"Text → Text and Image → Image R@1 are both below Image → Text R@1 (point estimates) for {len(fits)} "
        f"of {len(models)} non-chance models"
    )
    if fits and len(fits) < len(models):
        sentence += f" ({', '.join(fits)}); not for {', '.join(m for m in models if m not in fits)}"
    rows = tuple(
        (
            m,
            n.entry(evidence[m]["i2t"]),
            n.entry(evidence[m]["t2t"]),
            n.entry(evidence[m]["i2i"]),
            "yes" if m in fits else "no",
        )
        for m in models
    )
    return Explanation(
        sentence, ("model", "Image → Text R@1", "Text → Text R@1", "Image → Image R@1", "both below"), rows
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "cxc",
        "intramodal_below_i2t",
        "intramodal retrieval (Text -> Text, Image -> Image) scores below Image -> Text retrieval on CxC",
        "Tables 2-4, as the tables show it (R@1)",
        cxc_intramodal_below_i2t,
        explain_intramodal_below_i2t,
    ),
)
