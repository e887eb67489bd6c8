"""Helpers of the workflow tests: a fresh copy of the workflow with tiny params, and running Snakemake in it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

TINY = {
    "world": {"n_train": 500, "n_val": 50, "n_test": 100},
    "train": {"epochs": 5, "batch_size": 64, "lr": 0.002, "warmup_steps": 20},
    "score": {"n_boot": 100},
    "cross_scorers": {"gallery_models": ["ffnn"]},  # the tiny galleries are cheap: the FFNN ranks them too
}


def copy_workflow(dest: Path) -> Path:
    """A fresh working directory with the workflow and a tiny params override."""
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    shutil.copy(REPO / "params.yaml", dest / "params.yaml")
    shutil.copy(REPO / "environment.yml", dest / "environment.yml")
    shutil.copytree(REPO / "workflow", dest / "workflow", symlinks=True)
    (dest / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    return dest


def snakemake(
    workdir: Path, *args: str, override: dict | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run Snakemake in `workdir` with the tiny params (and an override file merged over them; `env`: variables
    set for this run)."""
    configfiles = ["tiny.yaml"]
    if override is not None:
        (workdir / "override.yaml").write_text(yaml.safe_dump(override))
        configfiles.append("override.yaml")
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args, "--configfile", *configfiles]
    # the whole tiny DAG (269 jobs) takes minutes on two idle cores and more than 20 on a shared machine: the limit
    # only stops a run that hangs
    return subprocess.run(
        cmd, cwd=workdir, capture_output=True, text=True, timeout=2400, env=None if env is None else os.environ | env
    )


def parse_plan(text: str) -> list[dict]:
    """Every job of a dry run's log: its rule, wildcards, priority (None where Snakemake prints none), inputs
    and outputs."""
    jobs: list[dict] = []
    for line in text.splitlines():
        line = line.strip()
        if m := re.match(r"^(?:local)?rule (\w+):$", line):
            jobs.append({"rule": m.group(1), "wildcards": "", "priority": None, "input": [], "output": []})
        elif jobs and line.startswith("wildcards:"):
            jobs[-1]["wildcards"] = line[len("wildcards:") :].strip()
        elif jobs and (m := re.match(r"^priority: (\d+)$", line)):
            jobs[-1]["priority"] = int(m.group(1))
        elif jobs and (m := re.match(r"^(input|output): (.*)$", line)):
            jobs[-1][m.group(1)] = m.group(2).split(", ")
    return jobs


def planned(workdir: Path, *args: str, override: dict | None = None) -> list[dict]:
    """Every job a dry run plans (see parse_plan)."""
    res = snakemake(workdir, "-n", *args, override=override)
    assert res.returncode == 0, res.stderr[-3000:]
    return parse_plan(res.stdout + res.stderr)


def planned_jobs(workdir: Path, *args: str, override: dict | None = None) -> list[tuple[str, str]]:
    """The (rule, wildcards) of every job a dry run plans."""
    return [(job["rule"], job["wildcards"]) for job in planned(workdir, *args, override=override)]


def failure(workdir: Path, res: subprocess.CompletedProcess, tail: int = 3000) -> str:
    """What a failed Snakemake run said, and the end of each failed job's own log (the error is there)."""
    out = res.stdout + res.stderr
    parts = [out[-tail:]]
    for log in dict.fromkeys(re.findall(r"^\s*log: (\S+) \(check log file", out, flags=re.M)):
        path = workdir / log
        text = path.read_text(errors="replace")[-tail:] if path.is_file() else "(not written)"
        parts.append(f"--- {log} ---\n{text}")
    return "\n".join(parts)


def stage_counts(coco) -> dict:
    """What each TROHN stage of a COCO run produced, read from the files the DAG writes (docs/coco.md's table)."""
    import json

    import pandas as pd

    negatives = pd.read_parquet(coco / "negatives" / "text" / "negatives.parquet")
    manifests = [pd.read_parquet(p) for p in sorted((coco / "negatives" / "images").glob("shard_*/manifest.parquet"))]
    images = pd.concat(manifests, ignore_index=True)
    histories = {
        m: json.loads((coco / "models" / m / "history.json").read_text())["samples"]
        for m in ("clip_coco", "clip_trohn_text", "clip_trohn_img")
    }
    return {
        "generations": negatives.groupby("subset").size().to_dict(),
        "kept": negatives[negatives["follows_template"]].groupby("subset").size().to_dict(),
        "kept_per_caption": negatives[negatives["follows_template"]].groupby("caption_id").size().tolist(),
        "image_shards": len(manifests),
        "images_per_caption": images.groupby("id").size().to_dict(),
        "histories": histories,
    }


def docs_shape_problems(run: Path, wanted: Callable[[str], bool]) -> tuple[list[str], list[str]]:
    """(the specs checked, their problems): each docs snippet of an output path `wanted` selects, checked against
    `run` by `snippets.shape_problems` (docs/README.md, "Numbers in the docs"), the world's model names masked."""
    from itmbench.report import snippets

    names = yaml.safe_load((REPO / "params.yaml").read_text())["models"]
    checked, problems = [], []
    for page in snippets.doc_files(REPO):
        for s in snippets.find_snippets(page.read_text(), page):
            kind, *rest = s.spec.split()
            if kind in ("file", "json") and wanted(rest[0]):
                checked.append(s.spec)
                problems += snippets.shape_problems(s, REPO, run, names)
    return checked, problems
