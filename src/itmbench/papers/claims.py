"""Each paper's claims as executable checks over results: a registry, three result sources, one table.

A `Claim` names its paper, an id, the claim as the paper states it (or, where the paper states it
only through its tables, as the tables show it, with `where` saying so) and a check: a function of
a `Results` that returns a `Verdict` (holds: True / False / None, the evidence numbers, and the
reason when it cannot be decided). `claims_table(results)` evaluates every claim on one source.

`Results` holds metrics JSONs in the shape of the world's ``results/<source>/metrics/<benchmark>/
<model>.json`` (``{"metrics": {name: {value, lo, hi, n}}, ...}``), the kind of each model
('contrastive', 'chance', 'human', 'generative' or 'other') and the role models some claims need.
Three builders:

- `load_world_results(metrics_dir)`: the world's JSON files. Decision: every world model is a
  contrastively trained dual encoder ('contrastive') except the chance models (default: 'random');
  the role 'bivlc_coco' is 'clip_coco' (clip fine-tuned with in-batch negatives for as many epochs
  as TROHN-Img: the analogue of CLIP_COCO and the control with equal compute), or 'clip' where there
  is no 'clip_coco', and 'bivlc_trohn_img' is 'clip_trohn_img' (when a role model is absent the
  claim returns holds=None with the reason).
- `released_results(mirror)`: BiVLC metrics of the four released models (through
  `papers.bivlc.tables`), and the MCIC answer-position prior of the released dev/test files.
  ECCV, CxC and BISON release no model outputs: their claims return None on this source.
- `published_results()`: the transcribed tables (BiVLC Tables 2-3, ECCV Table 4, CxC Tables 2-4,
  BISON Tables 3-4), with the printed values (no intervals; BISON n = 54,253, its Table 2).

Decisions where the papers leave the test open (each a `ClaimConfig` field with this default):
- a comparison "A below B" holds on the point estimates; the evidence carries the intervals. The
  two BiVLC claims say more than "below": "significantly lower" and "greatly benefits". With
  `significant_differences` = True they hold only where the difference is beyond chance at the
  level the metrics' intervals were computed at (params.yaml `score.confidence`, 95% by default;
  the evidence names it): by the paired interval of the difference when the JSON has one (the world's paired
  bootstrap of I2T - T2I over the same instances: its lower bound above 0), else by the two
  intervals not overlapping (a conservative test: two models' T2I are scored on the same
  instances, but no paired interval across models is computed yet), else (printed values carry
  no interval) on the point estimates. The evidence names the test used;
- "mAP@R ranks models differently from R@1" needs at least `min_models_for_ranking` = 3 non-chance
  models (two models give tau = +-1 whatever the metrics) and uses the first R@1 metric that every
  model has among `eccv_r1_metrics` = (coco_1k_r1, original_r1): the paper's COCO 1K R@1, else the
  COCO 5K R@1 analogue;
- "the answer-position prior is not uniform": a chi-square goodness-of-fit test against the uniform
  prior on each split, rejected at `mcic_alpha` = 0.01 on every split present;
- "a caption-matching model beats chance": some non-chance model's Wilson lower bound (95%) is
  above 50% (for published values, the interval is recomputed from the printed accuracy and n).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chisquare, kendalltau

from itmbench.metrics.intervals import recorded_confidence, wilson_interval

KINDS: tuple[str, ...] = ("contrastive", "chance", "human", "generative", "other")


@dataclass(frozen=True)
class Results:
    """Metrics JSONs by benchmark and model, with each model's kind and the role models of some claims."""

    source: str
    metrics: Mapping[str, Mapping[str, Mapping[str, Any]]]
    kinds: Mapping[str, str] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)

    def models(self, benchmark: str, kinds: Iterable[str] | None = None) -> list[str]:
        """Models with results on a benchmark (sorted), optionally only those of some kinds."""
        wanted = None if kinds is None else set(kinds)
        return sorted(m for m in self.metrics.get(benchmark, {}) if wanted is None or self.kind(m) in wanted)

    def kind(self, model: str) -> str:
        """A model's kind ('other' when not stated)."""
        return self.kinds.get(model, "other")

    def metric(self, benchmark: str, model: str, name: str, group: str | None = None) -> Mapping[str, Any] | None:
        """One {value, lo, hi, n} entry (from `metrics`, or from by_type[group]); None when absent."""
        doc = self.metrics.get(benchmark, {}).get(model)
        if doc is None:
            return None
        section = doc.get("metrics", {}) if group is None else doc.get("by_type", {}).get(group, {})
        entry = section.get(name)
        return entry if isinstance(entry, Mapping) and "value" in entry else None

    def confidence(self, benchmark: str) -> float | None:
        """The level of the intervals in a benchmark's metrics JSONs (None when they do not say)."""
        return recorded_confidence(self.metrics.get(benchmark, {}).values())

    def value(self, benchmark: str, model: str, name: str) -> float | None:
        """A metric's value, or None when absent."""
        entry = self.metric(benchmark, model, name)
        return None if entry is None else float(entry["value"])


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim on one source: holds (None: cannot be decided), evidence, reason."""

    holds: bool | None
    evidence: dict[str, Any]
    reason: str = ""


@dataclass(frozen=True)
class ClaimConfig:
    """Thresholds and choices of the claim checks (see the module docstring)."""

    min_models_for_ranking: int = 3
    eccv_r1_metrics: tuple[str, ...] = ("coco_1k_r1", "original_r1")
    mcic_alpha: float = 0.01
    bison_chance: float = 50.0
    confidence: float = 0.95
    significant_differences: bool = True


@dataclass(frozen=True)
class Claim:
    """One paper's claim: where it is stated, its text, and its check over results."""

    paper: str
    id: str
    text: str
    where: str
    check: Callable[[Results, ClaimConfig], Verdict]


