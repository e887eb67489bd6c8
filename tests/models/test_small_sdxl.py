"""The small SDXL pipeline of the COCO smoke test (`models.small_sdxl`): its word-level CLIP tokenizer, and a short
training on world images that writes a pipeline diffusers loads by path and that draws through BiVLC's path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from unit_world import unit_world

from itmbench.models.small_sdxl import train_small_sdxl, word_clip_tokenizer
from itmbench.negatives.sdxl import SDXLConfig, build_sdxl_pipeline, generate_sdxl, sdxl_prompt
from itmbench.params import make_config
from itmbench.world.generate import generate_world


def test_every_word_of_the_prompts_is_one_token_and_a_prompt_fits_clips_77() -> None:
    prompt = sdxl_prompt("a large red circle is to the left of a small cyan hexagon.")
    tokenizer = word_clip_tokenizer([prompt, "there is a square"])
    ids = tokenizer(prompt)["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[0] == "<|startoftext|>" and tokens[-1] == "<|endoftext|>"
    assert tokens[1:6] == ["a</w>", "large</w>", "red</w>", "circle</w>", "is</w>"]
    assert "hexagon</w>" in tokens and "professional</w>" in tokens and len(ids) < 77
    assert tokenizer.decode(ids, skip_special_tokens=True).replace(" ", "") == prompt.replace(" ", "")  # CLIP spaces
    assert tokenizer.convert_ids_to_tokens(tokenizer("there")["input_ids"])[1] == "there</w>"


def test_the_merges_depend_on_the_words_alone_and_spell_each_word_whole() -> None:
    words = ["red", "res", "ed", "reed", "abab", "aaa", "there", "the", "here", "her", "ere", "a", "hexagon"]
    tokenizer = word_clip_tokenizer([" ".join(words)])
    for word in words:  # the real CLIPTokenizer's BPE, not the builder's copy of it
        assert tokenizer.tokenize(word) == [word + "</w>"], word
    again = word_clip_tokenizer([" ".join(reversed(words)), "red res"])
    assert again.backend_tokenizer.to_str() == tokenizer.backend_tokenizer.to_str()


@pytest.mark.slow
def test_a_short_training_writes_a_pipeline_loaded_by_path_that_draws(tmp_path) -> None:
    torch.set_num_threads(1)
    world = generate_world(unit_world(n_train=24, n_val=4, n_test=4))
    table = world.caption_table[world.caption_table["split"] == "train"]
    by_image = table.groupby("image_id")["text"].apply(list)
    images = np.asarray(world.images[by_image.index.to_numpy()])
    pipe = train_small_sdxl(images, by_image.tolist(), vae_steps=3, unet_steps=3, batch_size=4, log=lambda m: None)
    assert pipe.vae.config.scaling_factor != 0.18215  # set from the trained latents
    assert pipe.scheduler.config.prediction_type == "sample"
    pipe.save_pretrained(tmp_path, safe_serialization=True)
    cfg = make_config(
        SDXLConfig,
        base_model=str(tmp_path),
        unet_model=str(tmp_path),
        variant=None,
        dtype="float32",
        num_inference_steps=2,
        images_per_prompt=2,
        output_size=64,
    )
    drawn = generate_sdxl(build_sdxl_pipeline(cfg, "cpu"), [table["text"].iloc[0]], cfg)
    assert len(drawn) == 1 and len(drawn[0]) == 2 and drawn[0][0].shape == (64, 64, 3)
