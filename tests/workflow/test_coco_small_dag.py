"""The complete COCO DAG, executed: every rule of `source: coco` runs on the world's COCO-format release with
the small models of `workflow/config/coco-small.yaml` (docs/coco.md, "A smoke test before the GPU hours").

The tiny world's benchmarks are built by the world's rules and exported (`itmbench export-release`); the small
models are made by `itmbench make-small-models --world` (a random-weight open_clip folder for the ViTs and the
start of the fine-tunes; for OpenChat a small Llama-architecture LM and for SDXL-DPO a small SDXL pipeline,
both trained on the tiny world's train split), each loaded by path as the hub names are. Then the documented
command runs the default target with the GPU profile (on a CPU it runs the same; CI has no GPU): fetch through
DVC against the release's md5s, coco-items, every benchmark, the LLM and SDXL negatives in shards and their
merge (each stage's output non-empty and of its declared size: kept negatives per subtype, images per drawn
caption, the TROHN fine-tunes' training pairs), the three fine-tunes, embeddings, scores and metrics, each
paper's tables and figures with the models as rows, the claims, the reports and the index. A second dry run
has nothing to do. Cost: measured with `/usr/bin/time -v` of the same command (the report of issue 16).
The same folder then checks the data stage (every file fetched through DVC and md5-checked against the release's
own overlay, `coco-items` from the zips, each benchmark from its released files) and a user's own checkpoint in
one command: the world's `clip` weights as `coco.models.mine`, selected with the random baseline by
`coco.only_models`, planned from a fresh folder with nothing trained, generated or downloaded, then scored on
every benchmark and a row of each table, every report and the index rendered with that one image-text model
(ECCV's ranking figure drawing its two metrics, Table 5 saying a ranking needs two). One folder for both: the
world's benchmarks, their export and the data stage are built once (docs/testing.md, issue 33).
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from collections import Counter

import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO, copy_workflow, failure, planned_jobs, snakemake, stage_counts

from itmbench.cli import main
from itmbench.negatives.llm_captions import LLMConfig
from itmbench.negatives.sdxl import SDXLConfig
from itmbench.params import make_config
from itmbench.sources.coco_registry import COCO_BENCHMARKS
from itmbench.sources.export import OVERLAY
from itmbench.sources.released import file_md5, load_registry
from itmbench.train.config import TrainConfig

SMALL = "workflow/config/coco-small.yaml"


def coco_snakemake(d, *args, overlay):
    """The documented command: the small params over params.yaml, then source/mirror/registry."""
    (d / "release.yaml").write_text(yaml.safe_dump(overlay))
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", *args, "--configfile", SMALL, "release.yaml"]
    return subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=3000)


def job_counts(text: str) -> Counter:
    """The 'Job stats' table Snakemake prints (rule -> jobs), without `all` and the total."""
    block = text.split("Job stats:", 1)[1]
    counts = Counter()
    for line in block.splitlines()[3:]:
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if not m:
            break
        counts[m.group(1)] = int(m.group(2))
    counts.pop("all", None)
    counts.pop("total", None)
    return counts


def rows_of(path, column: str = "row") -> list[str]:
    """One column of a table's records (a benchmark table's `model` where it has one, as retrieval's does)."""
    with open(path, newline="", encoding="utf-8") as f:
        return [r.get(column) or r["row"] for r in csv.DictReader(f)]


