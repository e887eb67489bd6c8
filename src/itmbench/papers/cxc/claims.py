"""CxC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from typing import Any

from itmbench.papers.claims import Claim, ClaimConfig, Results, Verdict, entry_evidence, undecided


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


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "cxc",
        "intramodal_below_i2t",
        "intramodal retrieval (Text -> Text, Image -> Image) scores below Image -> Text retrieval on CxC",
        "Tables 2-4, as the tables show it (R@1)",
        cxc_intramodal_below_i2t,
    ),
)
