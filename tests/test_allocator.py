"""The allocator settings of the DAG's jobs (itmbench.allocator): set for every job, a user's own kept, and doing
what they are there for (a freed large array's memory reused, not faulted in again)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from itmbench.allocator import SETTINGS, job_environment

sys.path.insert(0, str(Path(__file__).resolve().parent / "workflow"))
from workflow_helpers import copy_workflow  # noqa: E402


def test_the_settings_are_added_and_a_users_own_value_is_kept():
    env = {"PATH": "/usr/bin", "MALLOC_TOP_PAD_": "0"}
    assert job_environment(env) == {**SETTINGS, "MALLOC_TOP_PAD_": "0"}
    assert env == {"PATH": "/usr/bin", **SETTINGS, "MALLOC_TOP_PAD_": "0"}


# Allocates, fills and frees a 256 MiB buffer three times, then prints the minor page faults of the last two rounds
# (a bytes object: numpy asks the kernel for huge pages for its large arrays, torch and the rest do not).
FAULTS = """
import resource
def round_():
    a = b"x" * (256 << 20)
    del a
round_()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
round_(); round_()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="the settings are glibc's"
)
def test_with_the_settings_a_freed_large_array_is_reused_without_faulting_its_pages_in_again():
    """Without them each 256 MiB buffer is its own mmap, whose pages fault in every round (65,536 of them; 128
    huge pages where the kernel gives every large mapping huge pages). With them the second and third rounds
    reuse the heap the first one grew: almost no fault."""
    plain = {k: v for k, v in os.environ.items() if k not in SETTINGS}
    faults = {}
    for name, env in (("glibc defaults", plain), ("settings", {**plain, **SETTINGS})):
        out = subprocess.run([sys.executable, "-c", FAULTS], env=env, capture_output=True, text=True, check=True)
        faults[name] = int(out.stdout)
    assert faults["glibc defaults"] > 200, faults
    assert faults["settings"] * 10 < faults["glibc defaults"], faults


PROBE = """
include: "Snakefile"


rule allocator_probe:
    output:
        "probe/env.txt",
    shell:
        "env | grep ^MALLOC_ | sort > {output}"
"""


@pytest.mark.parametrize("users", [{}, {"MALLOC_TOP_PAD_": "0"}])
def test_every_job_of_the_workflow_runs_with_the_settings_unless_the_user_set_them(users, tmp_path):
    """The real Snakefile parsed, a job of it run: its environment has the settings, or the user's own value."""
    copy_workflow(tmp_path)
    (tmp_path / "Probe.smk").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS} | users
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "-s", "Probe.smk", "probe/env.txt", "--cores", "1"]
        + ["--configfile", "tiny.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = dict(line.split("=", 1) for line in (tmp_path / "probe/env.txt").read_text().splitlines())
    assert got == {**SETTINGS, **users}