@pytest.mark.slow
def test_the_complete_coco_dag_runs_on_the_worlds_release_with_the_small_models(tmp_path):
    (tmp_path / "run").mkdir()
    d = copy_workflow(tmp_path / "run")
    res = snakemake(d, *[f"data/world/{name}/items.parquet" for name in COCO_BENCHMARKS])
    assert res.returncode == 0, res.stderr[-3000:]
    release = tmp_path / "release"
    assert main(["export-release", "--world", str(d / "data" / "world"), "--out", str(release)]) == 0
    make_small = [
        "make-small-models",
        "--out",
        str(d / "data" / "small_models"),
        "--world",
        str(d / "data/world/items"),
    ]
    assert main(make_small) == 0  # the LLM and SDXL trained on the tiny world's train split
    overlay = {"source": "coco", "mirror": str(release), "registry": str(release / OVERLAY)}

    plan = coco_snakemake(d, "-n", overlay=overlay)
    assert plan.returncode == 0, plan.stderr[-3000:]
    planned = job_counts(plan.stdout + plan.stderr)
    small = yaml.safe_load((REPO / SMALL).read_text())["coco"]
    models = yaml.safe_load((REPO / "params.yaml").read_text())["coco"]["models"]
    # every rule of the COCO DAG is in the plan (the same plan as tests/workflow/test_coco_dag.py's)
    assert planned["coco_items"] == 1 and planned["coco_benchmark"] == len(COCO_BENCHMARKS)
    assert planned["coco_caption_negatives"] == small["llm_shards"] and planned["coco_merge_negatives"] == 1
    assert planned["coco_image_negatives"] == small["sdxl_shards"]
    assert planned["coco_finetune"] == 3 and planned["embed"] == len(models)
    assert planned["score_benchmark"] == len(COCO_BENCHMARKS) * len(models)
    for rule in ("fetch_released", "coco_needed_items", "embed_added", "bison_caption_metric", "claims", "index"):
        assert planned[rule] >= 1, rule
    # the world's release holds the benchmarks, not the papers' per-model results: no released report
    assert not any(rule.startswith("released") or rule == "report_released" for rule in planned), planned

    res = coco_snakemake(d, "--workflow-profile", "workflow/profiles/gpu", overlay=overlay)
    assert res.returncode == 0, (res.stdout + res.stderr)[-5000:]
    assert job_counts(res.stdout + res.stderr) == planned  # every planned job ran

    again = coco_snakemake(d, "-n", overlay=overlay)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-3000:]

    coco = d / "results" / "coco"
    index = (d / "reports" / "index.html").read_text(encoding="utf-8")
    for bench in COCO_BENCHMARKS:
        assert (d / "reports" / "coco" / f"{bench}.html").stat().st_size > 10_000, bench
        assert f"coco/{bench}.html" in index, bench
        table = rows_of(coco / "tables" / bench / f"{bench}.csv", "model")
        assert sorted(set(table)) == sorted(models), (bench, table)  # every model's rows (MCIC: one per split)
        for model in models:
            assert (coco / "metrics" / bench / f"{model}.json").is_file(), (bench, model)
    # each paper's tables in its own layout, the COCO models as rows
    table2 = dict(
        zip(
            rows_of(coco / "tables" / "bivlc" / "table2.csv"),
            rows_of(coco / "tables" / "bivlc" / "table2.csv", "model"),
        )
    )
    assert table2["CLIP"] == "vit_b_32" and table2["CLIP_TROHN-Img"] == "clip_trohn_img", table2  # report.rows
    for paper in ("bison", "mcic", "eccv", "cxc", "sugarcrepe"):
        tables = sorted((coco / "tables" / paper).glob("*.csv"))
        assert tables, paper
        for ext in (".md", ".tex"):
            assert all(t.with_suffix(ext).is_file() for t in tables), (paper, ext)
        figures = sorted((coco / "figures" / paper).glob("*.png"))
        assert figures and all(f.with_suffix(".pdf").is_file() for f in figures), paper
    assert rows_of(coco / "tables" / "claims" / "claims.csv", "claim")
    check_every_stage_produces(coco, small)

    check_the_data_stage(d, release)
    check_a_users_checkpoint(d, tmp_path, overlay)


def check_every_stage_produces(coco, small) -> None:
    """Each TROHN stage's output is non-empty and of the size its inputs and the small params declare."""
    counts = stage_counts(coco)
    subsets = make_config(LLMConfig).subsets
    # TROHN-Text: one generation per (caption, subtype); the trained LM's answers pass the real filter
    assert counts["generations"] == {s: small["trohn_captions"] for s in subsets}, counts
    # The LM's weights are the same for the same seed, world and thread count on one machine, not across machines
    # (another CPU's kernels or another library release round differently, and 1,350 steps amplify it): two
    # machines' runs kept 64 negatives in 6 subtypes and 46 in 5 (docs/coco.md). The bounds are well below both;
    # a random-weight LM keeps none.
    kept = sum(counts["kept"].values())
    assert kept >= 0.25 * len(subsets) * small["trohn_captions"], counts
    assert len(counts["kept"]) >= len(subsets) // 2, counts  # add_att may find no attribute left to add
    summary = pd.read_csv(coco / "tables" / "trohn" / "text_filter.csv")
    assert int(summary["ok"].sum()) == kept
    # TROHN-Img: images_per_prompt images of each drawn negative caption, in every shard
    drawn = min(small["trohn_img_captions"], kept)
    per_prompt = make_config(SDXLConfig).images_per_prompt
    assert counts["image_shards"] == small["sdxl_shards"]
    assert len(counts["images_per_caption"]) == drawn and set(counts["images_per_caption"].values()) == {per_prompt}
    # the fine-tunes trained on them: TROHN-Text's hard negatives drawn from the kept ones, TROHN-Img's pairs the drawn
    histories = counts["histories"]
    assert histories["clip_coco"]["samples"] > 0
    train = make_config(
        TrainConfig, {**yaml.safe_load((REPO / "params.yaml").read_text())["coco"]["train"], **small["train"]}
    )
    per_sample = train.hard_negatives_per_sample  # TROHN-Text draws up to this many of a caption's kept negatives
    used = sum(min(per_sample, n) for n in counts["kept_per_caption"])
    assert used > 0 and sum(histories["clip_trohn_text"]["negatives"].values()) == used, histories
    assert histories["clip_trohn_img"]["samples"] == drawn, histories


