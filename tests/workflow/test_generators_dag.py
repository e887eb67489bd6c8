"""The DAG with `bivlc.generator: diffusion` on a tiny world: train, generate, filter, rebuild BiVLC, score, compare."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
from workflow_helpers import REPO, copy_workflow, docs_shape_problems, failure, planned_jobs, snakemake

from itmbench.cli import main
from itmbench.negatives.diffusion import DiffusionGenerator
from itmbench.papers.bivlc import canonical as bivlc_canonical
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.params import make_config

DIFFUSION = {
    "world": {"n_train": 120, "n_val": 20, "n_test": 20},
    "bivlc": {"generator": "diffusion", "max_images": 3, "num_inference_steps": 2},
    "diffusion": {
        "resolution": 16,
        "block_out_channels": [8, 16],
        "norm_num_groups": 4,
        "attention_head_dim": 4,
        "text_width": 16,
        "text_layers": 1,
        "text_heads": 2,
        "batch_size": 4,
        "train_steps": 3,
        "warmup_steps": 1,
    },
    "recognizer": {"channels": [8, 8, 16, 16], "epochs": 1, "n_samples": 32, "batch_size": 32},
    "filter_rates": {"sample": 6},
}
TARGETS = (
    "results/world/metrics/bivlc/random.json",
    "results/world/tables/bivlc/audit.md",
    "results/world/tables/bivlc/generators.md",
    "results/world/figures/bivlc/generated_negatives.png",
)
NEGATIVE_RULES = {
    "train_diffusion",
    "train_recognizer",
    "generate_candidates",
    "generator_filter_rates",
    "plot_generated_negatives",
}
BIVLC_DOWNSTREAM = {"build_benchmark", "audit_benchmark", "embed_added", "score_benchmark"}


def _with(extra: dict) -> dict:
    """The tiny diffusion config with `extra` merged over it section by section."""
    out = copy.deepcopy(DIFFUSION)
    for section, values in extra.items():
        out.setdefault(section, {}).update(values)
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = copy_workflow(tmp_path_factory.mktemp("generators"))
    res = snakemake(d, "--cores", "1", *TARGETS, override=DIFFUSION)
    assert res.returncode == 0, failure(d, res)
    return d


@pytest.mark.slow
def test_bivlc_negatives_are_the_trained_diffusion_models_images(run_dir, one_torch_thread):
    tables = bivlc_canonical.read(run_dir / "data/world/bivlc")
    sc, inst, extra = tables["sugarcrepe"], tables["instances"], tables["extra_images"]
    assert len(sc) > 0 and len(inst) > 0
    assert sc["image_id"].nunique() == 3  # max_images
    cfg = make_config(BiVLCConfig, DIFFUSION["bivlc"])
    generator = DiffusionGenerator(
        str(run_dir / "results/world/models/diffusion"), 64, cfg.guidance_scale, cfg.num_inference_steps, cfg.seed
    )
    pixels = np.load(run_dir / "data/world/bivlc/extra_items/images.npy")
    chosen = sc.set_index("id")["chosen_candidate"]
    # the DAG ran with --cores 1, so the generating job had one thread, as this test has (one_torch_thread):
    # a sample is exact only for a given thread count
    for row, image in zip(inst.itertuples(index=False), pixels):
        regenerated = generator.images(row.negative_caption, cfg.n_candidates)[chosen[row.sugarcrepe_id]]
        assert np.array_equal(image, regenerated), row.id  # the diffusion model's sample, not a render
    assert not tables["candidates"][["missing_object", "extra_object"]].to_numpy().any()  # no simulated mistakes
    stored = pd.read_parquet(run_dir / "data/world/bivlc_candidates/candidates.parquet")
    assert len(stored) == cfg.n_candidates * sc["negative_caption"].nunique()
    assert (extra["image_id"] == inst["negative_image"]).all()
    metrics = json.loads((run_dir / "results/world/metrics/bivlc/random.json").read_text())
    assert metrics["n_bivlc"] == len(inst) and metrics["n_sugarcrepe"] == len(sc)


@pytest.mark.slow
def test_filter_rate_table_shows_both_generators(run_dir):
    table = pd.read_csv(run_dir / "results/world/tables/bivlc/generators.csv")
    cells = table.set_index(["row", "column"])["value"]
    for generator in ("render", "diffusion"):
        assert cells[(generator, "negative captions")] == 6
        assert cells[(generator, "candidates")] == 24
        kept = cells[(generator, "kept by both (%)")]
        assert 0.0 <= kept <= cells[(generator, "filter 1 (best of n) kept (%)")]
    records = pd.read_parquet(run_dir / "results/world/generators/bivlc/records.parquet")
    diffusion = records[records["generator"] == "diffusion"]
    assert cells[("diffusion", "candidates fitting the negative caption (%)")] == pytest.approx(
        100 * diffusion["fits_negative"].mean(), abs=5e-7
    )
    assert "paper (SDXL-DPO, COCO)" in set(table["row"])
    for ext in ("md", "tex"):
        assert (run_dir / f"results/world/tables/bivlc/generators.{ext}").stat().st_size > 0
    png = (run_dir / "results/world/figures/bivlc/generated_negatives.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_the_generators_table_the_docs_show_has_the_shape_this_run_writes(run_dir):
    """docs/bivlc.md shows the default world's generators table: this run's has its file and columns."""
    checked, problems = docs_shape_problems(run_dir, lambda p: p == "results/world/tables/bivlc/generators.md")
    assert checked and not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_bivlc_report_shows_the_generators(run_dir, tmp_path):
    md = tmp_path / "bivlc.md"
    md.write_text("**results**\n")
    parameters = {
        "benchmark": "bivlc",
        "table_md": str(md),
        "audit_md": str(run_dir / "results/world/tables/bivlc/audit.md"),
        "metrics": [str(run_dir / "results/world/metrics/bivlc/random.json")],
        "bench_dir": str(run_dir / "data/world/bivlc"),
        "generators_md": str(run_dir / "results/world/tables/bivlc/generators.md"),
        "generators_png": str(run_dir / "results/world/figures/bivlc/generated_negatives.png"),
    }
    out = tmp_path / "bivlc.html"
    notebook = str(REPO / "workflow/notebooks/benchmark.ipynb")
    assert main(["notebook", "--notebook", notebook, "--parameters", json.dumps(parameters), "--out", str(out)]) == 0
    html = out.read_text()
    assert "Image generators through BiVLC" in html and "paper (SDXL-DPO, COCO)" in html
    assert "data:image/png;base64" in html


@pytest.mark.slow
def test_render_plans_no_diffusion_job(run_dir):
    render = {"bivlc": {"generator": "render"}}
    rules = {rule for rule, _ in planned_jobs(run_dir, "--forceall", override=_with(render))}
    assert "build_benchmark" in rules and "report_benchmark" in rules
    assert not rules & NEGATIVE_RULES, rules & NEGATIVE_RULES
    # asked for in the report, the comparison trains both models but generates no BiVLC candidates
    asked = _with({**render, "filter_rates": {"in_report": True}})
    rules = {rule for rule, _ in planned_jobs(run_dir, "--forceall", override=asked)}
    assert rules & NEGATIVE_RULES == NEGATIVE_RULES - {"generate_candidates"}


@pytest.mark.slow
def test_each_parameter_reruns_only_its_dependants(run_dir):
    def rules(extra: dict) -> set[str]:
        return {rule for rule, _ in planned_jobs(run_dir, *TARGETS, override=_with(extra))}

    downstream = BIVLC_DOWNSTREAM | {"generate_candidates", "generator_filter_rates", "plot_generated_negatives"}
    assert rules({"diffusion": {"train_steps": 4}}) == downstream | {"train_diffusion"}
    assert rules({"recognizer": {"epochs": 2}}) == downstream | {"train_recognizer"}
    # the annotators rerun the build's filters and the comparison, but not a single generated image
    assert rules({"bivlc": {"select_noise": 0.2}}) == BIVLC_DOWNSTREAM | {
        "generator_filter_rates",
        "plot_generated_negatives",
    }
    assert rules({"filter_rates": {"sample": 5}}) == {"generator_filter_rates", "plot_generated_negatives"}
