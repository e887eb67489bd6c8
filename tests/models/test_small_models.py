"""`itmbench make-small-models`: seeded stand-ins of the COCO models, read back by the real loaders by path.

The folders are what `workflow/config/coco-small.yaml` names; each is loaded exactly as its hub name is
(open_clip's `local-dir:` schema, transformers' `pipeline(model=PATH)`, diffusers' `from_pretrained(PATH)`).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from itmbench.cli import main
from itmbench.models.openclip import build_open_clip
from itmbench.models.small import make_open_clip
from itmbench.models.spec import model_spec
from itmbench.negatives.llm_captions import LLMConfig, build_text_generation_pipeline, generate_negatives
from itmbench.negatives.sdxl import SDXLConfig, build_sdxl_pipeline, generate_sdxl
from itmbench.params import make_config

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("small")
    torch.set_num_threads(1)
    assert main(["make-small-models", "--out", str(root / "a"), "--seed", "0"]) == 0
    assert main(["make-small-models", "--out", str(root / "b"), "--seed", "0"]) == 0
    make_open_clip(root / "c" / "open_clip", seed=1)
    return root


def _state(path):
    return torch.load(path / "open_clip" / "open_clip_pytorch_model.bin", weights_only=True)


def test_same_seed_same_weights_another_seed_others(small) -> None:
    a, b, c = (_state(small / k) for k in "abc")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    for name in ("llm/model.safetensors", "sdxl/unet/diffusion_pytorch_model.safetensors"):
        assert (small / "a" / name).read_bytes() == (small / "b" / name).read_bytes(), name


def test_open_clip_folder_loads_by_the_local_dir_schema_with_its_weights(small) -> None:
    spec = model_spec("vit_b_32", {"family": "open_clip", "arch": f"local-dir:{small / 'a' / 'open_clip'}"})
    encoder = build_open_clip(spec, torch.device("cpu"))
    state = _state(small / "a")
    assert all(torch.equal(v, state[k]) for k, v in encoder.model.state_dict().items())  # the saved weights
    images = encoder.encode_images(np.zeros((2, 64, 64, 3), np.uint8))
    texts = encoder.encode_texts(["a red circle", "two squares"])
    assert images.shape == (2, 32) and texts.shape == (2, 32)
    assert torch.allclose(texts.norm(dim=1), torch.ones(2), atol=1e-5)


def test_llm_loads_by_path_through_the_text_generation_pipeline(small) -> None:
    cfg = make_config(LLMConfig, model=str(small / "a" / "llm"), dtype="float32", max_new_tokens=4, batch_size=2)
    pipe = build_text_generation_pipeline(cfg)  # no device (the rule's `--device auto`): no device map, no accelerate
    assert pipe.device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert type(pipe.model).__name__ == "LlamaForCausalLM" and pipe.tokenizer.chat_template
    cfg = make_config(LLMConfig, **{**cfg.__dict__, "subsets": ("add_att",)})
    negatives = generate_negatives(pipe, ["a red circle above a square"], cfg)
    assert len(negatives) == 1 and negatives["response"].str.len().gt(0).all()


def test_sdxl_loads_by_path_as_base_and_unet(small) -> None:
    path = str(small / "a" / "sdxl")
    cfg = make_config(
        SDXLConfig,
        base_model=path,
        unet_model=path,
        unet_subfolder="unet",
        variant=None,
        dtype="float32",
        num_inference_steps=1,
        images_per_prompt=2,
        output_size=32,
    )
    pipe = build_sdxl_pipeline(cfg, "cpu")
    pipe.set_progress_bar_config(disable=True)
    assert type(pipe).__name__ == "StableDiffusionXLPipeline"
    images = generate_sdxl(pipe, ["a red circle"], cfg)
    assert len(images) == 1 and len(images[0]) == 2 and images[0][0].shape == (32, 32, 3)


def test_coco_small_params_name_the_folders_the_command_writes() -> None:
    small = yaml.safe_load((REPO / "workflow" / "config" / "coco-small.yaml").read_text())["coco"]
    for name, spec in small["models"].items():
        assert spec["arch"] == "local-dir:data/small_models/open_clip", name
    assert small["llm"]["model"] == "data/small_models/llm"
    assert small["sdxl"]["base_model"] == small["sdxl"]["unet_model"] == "data/small_models/sdxl"
    params = yaml.safe_load((REPO / "params.yaml").read_text())["coco"]
    assert set(small["models"]) == set(params["models"]) - {"random"}  # every heavy model swapped, no new one
    for name, spec in small["models"].items():  # the same roles: trainer and QuickGELU as params.yaml's
        assert spec.get("trainer") == params["models"][name].get("trainer"), name
        assert spec["quick_gelu"] == params["models"][name]["quick_gelu"], name


def test_the_process_beside_fails_the_whole_naming_itself() -> None:
    """make-small-models trains SDXL in a second process beside the LM (`_beside`): its failure is the command's."""
    import sys

    from itmbench.models.small import _beside

    with pytest.raises(RuntimeError, match=r"exit \(its own process\) failed with exit status 3"):
        with _beside(sys.exit, 3):
            pass


def test_a_block_that_fails_stops_the_process_beside_it() -> None:
    import time

    from itmbench.models import small

    started = time.monotonic()
    with pytest.raises(KeyError):
        with small._beside(time.sleep, 120):
            raise KeyError("the LM's training failed")
    assert time.monotonic() - started < 60  # the sleeping process was stopped, not waited for
