"""benchmarks/coco_small_dag.py's reading of a run: the jobs and wall time from Snakemake's log, the seconds per
rule from the benchmark files the log names, and the overlay that builds params.yaml's ViTs at random weights."""

from __future__ import annotations

from pathlib import Path

import yaml
from benchmark_scripts import load_benchmark

REPO = Path(__file__).resolve().parents[1]
SCRIPT = load_benchmark("coco_small_dag")


LOG = """Building DAG of jobs...
[Sat Nov 28 04:28:00 2026]
rule embed:
    input: data/coco/items/images.parquet
    output: results/coco/embeddings/vit_b_32/items.npz
    log: logs/embed/vit_b_32/items.log
    benchmark: benchmarks/rules/embed/vit_b_32/items.tsv
    resources: tmpdir=/tmp, gpu=1
[Sat Nov 28 04:28:15 2026]
Finished jobid: 2 (Rule: embed)
1 of 3 steps (33%) done
[Sat Nov 28 04:28:15 2026]
localrule embed:
    output: results/coco/embeddings/vit_l_14/items.npz
    benchmark: benchmarks/rules/embed/vit_l_14/items.tsv
[Sat Nov 28 04:28:31 2026]
rule score_benchmark:
    output: results/coco/scores/bison/random.parquet
    benchmark: benchmarks/rules/score/bison/random.tsv
[Sat Nov 28 04:29:40 2026]
2 of 3 steps (67%) done
"""


def write_tsv(path: Path, s: float, cpu: float | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    path.write_text(header + f"{s}\t0:00:{int(s):02d}\t1\t1\t1\t1\t0\t0\t50\t{cpu}\n")


def test_the_log_gives_jobs_done_and_planned_and_the_wall_between_its_first_and_last_stamps() -> None:
    figures = SCRIPT.log_figures(LOG)
    assert figures == {"jobs": 2, "planned": 3, "wall": 100.0}


def test_seconds_per_rule_sum_the_benchmark_files_each_job_names_and_skip_a_job_without_one(tmp_path) -> None:
    write_tsv(tmp_path / "benchmarks/rules/embed/vit_b_32/items.tsv", 14.5, 18.0)
    write_tsv(tmp_path / "benchmarks/rules/embed/vit_l_14/items.tsv", 16.0, 20.5)
    # score_benchmark's file is absent (its job had not ended): not counted
    rules = SCRIPT.rule_seconds(tmp_path, LOG)
    assert rules == {"embed": {"jobs": 2, "s": 30.5, "cpu_time": 38.5}}
    # a job gone before Snakemake's first sample has cpu_time NA: its wall time counts, its CPU as 0
    write_tsv(tmp_path / "benchmarks/rules/score/bison/random.tsv", 2.5, "NA")
    assert SCRIPT.rule_seconds(tmp_path, LOG)["score_benchmark"] == {
        "jobs": 1,
        "s": 2.5,
        "cpu_time": 0.0,
    }


def test_hub_archs_builds_each_small_open_clip_model_from_params_yamls_own_config_at_random_weights() -> None:
    archs = SCRIPT.hub_archs()["coco"]
    assert archs["threads"] is None  # params.yaml's: every core for a model job, as a real run (not coco-small's 1)
    models = archs["models"]
    real = yaml.safe_load((REPO / "params.yaml").read_text())["coco"]["models"]
    small = yaml.safe_load((REPO / "workflow/config/coco-small.yaml").read_text())["coco"]["models"]
    assert set(models) == {m for m, s in small.items() if s.get("family") == "open_clip"}
    for name, spec in models.items():
        assert spec["arch"] == real[name]["arch"] and spec["pretrained"] is None, name
        assert spec.get("trainer") == small[name].get("trainer"), name  # the fine-tunes stay fine-tunes
