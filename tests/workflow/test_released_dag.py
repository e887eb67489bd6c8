"""The released source in the DAG: files fetched through DVC from a loopback HTTP mirror, statistics regenerated."""

from __future__ import annotations

import pandas as pd
import pytest
from workflow_helpers import copy_workflow, failure, snakemake


@pytest.mark.slow
def test_released_statistics_regenerate_from_an_http_mirror(tmp_path, http_mirror):
    d = copy_workflow(tmp_path)
    target = "results/released/tables/statistics/mcic.csv"
    res = snakemake(d, target, "--config", f"mirror={http_mirror}")
    assert res.returncode == 0, failure(d, res)
    stats = pd.read_csv(d / target)
    instances = stats[stats["column"].str.contains("instances", case=False) | stats["row"].isin(["dev", "test"])]
    assert not instances.empty
    # the paper's instance counts agree with the files; the unique-image counts are flagged, not hidden
    agree = stats[stats["status"] == "agree"]
    assert {9999.0, 10253.0} <= set(agree["regenerated"])
    assert (agree["difference"] == 0).all()
    assert set(stats.loc[stats["status"] == "disagree", "regenerated"]) == {2384.0, 2621.0}
    fetched = d / "data/raw/raw.githubusercontent.com/google/mcic-coco/master/data/mc_mscoco_dev.txt"
    assert fetched.is_file()
    # nothing left to do afterwards
    again = snakemake(d, target, "--config", f"mirror={http_mirror}", "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
