"""Snakemake's benchmark file of a job whose command the warm worker ran records the command's CPU and memory
(itmbench.worker_benchmark), not those of the thin client that waited for it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from itmbench import worker, worker_benchmark

ITMBENCH = shutil.which("itmbench")
pytestmark = pytest.mark.skipif(ITMBENCH is None, reason="the itmbench entry point is not installed (pip install -e .)")

# A worker whose command burns the CPU seconds and holds the MB its arguments say: `itmbench SECONDS MB`
# (preloading nothing: the test waits for no import).
BURNER = textwrap.dedent(
    """
    import sys, time
    from itmbench import worker

    def burn(argv):
        seconds, mb = float(argv[0]), int(argv[1])
        block = bytearray(mb * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1  # resident, not only reserved
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            pass
        return 0

    worker.Worker(sys.argv[1], sys.argv[3], int(sys.argv[2]), burn).serve()  # no preload: nothing to wait for
    """
)

# A run whose onstart does what itmbench.worker.start does, with the burner as the worker.
SNAKEFILE = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from itmbench import worker, worker_benchmark

    onstart:
        folder = os.path.abspath("worker")
        os.makedirs(folder)
        sock = os.path.join(folder, "socket")
        proc = subprocess.Popen(
            [sys.executable, "burner.py", sock, str(os.getpid()), "worker.jsonl"],
            env=worker.worker_env(dict(os.environ)),
        )
        while not os.path.exists(sock) and proc.poll() is None:
            time.sleep(0.01)
        os.environ[worker.SOCKET_VAR] = sock
        {install}

    rule burn:
        output:
            "burnt.txt",
        benchmark:
            "burn.tsv"
        log:
            "burn.log",
        shell:
            "{itmbench} 2.0 400 > {{log}} 2>&1 && touch {{output}}"
    """
)


def run_burn(folder: Path, install: bool = True) -> tuple[pd.Series, list[str]]:
    """The job, run by Snakemake, and the worker's log; `install=False` leaves Snakemake's benchmark as it is."""
    (folder / "burner.py").write_text(BURNER)
    snakefile = SNAKEFILE.format(itmbench=ITMBENCH, install="worker_benchmark.install(folder)" if install else "pass")
    (folder / "Snakefile").write_text(snakefile)
    env = {k: v for k, v in os.environ.items() if k not in (worker.SOCKET_VAR, "PYTEST_CURRENT_TEST")}
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "-s", "Snakefile"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    commands = (folder / "worker.jsonl").read_text().splitlines()
    return pd.read_csv(folder / "burn.tsv", sep="\t").iloc[0], commands


def test_a_job_the_worker_ran_has_its_commands_cpu_and_memory_in_its_benchmark_file(tmp_path):
    """Without the wrapper (install=False) the file held the client's figures: cpu_time 0.09, max_rss 18.5."""
    row, commands = run_burn(tmp_path)
    assert len(commands) == 1 and '"status": 0' in commands[0], commands  # it ran in the worker
    # the command's 2 CPU seconds, plus the shell's and the client's start-up
    assert 2.0 <= float(row["cpu_time"]) < 3.5, row.to_dict()
    assert float(row["max_rss"]) >= 400, row.to_dict()  # the command's 400 MB
    assert float(row["s"]) >= 2.0, row.to_dict()
    assert row["max_vms"] == "-", row.to_dict()  # unknown for the command: not the client's
    assert not list((tmp_path / "worker/usage").glob("*")), "lines left behind"


def test_a_line_of_an_earlier_process_with_the_same_id_is_not_taken(tmp_path):
    usage = os.wait4(_finished_child(), 0)[2]
    worker_benchmark.record(str(tmp_path), (12345, 777), usage)
    worker_benchmark.record(str(tmp_path), (12345, 778), usage)
    lines = worker_benchmark.take(str(tmp_path), 12345, 778)
    assert len(lines) == 1 and lines[0]["start"] == 778
    assert not (tmp_path / "usage/12345.jsonl").exists()


def _finished_child() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return pid
