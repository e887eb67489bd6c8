"""BiVLC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

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
    paired_above,
    paired_evidence,
    undecided,
)


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
    fine-tuned one ("greatly benefits"): by their paired test over the same instances where the per-instance
    scores gave one (`itmbench.papers.claims.paired_above`), else `itmbench.papers.claims.above`."""
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
        "control": base,
        "treated": treated,
        f"{base} T2I": entry_evidence(b),
        f"{treated} T2I": entry_evidence(t),
        "gain": round(t["value"] - b["value"], 4),
    }
    for kind in ("replace", "swap", "add"):
        bk, tk = results.metric("bivlc", base, "t2i", kind), results.metric("bivlc", treated, "t2i", kind)
        if bk is not None and tk is not None:
            evidence[f"gain {kind}"] = round(tk["value"] - bk["value"], 4)
    paired = results.paired_test("bivlc", treated, base, "t2i")
    if paired is not None:  # the per-instance scores of both models: a paired test over the same instances
        evidence["paired"] = paired_evidence(paired)
        raised, evidence["test"] = paired_above(paired, config)
    else:
        raised, evidence["test"] = above(t, b, None, config, results.confidence("bivlc"))
    return Verdict(raised, evidence)


def _p_value(p: object) -> str:
    """A p-value for a reader: 3 significant digits, in scientific notation below 0.001."""
    if not isinstance(p, int | float):
        return "–"
    return f"{p:.2e}" if p < 1e-3 else f"{p:.3f}"


def _models(evidence: Mapping[str, Any]) -> list[str]:
    return sorted(k for k, v in evidence.items() if isinstance(v, Mapping))


def explain_t2i_below_i2t(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'T2I is below I2T (test) for k of m contrastive models (...); not for ...', a row per model."""
    models = _models(evidence)
    below = [m for m in models if evidence[m].get("below")]
    tests = sorted({str(evidence[m].get("test", "")) for m in models})
    sentence = f"T2I is below I2T (test: {'; '.join(tests)}) for {len(below)} of {len(models)} contrastive models"
    if below and len(below) < len(models):
        sentence += f" ({', '.join(below)}); not for {', '.join(m for m in models if m not in below)}"
    rows = []
    for m in models:
        e = evidence[m]
        gap = n.entry(e["I2T-T2I paired"]) if "I2T-T2I paired" in e else n.signed(e.get("gap"))
        rows.append((m, n.entry(e.get("I2T")), n.entry(e.get("T2I")), gap, "yes" if e.get("below") else "no"))
    return Explanation(sentence, ("model", "I2T", "T2I", "I2T − T2I", "T2I below"), tuple(rows))


def explain_hard_negative_images_raise_t2i(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'X's T2I a (lo–hi) is above Y's b (lo–hi) (test; gain +g; by type ...)', the numbers one a row."""
    control, treated = evidence["control"], evidence["treated"]
    by_type = [
        (k.removeprefix("gain "), evidence[k]) for k in ("gain replace", "gain swap", "gain add") if k in evidence
    ]
    sentence = (
        f"{treated}'s T2I {n.entry(evidence.get(f'{treated} T2I'))} is {'above' if holds else 'not above'} "
        f"{control}'s {n.entry(evidence.get(f'{control} T2I'))} (test: {evidence.get('test', '')}; gain "
        f"{n.signed(evidence.get('gain'))}"
    )
    if by_type:
        sentence += "; by type: " + ", ".join(f"{kind} {n.signed(g)}" for kind, g in by_type)
    paired = evidence.get("paired")
    if isinstance(paired, Mapping):
        sentence += (
            f"; paired difference {n.entry(paired.get('difference'))}, exact McNemar p = "
            f"{_p_value(paired.get('p_mcnemar'))} ({paired.get('a_only')} instances only {treated} gets right, "
            f"{paired.get('b_only')} only {control})"
        )
    rows = [
        (f"{control} T2I (control)", n.entry(evidence.get(f"{control} T2I"))),
        (f"{treated} T2I (trained with hard negative images)", n.entry(evidence.get(f"{treated} T2I"))),
        ("gain", n.signed(evidence.get("gain"))),
        *((f"gain on {kind}", n.signed(g)) for kind, g in by_type),
    ]
    if isinstance(paired, Mapping):
        rows += [
            ("paired difference (bootstrap interval)", n.entry(paired.get("difference"))),
            ("exact McNemar p", _p_value(paired.get("p_mcnemar"))),
            (f"instances only {treated} gets right", str(paired.get("a_only"))),
            (f"instances only {control} gets right", str(paired.get("b_only"))),
        ]
    return Explanation(sentence + ")", ("number", "value"), tuple(rows))


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "bivlc",
        "t2i_below_i2t",
        "the T2I score is in all cases significantly lower than the I2T score, being Open CapPa the only exception",
        "Section 4 (Table 2); checked on the contrastive models",
        bivlc_t2i_below_i2t,
        explain_t2i_below_i2t,
    ),
    Claim(
        "bivlc",
        "hard_negative_images_raise_t2i",
        "the improvement comes mainly from text-to-image retrieval, which greatly benefits from training with "
        "hard negative images",
        "Section 5.2 (Table 3: CLIP_TROHN-Img vs CLIP_COCO)",
        bivlc_hard_negative_images_raise_t2i,
        explain_hard_negative_images_raise_t2i,
    ),
)
