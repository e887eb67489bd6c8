"""benchmarks/job_cost.py: it finds the job that writes a run's file, runs it from two source trees without
touching the run, and says whether they wrote the same bytes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark

REPO = Path(__file__).resolve().parents[1]


def test_outputs_and_their_folder_move_into_the_scratch_folder(tmp_path):
    script = load_benchmark("job_cost")
    outputs = ["data/world/eccv/items.parquet", "data/world/eccv/positives.parquet"]
    argv = ["build-benchmark", "--name", "eccv", "--items", "data/world/items", "--out", "data/world/eccv"]
    moved = script.redirected(argv, outputs, tmp_path)
    assert moved[:-1] == argv[:-1] and moved[-1] == str(tmp_path / "data/world/eccv")  # inputs stay
    with pytest.raises(SystemExit, match="names an output"):
        script.redirected(["world", "--out", "elsewhere"], outputs, tmp_path)


def test_same_files_compares_names_and_bytes(tmp_path):
    script = load_benchmark("job_cost")
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "x").mkdir(parents=True)
        (d / "x" / "f.json").write_text("{}")
    assert script.same_files(a, b)
    (b / "x" / "f.json").write_text("{ }")
    assert not script.same_files(a, b)
    (b / "x" / "f.json").write_text("{}")
    (b / "g").write_text("")
    assert not script.same_files(a, b)


def test_a_failing_command_stops_with_its_output(tmp_path):
    script = load_benchmark("job_cost")
    with pytest.raises(SystemExit, match=r"(?s)exited 2:.*no-such-command"):
        script.timed(REPO, tmp_path, ["no-such-command"], tmp_path / "job.log")


@pytest.mark.slow
def test_a_scoring_job_of_the_tiny_run_costs_the_same_from_one_tree_twice(tiny_world_run, capsys):
    script = load_benchmark("job_cost")
    target = "results/world/metrics/retrieval/clip.json"
    before = (tiny_world_run / target).stat().st_mtime_ns
    assert (
        script.main(
            ["--run", str(tiny_world_run), "--before", str(REPO), "--after", str(REPO), "--runs", "1", "--job", target]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert re.search(rf"{re.escape(target)} +after/before: wall .*; outputs byte-identical\n", out), out
    assert (tiny_world_run / target).stat().st_mtime_ns == before  # the run's own file is untouched


def test_after_env_is_set_for_the_after_runs_and_unset_for_the_before_runs(tmp_path, monkeypatch):
    """--after-env times an environment change (the allocator settings) with one tree: the before runs do not
    inherit the variable even when the caller's environment has it."""
    script = load_benchmark("job_cost")
    monkeypatch.setenv("MALLOC_TOP_PAD_", "1")
    seen = []
    monkeypatch.setattr(script, "plan", lambda run, target: (["out/x.txt"], ["world", "--out", "out/x.txt"]))
    monkeypatch.setattr(script, "same_files", lambda a, b: True)

    def fake_timed(tree, run, argv, log, extra=None, unset=frozenset()):
        seen.append((extra or {}, set(unset)))
        return 1.0, 1.0, 1.0

    monkeypatch.setattr(script, "timed", fake_timed)
    args = ["--run", str(tmp_path), "--before", str(REPO), "--runs", "1", "--job", "out/x.txt"]
    assert script.main([*args, "--after-env", "MALLOC_TOP_PAD_=256"]) == 0
    assert seen == [({}, {"MALLOC_TOP_PAD_"}), ({"MALLOC_TOP_PAD_": "256"}, set())]
    with pytest.raises(SystemExit):
        script.main([*args, "--after-env", "MALLOC_TOP_PAD_"])
