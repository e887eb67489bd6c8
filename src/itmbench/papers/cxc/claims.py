"""CxC's claims as executable checks over results (the engine and its decisions: `itmbench.papers.claims`).

The model comparisons read `paired` (TABLES; results/<source>/tables/cxc/paired.csv, rule `gallery_paired`, the
pairs of params.yaml report.cxc_paired): A - B on a task's CxC R@K with its paired bootstrap interval over the
same queries (`itmbench.papers.paired.gallery_records`), and on the STS / SIS / SITS Spearman correlations from
the same samples of the same rated pairs (`itmbench.papers.cxc.score.paired_correlations`). The models are the
world's analogues of the paper's (report.rows.cxc, report.cxc.ablations, report.cxc.encoders): DE_T2T+I2T
`de_t2t_i2t`, DE_I2T `de_i2t` (the ablations' baseline), its small-batch, no-pretraining and ResNet ablations,
BoW `bow`. Without the paired table (the published and released sources) a comparison is undecided: printed
values carry no per-query outcome.
"""

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
    undecided,
)
from itmbench.papers.paired import gallery_test

TABLES = ("paired",)

MULTITASK = "de_t2t_i2t"
BASELINE = "de_i2t"
SMALL_BATCH = "de_i2t_small_batch"
SCRATCH = "de_i2t_scratch"
RESNET = "de_i2t_resnet"
BOW = "bow"
TASK_LABELS = {"i2t": "Image → Text", "t2i": "Text → Image", "t2t": "Text → Text", "i2i": "Image → Image"}


def r1(task: str) -> str:
    """A task's CxC R@1 as the paired table names it."""
    return f"{task}/cxc/R@1"


def cxc_intramodal_below_i2t(results: Results, config: ClaimConfig) -> Verdict:
    """CxC t2t and i2i R@1 below CxC i2t R@1 for every non-chance model that has all three: with
    `significant_differences`, each interval entirely below i2t's (`papers.claims.above`: intervals that do not
    overlap, a conservative test; the tasks' queries differ, t2t's are captions, so no pairing covers all three),
    else the point estimates."""
    evidence: dict[str, Any] = {}
    holds = []
    level = results.confidence("cxc")
    test = ""
    for model in results.models("cxc"):
        if results.kind(model) == "chance":
            continue
        entries = {task: results.metric("cxc", model, f"{task}/cxc/R@1") for task in ("i2t", "t2t", "i2i")}
        if any(e is None for e in entries.values()):
            continue
        evidence[model] = {task: entry_evidence(e) for task, e in entries.items()}
        t2t_below, test = above(entries["i2t"], entries["t2t"], None, config, level)
        i2i_below, _ = above(entries["i2t"], entries["i2i"], None, config, level)
        evidence[model]["below"] = t2t_below and i2i_below
        holds.append(t2t_below and i2i_below)
    if not holds:
        return undecided(f"no non-chance model with CxC i2t, t2t and i2i R@1 on source {results.source!r}")
    return Verdict(all(holds), {"n_models": len(holds), "test": test, **evidence})


def _paired_comparisons(
    results: Results, config: ClaimConfig, comparisons: list[tuple[str, str, str]], sign: int
) -> Verdict:
    """A above B (sign +1) or below B (sign -1) on every (A, B, metric) by the paired bootstrap of A - B (over the
    same queries for a task's CxC R@1, over the same samples of rated pairs for a Spearman correlation): its
    interval above 0 (below 0) with `significant_differences`, else the point estimate."""
    table = results.table("cxc", "paired")
    if table is None:
        return undecided(f"needs the per-query paired tests of report.cxc_paired; source {results.source!r} has none")
    evidence: dict[str, Any] = {}
    holds = []
    level = None
    for a, b, metric in comparisons:
        test = gallery_test(table, a, b, metric)
        if test is None:
            return undecided(
                f"the paired table has no {a} vs {b} on {metric} (report.cxc_paired, models scored on CxC)"
            )
        level = test["confidence"]
        if config.significant_differences:
            fits = test["lo"] > 0 if sign > 0 else test["hi"] < 0
        else:
            fits = test["difference"] * sign > 0
        evidence[f"{a} vs {b}: {metric}"] = {
            "A": round(test["value_a"], 4),
            "B": round(test["value_b"], 4),
            "A - B": {"value": round(test["difference"], 4), "lo": round(test["lo"], 4), "hi": round(test["hi"], 4)},
            "n": test["n"],
            "fits": fits,
        }
        holds.append(fits)
    side = "above" if sign > 0 else "below"
    units = "samples of rated pairs" if all(m.endswith("/spearman") for *_, m in comparisons) else "queries"
    evidence["test"] = (
        f"paired bootstrap ({100 * level:g}%) over the same {units}: A - B interval {side} 0"
        if config.significant_differences
        else "point estimates over the same queries"
    )
    return Verdict(all(holds), evidence)


def cxc_multitask_boosts_intermodal(results: Results, config: ClaimConfig) -> Verdict:
    """DE_T2T+I2T above DE_I2T on CxC Image → Text and Text → Image R@1, paired over the same queries."""
    return _paired_comparisons(
        results, config, [(MULTITASK, BASELINE, r1("i2t")), (MULTITASK, BASELINE, r1("t2i"))], +1
    )


def cxc_multitask_far_outperforms_t2t(results: Results, config: ClaimConfig) -> Verdict:
    """DE_T2T+I2T above DE_I2T on CxC Text → Text R@1, paired over the same caption queries."""
    return _paired_comparisons(results, config, [(MULTITASK, BASELINE, r1("t2t"))], +1)


