"""Pregenerated BiVLC candidates, the `diffusion` registry entry, and the filter-rate table of both generators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from unit_world import unit_world

from itmbench.cli import main
from itmbench.negatives.candidates import PregeneratedGenerator, generate_candidates, write_candidates
from itmbench.negatives.diffusion import DiffusionConfig, DiffusionGenerator, train_diffusion, write_torch
from itmbench.negatives.filter_rates import (
    COLUMNS,
    FilterRateConfig,
    filter_rate_table,
    plot_generated_negatives,
    run_filters,
    sample_instances,
)
from itmbench.negatives.images import make_generator
from itmbench.negatives.recognizer import GridDetector, RecognizedGenerator, RecognizerConfig
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.papers.bivlc.statistics import published_survival_rates
from itmbench.params import make_config
from itmbench.params import schema as params_schema
from itmbench.world.generate import generate_world, write_world

TINY_DIFFUSION = {
    "resolution": 16,
    "block_out_channels": [8, 16],
    "norm_num_groups": 4,
    "attention_head_dim": 4,
    "text_width": 16,
    "text_layers": 1,
    "text_heads": 2,
    "batch_size": 4,
    "train_steps": 2,
    "warmup_steps": 1,
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A small world, a tiny diffusion model (2 steps) and a random-weight recognizer, both on disk."""
    world = generate_world(unit_world(n_train=24, n_val=4, n_test=6))
    root = tmp_path_factory.mktemp("candidates")
    write_world(world, root / "items")
    train_diffusion(root / "items", make_config(DiffusionConfig, TINY_DIFFUSION), root / "diffusion")
    rcfg = make_config(RecognizerConfig, channels=(8, 8, 16, 16), n_samples=32)
    torch.manual_seed(0)
    write_torch(
        root / "recognizer" / "model.pt", {"config": rcfg.to_dict(), "net": GridDetector(rcfg.channels).state_dict()}
    )
    cfg = make_config(
        BiVLCConfig,
        generator="diffusion",
        subsets=("replace_att", "swap_att", "add_obj"),
        max_images=3,
        num_inference_steps=2,
    )
    generator = make_generator(
        "diffusion",
        **cfg.generator_params(64, model_path=str(root / "diffusion"), recognizer_path=str(root / "recognizer")),
    )
    return world, root, cfg, generator


def test_registry_diffusion_is_the_diffusion_model_read_by_the_recognizer(setup) -> None:
    _, root, cfg, generator = setup
    assert isinstance(generator, RecognizedGenerator)
    text = "a small red circle above a blue square"
    made = generator.generate(None, None, 3, np.random.default_rng(0), text=text)
    plain = DiffusionGenerator(str(root / "diffusion"), 64, cfg.guidance_scale, cfg.num_inference_steps, cfg.seed)
    assert np.array_equal(np.stack([c.image for c in made]), plain.images(text, 3))
    assert all(c.scene is not None and c.mistakes == () for c in made)
    with pytest.raises(ValueError, match="model_path"):
        cfg.generator_params(64)  # the diffusion generator needs its checkpoints


def test_max_images_limits_the_split(setup) -> None:
    world, _, cfg, _ = setup
    sugarcrepe, _ = bivlc_build.sugarcrepe_instances(world, cfg)
    test_ids = sorted(world.image_table.loc[world.image_table["split"] == "test", "image_id"])
    assert set(sugarcrepe["image_id"]) <= set(test_ids[:3]) and len(set(sugarcrepe["image_id"])) == 3
    everything, _ = bivlc_build.sugarcrepe_instances(world, make_config(BiVLCConfig, subsets=cfg.subsets))
    assert set(everything["image_id"]) == set(test_ids)


def test_pregenerated_build_equals_the_inline_build(setup, tmp_path) -> None:
    world, _, cfg, generator = setup
    table, images = generate_candidates(world, cfg, generator)
    sugarcrepe, _ = bivlc_build.sugarcrepe_instances(world, cfg)
    n_texts = sugarcrepe["negative_caption"].nunique()
    assert len(table) == len(images) == cfg.n_candidates * n_texts  # each distinct caption generated once
    write_candidates(table, images, tmp_path / "candidates")
    inline = bivlc_build.build(world, cfg, generator=generator)
    stored = bivlc_build.build(
        world, make_config(BiVLCConfig, {**vars(cfg), "candidates": str(tmp_path / "candidates")})
    )
    for name in inline:
        pd.testing.assert_frame_equal(inline[name], stored[name], obj=name)
    assert len(stored["instances"]) > 0
    with pytest.raises(ValueError, match="without `candidates`"):
        bivlc_build.build(world, cfg)  # a diffusion build needs its candidates (or a generator)


