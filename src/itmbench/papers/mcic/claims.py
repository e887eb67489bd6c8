"""MCIC-COCO's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

- `position_prior_not_uniform`: a property of the released files (and of the world's build): a chi-square test.
- `ffnn_bigger_is_worse`, `vec2seq_bigger_is_better` (Section 5.3, Table 4): a trend over the size sweep the run
  writes (results/<source>/tables/mcic/table4.csv, its "world" rows). The test (`sweep_slope`): the least-squares
  slope of test accuracy on log2 of the embedding size, with a normal interval at `score.confidence` from the
  points' binomial standard errors (the table's "Test ±") taken as independent; the trend holds where the
  interval lies on its side of 0. Why not a rank test: the world sweeps three sizes, where Spearman's rho takes
  four values and a bootstrap over the points means nothing, while the slope uses each point's own uncertainty.
  Treating the points as independent is conservative: they are scored on the same test instances, so their
  errors are positively correlated and the variance of a contrast between them is smaller than assumed.
- `vec2seq_above_ffnn` (Section 5.2, Table 3): Vec2seq+FFNN above FFNN on test accuracy, by the paired test over
  the same test instances (`report.mcic_paired`), else non-overlapping intervals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chisquare

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.accuracy_claims import compared, explain_comparison
from itmbench.papers.claims import Claim, ClaimConfig, Explanation, Numbers, Results, Verdict, undecided

TABLES = ("table4",)
MIN_SWEEP_POINTS = 3


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


def sweep_slope(x: Any, y: Any, se: Any, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, float]:
    """The least-squares slope of y on x and its normal interval at `confidence`, the y's independent with standard
    errors `se`: the slope is sum(c_i y_i) with c_i = (x_i - mean x) / Sxx, so its variance is sum(c_i^2 se_i^2)."""
    from scipy.special import ndtri

    x, y, se = (np.asarray(v, dtype=float) for v in (x, y, se))
    if not (x.shape == y.shape == se.shape) or x.ndim != 1 or len(x) < 2:
        raise ValueError(
            f"sweep slope: x, y and se must be 1-d of one length >= 2; got {x.shape}, {y.shape}, {se.shape}"
        )
    centred = x - x.mean()
    sxx = float(centred @ centred)
    if sxx == 0:
        raise ValueError("sweep slope: every x is the same; expected a sweep over different sizes")
    c = centred / sxx
    slope = float(c @ y)
    half = float(ndtri(0.5 + confidence / 2)) * math.sqrt(float((c**2) @ (se**2)))
    return {"value": slope, "lo": slope - half, "hi": slope + half}


def _sweep_points(table: pd.DataFrame, model: str) -> pd.DataFrame:
    """The world rows of one model of Table 4 (row 'world <model> <sizes>'): its dim, Test and Test ± by row."""
    pattern = re.compile(rf"^world {re.escape(model)} \d")
    part = table[table["row"].astype(str).str.match(pattern)]
    wide = part.pivot_table(index="row", columns="column", values="value", aggfunc="first")
    needed = [c for c in ("dim", "Test", "Test ±") if c in wide.columns]
    return wide[needed].dropna() if len(needed) == 3 else wide.iloc[0:0]


def _size_trend(results: Results, config: ClaimConfig, model: str, sign: int) -> Verdict:
    """Test accuracy falls (sign -1) or rises (+1) with log2 of the embedding size over Table 4's world sweep."""
    table = results.table("mcic", "table4")
    if table is None:
        return undecided(f"no MCIC Table 4 (size sweep) on source {results.source!r}")
    points = _sweep_points(table, model)
    if len(points) < MIN_SWEEP_POINTS or points["dim"].nunique() < MIN_SWEEP_POINTS:
        return undecided(
            f"a trend needs >= {MIN_SWEEP_POINTS} sizes of {model} in Table 4's world rows; got {len(points)}",
            n_points=len(points),
        )
    points = points.sort_values("dim")
    level = results.confidence("mcic") or config.confidence
    slope = sweep_slope(np.log2(points["dim"].to_numpy(float)), points["Test"], points["Test ±"], level)
    holds = slope["lo"] > 0 if sign > 0 else slope["hi"] < 0
    evidence = {
        "model": model,
        "direction": "rises" if sign > 0 else "falls",
        "slope": {k: round(v, 4) for k, v in slope.items()},
        "points": {str(int(d)): round(float(t), 4) for d, t in zip(points["dim"], points["Test"])},
        "test": (
            f"least-squares slope of test accuracy on log2(embedding size), {100 * level:g}% normal interval from the "
            f"points' binomial standard errors, {'above' if sign > 0 else 'below'} 0"
        ),
    }
    return Verdict(bool(holds), evidence)


