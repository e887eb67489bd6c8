"""End to end: the DAG on a tiny world, from nothing to reports/index.html, then nothing to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]

TINY = {
    "world": {"n_train": 500, "n_val": 50, "n_test": 100},
    "train": {"epochs": 5, "batch_size": 64, "lr": 0.002, "warmup_steps": 20},
    "score": {"n_boot": 100},
}


def copy_workflow(dest: Path) -> Path:
    """A fresh working directory with the workflow and a tiny params override."""
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    shutil.copy(REPO / "params.yaml", dest / "params.yaml")
    shutil.copy(REPO / "environment.yml", dest / "environment.yml")
    shutil.copytree(REPO / "workflow", dest / "workflow", symlinks=True)
    (dest / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    return dest


def snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", "tiny.yaml", *args]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=1200)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = copy_workflow(tmp_path_factory.mktemp("e2e"))
    res = snakemake(d)
    assert res.returncode == 0, res.stderr[-4000:]
    return d


@pytest.mark.slow
def test_dag_builds_the_reports(run_dir):
    index = (run_dir / "reports/index.html").read_text()
    assert 'href="world/retrieval.html"' in index
    html = (run_dir / "reports/world/retrieval.html").read_text()
    assert "clip [original]" in html and "random [truth]" in html
    for ext in ("csv", "md", "tex"):
        assert (run_dir / f"results/world/tables/retrieval/retrieval.{ext}").stat().st_size > 0


@pytest.mark.slow
def test_trained_model_beats_random_by_a_clear_margin(run_dir):
    table = pd.read_csv(run_dir / "results/world/tables/retrieval/retrieval.csv")
    orig = table[(table["positive_set"] == "original") & table["column"].str.contains("R@5")]
    by_model = orig.groupby("model")["value"].mean()
    # random's R@5 on 100 images / 500 captions is about 1-5%; the trained model is far above
    assert by_model["random"] < 8.0
    assert by_model["clip"] > by_model["random"] + 15.0
    # and its interval excludes the random model's value
    clip_lo = orig[orig["model"] == "clip"]["lo"].min()
    assert clip_lo > orig[orig["model"] == "random"]["value"].max()


@pytest.mark.slow
def test_same_params_give_byte_identical_tables(run_dir, tmp_path):
    again = copy_workflow(tmp_path)
    res = snakemake(again, "results/world/tables/retrieval/retrieval.csv")
    assert res.returncode == 0, res.stderr[-3000:]
    for ext in ("csv", "md", "tex"):
        rel = f"results/world/tables/retrieval/retrieval.{ext}"
        assert (again / rel).read_bytes() == (run_dir / rel).read_bytes(), rel


@pytest.mark.slow
def test_nothing_to_do_after_a_full_run(run_dir):
    res = snakemake(run_dir, "-n")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Nothing to be done" in res.stdout + res.stderr


@pytest.mark.slow
def test_lint_is_clean(run_dir):
    res = snakemake(run_dir, "--lint")
    assert res.returncode == 0 and "Congratulations" in res.stdout + res.stderr, res.stdout[-3000:]


def test_typo_in_params_fails_at_load(tmp_path):
    d = copy_workflow(tmp_path)
    params = yaml.safe_load((d / "params.yaml").read_text())
    params["world"]["n_tset"] = 5
    (d / "params.yaml").write_text(yaml.safe_dump(params))
    res = snakemake(d, "-n")
    assert res.returncode != 0
    assert "n_tset" in res.stdout + res.stderr
