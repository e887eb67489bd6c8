"""The registry line puts SugarCrepe in the DAG: its build, audit, score jobs, tables, figure and report."""

from __future__ import annotations

from collections import Counter

import pytest

MODELS = ("random", "clip", "clip_coco", "clip_trohn_text", "clip_trohn_img")


@pytest.fixture(scope="module")
def jobs(tiny_world_plan) -> list[tuple[str, str]]:
    return [(job["rule"], job["wildcards"]) for job in tiny_world_plan]  # the session's one dry run


def test_the_plan_has_every_sugarcrepe_job(jobs):
    mine = Counter(rule for rule, wildcards in jobs if "sugarcrepe" in wildcards)
    assert mine["build_benchmark"] == mine["audit_benchmark"] == mine["table_benchmark"] == 1
    assert mine["report_benchmark"] == 1
    assert mine["claims_paper"] == 1  # its claims (BiVLC's sentences about SugarCrepe), for its report
    assert mine["embed_added"] >= 1 and mine["score_benchmark"] >= len(MODELS)
    assert mine["score_benchmark_pairs"] >= 1  # the cross scorers score its pairs too
    rules = Counter(rule for rule, _ in jobs)
    assert rules["world_tables_sugarcrepe"] == rules["world_figures_sugarcrepe"] == 1
    assert rules["sugarcrepe_paired"] == 1  # its model pairs over the same instances (report.sugarcrepe_paired)
    scored = {w for rule, w in jobs if rule == "score_benchmark" and "sugarcrepe" in w}
    for model in MODELS:
        assert any(f"model={model}" in w for w in scored), model


@pytest.mark.slow
def test_the_sugarcrepe_jobs_run_on_a_tiny_world(tiny_world_run):
    """The session's one tiny run of the default target (tests/conftest.py) ran SugarCrepe's jobs."""
    targets = ["results/world/metrics/sugarcrepe/random.json", "results/world/tables/sugarcrepe/audit.csv"]
    assert all((tiny_world_run / t).stat().st_size > 0 for t in targets)
    audit = (tiny_world_run / targets[1]).read_text()
    assert "negative caption fits the image (%)" in audit
