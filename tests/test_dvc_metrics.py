"""dvc.yaml declares every metrics file of the default run, generated from the plan (itmbench.papers.plan)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from itmbench import cli, dvc_metrics
from itmbench.io import write_json
from itmbench.papers import plan

REPO = Path(__file__).resolve().parents[1]

SAMPLE = """\
# a comment that stays
params:
  - params.yaml
metrics:
  - results/world/metrics/retrieval/clip.json
  - results/world/metrics/retrieval/random.json

plots:
  - results/world/models/clip/history.json:
      x: epoch
"""


def run(*argv: str) -> int:
    try:
        return cli.main(list(argv))
    except SystemExit as exit_:
        return int(exit_.code)


def test_dvc_yaml_declares_every_metrics_file_of_the_default_run() -> None:
    expected = plan.metrics_files(plan.load_params(REPO / "params.yaml"))
    problems = dvc_metrics.check((REPO / "dvc.yaml").read_text(), expected)
    assert not problems, "\n".join(problems)
    declared = dvc_metrics.declared_metrics((REPO / "dvc.yaml").read_text())
    papers = {Path(f).parent.name for f in declared}
    assert {"retrieval", "bison", "mcic", "eccv", "bivlc", "cxc", "sugarcrepe", "aro"} <= papers


def test_the_models_of_each_benchmark_follow_their_capabilities() -> None:
    params = {
        "models": {
            "clip": {"family": "open_clip"},
            "bow": {"family": "bag_of_words"},
            "pixels": {"family": "pixel_features"},
            "coca": {"family": "coca"},
            "ffnn": {"family": "ffnn", "upstream": "clip"},
        },
        "cross_scorers": {"gallery_models": ["ffnn"]},
    }
    files = plan.metrics_files(params)
    by_bench: dict[str, set[str]] = {}
    for f in files:
        by_bench.setdefault(Path(f).parent.name, set()).add(Path(f).stem)
    # cross scorers score every image-text benchmark; only the listed one ranks the galleries
    for bench in ("bison", "mcic", "bivlc", "sugarcrepe", "aro"):
        assert by_bench[bench] == {"clip", "coca", "ffnn"}, bench
    for bench in ("retrieval", "eccv"):
        assert by_bench[bench] == {"clip", "ffnn"}, bench
    # CxC compares texts and images too: the unimodal baselines score it
    assert by_bench["cxc"] == {"clip", "bow", "pixels", "ffnn"}
    assert files == sorted(files) and all(f.startswith("results/world/metrics/") for f in files)
    assert len(files) == sum(len(v) for v in by_bench.values())


def test_the_coco_source_lists_its_own_models() -> None:
    params = {
        "source": "coco",
        "models": {"clip": {"family": "open_clip"}},
        "coco": {"models": {"vit": {"family": "open_clip"}, "coca": {"family": "coca"}}},
        "cross_scorers": {"gallery_models": ["coca", "ffnn"]},  # ffnn is a world model: dropped
    }
    files = plan.metrics_files(params)
    assert "results/coco/metrics/retrieval/coca.json" in files
    models = [f for f in files if Path(f).parent.name != "bison_caption_metrics"]
    assert {Path(f).stem for f in models} == {"vit", "coca"}
    # BISON's caption-metric baseline is no model: one file per metric of its section (defaults: all four), but
    # the world's SPICE analogue (tuple_f1) reads the world's captions only: not on COCO
    baseline = sorted(set(files) - set(models))
    assert baseline == [f"results/coco/metrics/bison_caption_metrics/{m}.json" for m in ("bleu4", "cider_d", "meteor")]
    world = plan.metrics_files({**params, "source": "world"})
    assert "results/world/metrics/bison_caption_metrics/tuple_f1.json" in world
    params["bison_caption_metrics"] = {"metrics": ["cider_d"]}
    assert [f for f in plan.metrics_files(params) if "caption" in f] == [
        "results/coco/metrics/bison_caption_metrics/cider_d.json"
    ]


def test_rewrite_replaces_only_the_metrics_block() -> None:
    files = ["results/world/metrics/a/x.json", "results/world/metrics/b/y.json"]
    new = dvc_metrics.rewrite(SAMPLE, files)
    doc = yaml.safe_load(new)
    assert dvc_metrics.declared_metrics(new) == files
    assert doc["params"] == ["params.yaml"] and "results/world/models/clip/history.json" in doc["plots"][0]
    assert new.startswith("# a comment that stays\n") and "\n\nplots:\n" in new
    assert "itmbench dvc-metrics" in new
    assert dvc_metrics.rewrite(new, files) == new
    appended = dvc_metrics.rewrite("params:\n  - params.yaml\n", files)
    assert dvc_metrics.declared_metrics(appended) == files


def _check(root: Path) -> list[str]:
    return dvc_metrics.check(
        (root / "dvc.yaml").read_text(), plan.metrics_files(plan.load_params(root / "params.yaml"))
    )


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(REPO / "params.yaml", root / "params.yaml")
    (root / "dvc.yaml").write_text(SAMPLE)
    return root


def test_a_stale_list_fails_the_check_naming_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _checkout(tmp_path)
    problems = _check(root)
    assert "dvc.yaml: metrics lacks results/world/metrics/bison/clip.json" in problems
    assert problems[-1] == "run `itmbench dvc-metrics` to regenerate the list"
    assert run("dvc-metrics", "--check", "--root", str(root)) == 1
    assert "itmbench dvc-metrics" in capsys.readouterr().err
    assert run("dvc-metrics", "--root", str(root)) == 0
    assert run("dvc-metrics", "--check", "--root", str(root)) == 0
    assert dvc_metrics.declared_metrics((root / "dvc.yaml").read_text()) == plan.metrics_files(
        plan.load_params(root / "params.yaml")
    )
    # a model added to params.yaml without regenerating: the check names the files it lacks
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["models"]["clip_long"] = dict(params["models"]["clip"])
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    problems = _check(root)
    assert "dvc.yaml: metrics lacks results/world/metrics/bivlc/clip_long.json" in problems
    # a model removed: the check names the files no job writes
    del params["models"]["clip_long"], params["models"]["vse"]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert "dvc.yaml: metrics lists results/world/metrics/cxc/vse.json, which no job writes" in _check(root)


@pytest.mark.slow
def test_the_list_is_what_snakemake_plans(tmp_path: Path) -> None:
    """The package's scored_models against the workflow's: every metrics output of the default DAG."""
    for name in ("Snakefile", "params.yaml"):
        shutil.copy(REPO / name, tmp_path / name)
    shutil.copytree(REPO / "workflow", tmp_path / "workflow", symlinks=True)
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--summary", "--cores", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    planned = sorted(
        line.split("\t")[0] for line in res.stdout.splitlines() if line.startswith("results/world/metrics/")
    )
    assert planned == plan.metrics_files(plan.load_params(REPO / "params.yaml"))


@pytest.mark.slow
def test_dvc_reads_and_diffs_the_declared_metrics_files(tmp_path: Path) -> None:
    """The metrics files as the run writes them (nested cells, NaN) through `dvc metrics diff`."""

    def sh(*cmd: str) -> str:
        res = subprocess.run(list(cmd), cwd=tmp_path, capture_output=True, text=True, check=False)
        assert res.returncode == 0, (cmd, res.stderr[-2000:])
        return res.stdout

    sh("git", "init", "-q")
    sh("git", "config", "user.email", "a@lab.invalid")
    sh("git", "config", "user.name", "lab a")
    sh("dvc", "init", "-q")
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(REPO / name, tmp_path / name)

    def write(value: float) -> None:
        write_json(
            tmp_path / "results/world/metrics/bison/clip.json",
            {
                "metrics": {"bison": {"value": value, "lo": value - 4, "hi": value + 4, "n": 500}},
                "mean_score_margin": {"value": float("nan"), "lo": float("nan"), "hi": float("nan"), "n": 0},
                "model": "clip",
                "n_correct": int(5 * value),
            },
        )
        write_json(
            tmp_path / "results/world/metrics/retrieval/clip.json",
            {"metrics": {"coco": {"i2t": {"R@1": {"value": 30.0, "lo": 25.0, "hi": 35.0, "n": 100}}}}},
        )

    write(75.0)
    sh("git", "add", "-A")
    sh("git", "commit", "-qm", "first")
    write(76.0)
    shown = json.loads(sh("dvc", "metrics", "show", "--json"))
    data = shown[""]["data"]
    assert data["results/world/metrics/bison/clip.json"]["data"]["metrics"]["bison"]["value"] == 76.0
    changed = json.loads(sh("dvc", "metrics", "diff", "HEAD", "--json"))
    bison = changed["results/world/metrics/bison/clip.json"]
    assert (bison["metrics.bison.value"]["old"], bison["metrics.bison.value"]["new"]) == (75.0, 76.0)
    assert "results/world/metrics/retrieval/clip.json" not in changed