def check_the_data_stage(d, release):
    """Every file the release declares fetched and md5-checked; the items and every benchmark built from them."""
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


def check_a_users_checkpoint(d, tmp_path, overlay):
    """docs/coco.md, "Scoring your own checkpoint": the world's clip as `mine`, with `random`, and nothing else."""
    res = snakemake(d, "results/world/models/clip/model.pt")
    assert res.returncode == 0, res.stderr[-3000:]
    mine = {"family": "open_clip", "arch": "itm-clip-tiny", "pretrained": "results/world/models/clip/model.pt"}
    user = {**overlay, "coco": {"models": {"mine": mine}, "only_models": ["mine", "random"]}}
    # planned from a fresh folder (only the checkpoint there): nothing trained, generated or downloaded
    (tmp_path / "fresh").mkdir()
    fresh = copy_workflow(tmp_path / "fresh")
    (fresh / "results/world/models/clip").mkdir(parents=True)
    (fresh / "results/world/models/clip/model.pt").write_bytes((d / "results/world/models/clip/model.pt").read_bytes())
    plan = planned_jobs(fresh, override=user)
    rules = Counter(rule for rule, _ in plan)
    assert not {"coco_caption_negatives", "coco_image_negatives", "coco_finetune", "train"} & set(rules), rules
    scoring = [w for rule, w in plan if rule in ("embed", "embed_added", "score_benchmark")]
    assert {re.search(r"model=(\w+)", w)[1] for w in scoring} == {"mine", "random"}, plan  # only those selected
    assert rules["score_benchmark"] == 2 * len(COCO_BENCHMARKS), rules
    # run here, after the complete DAG: the data stage is done, `mine` is scored and every table re-rendered
    tables = [f"results/coco/tables/{name}/{name}.csv" for name in COCO_BENCHMARKS]
    reports = ["reports/coco/eccv.html", "reports/index.html"]  # every report: the index links them all
    res = coco_snakemake(d, *tables, *reports, overlay=user)
    assert res.returncode == 0, failure(d, res)
    # one image-text model (`random` is none): ECCV's figure draws its two metrics, Table 5 says why it is empty
    coco = d / "results" / "coco"
    assert "a ranking needs >= 2 image-text models" in (coco / "tables" / "eccv" / "table5.md").read_text()
    assert (coco / "figures" / "eccv" / "ranking.png").stat().st_size
    assert "No cell regenerated: a ranking needs" in (d / "reports" / "coco" / "eccv.html").read_text()
    for name in COCO_BENCHMARKS:
        table = pd.read_csv(coco / "tables" / name / f"{name}.csv")
        rows = table["model"] if "model" in table else table["row"]  # a table's model column, or its row names
        assert set(rows) == {"mine", "random"}, (name, table)
    again = coco_snakemake(d, "-n", *tables, *reports, overlay=user)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr, again.stdout[-3000:]
    # a selection naming no model of coco.models stops before planning, naming the key
    res = snakemake(d, "-n", override={**user, "coco": {"only_models": ["theirs"]}})
    said = res.stdout + res.stderr  # Snakemake prints a parse-time error on stdout
    assert res.returncode != 0 and "coco.only_models: ['theirs'] not in coco.models" in said, said[-3000:]


@pytest.mark.slow
def test_the_released_report_joins_a_run_only_where_the_mirror_holds_its_files(tmp_path):
    """A mirror of the real files (no overlay, or one declaring them all) brings the released report into the
    run; a release whose overlay declares only some of them (the world's: benchmarks, no per-model results)
    does not: planning it would fetch files the release does not have (the first join the small DAG broke)."""
    from itmbench.sources.released import load_registry, registry_text

    d = copy_workflow(tmp_path)
    packaged = load_registry()
    (d / "some.yaml").write_text(registry_text([packaged["karpathy_splits"], packaged["bison_annotations"]]))
    (d / "all.yaml").write_text(registry_text(packaged.values()))

    def released_rules(**config):
        res = snakemake(d, "-n", override={"source": "coco", "mirror": str(tmp_path / "mirror"), **config})
        assert res.returncode == 0, res.stderr[-3000:]
        counts = job_counts(res.stdout + res.stderr)
        return {rule for rule in counts if rule.startswith("released") or rule == "report_released"}

    assert released_rules() >= {"report_released", "released_statistics", "released_paper_tables"}
    assert released_rules(registry=str(d / "all.yaml")) >= {"report_released", "released_statistics"}
    assert released_rules(registry=str(d / "some.yaml")) == set()
