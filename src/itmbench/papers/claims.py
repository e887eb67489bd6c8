"""Each paper's claims as executable checks over results: a registry, three result sources, one table.

A `Claim` names its paper, an id, the claim as the paper states it (or, where the paper states it
only through its tables, as the tables show it, with `where` saying so) and a check: a function of
a `Results` that returns a `Verdict` (holds: True / False / None, the evidence numbers, and the
reason when it cannot be decided). `claims_table(results)` evaluates every claim on one source.

`Results` holds metrics JSONs in the shape of the world's ``results/<source>/metrics/<benchmark>/
<model>.json`` (``{"metrics": {name: {value, lo, hi, n}}, ...}``), the kind of each model
('contrastive', 'chance', 'human', 'generative' or 'other') and the role models some claims need.
Three builders:

- `load_world_results(metrics_dir, paired_files, table_files)`: the world's JSON files, the paired tests
  and the paper tables the claims read (a claims module's `TABLES`: names under results/<source>/tables/
  <paper>/, which the claims rules pass as `--table`; `Results.table(paper, name)`). Decision: every world model is a
  contrastively trained dual encoder ('contrastive') except the chance models (default: 'random');
  the role 'bivlc_coco' is 'clip_coco' (clip fine-tuned with in-batch negatives for as many epochs
  as TROHN-Img: the analogue of CLIP_COCO and the control with equal compute), or 'clip' where there
  is no 'clip_coco', and 'bivlc_trohn_img' is 'clip_trohn_img' (when a role model is absent the
  claim returns holds=None with the reason).
- `released_results(mirror)`: BiVLC metrics of the four released models (through
  `papers.bivlc.tables`), the paired test of CLIP_TROHN-Img against CLIP_COCO over their released
  per-instance results, the same four models on SugarCrepe (`papers.sugarcrepe.tables`, world-shaped metrics and
  their paired tests), and the MCIC answer-position prior of the released dev/test files.
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
  intervals not overlapping (a conservative test), else (printed values carry no interval) on the
  point estimates. A claim comparing two models on the same instances uses their paired test where
  the per-instance scores gave one (`Results.paired`, `itmbench paired-tests`; `paired_above`): the
  paired bootstrap interval of the difference above 0 and the exact McNemar p-value below 1 - level.
  The evidence names the test used;
- "mAP@R ranks models differently from R@1" needs at least `min_models_for_ranking` = 3 non-chance
  models (two models give tau = +-1 whatever the metrics) and uses the first R@1 metric that every
  model has among `eccv_r1_metrics` = (coco_1k_r1, original_r1): the paper's COCO 1K R@1, else the
  COCO 5K R@1 analogue;
- "the answer-position prior is not uniform": a chi-square goodness-of-fit test against the uniform
  prior on each split, rejected at `mcic_alpha` = 0.01 on every split present;
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, recorded_confidence
from itmbench.papers.registry import PAPERS

KINDS: tuple[str, ...] = ("contrastive", "chance", "human", "generative", "other")


@dataclass(frozen=True)
class Results:
    """Metrics JSONs by benchmark and model, with each model's kind and the role models of some claims."""

    source: str
    metrics: Mapping[str, Mapping[str, Mapping[str, Any]]]
    kinds: Mapping[str, str] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)
    # paired tests of model pairs over the same instances ("benchmark/model_a/model_b/metric" -> record of
    # `itmbench.papers.paired.RECORD_COLUMNS`), from the per-instance scores (`itmbench paired-tests`)
    paired: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # tables a paper's claims read ("<paper>/<name>" -> the table's CSV, e.g. "bison/table1"): the tables its
    # claims module declares in `TABLES` (`claims_tables`), as the source's run wrote them
    tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)

    def table(self, paper: str, name: str) -> pd.DataFrame | None:
        """One of a paper's tables (its CSV as written), or None when this source has none."""
        return self.tables.get(f"{paper}/{name}")

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

    def paired_test(self, benchmark: str, a: str, b: str, metric: str) -> Mapping[str, Any] | None:
        """The paired test of model a against model b on a metric (None when none was computed)."""
        return self.paired.get(f"{benchmark}/{a}/{b}/{metric}")

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
    confidence: float = DEFAULT_CONFIDENCE
    significant_differences: bool = True


