"""A model's `benchmarks` in the DAG: CxC's ablations of DE_I2T are trained and scored where their `benchmarks`
say (CxC; the ResNet one also retrieval and BISON, for BISON's Table 7), and fill the appendix's Table 3; a list
the schema or the plan refuses stops the dry run with its message; the list is no part of the spec a training or
an embedding job is given, so changing it retrains nothing."""

from __future__ import annotations

import re

import yaml
from workflow_helpers import REPO, copy_workflow, snakemake

PARAMS = yaml.safe_load((REPO / "params.yaml").read_text())
ABLATIONS = PARAMS["report"]["cxc"]["ablations"]
NEW = sorted(m for name, m in ABLATIONS.items() if name != "baseline")
CXC_ONLY = [m for m in NEW if PARAMS["models"][m]["benchmarks"] == ["cxc"]]


def _model_of(job: dict) -> str | None:
    m = re.search(r"\b(?:model|trained)=([\w-]+)", job["wildcards"])
    return m.group(1) if m else None


def test_the_ablations_get_a_training_and_a_cxc_score_and_no_other_job(tiny_world_plan: list[dict]) -> None:
    jobs = {m: [] for m in NEW}
    for job in tiny_world_plan:
        model = _model_of(job)
        if model in jobs:
            jobs[model].append((job["rule"], job["wildcards"]))
        elif model is None:  # only CxC's tables, figure, paired tests, claims and report read an ablation's files
            reads = [p for p in job["input"] for m in NEW if f"/{m}." in p or f"/{m}/" in p]
            cxc = job["rule"] in (
                "world_tables_cxc",
                "world_figures_cxc",
                "table_benchmark",
                "gallery_paired",  # the ablation claims' paired bootstraps over CxC's queries
                "claims_paper",
                "claims",
                "report_benchmark",
            )
            only_cxc = [p for p in reads if any(f"/{m}." in p or f"/{m}/" in p for m in CXC_ONLY)]
            assert not only_cxc or (cxc and all("/cxc/" in p for p in only_cxc)), (job["rule"], only_cxc)
    for model, planned in jobs.items():
        benches = PARAMS["models"][model]["benchmarks"]
        scores = [("score_benchmark", f"bench={b}, model={model}") for b in benches]
        figure9 = [("bison_perturbation_scores", f"model={model}")] if "bison" in benches else []  # every BISON model
        assert sorted(planned) == sorted([*scores, *figure9, ("train", f"trained={model}")])
    assert CXC_ONLY and set(NEW) - set(CXC_ONLY) == {"de_i2t_resnet"}  # BISON Table 7's second tower
    (tables,) = [job for job in tiny_world_plan if job["rule"] == "world_tables_cxc"]
    assert {f"results/world/metrics/cxc/{m}.json" for m in NEW} <= set(tables["input"])
    assert "results/world/tables/cxc/appendix_table3.md" in tables["output"]
    other = [job for job in tiny_world_plan if job["rule"] == "world_tables_bison"]
    assert other and not any(m in p for job in other for p in job["input"] for m in CXC_ONLY)


def test_a_bad_benchmarks_list_stops_the_plan_with_its_message(tmp_path) -> None:
    d = copy_workflow(tmp_path)
    res = snakemake(d, "-n", override={"models": {"bow": {"family": "bag_of_words", "benchmarks": ["bison"]}}})
    assert res.returncode != 0
    assert (
        "params models.bow.benchmarks: 'bison' is not applicable for family 'bag_of_words'" in res.stdout + res.stderr
    )
    res = snakemake(d, "-n", override={"report": {"cxc": {"ablations": {**ABLATIONS, "ResNet-152": "bow"}}}})
    assert res.returncode != 0  # a text-only model (bag of words) scores CxC, not its image-text cells
    assert "report.cxc.ablations: {'ResNet-152': 'bow'} name no image-text dual encoder" in res.stdout + res.stderr


def test_where_a_model_is_scored_is_not_part_of_its_training_or_embedding(tmp_path) -> None:
    """clip_rn's `benchmarks` is left out of the spec its training job is given: scoring it on one more benchmark
    adds that score and retrains nothing (the spec is a job parameter, and a changed parameter reruns the job)."""
    d = copy_workflow(tmp_path)
    res = snakemake(
        d, "-n", "-p", "-f", "results/world/models/clip_rn/model.pt", "results/world/metrics/bison/clip_rn.json"
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    specs = re.findall(r"--spec '(\{[^']*\})'", out)
    assert specs and all('"arch": "itm-clip-tiny-rn"' in s for s in specs), specs
    assert not any("benchmarks" in s for s in specs), specs
