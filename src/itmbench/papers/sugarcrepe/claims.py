"""SugarCrepe's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

SugarCrepe's own paper is not among the project's sources (docs/sugarcrepe.md): its claims are the sentences
BiVLC's paper states about SugarCrepe results, quoted with BiVLC's section. Each is decided on the world's
SugarCrepe metrics, on BiVLC's four models' released SugarCrepe per-instance results (`released_results`), and
where the printed numbers allow, on BiVLC's Table 3 SugarCrepe column (the published source's
bivlc/<row>/sugarcrepe, point estimates).

- `swap_hardest`: for every image-text model, the accuracy over the Swap subtypes (swap_obj and swap_att,
  pooled from their counts) is below Replace's and Add's: the categories are disjoint instances, so Swap's
  Wilson interval must lie below each other's (`papers.accuracy_claims.category_hardest`).
- `trohn_text_best_contrastive`: CLIP_TROHN-Text above every other contrastive model (pooled accuracy), by the
  paired test over the same instances where the run paired them (`report.sugarcrepe_paired`), else intervals.
- `trohn_img_improves_over_base`: CLIP_TROHN-Img above its base CLIP, tested the same way.

The role models: 'sugarcrepe_trohn_text', 'sugarcrepe_trohn_img' and 'sugarcrepe_base' in `Results.roles`, else
the first of `ROLE_NAMES` the source has (the world's model names, then the printed rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itmbench.papers.accuracy_claims import (
    above_every,
    category_hardest,
    compared,
    counted_entry,
    explain_above_every,
    explain_category_hardest,
    explain_comparison,
)
from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, undecided

CATEGORIES = {"replace": ("replace_obj", "replace_att", "replace_rel"), "swap": ("swap_obj", "swap_att"),
              "add": ("add_obj", "add_att")}  # fmt: skip
ROLE_NAMES = {
    "trohn_text": ("clip_trohn_text", "CLIP_TROHN-Text"),
    "trohn_img": ("clip_trohn_img", "CLIP_TROHN-Img"),
    "base": ("clip", "CLIP"),
}
IMAGE_TEXT_KINDS = ("contrastive", "generative")


def _role(results: Results, role: str) -> str | None:
    """A role model's name on this source (module docstring); None when it has none."""
    named = results.roles.get(f"sugarcrepe_{role}")
    if named is not None:
        return named
    have = set(results.models("sugarcrepe")) | set(results.models("bivlc"))
    return next((m for m in ROLE_NAMES[role] if m in have), None)


def _accuracy(results: Results, model: str) -> Any:
    """A model's SugarCrepe accuracy over all instances: the world's / released 'pooled', else the printed
    SugarCrepe column of BiVLC's tables (bivlc/<row>/sugarcrepe)."""
    return results.metric("sugarcrepe", model, "pooled") or results.metric("bivlc", model, "sugarcrepe")


def _models(results: Results, kinds: tuple[str, ...]) -> list[str]:
    return sorted({*results.models("sugarcrepe", kinds), *results.models("bivlc", kinds)})


def sugarcrepe_swap_hardest(results: Results, config: ClaimConfig) -> Verdict:
    """Swap's accuracy below Replace's and Add's for every image-text model (from the subtypes' counts)."""
    level = results.confidence("sugarcrepe") or config.confidence
    evidence: dict[str, Any] = {}
    verdicts = []
    for model in results.models("sugarcrepe", IMAGE_TEXT_KINDS):
        categories = {}
        for name, subsets in CATEGORIES.items():
            entries = [results.metric("sugarcrepe", model, s) for s in subsets]
            counted = [e for e in entries if e is not None and e.get("n_correct") is not None and e.get("n")]
            if counted:
                correct, n = sum(int(e["n_correct"]) for e in counted), sum(int(e["n"]) for e in counted)
                categories[name] = counted_entry(correct, n, level)
        if len(categories) < len(CATEGORIES):
            continue
        hardest, evidence[model] = category_hardest(categories, "swap", config, level)
        evidence[model]["hardest"] = hardest
        verdicts.append(hardest)
    if not verdicts:
        return undecided(
            f"no image-text model with SugarCrepe accuracy counts per subtype on source {results.source!r}"
        )
    return Verdict(all(verdicts), evidence)