def mcic_ffnn_bigger_is_worse(results: Results, config: ClaimConfig) -> Verdict:
    """FFNN's test accuracy falls with its size (Table 4's world sweep; `_size_trend`)."""
    return _size_trend(results, config, "FFNN", -1)


def mcic_vec2seq_bigger_is_better(results: Results, config: ClaimConfig) -> Verdict:
    """Vec2seq+FFNN's test accuracy rises with its size (Table 4's world sweep; `_size_trend`)."""
    return _size_trend(results, config, "Vec2seq+FFNN", +1)


def explain_size_trend(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'X's test accuracy rises/falls with size: slope s (lo–hi) points per doubling (test)', a row per size."""
    slope = evidence["slope"]
    trend = evidence["direction"] if holds else f"does not {evidence['direction'][:-1]}"
    sentence = (
        f"{evidence['model']}'s test accuracy {trend} with its size: slope {n.entry(slope)} points per doubling of "
        f"the embedding (test: {evidence['test']})"
    )
    rows = tuple((size, n.value(acc)) for size, acc in sorted(evidence["points"].items(), key=lambda kv: int(kv[0])))
    return Explanation(sentence, ("embedding size", "test accuracy"), rows)


def mcic_vec2seq_above_ffnn(results: Results, config: ClaimConfig) -> Verdict:
    """Vec2seq+FFNN's test accuracy above FFNN's: paired over the same test instances, else intervals."""
    a = results.roles.get("mcic_vec2seq", "vec2seq")
    b = results.roles.get("mcic_ffnn", "ffnn")
    entries = (results.metric("mcic", a, "accuracy_test"), results.metric("mcic", b, "accuracy_test"))
    return compared(results, "mcic", (a, b), "accuracy_test", entries, config)


def explain_vec2seq_above_ffnn(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'A's test accuracy a (lo–hi) is above / not above B's b (lo–hi) (test; difference ...)', the numbers a row."""
    a, b = evidence["model_a"], evidence["model_b"]
    labels = (f"{a} test accuracy", f"{b} test accuracy")
    return explain_comparison(evidence, holds, n, (a, b), (f"{a}'s test accuracy", f"{b}'s"), labels)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "mcic",
        "position_prior_not_uniform",
        "the answer position is not uniform over the five options (the released options are sorted alphabetically)",
        "the released dev/test files (NOTES.md); the paper shows options 'in randomized order'",
        mcic_prior_not_uniform,
        explain_prior_not_uniform,
    ),
    Claim(
        "mcic",
        "ffnn_bigger_is_worse",
        "For the FFNN models, contrary to expectations, bigger network sizes leads to decreasing accuracy",
        "Section 5.3 (Table 4); the world's size sweep, test split",
        mcic_ffnn_bigger_is_worse,
        explain_size_trend,
    ),
    Claim(
        "mcic",
        "vec2seq_bigger_is_better",
        "for Vec2seq+FFNN models, accuracy increases with increased size in model parameters, up until the embedding "
        "dimension of the RNN model matches the embedding dimension of the Inception model",
        "Section 5.3 (Table 4); the world's size sweep, test split",
        mcic_vec2seq_bigger_is_better,
        explain_size_trend,
    ),
    Claim(
        "mcic",
        "vec2seq_above_ffnn",
        "the accuracy numbers indicate that the Vec2seq+FFNN architecture is superior to the non-recursive "
        "fully-connected FFNN architecture",
        "Section 5.2 (Table 3), test split",
        mcic_vec2seq_above_ffnn,
        explain_vec2seq_above_ffnn,
    ),
)
