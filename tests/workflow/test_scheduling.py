"""The default DAG's scheduling: trainings carry a priority, and the model others build on comes first."""

from __future__ import annotations

import re
from pathlib import Path

from workflow_helpers import copy_workflow, snakemake


def planned_priorities(workdir: Path) -> dict[tuple[str, str], int]:
    """(rule, wildcards) -> priority of every job a dry run plans that prints one."""
    res = snakemake(workdir, "-n")
    assert res.returncode == 0, res.stderr[-3000:]
    out: dict[tuple[str, str], int] = {}
    rule, wildcards = "", ""
    for line in (res.stdout + res.stderr).splitlines():
        line = line.strip()
        if m := re.match(r"^(?:local)?rule (\w+):$", line):
            rule, wildcards = m.group(1), ""
        elif line.startswith("wildcards:"):
            wildcards = line[len("wildcards:") :].strip()
        elif m := re.match(r"^priority: (\d+)$", line):
            out[(rule, wildcards)] = int(m.group(1))
    return out


def test_trainings_come_before_short_jobs_and_clip_first(tmp_path: Path) -> None:
    prio = planned_priorities(copy_workflow(tmp_path))
    train = {w.removeprefix("trained="): p for (rule, w), p in prio.items() if rule == "train"}
    # clip: three fine-tunes start from it (init), the FFNN reads its embeddings (upstream), and it is the
    # cross scorers' shortlist model: 1 + 5
    assert train["clip"] == 6
    assert {train[m] for m in ("clip_coco", "clip_trohn_text", "clip_trohn_img", "vse", "de_i2t", "coca")} == {1}
    assert len(train) == 10 and max(train, key=train.get) == "clip"
    assert {rule for rule, _ in prio} == {"train"}  # every other job keeps Snakemake's default (0, not printed)
