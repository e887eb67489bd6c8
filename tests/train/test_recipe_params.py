"""The default params' recipes: each ablation starts where the model it is compared with starts, and BiVLC's
fine-tunes follow the paper's appendix E where the world allows (docs/cxc.md, docs/bivlc.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from itmbench.papers.plan import load_params
from itmbench.params import make_config
from itmbench.train.config import TrainConfig

PARAMS = load_params(Path(__file__).resolve().parents[2] / "params.yaml")
MODELS = PARAMS["models"]


def recipe(name: str) -> TrainConfig:
    """The train config a model is trained with: the train section under its own overrides."""
    return make_config(TrainConfig, {**PARAMS["train"], **MODELS[name].get("train", {})})


def differences(a: str, b: str) -> set[str]:
    """The spec keys (and train settings) in which two models differ, `benchmarks` left out."""
    keys = (set(MODELS[a]) | set(MODELS[b])) - {"train", "benchmarks"}
    out = {k for k in keys if MODELS[a].get(k) != MODELS[b].get(k)}
    ra, rb = recipe(a), recipe(b)
    return out | {f"train.{k}" for k in ra.__dataclass_fields__ if getattr(ra, k) != getattr(rb, k)}


@pytest.mark.parametrize(
    ("ablation", "changes"),
    [
        ("de_i2t_small_batch", {"train.batch_size"}),  # small batch size: only the batch
        ("de_i2t_scratch", {"init"}),  # no pretraining: only the starting point
        ("de_i2t_resnet", {"arch", "init"}),  # ResNet-152: the image tower, pretrained as de_i2t's (below)
        ("de_t2t_i2t", {"trainer"}),  # the multitask model: only its loss (and batches)
    ],
)
def test_cxc_ablations_change_only_what_the_paper_changes(ablation, changes):
    assert differences(ablation, "de_i2t") == changes


def test_the_resnet_ablation_starts_from_de_i2ts_pretraining_with_its_own_tower():
    start, baseline_start = MODELS["de_i2t_resnet"]["init"], MODELS["de_i2t"]["init"]
    assert differences(start, baseline_start) == {"arch"}
    assert MODELS[start]["arch"] == MODELS["de_i2t_resnet"]["arch"]
    # clip_rn is scored on retrieval beside clip (what the stronger tower learns), never on CxC: the ablation's
    # CxC row is de_i2t_resnet's alone
    assert "cxc" not in MODELS[start]["benchmarks"]


def test_bivlc_fine_tunes_follow_appendix_e():
    control = recipe("clip_coco")
    assert control.batch_size == 400 and control.epochs == 10 and control.select_on == "val_r1"
    for name in ("clip_trohn_text", "clip_trohn_img", "clip_trohn_img_filtered"):
        cfg = recipe(name)
        assert MODELS[name]["init"] == MODELS["clip_coco"]["init"] == "clip"
        assert (cfg.batch_size, cfg.hard_negatives_per_sample) == (200, 1)  # 200 positives + 200 negatives
        assert cfg.epochs == control.epochs and cfg.lr == control.lr
        assert cfg.select_on == "hard_negative_accuracy"
