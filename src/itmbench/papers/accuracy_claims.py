"""Checks the accuracy benchmarks' claims share (BISON, MCIC-COCO, BiVLC, SugarCrepe): one model above another,
one model above every competitor, one category below the others.

- `model_above`: model A's accuracy above model B's on one benchmark metric. Where the run paired the two
  models over the same instances (`itmbench paired-tests`, read either way round by `papers.paired.pair_test`)
  the paired test decides (`papers.claims.paired_above`: the paired bootstrap interval of A - B above 0 and the
  exact McNemar p-value below 1 - level); else the two intervals must not overlap (`papers.claims.above`: a
  conservative test of two accuracies on the same instances), else (printed values) the point estimates.
- `above_every`: `model_above` against each competitor; holds only where it holds against every one.
- `category_hardest`: a category's accuracy below every other category's, per model. Categories are disjoint
  sets of instances, so no pairing exists: the category's interval must lie below each other's (Wilson,
  from the counts when the metrics carry them), a test of two independent proportions that errs on the side of
  "not shown"; without intervals, the point estimates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from itmbench.metrics.intervals import wilson_interval
from itmbench.papers import claims as engine
from itmbench.papers.claims import ClaimConfig, Explanation, Numbers, Results, Verdict
from itmbench.papers.paired import pair_test


def model_above(
    results: Results,
    benchmark: str,
    a: str,
    b: str,
    metric: str,
    entry_a: Mapping[str, Any],
    entry_b: Mapping[str, Any],
    config: ClaimConfig,
) -> tuple[bool, dict[str, Any]]:
    """Whether A's accuracy is above B's (module docstring), and the evidence: both entries, the difference, the
    test, and the paired test's numbers where there is one."""
    evidence: dict[str, Any] = {
        "A": engine.entry_evidence(entry_a),
        "B": engine.entry_evidence(entry_b),
        "difference": round(float(entry_a["value"]) - float(entry_b["value"]), 4),
    }
    test = pair_test(results.paired, benchmark, a, b, metric)
    if test is not None:
        evidence["paired"] = engine.paired_evidence(test)
        holds, evidence["test"] = engine.paired_above(test, config)
    else:
        holds, evidence["test"] = engine.above(entry_a, entry_b, None, config, results.confidence(benchmark))
    evidence["above"] = holds
    return holds, evidence


def compared(
    results: Results,
    benchmark: str,
    models: tuple[str, str],
    metric: str,
    entries: tuple[Any, Any],
    config: ClaimConfig,
    keys: tuple[str, str] = ("model_a", "model_b"),
) -> Verdict:
    """A claim's verdict that model A is above model B (`model_above`; the evidence names them under `keys`), or
    undecided when either has no entry."""
    (a, b), (ea, eb) = models, entries
    if ea is None or eb is None:
        have = results.models(benchmark)
        return engine.undecided(
            f"needs the {metric} of {a} and {b} on {benchmark}; source {results.source!r} has {have}"
        )
    holds, evidence = model_above(results, benchmark, a, b, metric, ea, eb, config)
    return Verdict(holds, {keys[0]: a, keys[1]: b, **evidence})


def above_every(
    results: Results,
    benchmark: str,
    model: str,
    competitors: Iterable[str],
    metric: str,
    entry: Any,
    config: ClaimConfig,
) -> tuple[bool | None, dict[str, Any]]:
    """`model_above` of `model` against each competitor (entry(model) -> its metric entry or None); None when no
    competitor has the metric. The evidence: one object per competitor, and the competitors it is not above."""
    mine = entry(model)
    per: dict[str, Any] = {}
    for other in competitors:
        theirs = entry(other)
        if other == model or mine is None or theirs is None:
            continue
        per[other] = model_above(results, benchmark, model, other, metric, mine, theirs, config)[1]
    if not per:
        return None, per
    not_above = sorted(m for m, e in per.items() if not e["above"])
    return not not_above, {"competitors": per, "not_above": not_above}


def counted_entry(correct: int, n: int, confidence: float) -> dict[str, float]:
    """An accuracy entry {value, lo, hi, n} (%) from counts, with its Wilson interval at `confidence`."""
    lo, hi = wilson_interval(correct, n, confidence)
    return {"value": 100.0 * correct / n, "lo": 100.0 * lo, "hi": 100.0 * hi, "n": n}


