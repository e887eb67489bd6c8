"""BiVLC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

- `t2i_below_i2t`, `hard_negative_images_raise_t2i`: see their checks.
- `swap_hardest` (Section 5.3, Table 4): for every image-text model (not chance, human or a text-only one), the
  Group score of Swap is below Replace's and Add's. The categories are disjoint sets of instances, so there is no
  paired test: Swap's interval must lie below each other category's (`papers.accuracy_claims.category_hardest`).
- `noise_holds_trohn_img_back` (Section 5.3): the paper blames TROHN-Img's noise (about 61% of its generated
  images would fail its own annotators) for CLIP_TROHN-Img not learning better; the world can train the same
  model on TROHN-Img with the noise removed by the truth (`clip_trohn_img_filtered`, role
  'bivlc_trohn_img_filtered'), so the sentence is tested as: the filtered model's Group score above the
  unfiltered one's, by their paired test over the same instances (`report.bivlc_paired`), else intervals. The
  paper trained no such model: on its released and printed results the claim is undecided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itmbench.papers.accuracy_claims import category_hardest, compared, explain_category_hardest, explain_comparison
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


CATEGORIES = ("replace", "swap", "add")
IMAGE_TEXT_KINDS = ("contrastive", "generative")


def bivlc_swap_hardest(results: Results, config: ClaimConfig) -> Verdict:
    """Swap's Group score below Replace's and Add's for every image-text model (intervals; module docstring)."""
    evidence: dict[str, Any] = {}
    verdicts = []
    level = results.confidence("bivlc")
    for model in results.models("bivlc", IMAGE_TEXT_KINDS):
        entries = {k: results.metric("bivlc", model, "group", k) for k in CATEGORIES}
        if any(e is None for e in entries.values()):
            continue
        hardest, evidence[model] = category_hardest(entries, "swap", config, level)
        evidence[model]["hardest"] = hardest
        verdicts.append(hardest)
    if not verdicts:
        return undecided(f"no image-text model with BiVLC Group scores by category on source {results.source!r}")
    return Verdict(all(verdicts), {"metric": "group", **evidence})


def explain_swap_hardest(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'Swap's Group score is below Replace's and Add's (test) for k of m models (...)', a row per model."""
    header = ("model", "Replace Group", "Swap Group", "Add Group", "Swap hardest")
    return explain_category_hardest(evidence, n, "Swap's Group score is below Replace's and Add's", CATEGORIES, header)


def bivlc_noise_holds_trohn_img_back(results: Results, config: ClaimConfig) -> Verdict:
    """The TROHN-Img model trained on images checked by the truth above the unchecked one on Group (paired)."""
    noisy = results.roles.get("bivlc_trohn_img")
    clean = results.roles.get("bivlc_trohn_img_filtered", "clip_trohn_img_filtered")
    have = results.models("bivlc")
    if noisy not in have or clean not in have:
        return undecided(
            f"needs BiVLC results of a TROHN-Img model trained on noise-free images ({clean}) and of the one trained "
            f"on the generator's ({noisy}); the paper trained only the latter; source {results.source!r} has {have}"
        )
    entries = (results.metric("bivlc", clean, "group"), results.metric("bivlc", noisy, "group"))
    return compared(results, "bivlc", (clean, noisy), "group", entries, config, ("clean", "noisy"))


def explain_noise_holds_trohn_img_back(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'clean's Group a (lo–hi) is above / not above noisy's b (test; difference)', the numbers one a row."""
    clean, noisy = evidence["clean"], evidence["noisy"]
    texts = (f"{clean}'s Group (TROHN-Img without its noise)", f"{noisy}'s")
    labels = (f"{clean} Group (noise removed)", f"{noisy} Group (the generator's images)")
    return explain_comparison(evidence, holds, n, (clean, noisy), texts, labels)


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
    Claim(
        "bivlc",
        "swap_hardest",
        "similar to SugarCrepe, the Swap category is the hardest one for all models also for BiVLC",
        "Section 5.3 (Table 4), on the Group score",
        bivlc_swap_hardest,
        explain_swap_hardest,
    ),
    Claim(
        "bivlc",
        "noise_holds_trohn_img_back",
        "We think that this high noise rate in the training data prevents CLIPTROHN-Img from learning better",
        "Section 5.3 (Why is CLIPTROHN-Img still far from humans?); tested on the world's TROHN-Img without its noise",
        bivlc_noise_holds_trohn_img_back,
        explain_noise_holds_trohn_img_back,
    ),
)
