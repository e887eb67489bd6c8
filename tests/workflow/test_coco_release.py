"""The COCO DAG's data stage, run by Snakemake on the world's COCO-format release: fetch, items, every benchmark.

The tiny world's benchmarks are built by the world's own rules, exported by `itmbench export-release`, and the
coco source's rules run on the export as on a mirror of the real files (`--config source=coco mirror=<release>
registry=<release>/released.yaml`): every file fetched through DVC and md5-checked against the release's own
overlay, `coco-items` from the zips, each benchmark from its released files, the union of the items they need.
(The rest of the COCO DAG needs the coco models: pretrained hub weights, an LLM and SDXL.) Then a user's own
checkpoint in one command: the world's `clip` weights as `coco.models.mine`, selected with the random baseline
by `coco.only_models`, scored on every benchmark and a row of each table, with nothing trained, generated or
downloaded; every report and the index rendered with that one image-text model (ECCV's ranking figure drawing
its two metrics, Table 5 saying a ranking needs two).
"""

from __future__ import annotations

import re
from collections import Counter

import pandas as pd
import pytest
from workflow_helpers import copy_workflow, failure, planned_jobs, snakemake

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

    # a user's checkpoint in one command (docs/coco.md, "Scoring your own checkpoint"): the world's clip
    res = snakemake(d, "results/world/models/clip/model.pt")
    assert res.returncode == 0, res.stderr[-3000:]
    mine = {"family": "open_clip", "arch": "itm-clip-tiny", "pretrained": "results/world/models/clip/model.pt"}
    user = {**overlay, "coco": {"models": {"mine": mine}, "only_models": ["mine", "random"]}}
    plan = planned_jobs(d, override=user)
    rules = Counter(rule for rule, _ in plan)
    assert not {"coco_caption_negatives", "coco_image_negatives", "coco_finetune", "train"} & set(rules), rules
    scoring = [w for rule, w in plan if rule in ("embed", "embed_added", "score_benchmark")]
    assert {re.search(r"model=(\w+)", w)[1] for w in scoring} == {"mine", "random"}, plan  # only those selected
    assert rules["score_benchmark"] == 2 * len(COCO_BENCHMARKS), rules
    tables = [f"results/coco/tables/{name}/{name}.csv" for name in COCO_BENCHMARKS]
    reports = ["reports/coco/eccv.html", "reports/index.html"]  # every report: the index links them all
    res = snakemake(d, *tables, *reports, override=user)
    assert res.returncode == 0, failure(d, res)
    # one image-text model (`random` is none): ECCV's figure draws its two metrics, Table 5 says why it is empty
    assert (
        "a ranking needs >= 2 image-text models"
        in (d / "results" / "coco" / "tables" / "eccv" / "table5.md").read_text()
    )
    assert (d / "results" / "coco" / "figures" / "eccv" / "ranking.png").stat().st_size
    assert "No cell regenerated: a ranking needs" in (d / "reports" / "coco" / "eccv.html").read_text()
    for name in COCO_BENCHMARKS:
        table = pd.read_csv(d / "results" / "coco" / "tables" / name / f"{name}.csv")
        rows = table["model"] if "model" in table else table["row"]  # a table's model column, or its row names
        assert set(rows) == {"mine", "random"}, (name, table)
    again = snakemake(d, "-n", *tables, *reports, override=user)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-3000:]
    # a selection naming no model of coco.models stops before planning, naming the key
    res = snakemake(d, "-n", override={**user, "coco": {"only_models": ["theirs"]}})
    said = res.stdout + res.stderr  # Snakemake prints a parse-time error on stdout
    assert res.returncode != 0 and "coco.only_models: ['theirs'] not in coco.models" in said, said[-3000:]
