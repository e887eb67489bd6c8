"""The registry line puts SugarCrepe in the DAG: its build, audit, score jobs, tables, figure and report."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow"))
from workflow_helpers import copy_workflow, failure, planned_jobs, snakemake  # noqa: E402

MODELS = ("random", "clip", "clip_coco", "clip_trohn_text", "clip_trohn_img")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> list[tuple[str, str]]:
    return planned_jobs(copy_workflow(tmp_path_factory.mktemp("plan")))


def test_the_plan_has_every_sugarcrepe_job(jobs):
    mine = Counter(rule for rule, wildcards in jobs if "sugarcrepe" in wildcards)
    assert mine["build_benchmark"] == mine["audit_benchmark"] == mine["table_benchmark"] == 1
    assert mine["report_benchmark"] == 1
    assert mine["claims_paper"] == 0  # SugarCrepe registers no claims: its report shows none
    assert mine["embed_added"] >= 1 and mine["score_benchmark"] >= len(MODELS)
    assert mine["score_benchmark_pairs"] >= 1  # the cross scorers score its pairs too
    rules = Counter(rule for rule, _ in jobs)
    assert rules["world_tables_sugarcrepe"] == rules["world_figures_sugarcrepe"] == 1
    scored = {w for rule, w in jobs if rule == "score_benchmark" and "sugarcrepe" in w}
    for model in MODELS:
        assert any(f"model={model}" in w for w in scored), model


@pytest.mark.slow
def test_the_sugarcrepe_jobs_run_on_a_tiny_world(tmp_path):
    d = copy_workflow(tmp_path)
    targets = ["results/world/metrics/sugarcrepe/random.json", "results/world/tables/sugarcrepe/audit.csv"]
    res = snakemake(d, *targets)
    assert res.returncode == 0, failure(d, res)
    audit = (d / targets[1]).read_text()
    assert "negative caption fits the image (%)" in audit
