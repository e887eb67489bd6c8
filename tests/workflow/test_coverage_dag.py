"""The coverage matrices against the DAG: each regenerated item is an output of the default run, read by the index."""

from __future__ import annotations

import pytest

from itmbench.papers.coverage import is_released_path, load_coverage
from itmbench.papers.registry import PAPERS


@pytest.fixture(scope="module")
def planned(tiny_world_plan_with_mirror, tiny_world_plan):
    """The default target's jobs, with and without a mirror (the session's dry runs, tests/conftest.py)."""
    return {"mirror": tiny_world_plan_with_mirror, "no mirror": tiny_world_plan}


def _regenerated_paths(released: bool) -> dict[str, tuple[str, str]]:
    """Every output a regenerated item names for the world source -> (paper, item)."""
    return {
        path: (paper, item.item)
        for paper in PAPERS
        for item in load_coverage(paper)
        if item.regenerated
        for path in item.paths("world", released=released)
    }


def test_every_regenerated_item_is_an_output_of_the_default_run(planned):
    outputs = {path for job in planned["mirror"] for path in job["output"]}
    expected = _regenerated_paths(released=True)
    missing = {path: where for path, where in expected.items() if path not in outputs}
    assert not missing, f"coverage outputs no job of the default run (with a mirror) writes: {missing}"
    assert any(is_released_path(p) for p in expected) and any(not is_released_path(p) for p in expected)


def test_the_index_reads_every_coverage_output_and_without_a_mirror_no_released_one(planned):
    for name, released in (("mirror", True), ("no mirror", False)):
        (index,) = [job for job in planned[name] if job["rule"] == "index"]
        inputs = set(index["input"])
        expected = set(_regenerated_paths(released=released))
        assert expected <= inputs, (name, sorted(expected - inputs))
        assert "results/world/tables/claims/claims.csv" in inputs
        if not released:  # a run without a mirror fetches nothing from the canonical URLs
            assert not any(is_released_path(p) or p.startswith("reports/released") for p in inputs)
            outputs = {path for job in planned[name] for path in job["output"]}
            assert not any(p.startswith("data/raw/") for p in outputs), "fetches planned without a mirror"