def test_pregenerated_errors_name_the_folder(setup, tmp_path) -> None:
    world, _, cfg, generator = setup
    with pytest.raises(FileNotFoundError, match="candidates.parquet"):
        PregeneratedGenerator.load(tmp_path)
    table, images = generate_candidates(world, cfg, generator)
    write_candidates(table.iloc[:4], images[:4], tmp_path)
    stored = PregeneratedGenerator.load(tmp_path)
    with pytest.raises(ValueError, match=f"{tmp_path}.*no candidates for caption 'a blue nothing'"):
        stored.generate(None, None, 4, np.random.default_rng(0), text="a blue nothing")
    with pytest.raises(ValueError, match="expected 5"):
        stored.generate(None, None, 5, np.random.default_rng(0), text=table["text"].iloc[0])


def test_render_filter_rates_are_the_builds_own_decisions(setup) -> None:
    world, _, cfg, generator = setup
    render_cfg = make_config(BiVLCConfig, {**vars(cfg), "generator": "render"})
    built = bivlc_build.build(world, render_cfg)["sugarcrepe"].set_index("id")
    sugarcrepe, _ = bivlc_build.sugarcrepe_instances(world, render_cfg)
    sample = sample_instances(sugarcrepe, 8, seed=1)
    assert len(sample) == 8 and sample["id"].is_monotonic_increasing
    render = make_generator("render", **render_cfg.generator_params(64))
    records, pixels = run_filters(world, render_cfg, {"render": render, "diffusion": generator}, sample)
    assert len(records) == len(pixels) == 2 * 8 * cfg.n_candidates
    mine = records[records["generator"] == "render"]
    for sid, group in mine.groupby("sugarcrepe_id"):
        chosen = group.loc[group["chosen"], "candidate"].tolist()
        assert (chosen[0] if chosen else -1) == built.loc[sid, "chosen_candidate"]  # same candidates, same draws
        assert group["ambiguous"].iloc[0] == built.loc[sid, "judged_ambiguous"]
        assert group["kept"].iloc[0] == built.loc[sid, "in_bivlc"]


def test_filter_rate_table_against_a_hand_count() -> None:
    rows = []
    # generator g, instance s: (fits_negative per candidate, chosen, ambiguous)
    cases = {
        ("render", 0): ([1, 0], 0, False),
        ("render", 1): ([0, 0], -1, False),
        ("render", 2): ([1, 1], 1, True),
        ("diffusion", 0): ([0, 1], 1, False),
        ("diffusion", 1): ([0, 0], -1, False),
        ("diffusion", 2): ([0, 0], -1, False),
    }
    for (g, s), (fits, chosen, ambiguous) in cases.items():
        for k, f in enumerate(fits):
            rows.append(
                {
                    "generator": g,
                    "sugarcrepe_id": s,
                    "subset": "swap_att" if s == 2 else "add_obj",
                    "candidate": k,
                    "fits_negative": bool(f),
                    "chosen": k == chosen,
                    "ambiguous": ambiguous,
                    "kept": chosen >= 0 and not ambiguous,
                }
            )
    table = filter_rate_table(pd.DataFrame(rows), ("add_obj", "swap_att"), published_survival_rates())
    cell = {(r, c): v for r, c, v in zip(table["row"], table["column"], table["value"])}
    made_up = filter_rate_table(pd.DataFrame(rows), ("add_obj",), {"step3": 10.0, "step4": 20.0})
    paper = made_up[made_up["row"] == "paper (SDXL-DPO, COCO)"].set_index("column")["value"]
    assert (paper[COLUMNS[3]], paper[COLUMNS[4]], paper[COLUMNS[5]]) == (90.0, 80.0, 72.0)  # 100 - drop; the product
    assert not filter_rate_table(pd.DataFrame(rows), ("add_obj",))["row"].str.startswith("paper").any()
    assert cell[("render", COLUMNS[0])] == 3 and cell[("render", COLUMNS[1])] == 6
    assert cell[("render", COLUMNS[2])] == pytest.approx(100 * 3 / 6)
    assert cell[("render", COLUMNS[3])] == pytest.approx(100 * 2 / 3)  # instances 0 and 2 chosen
    assert cell[("render", COLUMNS[4])] == pytest.approx(50.0)  # 2 is ambiguous
    assert cell[("render", COLUMNS[5])] == pytest.approx(100 / 3)
    assert cell[("diffusion", COLUMNS[5])] == pytest.approx(100 / 3)
    assert cell[("diffusion: swap_att", COLUMNS[3])] == 0.0
    assert np.isnan(cell[("diffusion: swap_att", COLUMNS[4])])  # nothing passed filter 1
    paper = table[table["row"].str.startswith("paper")].set_index("column")["value"]
    assert paper[COLUMNS[3]] == pytest.approx(71.6, abs=0.05)  # 7,512 -> 5,382 after the paper's step 3
    assert paper[COLUMNS[5]] == pytest.approx(100 * 2933 / 7512, abs=0.05)
    lo, hi = table.set_index(["row", "column"]).loc[("render", COLUMNS[3]), ["lo", "hi"]]
    assert lo < 100 * 2 / 3 < hi  # every rate carries its Wilson interval


