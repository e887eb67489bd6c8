"""benchmarks/time_default_run.py's report of runs, read back from its --json (`--from-json`, `--md`): the medians
it prints against a naive median of made-up runs, and the Markdown a docs snippet shows."""

from __future__ import annotations

import json

import pytest
from benchmark_scripts import load_benchmark


def a_run(cpu: float, wall: float, declined: int) -> dict:
    return {
        "cpu_s": cpu,
        "user_s": cpu - 10,
        "sys_s": 10.0,
        "wall_s": wall,
        "peak_rss_mb": 1000.0,
        "install": {"cpu_s": 9.0, "wall_s": 9.0},
        "jobs": 3,
        "in_worker": 3 - declined,
        "declined": declined,
        "declined_reasons": {"environment variable OMP_NUM_THREADS differs from the worker's": declined}
        if declined
        else {},
        "per_rule": {
            "train": {"jobs": 2, "s": wall / 2, "cpu_s": cpu / 2},
            "world": {"jobs": 1, "s": 1.0, "cpu_s": 1.0},
        },
        "per_worker_command": {"train": {"jobs": 2, "s": wall / 2, "cpu_s": cpu / 2}},
    }


def test_from_json_prints_and_writes_the_medians(tmp_path, capsys):
    script = load_benchmark("time_default_run")
    runs = {"abc1234": [a_run(300, 200, 0), a_run(100, 120, 1), a_run(200, 150, 0)]}
    (tmp_path / "runs.json").write_text(json.dumps(runs))
    md = tmp_path / "out" / "default_run.md"
    argv = ["--from-json", str(tmp_path / "runs.json"), "--md", str(md), "--note", "a quiet machine"]
    assert script.main(argv) == 0
    printed = capsys.readouterr().out
    assert "abc1234: 3 run(s), median CPU 200 s (user 190 + sys 10), wall 150 s (min 120, max 200)" in printed
    assert "declined 1x over the runs: environment variable OMP_NUM_THREADS" in printed
    text = md.read_text()
    assert text.startswith("**The default run as a newcomer runs it**")
    assert "a quiet machine" in text and "runs.json" in text
    for i, (cpu, wall) in enumerate(((300, 200), (100, 120), (200, 150)), 1):
        assert f"run {i} abc1234: CPU {cpu} s" in text and f"wall {wall} s" in text
    # the per-rule median of the job CPU: train's halves of 300, 100, 200
    train = next(line for line in text.splitlines() if line.strip().startswith("train") and "100.0" in line)
    assert train.split()[1:] == ["2", "75.0", "100.0"]
    assert text.count("```") == 2


def test_two_json_files_of_one_commit_compare_under_their_labels(tmp_path, capsys):
    """The worker off and on, each a run of the same commit (`ITMBENCH_WORKER=0` and not): named apart by LABEL=,
    the second's CPU and wall as a ratio of the first's."""
    script = load_benchmark("time_default_run")
    for name, cpu, wall in (("off", 400, 300), ("on", 100, 150)):
        run = {**a_run(cpu, wall, 0), "dag_jobs": {"j1": ["out/a"]}, "worker_records": []}
        (tmp_path / f"{name}.json").write_text(json.dumps({"abc1234": [run]}))
    md = tmp_path / "cmp.md"
    argv = ["--from-json", f"worker off={tmp_path / 'off.json'}", "--from-json", f"worker on={tmp_path / 'on.json'}"]
    assert script.main([*argv, "--md", str(md)]) == 0
    printed = capsys.readouterr().out
    assert "worker on / worker off: CPU 0.25x, wall 0.50x" in printed
    assert "worker off: 1 run(s), median CPU 400 s" in printed and "worker on: 1 run(s), median CPU 100 s" in printed
    assert "runs' --json files (off.json, on.json)" in md.read_text()
    # the same commit twice without names: refused, not merged
    same = ["--from-json", str(tmp_path / "off.json"), "--from-json", str(tmp_path / "on.json")]
    with pytest.raises(SystemExit, match="already read from an earlier file: name each file's runs with LABEL=FILE"):
        script.main(same)
