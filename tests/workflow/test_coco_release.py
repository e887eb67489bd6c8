"""The COCO DAG's data stage, run by Snakemake on the world's COCO-format release: fetch, items, every benchmark.

The tiny world's benchmarks are built by the world's own rules, exported by `itmbench export-release`, and the
coco source's rules run on the export as on a mirror of the real files (`--config source=coco mirror=<release>
registry=<release>/released.yaml`): every file fetched through DVC and md5-checked against the release's own
overlay, `coco-items` from the zips, each benchmark from its released files, the union of the items they need.
(The rest of the COCO DAG needs the coco models: pretrained hub weights, an LLM and SDXL.)
"""

from __future__ import annotations

import pandas as pd
import pytest
from workflow_helpers import copy_workflow, snakemake

from itmbench.cli import main
from itmbench.sources.coco_benchmarks import COCO_BENCHMARKS
from itmbench.sources.export import OVERLAY
from itmbench.sources.released import file_md5, load_registry


@pytest.mark.slow
def test_the_coco_dags_data_stage_runs_on_the_worlds_release(tmp_path):
    (tmp_path / "run").mkdir()
    d = copy_workflow(tmp_path / "run")
    res = snakemake(d, *[f"data/world/{name}/items.parquet" for name in COCO_BENCHMARKS])
    assert res.returncode == 0, res.stderr[-3000:]
    release = tmp_path / "release"
    assert main(["export-release", "--world", str(d / "data" / "world"), "--out", str(release)]) == 0
    overlay = {"source": "coco", "mirror": str(release), "registry": str(release / OVERLAY)}
    targets = [f"data/coco/{name}/items.parquet" for name in COCO_BENCHMARKS] + ["data/coco/needed_items.parquet"]
    res = snakemake(d, *targets, override=overlay)
    assert res.returncode == 0, res.stderr[-3000:]
    declared = load_registry(release / OVERLAY)
    fetched = [p for p in (d / "data" / "raw").rglob("*") if p.is_file()]
    assert {p.relative_to(d / "data" / "raw").as_posix() for p in fetched} == {
        str(e.mirror_path) for e in declared.values()
    }
    for entry in declared.values():  # the release's bytes, checked against its own md5s
        assert file_md5(d / "data" / "raw" / entry.mirror_path) == entry.md5, entry.key
    world = pd.read_parquet(d / "data" / "world" / "items" / "images.parquet")
    coco = pd.read_parquet(d / "data" / "coco" / "items" / "images.parquet")
    assert len(coco) == len(world) and (coco["split"].value_counts() == world["split"].value_counts()).all()
    for name in COCO_BENCHMARKS:
        assert len(pd.read_parquet(d / "data" / "coco" / name / "items.parquet")), name
