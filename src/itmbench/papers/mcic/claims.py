"""MCIC-COCO's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy.stats import chisquare

from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, undecided


def mcic_prior_not_uniform(results: Results, config: ClaimConfig) -> Verdict:
    """The answer position is not uniform over the 5 options (chi-square test on every split)."""
    docs = results.metrics.get("mcic", {})
    doc = next((d for d in docs.values() if "answer_position_prior" in d), None)
    if doc is None:
        return undecided(f"no MCIC answer-position prior on source {results.source!r}")
    evidence: dict[str, Any] = {}
    rejected = []
    for split, shares in sorted(doc["answer_position_prior"].items()):
        # the released files give the counts as n[split]; the world's JSON as metrics.accuracy_<split>.n
        n = doc.get("n", {}).get(split) or doc.get("metrics", {}).get(f"accuracy_{split}", {}).get("n")
        if n is None:
            return undecided(f"MCIC split {split!r} has a prior but no instance count")
        counts = np.rint(np.asarray(shares, dtype=float) * float(n) / 100.0)
        test = chisquare(counts)
        evidence[split] = {
            "shares": [round(float(s), 4) for s in shares],
            "n": int(n),
            "chi2": round(float(test.statistic), 4),
            "p": float(test.pvalue),
            "most_frequent_position": int(np.argmax(shares)),
        }
        rejected.append(bool(test.pvalue < config.mcic_alpha))
    return Verdict(all(rejected), {"alpha": config.mcic_alpha, **evidence})


def explain_prior_not_uniform(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'A chi-square test ... rejects the uniform prior at alpha on k of m splits (...)', a row per split."""
    alpha = float(evidence.get("alpha", float("nan")))
    splits = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))
    rejected = [s for s in splits if float(evidence[s]["p"]) < alpha]
    tests = "; ".join(
        f"{s}: chi2 = {float(evidence[s]['chi2']):.2f}, p = {float(evidence[s]['p']):.2g}" for s in splits
    )
    sentence = (
        f"A chi-square test of the answer positions against the uniform prior rejects it at alpha = {alpha:g} "
        f"on {len(rejected)} of {len(splits)} splits ({tests})"
    )
    rows = tuple(
        (
            s,
            str(evidence[s]["n"]),
            ", ".join(n.value(x) for x in evidence[s]["shares"]),
            str(evidence[s]["most_frequent_position"]),
            f"{float(evidence[s]['chi2']):.2f}",
            f"{float(evidence[s]['p']):.2g}",
        )
        for s in splits
    )
    header = ("split", "instances", "answers at positions 0-4 (%)", "most frequent", "chi2", "p")
    return Explanation(sentence, header, rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "mcic",
        "position_prior_not_uniform",
        "the answer position is not uniform over the five options (the released options are sorted alphabetically)",
        "the released dev/test files (NOTES.md); the paper shows options 'in randomized order'",
        mcic_prior_not_uniform,
        explain_prior_not_uniform,
    ),
)
