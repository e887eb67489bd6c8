"""The COCO source's DAG, planned without the data: every job a real `itmbench` command, the counts by rule."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml
from workflow_helpers import REPO, copy_workflow, snakemake

from itmbench.cli import build_parser
from itmbench.papers.registry import BENCHMARKS
from itmbench.sources.coco_registry import COCO_BENCHMARKS

COCO_ADDING = [name for name in COCO_BENCHMARKS if BENCHMARKS[name].coco_adds_items]


def plan(tmp_path, override=None):
    d = copy_workflow(tmp_path)
    over = {"source": "coco", **(override or {})}
    res = snakemake(d, "-n", "-p", override=over)
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout + res.stderr
    rules = Counter(re.findall(r"^(?:local)?rule (\w+):$", out, flags=re.M))
    rules["__total__"] = int(re.search(r"^total\s+(\d+)$", out, flags=re.M).group(1))
    commands = re.findall(r"^(?:Shell command: )?\s*(itmbench .*)$", out, flags=re.M)
    return rules, commands


@pytest.mark.slow
def test_the_coco_dag_is_complete_and_every_command_is_real(tmp_path) -> None:
    params = yaml.safe_load((REPO / "params.yaml").read_text())["coco"]
    rules, commands = plan(tmp_path)
    models = params["models"]
    tuned = [m for m, s in models.items() if s.get("trainer")]
    assert rules["coco_items"] == 1
    # COCO 5k, BISON, MCIC, ECCV, CxC, BiVLC, SugarCrepe and ARO's VG sets from their released files
    assert rules["coco_benchmark"] == 8
    assert rules["coco_caption_negatives"] == params["llm_shards"]
    assert rules["coco_image_negatives"] == params["sdxl_shards"]
    assert rules["coco_finetune"] == len(tuned) == 3
    assert rules["embed"] == len(models)  # each COCO item once per model
    assert rules["embed_added"] == len(models) * len(COCO_ADDING) == len(models) * 4  # MCIC, BiVLC, SugarCrepe, ARO
    assert rules["score_benchmark"] == 8 * len(models)  # each writes its scores and their metrics
    # the registry's COCO files and the released benchmark files, each fetched once
    assert rules["fetch_released"] >= 4 + 1 + 2 + 7 + 6 + 2 + 3
    assert rules["train"] == 0 and rules["world"] == 0  # nothing of the world
    # docs/sources.md's table of the COCO DAG names every rule this plan runs
    page = (REPO / "docs" / "sources.md").read_text()
    planned = {r for r, n in rules.items() if n and r not in ("__total__", "all")}
    listed = set(re.findall(r"`(\w+)`", page))
    listed |= {r for r in planned for prefix in re.findall(r"`(\w+_)\*`", page) if r.startswith(prefix)}
    assert planned <= listed, planned - listed
    # no placeholder: every job's command is an itmbench subcommand that exists
    known = set(build_parser()._subparsers._group_actions[0].choices)
    used = Counter(c.split()[1] for c in commands)
    assert set(used) <= known, set(used) - known
    assert {
        "coco-items",
        "build-coco-benchmark",
        "coco-caption-negatives",
        "coco-image-negatives",
        "coco-finetune",
        "embed",
        "score-benchmark",
        "notebook",
    } <= set(used)


@pytest.mark.slow
def test_fewer_shards_plan_fewer_generation_jobs(tmp_path) -> None:
    rules, _ = plan(tmp_path, {"coco": {"llm_shards": 3, "sdxl_shards": 2}})
    assert rules["coco_caption_negatives"] == 3 and rules["coco_image_negatives"] == 2


def job_threads(tmp_path, override=None) -> dict[str, set[int]]:
    """rule -> the thread counts its planned jobs get (a dry run prints `threads: N` for N > 1), on two cores."""
    d = copy_workflow(tmp_path)
    res = snakemake(d, "-n", "-p", override={"source": "coco", **(override or {})})
    assert res.returncode == 0, res.stderr[-3000:]
    threads: dict[str, set[int]] = {}
    for job in re.split(r"\n(?=(?:local)?rule \w+:\n)", res.stdout + res.stderr):
        if rule := re.match(r"(?:local)?rule (\w+):\n", job):
            n = re.search(r"^\s+threads: (\d+)$", job, flags=re.M)
            threads.setdefault(rule.group(1), set()).add(int(n.group(1)) if n else 1)
    return threads


@pytest.mark.slow
def test_coco_threads_sets_every_model_jobs_threads(tmp_path) -> None:
    """`coco.threads: null` gives each COCO model job every core (an LLM or SDXL shard up to 4); a count gives
    them that many (the small DAG's 1: each job in the warm worker, docs/coco.md)."""
    model_rules = ("embed", "embed_added", "coco_finetune", "coco_caption_negatives", "coco_image_negatives")
    (tmp_path / "all").mkdir()
    every_core = job_threads(tmp_path / "all")
    assert all(every_core[rule] == {2} for rule in model_rules), every_core  # the plan's two cores
    (tmp_path / "one").mkdir()
    one = job_threads(tmp_path / "one", {"coco": {"threads": 1}})
    assert all(one[rule] == {1} for rule in model_rules), one
    assert every_core["score_benchmark"] == one["score_benchmark"] == {1}  # one thread either way