def _undecided(reason: str, **evidence: Any) -> Verdict:
    return Verdict(None, dict(evidence), reason)


def _has_interval(entry: Mapping[str, Any] | None) -> bool:
    return entry is not None and all(
        entry.get(name) is not None and not pd.isna(entry.get(name)) for name in ("lo", "hi")
    )


def _above(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    paired: Mapping[str, Any] | None,
    config: ClaimConfig,
    level: float | None = None,
) -> tuple[bool, str]:
    """Whether a > b, and the test that decided it: with `config.significant_differences`, the lower bound
    of the paired interval of a - b above 0, else a's interval entirely above b's; the point estimates
    when there are no intervals (or significance is not asked for). `level`: the intervals' confidence,
    named in the test when known."""
    if config.significant_differences:
        at = "" if level is None else f" ({100 * level:g}%)"
        if _has_interval(paired):
            return float(paired["lo"]) > 0, f"paired interval{at} of the difference above 0"
        if _has_interval(a) and _has_interval(b):
            return float(a["lo"]) > float(b["hi"]), f"intervals{at} do not overlap"
    return float(a["value"]) > float(b["value"]), "point estimates"


def _entry_evidence(entry: Mapping[str, Any]) -> dict[str, float]:
    out = {"value": round(float(entry["value"]), 4)}
    for name in ("lo", "hi"):
        if name in entry and entry[name] is not None and not pd.isna(entry[name]):
            out[name] = round(float(entry[name]), 4)
    return out


# --- BiVLC ------------------------------------------------------------------------------------------


def bivlc_t2i_below_i2t(results: Results, config: ClaimConfig) -> Verdict:
    """T2I significantly below I2T for every contrastive model with BiVLC results (see `_above`)."""
    models = results.models("bivlc", ["contrastive"])
    evidence: dict[str, Any] = {}
    holds = []
    for model in models:
        i2t, t2i = results.metric("bivlc", model, "i2t"), results.metric("bivlc", model, "t2i")
        if i2t is None or t2i is None:
            continue
        evidence[model] = {
            "I2T": _entry_evidence(i2t),
            "T2I": _entry_evidence(t2i),
            "gap": round(i2t["value"] - t2i["value"], 4),
        }
        paired = results.metric("bivlc", model, "i2t_minus_t2i")
        if paired is not None:
            evidence[model]["I2T-T2I paired"] = _entry_evidence(paired)
        below, test = _above(i2t, t2i, paired, config, results.confidence("bivlc"))
        evidence[model]["below"] = below
        evidence[model]["test"] = test
        holds.append(below)
    if not holds:
        return _undecided(f"no contrastive model with BiVLC I2T and T2I on source {results.source!r}")
    return Verdict(all(holds), evidence)