def test_plot_and_config(setup, tmp_path) -> None:
    world, _, cfg, generator = setup
    render_cfg = make_config(BiVLCConfig, {**vars(cfg), "generator": "render"})
    sample = sample_instances(bivlc_build.sugarcrepe_instances(world, render_cfg)[0], 3, seed=0)
    render = make_generator("render", **render_cfg.generator_params(64))
    records, pixels = run_filters(world, render_cfg, {"render": render, "diffusion": generator}, sample)
    out = tmp_path / "grid.png"
    plot_generated_negatives(records, pixels, np.asarray(world.images[records["image_id"].to_numpy()]), str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="unknown keys.*'samples'"):
        make_config(FilterRateConfig, {"samples": 3})


def test_cli_trains_both_models_and_names_bad_params(setup, tmp_path) -> None:
    _, root, _, _ = setup
    import json

    assert main(["train-diffusion", "--items", str(root / "items"), "--config", json.dumps(TINY_DIFFUSION),
                 "--out", str(tmp_path / "d"), "--device", "cpu"]) == 0  # fmt: skip
    assert (tmp_path / "d" / "model.pt").exists() and (tmp_path / "d" / "history.json").exists()
    again = (root / "diffusion" / "model.pt").read_bytes()
    assert (tmp_path / "d" / "model.pt").read_bytes() == again  # same params + seed -> identical weights
    rec = {"channels": [8, 8, 8, 8], "epochs": 1, "n_samples": 8}
    assert main(["train-recognizer", "--items", str(root / "items"), "--config", json.dumps(rec),
                 "--out", str(tmp_path / "r"), "--device", "cpu"]) == 0  # fmt: skip
    assert {p.name for p in (tmp_path / "r").iterdir()} >= {"model.pt", "history.json", "metrics.json"}
    bad = main(["train-recognizer", "--items", str(root / "items"), "--config", '{"epoch": 1}', "--out", str(tmp_path)])
    assert bad == 2


def test_params_yaml_gives_the_schema_defaults_of_the_generator_sections() -> None:
    """params.yaml states each section's schema defaults (world-owned keys aside: the rule passes the world's)."""
    import yaml

    from itmbench.negatives.recognizer import RecognizerConfig
    from itmbench.params import section_defaults, section_schema

    root = Path(__file__).resolve().parents[2]
    schema = params_schema()["properties"]  # with params.yaml's defaults (their one home)
    params = yaml.safe_load((root / "params.yaml").read_text())
    for name in ("diffusion", "recognizer", "filter_rates"):
        assert schema[name] == section_schema(name), name
        assert params[name] == section_defaults(name), name
    # the recognizer's own default is the schema's world's (the tests' base world); in a run the rule passes
    # params.yaml's world value, which the default run sets apart from it (docs/sources.md: calibrated to COCO)
    assert make_config(RecognizerConfig).margin == section_defaults("world")["relation_margin"]
    bivlc_schema = schema["bivlc"]["properties"]
    assert bivlc_schema["generator"]["enum"] == ["render", "diffusion"]
    assert (
        {"max_images", "guidance_scale", "num_inference_steps"}
        <= set(bivlc_schema)
        <= set(vars(make_config(BiVLCConfig)))
    )