@dataclass(frozen=True)
class Numbers:
    """How a claim's numbers are printed for a reader: at its paper's printed precision (`claim_numbers`)."""

    decimals: int = 2

    def value(self, x: Any) -> str:
        """A number at the precision ('–' when absent)."""
        return "–" if x is None or pd.isna(x) else f"{float(x):.{self.decimals}f}"

    def signed(self, x: Any) -> str:
        """A difference, with its sign."""
        return "–" if x is None or pd.isna(x) else f"{float(x):+.{self.decimals}f}"

    def entry(self, e: Mapping[str, Any] | None) -> str:
        """An evidence entry {value, lo, hi} as 'value (lo–hi)'; the value alone without both ends."""
        if e is None:
            return "–"
        if all(e.get(k) is not None and not pd.isna(e.get(k)) for k in ("lo", "hi")):
            return f"{self.value(e['value'])} ({self.value(e['lo'])}–{self.value(e['hi'])})"
        return self.value(e.get("value"))


@dataclass(frozen=True)
class Explanation:
    """A claim's evidence for a reader: one sentence and a small table of the numbers it used."""

    sentence: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()

    def markdown(self) -> str:
        """The sentence, then the table ('|' in a cell escaped)."""
        lines = [self.sentence]
        if self.header and self.rows:

            def line(cells: Iterable[str]) -> str:
                return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

            lines += ["", line(self.header), "|" + "|".join(["---"] * len(self.header)) + "|"]
            lines += [line(r) for r in self.rows]
        return "\n".join(lines) + "\n"


# A decided claim's evidence for a reader: (evidence, holds, numbers) -> the sentence without its verdict
# and the table; `explain` appends the verdict (": holds." / ": does not hold.").
Explainer = Callable[[Mapping[str, Any], bool, Numbers], Explanation]


@dataclass(frozen=True)
class Claim:
    """One paper's claim: where it is stated, its text, its check over results, and how its evidence reads."""

    paper: str
    id: str
    text: str
    where: str
    check: Callable[[Results, ClaimConfig], Verdict]
    explain: Explainer | None = None


def undecided(reason: str, **evidence: Any) -> Verdict:
    return Verdict(None, dict(evidence), reason)


def has_interval(entry: Mapping[str, Any] | None) -> bool:
    return entry is not None and all(
        entry.get(name) is not None and not pd.isna(entry.get(name)) for name in ("lo", "hi")
    )


