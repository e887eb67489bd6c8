"""BiVLC's construction with a scene-less generator: the world diffusion model, read by the pixel recognizer."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.negatives.diffusion import DiffusionConfig, DiffusionGenerator, train_diffusion
from itmbench.negatives.generator import GeneratedImage
from itmbench.negatives.recognizer import GridDetector, RecognizedGenerator, Recognizer, RecognizerConfig
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.params import make_config
from itmbench.world.generate import generate_world, write_world

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A small world, a tiny diffusion model trained 3 steps, an untrained tiny recognizer."""
    world = generate_world(unit_world(n_train=24, n_val=4, n_test=6))
    root = tmp_path_factory.mktemp("generated_bivlc")
    write_world(world, root / "items")
    cfg = make_config(
        DiffusionConfig,
        resolution=16,
        block_out_channels=(8, 16),
        norm_num_groups=4,
        attention_head_dim=4,
        text_width=16,
        text_layers=1,
        text_heads=2,
        batch_size=4,
        train_steps=3,
    )
    train_diffusion(root / "items", cfg, root / "diffusion")
    rcfg = make_config(RecognizerConfig, channels=(8, 8, 16, 16), n_samples=32)
    torch.manual_seed(0)
    recognizer = Recognizer(rcfg, GridDetector(rcfg.channels))
    generator = DiffusionGenerator(str(root / "diffusion"), image_size=64, num_inference_steps=2)
    return world, RecognizedGenerator(generator, recognizer), generator


def test_recognized_candidates_carry_the_reading(setup) -> None:
    _, wrapped, plain = setup
    text = "a small red circle above a blue square"
    made = wrapped.generate(None, None, 3, np.random.default_rng(0), text=text)
    raw = plain.generate(None, None, 3, np.random.default_rng(0), text=text)
    assert all(isinstance(c, GeneratedImage) and c.scene is not None for c in made)
    assert all(np.array_equal(a.image, b.image) for a, b in zip(made, raw))  # the pixels are the generator's
    pixels = np.stack([c.image for c in raw])
    posts = wrapped.recognizer.posteriors(pixels)
    assert [c.scene for c in made] == [wrapped.recognizer.read_posterior(p, im) for p, im in zip(posts, pixels)]


def test_bivlc_builds_from_generated_images(setup) -> None:
    world, wrapped, plain = setup
    cfg = make_config(BiVLCConfig, subsets=("replace_att", "add_obj"), n_candidates=2)
    tables = bivlc_build.build(world, cfg, generator=wrapped)
    again = bivlc_build.build(world, cfg, generator=wrapped)
    n = len(tables["sugarcrepe"])
    assert n > 0 and len(tables["candidates"]) == 2 * n
    assert all(tables[k].equals(again[k]) for k in tables)  # deterministic: seeded by caption text and cfg
    assert not tables["candidates"][["missing_object", "extra_object"]].to_numpy().any()  # no simulated mistakes
    extra = tables["extra_images"]
    assert (extra["image_size"] == 64).all() and len(extra) == len(tables["instances"])
    with pytest.raises(ValueError, match="no scene graph"):
        bivlc_build.build(world, cfg, generator=plain)  # without the recognizer the annotators cannot read