def explain_swap_hardest(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'SugarCrepe's Swap accuracy is below Replace's and Add's (test) for k of m models (...)', a row per model."""
    what = "SugarCrepe's Swap accuracy is below Replace's and Add's"
    return explain_category_hardest(evidence, n, what, CATEGORIES, ("model", "Replace", "Swap", "Add", "Swap hardest"))


def sugarcrepe_trohn_text_best_contrastive(results: Results, config: ClaimConfig) -> Verdict:
    """CLIP_TROHN-Text above every other contrastive model on SugarCrepe (`above_every`)."""
    best = _role(results, "trohn_text")
    if best is None:
        return undecided(f"no SugarCrepe results of CLIP_TROHN-Text ({ROLE_NAMES['trohn_text']}) on {results.source!r}")
    others = _models(results, ("contrastive",))
    holds, evidence = above_every(
        results, "sugarcrepe", best, others, "pooled", lambda m: _accuracy(results, m), config
    )
    if holds is None:
        return undecided(f"no other contrastive model with SugarCrepe accuracy besides {best} on {results.source!r}")
    return Verdict(holds, {"best": best, **evidence})


def explain_trohn_text_best_contrastive(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'X is above k of m other contrastive models on SugarCrepe (tests)', a row per competitor."""
    return explain_above_every(evidence, n, evidence["best"], "contrastive models on SugarCrepe")


def sugarcrepe_trohn_img_improves_over_base(results: Results, config: ClaimConfig) -> Verdict:
    """CLIP_TROHN-Img's SugarCrepe accuracy above its base CLIP's (`model_above`: paired where the run paired)."""
    treated, base = _role(results, "trohn_img"), _role(results, "base")
    if treated is None or base is None:
        return undecided(
            f"needs SugarCrepe results of CLIP_TROHN-Img and of its base CLIP; source {results.source!r} has "
            f"{_models(results, ('contrastive',))}"
        )
    entries = (_accuracy(results, treated), _accuracy(results, base))
    return compared(results, "sugarcrepe", (treated, base), "pooled", entries, config, ("treated", "base"))


def explain_trohn_img_improves_over_base(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'X's accuracy a (lo–hi) is above / not above its base Y's b (test; difference)', the numbers a row."""
    treated, base = evidence["treated"], evidence["base"]
    texts = (f"{treated}'s SugarCrepe accuracy", f"its base {base}'s")
    labels = (f"{treated} (trained with synthetic images and texts)", f"{base} (its base)")
    return explain_comparison(evidence, holds, n, (treated, base), texts, labels)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "sugarcrepe",
        "swap_hardest",
        "similar to SugarCrepe, the Swap category is the hardest one for all models",
        "BiVLC Section 5.3 (Which category is the most difficult?), of SugarCrepe's results",
        sugarcrepe_swap_hardest,
        explain_swap_hardest,
    ),
    Claim(
        "sugarcrepe",
        "trohn_text_best_contrastive",
        "CLIPTROHN-Text is the best contrastive model for SugarCrepe",
        "BiVLC Section 5.3 (Table 3, SugarCrepe column)",
        sugarcrepe_trohn_text_best_contrastive,
        explain_trohn_text_best_contrastive,
    ),
    Claim(
        "sugarcrepe",
        "trohn_img_improves_over_base",
        "a contrastive model trained using synthetic images and texts significantly improves over the base model "
        "in SugarCrepe",
        "BiVLC Abstract (Table 3: CLIP_TROHN-Img vs CLIP, SugarCrepe column)",
        sugarcrepe_trohn_img_improves_over_base,
        explain_trohn_img_improves_over_base,
    ),
)