def above(
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
        if has_interval(paired):
            return float(paired["lo"]) > 0, f"paired interval{at} of the difference above 0"
        if has_interval(a) and has_interval(b):
            return float(a["lo"]) > float(b["hi"]), f"intervals{at} do not overlap"
    return float(a["value"]) > float(b["value"]), "point estimates"


def paired_above(test: Mapping[str, Any], config: ClaimConfig) -> tuple[bool, str]:
    """Whether model A is above model B by a paired test over the same instances (`itmbench paired-tests`):
    with `config.significant_differences`, both the paired bootstrap interval of A - B above 0 and the exact
    McNemar p-value below 1 - its level; else the point estimate of the difference above 0."""
    n = int(test["n"])
    if not config.significant_differences:
        return float(test["difference"]) > 0, f"point estimates over the same {n} instances"
    level = float(test["confidence"])
    alpha = 1.0 - level
    holds = float(test["lo"]) > 0 and float(test["p_mcnemar"]) < alpha
    return holds, (
        f"paired over the same {n} instances: bootstrap interval ({100 * level:g}%) of the difference above 0 "
        f"and exact McNemar p < {alpha:g}"
    )


def paired_evidence(test: Mapping[str, Any]) -> dict[str, Any]:
    """A paired test's numbers for a claim's evidence: the difference {value, lo, hi}, McNemar p, discordant counts."""
    return {
        "difference": {
            "value": round(float(test["difference"]), 4),
            "lo": round(float(test["lo"]), 4),
            "hi": round(float(test["hi"]), 4),
        },
        "p_mcnemar": float(f"{float(test['p_mcnemar']):.4g}"),
        "n": int(test["n"]),
        "a_only": int(test["a_only"]),
        "b_only": int(test["b_only"]),
    }


def entry_evidence(entry: Mapping[str, Any]) -> dict[str, float]:
    out = {"value": round(float(entry["value"]), 4)}
    for name in ("lo", "hi"):
        if name in entry and entry[name] is not None and not pd.isna(entry[name]):
            out[name] = round(float(entry[name]), 4)
    return out


# --- the claims of every paper (each paper's `claims` module) -----------------------------------------

# The order the claims tables list the papers' claims in: every registered paper with claims, by its `claims_order`.
CLAIM_ORDER: tuple[str, ...] = tuple(
    p.name for p in sorted((p for p in PAPERS.values() if p.claims_order), key=lambda p: p.claims_order)
)


@functools.cache
def registered_claims() -> tuple[Claim, ...]:
    """Every paper's claims (``itmbench.papers.<paper>.claims.CLAIMS``), papers in `CLAIM_ORDER`."""
    from itmbench.papers.registry import paper

    return tuple(c for name in CLAIM_ORDER for c in paper(name).part("claims").CLAIMS)


def claims_tables(paper: str) -> tuple[str, ...]:
    """The tables (names under results/<source>/tables/<paper>/, without .csv) a paper's claims read: its claims
    module's `TABLES` (none when it declares none)."""
    from itmbench.papers.registry import paper as registered

    return tuple(getattr(registered(paper).part("claims"), "TABLES", ()))


def claim(paper: str, claim_id: str) -> Claim:
    """One registered claim by paper and id."""
    for c in registered_claims():
        if c.paper == paper and c.id == claim_id:
            return c
    raise KeyError(f"no claim {paper}/{claim_id}; registered: {[f'{c.paper}/{c.id}' for c in registered_claims()]}")


def evaluate(c: Claim, results: Results, config: ClaimConfig = ClaimConfig()) -> Verdict:
    """Run one claim's check on results."""
    return c.check(results, config)


VERDICTS: dict[bool | None, str] = {True: "holds", False: "does not hold", None: "undecided"}


def holds_value(value: Any) -> bool | None:
    """The claims table's holds cell (True, False, 'True', 'False', None, NaN or '') as True / False / None."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    if isinstance(value, str):
        return {"true": True, "false": False}[value.strip().lower()]
    return bool(value)


def claim_numbers(paper: str) -> Numbers:
    """The precision a paper's claims print their numbers at: its benchmark's table's (the paper's printed one)."""
    from itmbench.papers.registry import BENCHMARKS

    return Numbers(BENCHMARKS[paper].decimals if paper in BENCHMARKS else 2)


def evidence_rows(evidence: Mapping[str, Any], numbers: Numbers, prefix: str = "") -> list[tuple[str, str]]:
    """Every number of an evidence object as (name, value) rows: nested objects by path ('a / b'), an entry
    {value, lo, hi} as one cell, a list joined; what a claim without its own explainer shows."""
    rows: list[tuple[str, str]] = []
    for key, value in evidence.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and "value" in value:
            rows.append((name, numbers.entry(value)))
        elif isinstance(value, Mapping):
            rows += evidence_rows(value, numbers, f"{name} / ")
        elif isinstance(value, bool):
            rows.append((name, "yes" if value else "no"))
        elif isinstance(value, float):
            rows.append((name, numbers.value(value)))
        elif isinstance(value, list):
            rows.append((name, ", ".join(numbers.value(v) if isinstance(v, float) else str(v) for v in value)))
        else:
            rows.append((name, str(value)))
    return rows


def explain(paper: str, claim_id: str, holds: Any, evidence: Mapping[str, Any] | str, reason: str = "") -> Explanation:
    """One claim's verdict and evidence (a claims table's record: the evidence as JSON or parsed) for a reader:
    the claim's own explainer's sentence ending with the verdict ("clip's T2I 75.00 (71.20–78.50) is above
    vse's 60.40 (56.30–64.30) (test: intervals do not overlap; gain +14.60): holds.") and its table; an
    undecided claim gives its reason; a claim with no explainer, the evidence's numbers one a row. Numbers
    at the paper's printed precision."""
    verdict = holds_value(holds)
    data = json.loads(evidence) if isinstance(evidence, str) else evidence
    data = data if isinstance(data, Mapping) else {}
    numbers = claim_numbers(paper)
    generic = tuple(evidence_rows(data, numbers))
    if verdict is None:
        return Explanation(
            f"Undecided: {reason or 'no reason given'}.", ("number", "value") if generic else (), generic
        )
    try:
        explainer = claim(paper, claim_id).explain
    except KeyError:
        explainer = None
    try:
        shown = None if explainer is None else explainer(data, verdict, numbers)
    except KeyError:  # evidence of another shape than the explainer reads (written by an older check)
        shown = None
    if shown is None:
        return Explanation(f"The claim {VERDICTS[verdict]}; the numbers below.", ("number", "value"), generic)
    return Explanation(f"{shown.sentence}: {VERDICTS[verdict]}.", shown.header, shown.rows)


def claims_table(
    results: Results, config: ClaimConfig = ClaimConfig(), papers: Iterable[str] | None = None
) -> pd.DataFrame:
    """Every registered claim on one source: paper, claim, text, where, source, holds, evidence (JSON), reason."""
    wanted = None if papers is None else set(papers)
    records = []
    for c in registered_claims():
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


def claims_markdown(table: pd.DataFrame, title: str = "Claims") -> str:
    """The claims for a reader: a summary (paper, claim, source, verdict), then each claim with where the paper
    states it, its evidence as one sentence and a small table of the numbers it used (`explain`)."""
    shown = {True: "holds", False: "**does not hold**", None: "undecided"}
    lines = [f"**{title}**", "", "| paper | claim | source | verdict |", "|---|---|---|---|"]
    for r in table.itertuples(index=False):
        text = str(r.text).replace("|", "/")
        lines.append(f"| {r.paper} | {text} | {r.source} | {shown[holds_value(r.holds)]} |")
    for r in table.itertuples(index=False):
        reason = "" if not isinstance(r.reason, str) else r.reason
        lines += ["", f"**{r.paper}: {r.text}** ({r.where}; on the {r.source} results)", ""]
        lines.append(explain(r.paper, r.claim, r.holds, r.evidence, reason).markdown().rstrip("\n"))
    return "\n".join(lines) + "\n"


def write_claims_table(table: pd.DataFrame, prefix: str | os.PathLike, title: str = "Claims") -> list[Path]:
    """Write the claims table as prefix.csv (exact, the evidence as JSON) and prefix.md (`claims_markdown`)."""
    from itmbench.io import write_text

    prefix = Path(prefix)
    paths = [prefix.with_suffix(".csv"), prefix.with_suffix(".md")]
    write_text(paths[0], table.to_csv(index=False, lineterminator="\n"))
    write_text(paths[1], claims_markdown(table, title))
    return paths


# --- result sources ------------------------------------------------------------------------------------


def load_world_results(
    metrics_dir: str | os.PathLike,
    kinds: Mapping[str, str] | None = None,
    chance_models: Iterable[str] = ("random",),
    roles: Mapping[str, str] | None = None,
    source: str = "world",
    paired_files: Iterable[str | os.PathLike] = (),
    table_files: Iterable[str | os.PathLike] = (),
) -> Results:
    """The world's metrics JSONs (<metrics_dir>/<benchmark>/<model>.json) as Results, with the paired tests
    of `paired_files` (tables of `itmbench paired-tests`) and the tables of `table_files` (<paper>/<name>.csv,
    keyed "<paper>/<name>")."""
    from itmbench.papers.paired import read_paired
    from itmbench.reading import read_json

    root = Path(metrics_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no metrics folder (expected <benchmark>/<model>.json files)")
    metrics: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob("*/*.json")):
        if path.name.startswith("."):  # a hidden file is no metrics file (e.g. a killed job's temp file)
            continue
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
    return Results(source, metrics, model_kinds, model_roles, read_paired(paired_files), read_claim_tables(table_files))


def read_claim_tables(paths: Iterable[str | os.PathLike]) -> dict[str, pd.DataFrame]:
    """Table CSVs (<paper>/<name>.csv) keyed "<paper>/<name>"; a file that is not a readable, non-empty table
    is an InputError naming it."""
    from itmbench.errors import InputError

    tables: dict[str, pd.DataFrame] = {}
    for path in map(Path, paths):
        try:
            frame = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: expected a table CSV the claims read ({exc})") from exc
        if frame.empty:
            raise InputError(f"{path}: expected a table CSV with rows, got none")
        tables[f"{path.parent.name}/{path.stem}"] = frame
    return tables


def released_results(mirror: str | os.PathLike) -> Results:
    """Results computed from the released files of a mirror: BiVLC's four models (on BiVLC and on SugarCrepe, with
    their paired tests) and MCIC's answer prior."""
    from itmbench.papers.bivlc.tables import load_released_metrics, load_released_paired
    from itmbench.papers.paired import paired_table_index
    from itmbench.papers.sugarcrepe.tables import load_released_model_scores, released_metrics, released_paired
    from itmbench.sources.loading import load_released

    bivlc = load_released_metrics(mirror)
    sugarcrepe_scores = load_released_model_scores(mirror)  # BiVLC's four models on SugarCrepe, per instance
    paired = paired_table_index(pd.concat([load_released_paired(mirror), released_paired(sugarcrepe_scores)]))
    prior: dict[str, list[float]] = {}
    counts: dict[str, int] = {}
    for split in ("dev", "test"):
        table = load_released(f"mcic_{split}", mirror)
        shares = np.bincount(table["answer_index"].to_numpy(dtype=np.int64), minlength=5)[:5] / len(table)
        prior[split] = [100 * float(s) for s in shares]
        counts[split] = len(table)
    mcic = {"(released files)": {"answer_position_prior": prior, "n": counts}}
    kinds = dict.fromkeys(bivlc, "contrastive")
    roles = {"bivlc_coco": "CLIP_COCO", "bivlc_trohn_img": "CLIP_TROHN-Img"}
    metrics = {"bivlc": bivlc, "mcic": mcic, "sugarcrepe": released_metrics(sugarcrepe_scores)}
    return Results("released", metrics, kinds, roles, paired)


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
    from itmbench.papers.eccv import preference  # the user study's scores, refitted from the printed Table D.1

    tables = {"eccv/section41": preference.section41_long(preference.fit(eccv))}
    return Results("published", metrics, kinds, roles, tables=tables)
