"""BiVLC's SDXL-DPO path run end to end on a tiny random-weight SDXL pipeline (no download)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from itmbench.negatives.diffusion import prompt_seed
from itmbench.negatives.sdxl import (
    MANIFEST_COLUMNS,
    MANIFEST_FILE,
    PROMPT_SUFFIX,
    SDXLConfig,
    SDXLGenerator,
    generate_sdxl,
    sdxl_prompt,
    write_sdxl_images,
)
from itmbench.params import make_config


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread: the tests' budget is one core."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def pipe():
    """SDXL's classes at toy sizes with random weights (`make-small-models`' pipeline, not saved)."""
    from itmbench.models.small_sdxl import tiny_sdxl_pipeline

    pipe = tiny_sdxl_pipeline(0)
    pipe.set_progress_bar_config(disable=True)
    return pipe


FAST = make_config(SDXLConfig, num_inference_steps=2, prompts_per_batch=2)


def test_prompt_is_bivlcs() -> None:
    assert sdxl_prompt("A man. Riding a horse.") == "A man Riding a horse" + PROMPT_SUFFIX
    assert PROMPT_SUFFIX == ", high resolution, professional, 4k, highly detailed"
    assert sdxl_prompt("a.b", make_config(SDXLConfig, strip_periods=False)).startswith("a.b, high")
    assert make_config(SDXLConfig).guidance_scale == 5.0 and make_config(SDXLConfig).images_per_prompt == 4
    assert (
        make_config(SDXLConfig).output_size == 512
        and make_config(SDXLConfig).unet_model == "mhdang/dpo-sdxl-text2image-v1"
    )


def test_images_are_seeded_per_prompt(pipe) -> None:
    cfg = make_config(SDXLConfig, num_inference_steps=2, output_size=32, prompts_per_batch=2)
    first = generate_sdxl(pipe, ["A dog on a sofa.", "Two cats near a door"], cfg)
    again = generate_sdxl(pipe, ["A dog on a sofa.", "Two cats near a door"], cfg)
    alone = generate_sdxl(pipe, ["Two cats near a door"], cfg)
    assert len(first) == 2 and all(len(images) == 4 for images in first)
    assert all(im.shape == (32, 32, 3) and im.dtype == np.uint8 for images in first for im in images)
    assert all(np.array_equal(a, b) for x, y in zip(first, again) for a, b in zip(x, y))  # reproducible
    assert not np.array_equal(first[0][0], first[0][1])  # 4 different candidates
    # the same prompt gives the same images in another batch (up to floating-point rounding)
    assert max(int(np.abs(a.astype(int) - b).max()) for a, b in zip(first[1], alone[0])) <= 2


def test_writes_512px_images_and_a_manifest_and_resumes(pipe, tmp_path) -> None:
    instances = pd.DataFrame({"id": [3, 8], "negative_caption": ["A cat on a mat.", "Two dogs under a table"]})
    manifest = write_sdxl_images(pipe, instances, FAST, tmp_path)
    assert list(manifest.columns) == list(MANIFEST_COLUMNS) and len(manifest) == 8
    assert (tmp_path / MANIFEST_FILE).exists()
    assert manifest["prompt"].iloc[0] == "A cat on a mat" + PROMPT_SUFFIX
    assert int(manifest["seed"].iloc[5]) == prompt_seed(0, "Two dogs under a table" + PROMPT_SUFFIX, 1)
    for name in manifest["path"]:
        with Image.open(tmp_path / name) as im:
            assert im.size == (512, 512) and im.mode == "RGB"
    stamps = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.png")}
    again = write_sdxl_images(pipe, instances, FAST, tmp_path)  # everything exists: nothing regenerated
    assert again.equals(manifest)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.png")} == stamps
    with pytest.raises(ValueError, match="negative_caption"):
        write_sdxl_images(pipe, instances.rename(columns={"negative_caption": "caption"}), FAST, tmp_path)


def test_generator_interface(pipe) -> None:
    gen = SDXLGenerator(pipe, make_config(SDXLConfig, num_inference_steps=2), image_size=64)
    out = gen.generate(None, None, 2, None, text="A red bus next to a tree.")
    assert len(out) == 2 and all(c.scene is None and c.image.shape == (64, 64, 3) for c in out)
    with pytest.raises(ValueError, match="no caption text"):
        gen.generate(None, None, 2, None)