def category_hardest(
    categories: Mapping[str, Mapping[str, Any]], hardest: str, config: ClaimConfig, level: float | None
) -> tuple[bool, dict[str, Any]]:
    """Whether `hardest`'s accuracy is below every other category's (`above(other, hardest)`), and the evidence:
    each category's entry, and the categories it is not below."""
    mine = categories[hardest]
    evidence: dict[str, Any] = {name: engine.entry_evidence(e) for name, e in sorted(categories.items())}
    not_below = []
    test = ""
    for name, other in sorted(categories.items()):
        if name == hardest:
            continue
        below, test = engine.above(other, mine, None, config, level)
        if not below:
            not_below.append(name)
    evidence["not_below"] = not_below
    evidence["test"] = test
    return not not_below, evidence


# --- how their evidence reads (the claims' explainers share these) --------------------------------------


def _p_text(p: Any) -> str:
    """A p-value for a reader: 3 significant digits, in scientific notation below 0.001."""
    return "–" if not isinstance(p, int | float) else (f"{p:.2e}" if p < 1e-3 else f"{p:.3f}")


def comparison_rows(
    evidence: Mapping[str, Any], a: str, b: str, n: Numbers, labels: tuple[str, str]
) -> tuple[str, list[tuple[str, str]]]:
    """A `model_above` evidence's difference as text (the paired interval where there is one) and its rows: A's and B's
    entries (labelled), the difference, and the paired test's p-value and discordant counts."""
    paired = evidence.get("paired")
    diff = n.entry(paired["difference"]) if isinstance(paired, Mapping) else n.signed(evidence["difference"])
    rows = [(labels[0], n.entry(evidence["A"])), (labels[1], n.entry(evidence["B"])), ("difference", diff)]
    if isinstance(paired, Mapping):
        rows += [
            ("exact McNemar p", _p_text(paired.get("p_mcnemar"))),
            (f"instances only {a} gets right", str(paired.get("a_only"))),
            (f"instances only {b} gets right", str(paired.get("b_only"))),
        ]
    return diff, rows


def explain_comparison(
    evidence: Mapping[str, Any],
    holds: bool,
    n: Numbers,
    models: tuple[str, str],
    texts: tuple[str, str],
    labels: tuple[str, str],
) -> Explanation:
    """'<texts[0]> a (lo–hi) is above / not above <texts[1]> b (lo–hi) (test; difference)' and `comparison_rows`
    (labels: the rows of A and B) for a `model_above` evidence of models (A, B)."""
    diff, rows = comparison_rows(evidence, *models, n, labels)
    sentence = (
        f"{texts[0]} {n.entry(evidence['A'])} is {'above' if holds else 'not above'} {texts[1]} "
        f"{n.entry(evidence['B'])} (test: {evidence['test']}; difference {diff})"
    )
    return Explanation(sentence, ("number", "value"), tuple(rows))


def explain_above_every(evidence: Mapping[str, Any], n: Numbers, lead: str, what: str) -> Explanation:
    """'<lead> is above k of m other <what> (tests); not above ...', a row per competitor (`above_every`)."""
    best, per = evidence["best"], evidence["competitors"]
    tests = sorted({str(e["test"]).split(":")[0] for e in per.values()})
    sentence = (
        f"{lead} is above {len(per) - len(evidence['not_above'])} of {len(per)} other {what} (test: {'; '.join(tests)})"
    )
    if evidence["not_above"]:
        sentence += f"; not above {', '.join(evidence['not_above'])}"
    rows = []
    for other, e in sorted(per.items()):
        paired = e.get("paired")
        diff = n.entry(paired["difference"]) if isinstance(paired, Mapping) else n.signed(e["difference"])
        p = _p_text(paired.get("p_mcnemar")) if isinstance(paired, Mapping) else "–"
        rows.append((other, n.entry(e["B"]), diff, p, "yes" if e["above"] else "no"))
    header = ("competitor", "its accuracy", f"{best} − competitor", "McNemar p", f"{best} above")
    return Explanation(sentence, header, tuple(rows))


def explain_category_hardest(
    evidence: Mapping[str, Any], n: Numbers, what: str, categories: Iterable[str], header: tuple[str, ...]
) -> Explanation:
    """'<what> is below the others (test) for k of m image-text models (...); not for ...', a row per model with
    each category's entry (evidence: one `category_hardest` object per model, with its verdict as 'hardest')."""
    categories = tuple(categories)
    models = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))
    hardest = [m for m in models if evidence[m]["hardest"]]
    tests = sorted({str(evidence[m]["test"]) for m in models})
    sentence = f"{what} (test: {'; '.join(tests)}) for {len(hardest)} of {len(models)} image-text models"
    if hardest and len(hardest) < len(models):
        sentence += f" ({', '.join(hardest)}); not for {', '.join(m for m in models if m not in hardest)}"
    rows = tuple(
        (m, *(n.entry(evidence[m].get(k)) for k in categories), "yes" if evidence[m]["hardest"] else "no")
        for m in models
    )
    return Explanation(sentence, header, rows)