def bivlc_hard_negative_images_raise_t2i(results: Results, config: ClaimConfig) -> Verdict:
    """T2I of the model trained with hard-negative images (TROHN-Img) significantly above T2I of the COCO
    fine-tuned one ("greatly benefits"; see `_above`)."""
    base, treated = results.roles.get("bivlc_coco"), results.roles.get("bivlc_trohn_img")
    have = results.models("bivlc")
    missing = [
        f"{role} ({name})" for role, name in (("bivlc_coco", base), ("bivlc_trohn_img", treated)) if name not in have
    ]
    if missing:
        return _undecided(f"needs BiVLC results of {', '.join(missing)}; source {results.source!r} has {have}")
    b, t = results.metric("bivlc", base, "t2i"), results.metric("bivlc", treated, "t2i")
    if b is None or t is None:
        return _undecided("a role model has no BiVLC T2I")
    evidence = {
        f"{base} T2I": _entry_evidence(b),
        f"{treated} T2I": _entry_evidence(t),
        "gain": round(t["value"] - b["value"], 4),
    }
    for kind in ("replace", "swap", "add"):
        bk, tk = results.metric("bivlc", base, "t2i", kind), results.metric("bivlc", treated, "t2i", kind)
        if bk is not None and tk is not None:
            evidence[f"gain {kind}"] = round(tk["value"] - bk["value"], 4)
    raised, evidence["test"] = _above(t, b, None, config, results.confidence("bivlc"))
    return Verdict(raised, evidence)


# --- ECCV Caption ------------------------------------------------------------------------------------


def eccv_extended_positives_raise_recall(results: Results, config: ClaimConfig) -> Verdict:
    """ECCV R@1 (extended positives) > COCO R@1 (original positives) for every non-chance model."""
    evidence: dict[str, Any] = {}
    holds = []
    for model in results.models("eccv"):
        if results.kind(model) == "chance":
            continue
        eccv, original = results.metric("eccv", model, "eccv_r1"), results.metric("eccv", model, "original_r1")
        if eccv is None or original is None:
            continue
        evidence[model] = {"ECCV R@1": _entry_evidence(eccv), "COCO R@1": _entry_evidence(original)}
        holds.append(eccv["value"] > original["value"])
    if not holds:
        return _undecided(f"no non-chance model with ECCV R@1 and COCO R@1 on source {results.source!r}")
    return Verdict(all(holds), {"n_models": len(holds), "n_raised": int(sum(holds)), **evidence})


def eccv_map_at_r_reorders_models(results: Results, config: ClaimConfig) -> Verdict:
    """Kendall tau-b between the model rankings by ECCV mAP@R and by R@1 is below 1."""
    models = [m for m in results.models("eccv") if results.kind(m) != "chance"]
    usable = [m for m in models if results.value("eccv", m, "eccv_map_at_r") is not None]
    r1 = next((r for r in config.eccv_r1_metrics if all(results.value("eccv", m, r) is not None for m in usable)), None)
    if not usable or r1 is None:
        return _undecided(
            f"no non-chance model with ECCV mAP@R and an R@1 among {list(config.eccv_r1_metrics)} "
            f"on source {results.source!r}"
        )
    if len(usable) < config.min_models_for_ranking:
        return _undecided(
            f"ranking needs >= {config.min_models_for_ranking} non-chance models with ECCV results; "
            f"source {results.source!r} has {len(usable)} ({usable})",
            n_models=len(usable),
        )
    x = [results.value("eccv", m, "eccv_map_at_r") for m in usable]
    y = [results.value("eccv", m, r1) for m in usable]
    tau = float(kendalltau(x, y, variant="b").statistic)
    return Verdict(bool(tau < 1), {"tau_b": round(tau, 4), "r1_metric": r1, "n_models": len(usable)})


