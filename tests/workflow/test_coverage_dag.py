"""The coverage matrices against the DAG: each regenerated item is an output of the default run, read by the index."""

from __future__ import annotations

import pytest

from itmbench.papers.coverage import is_released_path, load_coverage
from itmbench.papers.registry import PAPERS, named_target_items


@pytest.fixture(scope="module")
def planned(tiny_world_plan_with_mirror, tiny_world_plan):
    """The default target's jobs, with and without a mirror (the session's dry runs, tests/conftest.py)."""
    return {"mirror": tiny_world_plan_with_mirror, "no mirror": tiny_world_plan}


def _regenerated_paths(released: bool, named: bool = False) -> dict[str, tuple[str, str]]:
    """Every output a regenerated item names for the world source -> (paper, item): the default run's items, or
    (`named`) those a named target regenerates (the registry's `named_targets`)."""
    targets = named_target_items()
    return {
        path: (paper, item.item)
        for paper in PAPERS
        for item in load_coverage(paper)
        if item.regenerated and ((paper, item.item) in targets) == named
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
        named = set(_regenerated_paths(released=released, named=True))
        assert named and not named & inputs, (name, sorted(named & inputs))  # a named target's: not the default's
        assert "results/world/tables/claims/claims.csv" in inputs
        if not released:  # a run without a mirror fetches nothing from the canonical URLs
            assert not any(is_released_path(p) or p.startswith("reports/released") for p in inputs)
            outputs = {path for job in planned[name] for path in job["output"]}
            assert not any(p.startswith("data/raw/") for p in outputs), "fetches planned without a mirror"


def test_a_named_targets_items_are_no_output_of_the_default_run(planned):
    """The registry's named targets: none of their items' files is planned by the default run (the files are the
    named rule's: tests/workflow/test_bison_table6_dag.py runs it)."""
    outputs = {path for job in planned["mirror"] for path in job["output"]}
    named = _regenerated_paths(released=True, named=True)
    assert named and not set(named) & outputs, sorted(set(named) & outputs)
    assert set(named_target_items().values()) == {"bison_table6"}
