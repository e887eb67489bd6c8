"""BISON Table 6, a named target (`snakemake bison_table6`): the three captioning systems on each tower of the tiny
run, trained and scored by two jobs, rendered beside the printed systems; the default run neither builds nor
invalidates it, and a change to its section reruns its jobs alone."""

from __future__ import annotations

import pandas as pd
import pytest
from workflow_helpers import docs_shape_problems, failure, planned_jobs, snakemake

from itmbench.papers.bison.feature_captioners import SYSTEMS, TRAININGS

TABLE6 = "results/world/tables/bison/table6.md"
QUICK = {"bison_captioners": {"epochs": 1, "scst_epochs": 1, "embed": 8, "hidden": 8}}


@pytest.fixture(scope="module")
def table6_run(tiny_world_run, tmp_path_factory):
    import shutil

    d = shutil.copytree(tiny_world_run, tmp_path_factory.mktemp("table6") / "run", symlinks=True)
    res = snakemake(d, "bison_table6", override=QUICK)
    assert res.returncode == 0, failure(d, res)
    return d


@pytest.mark.slow
def test_table6_has_every_system_on_every_tower_beside_the_printed_blocks(table6_run):
    table = pd.read_csv(table6_run / "results/world/tables/bison/table6.csv")
    world = table[table["block"] == "world"]
    rows = list(dict.fromkeys(world["row"]))
    assert rows == [
        f"world, {training}, {t} features: {s}"
        for training in TRAININGS
        for t in ("clip", "clip_rn")
        for s in SYSTEMS.values()
    ]
    bison = world[world["column"] == "BISON"]
    assert bison["value"].between(0, 100).all() and (bison["lo"] <= bison["value"]).all()
    for column in ("BLEU-4", "CIDEr", "METEOR", "BISON"):
        assert world[world["column"] == column]["value"].notna().all(), column
    printed = table[table["source"] == "printed"]
    assert "Self-critical sequence loss, ResNeXt-IG-3.5B: UpDown" in set(printed["row"])
    cells = pd.read_parquet(table6_run / "results/world/bison/table6/clip_rn.parquet")
    assert len(cells) == len(SYSTEMS) * len(TRAININGS) * 5 and set(cells["tower"]) == {"clip_rn"}


@pytest.mark.slow
def test_the_table6_the_docs_show_has_the_shape_this_run_writes(table6_run):
    checked, problems = docs_shape_problems(table6_run, lambda p: p == TABLE6)
    assert checked and not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_default_run_leaves_table6_alone_and_its_section_reruns_its_jobs_only(table6_run):
    res = snakemake(table6_run, "-n", override=QUICK)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr, res.stderr[-2000:]
    longer = {"bison_captioners": {**QUICK["bison_captioners"], "epochs": 2}}
    again = sorted(planned_jobs(table6_run, "bison_table6", override=longer))
    assert [rule for rule, _ in again] == ["bison_feature_captioners"] * 2 + ["bison_table6"], again