# --- CxC ---------------------------------------------------------------------------------------------


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
        evidence[model] = {task: _entry_evidence(e) for task, e in entries.items()}
        i2t = entries["i2t"]["value"]
        holds.append(entries["t2t"]["value"] < i2t and entries["i2i"]["value"] < i2t)
    if not holds:
        return _undecided(f"no non-chance model with CxC i2t, t2t and i2i R@1 on source {results.source!r}")
    return Verdict(all(holds), {"n_models": len(holds), **evidence})


# --- MCIC --------------------------------------------------------------------------------------------


def mcic_prior_not_uniform(results: Results, config: ClaimConfig) -> Verdict:
    """The answer position is not uniform over the 5 options (chi-square test on every split)."""
    docs = results.metrics.get("mcic", {})
    doc = next((d for d in docs.values() if "answer_position_prior" in d), None)
    if doc is None:
        return _undecided(f"no MCIC answer-position prior on source {results.source!r}")
    evidence: dict[str, Any] = {}
    rejected = []
    for split, shares in sorted(doc["answer_position_prior"].items()):
        # the released files give the counts as n[split]; the world's JSON as metrics.accuracy_<split>.n
        n = doc.get("n", {}).get(split) or doc.get("metrics", {}).get(f"accuracy_{split}", {}).get("n")
        if n is None:
            return _undecided(f"MCIC split {split!r} has a prior but no instance count")
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


# --- BISON -------------------------------------------------------------------------------------------


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
        evidence[model] = {**_entry_evidence(entry), "lo": round(float(lo), 4)}
        if best is None or lo > evidence[best]["lo"]:
            best = model
    if best is None:
        return _undecided(f"no non-chance model's BISON accuracy on source {results.source!r}")
    return Verdict(
        bool(evidence[best]["lo"] > config.bison_chance), {"chance": config.bison_chance, "best": best, **evidence}
    )


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
    Claim(
        "eccv",
        "extended_positives_raise_recall",
        "correcting the false negatives of MS-COCO raises R@K: ECCV Caption R@1 is above COCO R@1 for every model",
        "Table 4, as the table shows it (ECCV R@1 vs COCO 5K R@1)",
        eccv_extended_positives_raise_recall,
    ),
    Claim(
        "eccv",
        "map_at_r_reorders_models",
        "the rankings change when we shift to the ECCV mAP@R (COCO R@1 and ECCV mAP@R show a low correlation)",
        "Abstract, Section 5 (Table 5: tau = 0.47 for COCO 1K R@1)",
        eccv_map_at_r_reorders_models,
    ),
    Claim(
        "cxc",
        "intramodal_below_i2t",
        "intramodal retrieval (Text -> Text, Image -> Image) scores below Image -> Text retrieval on CxC",
        "Tables 2-4, as the tables show it (R@1)",
        cxc_intramodal_below_i2t,
    ),
    Claim(
        "mcic",
        "position_prior_not_uniform",
        "the answer position is not uniform over the five options (the released options are sorted alphabetically)",
        "the released dev/test files (NOTES.md); the paper shows options 'in randomized order'",
        mcic_prior_not_uniform,
    ),
    Claim(
        "bison",
        "model_beats_chance",
        "a caption-matching model beats chance (50%) on BISON",
        "Tables 3-4, as the tables show it",
        bison_model_beats_chance,
    ),
)


def claim(paper: str, claim_id: str) -> Claim:
    """One registered claim by paper and id."""
    for c in CLAIMS:
        if c.paper == paper and c.id == claim_id:
            return c
    raise KeyError(f"no claim {paper}/{claim_id}; registered: {[f'{c.paper}/{c.id}' for c in CLAIMS]}")


def evaluate(c: Claim, results: Results, config: ClaimConfig = ClaimConfig()) -> Verdict:
    """Run one claim's check on results."""
    return c.check(results, config)


