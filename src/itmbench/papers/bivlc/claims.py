"""BiVLC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from typing import Any

from itmbench.papers.claims import Claim, ClaimConfig, Results, Verdict, above, entry_evidence, undecided


def bivlc_t2i_below_i2t(results: Results, config: ClaimConfig) -> Verdict:
    """T2I significantly below I2T for every contrastive model with BiVLC results (`papers.claims.above`)."""
    models = results.models("bivlc", ["contrastive"])
    evidence: dict[str, Any] = {}
    holds = []
    for model in models:
        i2t, t2i = results.metric("bivlc", model, "i2t"), results.metric("bivlc", model, "t2i")
        if i2t is None or t2i is None:
            continue
        evidence[model] = {
            "I2T": entry_evidence(i2t),
            "T2I": entry_evidence(t2i),
            "gap": round(i2t["value"] - t2i["value"], 4),
        }
        paired = results.metric("bivlc", model, "i2t_minus_t2i")
        if paired is not None:
            evidence[model]["I2T-T2I paired"] = entry_evidence(paired)
        below, test = above(i2t, t2i, paired, config, results.confidence("bivlc"))
        evidence[model]["below"] = below
        evidence[model]["test"] = test
        holds.append(below)
    if not holds:
        return undecided(f"no contrastive model with BiVLC I2T and T2I on source {results.source!r}")
    return Verdict(all(holds), evidence)


def bivlc_hard_negative_images_raise_t2i(results: Results, config: ClaimConfig) -> Verdict:
    """T2I of the model trained with hard-negative images (TROHN-Img) significantly above T2I of the COCO
    fine-tuned one ("greatly benefits"; see `itmbench.papers.claims.above`)."""
    base, treated = results.roles.get("bivlc_coco"), results.roles.get("bivlc_trohn_img")
    have = results.models("bivlc")
    missing = [
        f"{role} ({name})" for role, name in (("bivlc_coco", base), ("bivlc_trohn_img", treated)) if name not in have
    ]
    if missing:
        return undecided(f"needs BiVLC results of {', '.join(missing)}; source {results.source!r} has {have}")
    b, t = results.metric("bivlc", base, "t2i"), results.metric("bivlc", treated, "t2i")
    if b is None or t is None:
        return undecided("a role model has no BiVLC T2I")
    evidence = {
        f"{base} T2I": entry_evidence(b),
        f"{treated} T2I": entry_evidence(t),
        "gain": round(t["value"] - b["value"], 4),
    }
    for kind in ("replace", "swap", "add"):
        bk, tk = results.metric("bivlc", base, "t2i", kind), results.metric("bivlc", treated, "t2i", kind)
        if bk is not None and tk is not None:
            evidence[f"gain {kind}"] = round(tk["value"] - bk["value"], 4)
    raised, evidence["test"] = above(t, b, None, config, results.confidence("bivlc"))
    return Verdict(raised, evidence)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "bivlc",
        "t2i_below_i2t",
        "the T2I score is in all cases significantly lower than the I2T score, being Open CapPa the only exception",
        "Section 4 (Table 2); checked on the contrastive models",
        bivlc_t2i_below_i2t,
    ),
    Claim(
        "bivlc",
        "hard_negative_images_raise_t2i",
        "the improvement comes mainly from text-to-image retrieval, which greatly benefits from training with "
        "hard negative images",
        "Section 5.2 (Table 3: CLIP_TROHN-Img vs CLIP_COCO)",
        bivlc_hard_negative_images_raise_t2i,
    ),
)
