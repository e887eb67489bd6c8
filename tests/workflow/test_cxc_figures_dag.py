"""CxC's Figures 3-5 and Table 1 in the DAG: computed and drawn by their own rules, shown in CxC's report."""

from __future__ import annotations

import re

import pytest
from workflow_helpers import copy_workflow, snakemake


def jobs_of(text: str) -> list[dict[str, str | list[str]]]:
    """Each planned job of a dry run's log: rule, wildcards, input and output files."""
    jobs: list[dict] = []
    for line in text.splitlines():
        stripped = line.strip()
        if m := re.match(r"^(?:local)?rule (\w+):$", stripped):
            jobs.append({"rule": m[1], "wildcards": "", "input": [], "output": []})
        elif jobs and (m := re.match(r"^(input|output): (.*)$", stripped)):
            jobs[-1][m[1]] = m[2].split(", ")
        elif jobs and stripped.startswith("wildcards:"):
            jobs[-1]["wildcards"] = stripped[len("wildcards:") :].strip()
    return jobs


def plan(tmp_path, *args, override=None) -> list[dict]:
    d = copy_workflow(tmp_path)
    res = snakemake(d, "-n", *args, override=override)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    return jobs_of(res.stdout + res.stderr)


@pytest.mark.slow
def test_each_figure_is_computed_and_drawn_by_its_own_rule_and_shown_in_the_report(tiny_world_plan_with_mirror):
    jobs = tiny_world_plan_with_mirror  # the session's dry run with a mirror (tests/conftest.py)
    planned = sorted((j["rule"], j["wildcards"]) for j in jobs if "cxc_" in j["rule"])
    assert planned == [
        ("cxc_encoder_sts", ""),
        ("cxc_figure", "cxc_figure=appendix_figure2"),
        ("cxc_figure", "cxc_figure=figure3"),
        ("cxc_figure", "cxc_figure=figure4"),
        ("cxc_figure", "cxc_figure=figure5"),
        ("cxc_figure_data", "cxc_data_figure=appendix_figure2"),
        ("cxc_figure_data", "cxc_data_figure=figure3"),
        ("cxc_figure_data", "cxc_data_figure=figure4"),
        ("cxc_table1", ""),
        ("released_cxc_figure", "cxc_data_figure=figure3"),
        ("released_cxc_figure", "cxc_data_figure=figure4"),
        ("released_cxc_figure_data", "cxc_data_figure=figure3"),
        ("released_cxc_figure_data", "cxc_data_figure=figure4"),
    ]
    by_output = {out: j for j in jobs for out in j["output"]}
    # drawing reads only the computed files: restyling never recomputes
    assert by_output["results/world/figures/cxc/figure5.png"]["input"] == [
        "results/world/tables/cxc/figure5.csv",
        "results/world/figures/cxc/figure5_points.csv",
    ]
    assert by_output["results/released/figures/cxc/figure3.png"]["input"] == ["results/released/tables/cxc/figure3.csv"]
    # the appendix's Figure 2 reads each rater's rating: the world's rated pairs, never the released files
    assert by_output["results/world/tables/cxc/appendix_figure2.csv"]["input"] == ["data/world/cxc/items.parquet"]
    assert not any("released" in out and "appendix" in out for out in by_output)
    assert by_output["results/world/tables/cxc/figure5.csv"]["input"] == ["results/world/scores/cxc/bow.parquet"]
    assert sorted(by_output["results/world/tables/cxc/table1.csv"]["input"]) == [
        "data/world/cxc/items.parquet",
        "data/world/items/captions.parquet",
        "results/world/scores/cxc/bow.parquet",
        "results/world/scores/cxc/de_t2t.parquet",
    ]
    assert all(p.startswith("data/raw/") for p in by_output["results/released/tables/cxc/figure4.csv"]["input"])
    (report,) = [j for j in jobs if j["rule"] == "report_benchmark" and j["wildcards"] == "bench=cxc"]
    for path in (
        "results/world/tables/cxc/table1.md",
        "results/world/tables/cxc/figure5.md",
        *(f"results/world/figures/cxc/figure{n}.png" for n in (3, 4, 5)),
        "results/world/figures/cxc/appendix_figure2.png",
        *(f"results/released/figures/cxc/figure{n}.png" for n in (3, 4)),
    ):
        assert path in report["input"], path
    (bison,) = [j for j in jobs if j["rule"] == "report_benchmark" and j["wildcards"] == "bench=bison"]
    assert not any("cxc" in p for p in bison["input"])


@pytest.mark.slow
def test_without_the_encoders_scored_figure5_and_table1_are_not_planned(tmp_path):
    """report.cxc.encoders naming models this source does not score (the coco source's vit_b_32): Figures 3 and 4
    only (no mirror: no released). A name that is no model at all is refused at plan time
    (tests/errors/test_params_references.py)."""
    jobs = plan(tmp_path, override={"report": {"cxc": {"encoders": {"BoW": "vit_b_32", "USE": "vit_b_32"}}}})
    rules = {(j["rule"], j["wildcards"]) for j in jobs if "cxc_" in j["rule"]}
    assert rules == {
        ("cxc_figure", "cxc_figure=figure3"),
        ("cxc_figure", "cxc_figure=figure4"),
        ("cxc_figure", "cxc_figure=appendix_figure2"),
        ("cxc_figure_data", "cxc_data_figure=figure3"),
        ("cxc_figure_data", "cxc_data_figure=figure4"),
        ("cxc_figure_data", "cxc_data_figure=appendix_figure2"),
    }
    (report,) = [j for j in jobs if j["rule"] == "report_benchmark" and j["wildcards"] == "bench=cxc"]
    assert "results/world/figures/cxc/figure5.png" not in report["input"]
    assert not any(p.startswith("results/released") for p in report["input"])