def cxc_small_batch_reduces_recall(results: Results, config: ClaimConfig) -> Verdict:
    """DE_I2T (baseline) above its small-batch ablation on the CxC R@1 of all four tasks, paired over queries."""
    return _paired_comparisons(results, config, [(BASELINE, SMALL_BATCH, r1(t)) for t in TASK_LABELS], +1)


def cxc_resnet_performs_worst(results: Results, config: ClaimConfig) -> Verdict:
    """The ResNet ablation below each other DE_I2T recipe (baseline, small batch, no pretraining) on CxC
    Image → Text, Text → Image and Image → Image R@1, paired over queries ('worst overall': the paper's Table 3
    has it lowest on these three and not on Text → Text, which the same paragraph says it does slightly better)."""
    others = (BASELINE, SMALL_BATCH, SCRATCH)
    return _paired_comparisons(results, config, [(RESNET, o, r1(t)) for o in others for t in ("i2t", "t2i", "i2i")], -1)


def cxc_de_i2t_sts_below_bow(results: Results, config: ClaimConfig) -> Verdict:
    """DE_I2T's STS correlation below BoW's: the difference of their Spearman correlations over the same samples
    of the same rated caption pairs (CxC's sampled bootstrap, `metrics.correlation.paired_spearman_bootstrap`),
    its interval below 0."""
    return _paired_comparisons(results, config, [(BASELINE, BOW, "sts/spearman")], -1)


# --- how the evidence reads ---------------------------------------------------------------------------------


def explain_intramodal_below_i2t(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'Text -> Text and Image -> Image R@1 are both below Image -> Text R@1 for k of m models', a row per model."""
    models = sorted(k for k, v in evidence.items() if isinstance(v, Mapping))

    def below(m: str) -> bool:
        e = evidence[m]
        if "below" in e:
            return bool(e["below"])
        return e["t2t"]["value"] < e["i2t"]["value"] and e["i2i"]["value"] < e["i2t"]["value"]

    fits = [m for m in models if below(m)]
    sentence = (
        f"Text → Text and Image → Image R@1 are both below Image → Text R@1 (test: "
        f"{evidence.get('test') or 'point estimates'}) for {len(fits)} of {len(models)} non-chance models"
    )
    if fits and len(fits) < len(models):
        sentence += f" ({', '.join(fits)}); not for {', '.join(m for m in models if m not in fits)}"
    rows = tuple(
        (
            m,
            n.entry(evidence[m]["i2t"]),
            n.entry(evidence[m]["t2t"]),
            n.entry(evidence[m]["i2i"]),
            "yes" if m in fits else "no",
        )
        for m in models
    )
    return Explanation(
        sentence, ("model", "Image → Text R@1", "Text → Text R@1", "Image → Image R@1", "both below"), rows
    )


def explain_paired_comparisons(evidence: Mapping[str, Any], holds: bool, n: Numbers) -> Explanation:
    """'k of m comparisons fit', a row per (pair, task) with A, B and A - B."""
    keys = [k for k, v in evidence.items() if isinstance(v, Mapping) and "fits" in v]
    fits = [k for k in keys if evidence[k]["fits"]]
    sentence = f"{len(fits)} of {len(keys)} comparisons fit the claim (test: {evidence.get('test')})"
    rows = tuple(
        (
            k,
            n.value(evidence[k]["A"]),
            n.value(evidence[k]["B"]),
            n.entry(evidence[k]["A - B"]),
            "yes" if evidence[k]["fits"] else "no",
        )
        for k in keys
    )
    return Explanation(sentence, ("A vs B: metric", "A", "B", "A − B", "fits"), rows)


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "cxc",
        "intramodal_below_i2t",
        "intramodal retrieval (Text -> Text, Image -> Image) scores below Image -> Text retrieval on CxC",
        "Tables 2-4, as the tables show it (R@1)",
        cxc_intramodal_below_i2t,
        explain_intramodal_below_i2t,
    ),
    Claim(
        "cxc",
        "multitask_boosts_intermodal",
        "Multitask training in DE_T2T+I2T provides a boost over using only intermodal pairs for training (i.e. DE_I2T)",
        "Section 6, Intermodal Retrieval (Table 2)",
        cxc_multitask_boosts_intermodal,
        explain_paired_comparisons,
    ),
    Claim(
        "cxc",
        "multitask_far_outperforms_t2t",
        "the multitask DE_T2T+I2T model ... is close to DE_T2T for Text -> Text and DE_I2T for Image -> Image and "
        "far outperforms the latter for Text -> Text",
        "Section 6, Intramodal Retrieval (Tables 3-4; tested: the last part, DE_T2T+I2T above DE_I2T on t2t)",
        cxc_multitask_far_outperforms_t2t,
        explain_paired_comparisons,
    ),
    Claim(
        "cxc",
        "small_batch_reduces_recall",
        "Reducing the batch size causes a small but consistent reduction in recalls across all tasks",
        "Appendix, Ablation Experiments (appendix Table 3)",
        cxc_small_batch_reduces_recall,
        explain_paired_comparisons,
    ),
    Claim(
        "cxc",
        "resnet_performs_worst",
        "models using ResNet-152 image encoders perform worst overall",
        "Appendix, Ablation Experiments (appendix Table 3)",
        cxc_resnet_performs_worst,
        explain_paired_comparisons,
    ),
    Claim(
        "cxc",
        "de_i2t_sts_below_bow",
        "The correlation scores also show that DE_I2T is too focused on images: it has the highest SIS (81.3), but "
        "has worse STS (50.9) than even BoW (55.1)",
        "Section 6, Semantic Similarity (Table 5; tested: DE_I2T's STS below BoW's)",
        cxc_de_i2t_sts_below_bow,
        explain_paired_comparisons,
    ),
)
