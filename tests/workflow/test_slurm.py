"""The DAG through the SLURM executor on a loopback cluster (tests/workflow/slurm_cluster.py).

Runs the tiny world's retrieval table (train, embed and pair-scoring jobs on the `gpu` partition,
the rest on `cpu`) through `--workflow-profile workflow/profiles/slurm`, the profile as shipped, and
checks from `sacct` that every job ran as a SLURM job with the partition, GPUs, memory, time and
CPUs Snakemake resolved for it; the outputs equal a local run's byte for byte. Then a training job
cancelled mid-run is resubmitted and resumes from its last finished epoch.

Skipped where the cluster cannot run: without Debian's slurm packages (`.ci/install_slurm.sh`),
without snakemake-executor-plugin-slurm, or not as root (slurmd runs jobs as their user).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from slurm_cluster import LoopbackCluster, missing_binaries
from workflow_helpers import REPO, copy_workflow, failure, snakemake

# The retrieval metrics of clip (world, build, train, embed, score) and of the FFNN cross scorer
# that reranks clip's candidates (split, embed_train_split, train_ffnn, score_pairs, score): a dozen
# jobs, four GPU rules among them. The whole tiny world (149 jobs) takes too long for CI on 2 cores.
TARGETS = ("results/world/metrics/retrieval/clip.json", "results/world/metrics/retrieval/ffnn.json")
PROFILE = "workflow/profiles/slurm"


def _skip_reason() -> str | None:
    missing = missing_binaries()
    if missing:
        return f"no SLURM here (missing {', '.join(missing)}): run .ci/install_slurm.sh (Debian)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install -e '.[cluster]')"
    if os.geteuid() != 0:
        return "the loopback cluster's slurmd must run as root"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))]


@pytest.fixture(scope="module")
def cluster():
    c = LoopbackCluster().start()
    try:
        yield c
    finally:
        c.stop()


def slurm_snakemake(cluster: LoopbackCluster, workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """Snakemake with the shipped SLURM profile on the loopback cluster (status checks every few seconds)."""
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--workflow-profile",
        PROFILE,
        "--slurm-init-seconds-before-status-checks",
        "2",
        "--slurm-keep-successful-logs",
        *args,
        "--configfile",
        "tiny.yaml",
    ]
    return subprocess.run(cmd, cwd=workdir, env=cluster.env(), capture_output=True, text=True, timeout=1500)


def submitted_jobs(out: str) -> dict[str, dict]:
    """SLURM job id -> the job Snakemake printed: rule, wildcards, threads and resources."""
    jobs: dict[str, dict] = {}
    current: dict | None = None
    for line in out.splitlines():
        line = line.strip()
        if m := re.match(r"^(?:local)?rule (\w+):$", line):
            current = {"rule": m.group(1), "wildcards": "", "threads": 1, "resources": {}}
            by_id = current
        elif current is not None and (m := re.match(r"^jobid: (\d+)$", line)):
            jobs.setdefault("_by_jobid", {})[m.group(1)] = by_id
        elif current is not None and line.startswith("wildcards:"):
            current["wildcards"] = line[len("wildcards:") :].strip()
        elif current is not None and (m := re.match(r"^threads: (\d+)$", line)):
            current["threads"] = int(m.group(1))
        elif current is not None and line.startswith("resources:"):
            for item in line[len("resources:") :].split(", "):
                k, _, v = item.strip().partition("=")
                current["resources"][k] = v
        elif m := re.match(r"^Job (\d+) has been submitted with SLURM jobid (\d+)", line):
            jobs[m.group(2)] = jobs["_by_jobid"][m.group(1)]
    jobs.pop("_by_jobid", None)
    return jobs


SACCT = ("JobID", "Partition", "State", "ReqTRES", "Timelimit", "ReqMem", "ReqCPUS", "Comment", "WorkDir")


@pytest.fixture(scope="module")
def slurm_run(cluster, tmp_path_factory):
    d = copy_workflow(tmp_path_factory.mktemp("slurm"))
    t0 = time.monotonic()
    res = slurm_snakemake(cluster, d, *TARGETS)
    wall = time.monotonic() - t0
    assert res.returncode == 0, failure(d, res) + cluster.logs()
    out = res.stdout + res.stderr
    print(f"SLURM run of {TARGETS}: {wall:.0f} s, {out.count('has been submitted with SLURM jobid')} sbatch")
    return d, out, [r for r in cluster.sacct(*SACCT) if r["WorkDir"] == str(d)]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    d = copy_workflow(tmp_path_factory.mktemp("local"))
    res = snakemake(d, *TARGETS)
    assert res.returncode == 0, failure(d, res)
    return d


def test_every_job_ran_as_a_slurm_job_and_completed(slurm_run):
    d, out, rows = slurm_run
    jobs = submitted_jobs(out)
    planned = len(re.findall(r"^\s*rule \w+:$", out, flags=re.M))  # localrules would print `localrule`
    assert len(jobs) == planned >= 10
    by_id = {r["JobID"]: r for r in rows}
    assert set(by_id) == set(jobs), (sorted(by_id), sorted(jobs))
    assert {r["State"] for r in rows} == {"COMPLETED"}, rows


def test_gpu_rules_ran_on_the_gpu_partition_with_one_gpu_and_the_others_did_not(slurm_run):
    _, out, rows = slurm_run
    jobs = submitted_jobs(out)
    declared = {r: yaml.safe_load((REPO / PROFILE / "config.yaml").read_text())["set-resources"] for r in [0]}[0]
    gpu_rules = set()
    for row in rows:
        job = jobs[row["JobID"]]
        assert row["Comment"].startswith(f"rule_{job['rule']}"), (row, job)
        if job["resources"].get("gpu") == "1":
            gpu_rules.add(job["rule"])
            assert row["Partition"] == "gpu" and "gres/gpu=1" in row["ReqTRES"].split(","), (job["rule"], row)
            assert declared[job["rule"]]["slurm_partition"] == "gpu"
        else:
            assert row["Partition"] == "cpu" and "gres/gpu" not in row["ReqTRES"], (job["rule"], row)
    assert {"train", "embed", "embed_train_split", "score_pairs"} <= gpu_rules, gpu_rules


def test_memory_time_and_cpus_requested_are_the_rules_resources(slurm_run):
    _, out, rows = slurm_run
    jobs = submitted_jobs(out)
    for row in rows:
        job = jobs[row["JobID"]]
        res = job["resources"]
        assert row["ReqMem"] == f"{res['mem_mb']}M", (job["rule"], row, res)
        minutes = int(res["runtime"])
        assert row["Timelimit"] == f"{minutes // 60:02d}:{minutes % 60:02d}:00", (job["rule"], row, res)
        assert int(row["ReqCPUS"]) == job["threads"], (job["rule"], row, job)
    train = [jobs[r["JobID"]] for r in rows if jobs[r["JobID"]]["rule"] == "train"]
    assert train and {j["resources"]["runtime"] for j in train} == {"240"}  # the profile's set-resources


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for top in ("data", "results")
        for p in sorted((root / top).rglob("*"))
        if p.is_file() and p.name != "history.json"  # a training history records its epochs' seconds
    }


def test_outputs_equal_a_local_run_byte_for_byte(slurm_run, local_run):
    d, _, _ = slurm_run
    remote, local = _files(d), _files(local_run)
    assert set(TARGETS) <= set(remote)
    assert sorted(remote) == sorted(local)
    differ = [name for name in remote if remote[name] != local[name]]
    assert not differ, differ


def test_shipped_profile_sends_every_rule_that_declares_a_gpu_to_the_gpu_partition(tmp_path):
    """Static: every rule of the workflow with a `gpu` resource has `slurm_partition: gpu` in the profile."""
    declared = yaml.safe_load((REPO / PROFILE / "config.yaml").read_text())["set-resources"]
    gpu_rules = set()
    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        for m in re.finditer(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", smk.read_text(), flags=re.M | re.S):
            if re.search(r"^\s+resources:\n(?:\s+\w+=.*\n)*?\s+gpu=", m.group(2), flags=re.M):
                gpu_rules.add(m.group(1))
    assert {"train", "embed", "coco_finetune"} <= gpu_rules
    for rule in sorted(gpu_rules):
        assert declared.get(rule, {}).get("slurm_partition") == "gpu", rule
    for rule, res in declared.items():
        assert "slurm_extra" not in res, rule  # the plugin refuses --gres/--gpus there; `gpu` becomes --gpus


def test_a_cancelled_training_job_is_resubmitted_and_resumes_to_the_same_checkpoint(cluster, slurm_run, tmp_path):
    d, _, _ = slurm_run
    work = tmp_path / "w"
    shutil.copytree(d, work, symlinks=True)  # copy2: the first run's modification times and metadata
    model = "results/world/models/clip"
    shutil.rmtree(work / model)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--workflow-profile",
        PROFILE,
        "--slurm-init-seconds-before-status-checks",
        "2",
        f"{model}/model.pt",
        "--configfile",
        "tiny.yaml",
    ]
    env = cluster.env()
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600
        while not (work / model / ".resume.pt").exists():  # an epoch finished
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline
            time.sleep(0.5)
        running = [r for r in cluster.sacct(*SACCT) if r["WorkDir"] == str(work) and r["State"] == "RUNNING"]
        assert len(running) == 1, running  # the training job (sacct records the comment when a job ends)
        cluster.run("scancel", running[0]["JobID"])
        out, _ = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out[-4000:]
    rows = [r for r in cluster.sacct(*SACCT) if r["WorkDir"] == str(work)]
    assert [r["State"].split()[0] for r in rows] == ["CANCELLED", "COMPLETED"], rows
    assert "resumed clip from epoch" in (work / "logs/train/clip.log").read_text()
    assert (work / model / "model.pt").read_bytes() == (d / model / "model.pt").read_bytes()
    assert not (work / model / ".resume.pt").exists()