def claims_table(
    results: Results, config: ClaimConfig = ClaimConfig(), papers: Iterable[str] | None = None
) -> pd.DataFrame:
    """Every registered claim on one source: paper, claim, text, where, source, holds, evidence (JSON), reason."""
    wanted = None if papers is None else set(papers)
    records = []
    for c in CLAIMS:
        if wanted is not None and c.paper not in wanted:
            continue
        verdict = evaluate(c, results, config)
        records.append(
            {
                "paper": c.paper,
                "claim": c.id,
                "text": c.text,
                "where": c.where,
                "source": results.source,
                "holds": verdict.holds,
                "evidence": json.dumps(verdict.evidence, sort_keys=True, default=float),
                "reason": verdict.reason,
            }
        )
    return pd.DataFrame.from_records(
        records, columns=["paper", "claim", "text", "where", "source", "holds", "evidence", "reason"]
    )


def write_claims_table(table: pd.DataFrame, prefix: str | os.PathLike, title: str = "Claims") -> list[Path]:
    """Write the claims table as prefix.csv (exact) and prefix.md (holds as yes / no / undecided)."""
    from itmbench.io import write_text

    prefix = Path(prefix)
    shown = {True: "yes", False: "**no**", None: "undecided"}
    lines = [f"**{title}**", "", "| paper | claim | source | holds | evidence / reason |", "|---|---|---|---|---|"]
    for r in table.itertuples(index=False):
        holds = None if r.holds is None or (isinstance(r.holds, float) and math.isnan(r.holds)) else bool(r.holds)
        detail = r.reason if holds is None else r.evidence
        lines.append(f"| {r.paper} | {r.text} | {r.source} | {shown[holds]} | {detail.replace('|', '/')} |")
    paths = [prefix.with_suffix(".csv"), prefix.with_suffix(".md")]
    write_text(paths[0], table.to_csv(index=False, lineterminator="\n"))
    write_text(paths[1], "\n".join(lines) + "\n")
    return paths


# --- result sources ------------------------------------------------------------------------------------


def load_world_results(
    metrics_dir: str | os.PathLike,
    kinds: Mapping[str, str] | None = None,
    chance_models: Iterable[str] = ("random",),
    roles: Mapping[str, str] | None = None,
    source: str = "world",
) -> Results:
    """The world's metrics JSONs (<metrics_dir>/<benchmark>/<model>.json) as Results."""
    from itmbench.io import read_json

    root = Path(metrics_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no metrics folder (expected <benchmark>/<model>.json files)")
    metrics: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob("*/*.json")):
        doc = read_json(path)
        if not isinstance(doc, Mapping):
            raise ValueError(f"{path}: expected a JSON object of metrics, got {type(doc).__name__}")
        metrics.setdefault(path.parent.name, {})[path.stem] = doc
    chance = set(chance_models)
    all_models = {m for docs in metrics.values() for m in docs}
    model_kinds = {m: ("chance" if m in chance else "contrastive") for m in all_models}
    model_kinds.update(kinds or {})
    coco = "clip_coco" if "clip_coco" in all_models else "clip"  # the control fine-tuned as long as TROHN-Img
    model_roles = {"bivlc_coco": coco, "bivlc_trohn_img": "clip_trohn_img", **(roles or {})}
    return Results(source, metrics, model_kinds, model_roles)


def released_results(mirror: str | os.PathLike, verify: bool = True) -> Results:
    """Results computed from the released files of a mirror: BiVLC's four models and MCIC's answer prior."""
    from itmbench.papers.bivlc.tables import load_released_metrics
    from itmbench.sources.released import load_released

    bivlc = load_released_metrics(mirror, verify=verify)
    prior: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    for split in ("dev", "test"):
        table = load_released(f"mcic_{split}", mirror, verify=verify)
        shares = np.bincount(table["answer_index"].to_numpy(dtype=np.int64), minlength=5)[:5] / len(table)
        prior[split] = [100 * float(s) for s in shares]
        counts[split] = len(table)
    mcic = {"(released files)": {"answer_position_prior": prior, "n": counts}}
    kinds = dict.fromkeys(bivlc, "contrastive")
    roles = {"bivlc_coco": "CLIP_COCO", "bivlc_trohn_img": "CLIP_TROHN-Img"}
    return Results("released", {"bivlc": bivlc, "mcic": mcic}, kinds, roles)


# Published model kinds (rows as transcribed); any other row is 'other'.
PUBLISHED_KINDS: dict[str, str] = {
    **dict.fromkeys(["CLIP", "CLIP_COCO", "NegCLIP", "GNM", "CLIP_TROHN-Text", "CLIP_TROHN-Img"], "contrastive"),
    **dict.fromkeys(["Open CapPa", "VQAScore-XL", "VQAScore-XXL"], "generative"),
    "Random": "chance",
    "Human": "human",
}
BISON_N = 54_253


def _published_entries(frame: pd.DataFrame, table: str, column: str, block: str = "") -> dict[str, dict[str, float]]:
    part = frame[(frame["table"] == table) & (frame["block"] == block) & (frame["column"] == column)]
    return {str(r.row): {"value": float(r.value)} for r in part.itertuples(index=False)}


def published_results() -> Results:
    """The transcribed published tables as Results (printed values; no intervals)."""
    from itmbench.papers.published import load_published

    metrics: dict[str, dict[str, Any]] = {}
    bivlc = load_published("bivlc")
    for table in ("Table 2", "Table 3"):
        for name, column in (("i2t", "I2T"), ("t2i", "T2I"), ("group", "Group"), ("sugarcrepe", "SugarCrepe")):
            for row, entry in _published_entries(bivlc, table, column).items():
                metrics.setdefault("bivlc", {}).setdefault(row, {"metrics": {}})["metrics"].setdefault(name, entry)
    for kind, block in (("replace", "Replace"), ("swap", "Swap"), ("add", "Add")):
        for name, column in (("i2t", "I2T"), ("t2i", "T2I"), ("group", "Group")):
            for row, entry in _published_entries(bivlc, "Table 4", column, block).items():
                doc = metrics["bivlc"].setdefault(row, {"metrics": {}})
                doc.setdefault("by_type", {}).setdefault(kind, {})[name] = entry
    eccv = load_published("eccv")
    for name, (block, column) in {
        "eccv_map_at_r": ("ECCV Caption", "mAP@R"),
        "eccv_r_precision": ("ECCV Caption", "R-P"),
        "eccv_r1": ("ECCV Caption", "R@1"),
        "cxc_r1": ("CxC", "R@1"),
        "coco_1k_r1": ("COCO", "1K R@1"),
        "original_r1": ("COCO", "5K R@1"),
        "pmrp": ("COCO", "PMRP"),
    }.items():
        for row, entry in _published_entries(eccv, "Table 4", column, block).items():
            metrics.setdefault("eccv", {}).setdefault(row, {"metrics": {}})["metrics"][name] = entry
    cxc = load_published("cxc")
    for name, (table, block, column) in {
        "i2t/cxc/R@1": ("Table 2", "CxC", "Image → Text R@1"),
        "t2i/cxc/R@1": ("Table 2", "CxC", "Text → Image R@1"),
        "t2t/cxc/R@1": ("Table 3", "", "Text → Text R@1"),
        "i2i/cxc/R@1": ("Table 4", "", "Image → Image R@1"),
    }.items():
        for row, entry in _published_entries(cxc, table, column, block).items():
            metrics.setdefault("cxc", {}).setdefault(row, {"metrics": {}})["metrics"][name] = entry
    bison = load_published("bison")
    for table, block in (
        ("Table 3", ""),
        ("Table 4", "Cross-entropy loss"),
        ("Table 4", "Self-critical sequence loss"),
        ("Table 4", ""),
    ):
        for row, entry in _published_entries(bison, table, "BISON", block).items():
            label = f"{row} ({block})" if block else row
            metrics.setdefault("bison", {})[label] = {"metrics": {"bison": {**entry, "n": BISON_N}}}
    kinds = dict(PUBLISHED_KINDS)
    roles = {"bivlc_coco": "CLIP_COCO", "bivlc_trohn_img": "CLIP_TROHN-Img"}
    return Results("published", metrics, kinds, roles)
