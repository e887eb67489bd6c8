"""A small SDXL pipeline that draws the world: SDXL's classes, trained on the world's train images (issue 36).

The small COCO DAG stands SDXL-DPO in with a `StableDiffusionXLPipeline` folder at toy sizes that diffusers loads
by path. With random weights its images are noise, so TROHN-Img's fine-tune trained on images that show nothing.
This module trains every part of the same pipeline on the world's train images and captions, on a CPU:

- **tokenizer**: a CLIP tokenizer whose vocabulary holds every word of the training prompts whole (a BPE whose
  merges spell each word), so a prompt (caption + BiVLC's quality suffix) fits the 77 tokens;
- **VAE** (`AutoencoderKL`, 32 px images <-> 4 x 16 x 16 latents): trained as an autoencoder (MSE + a small KL
  term) on the world's images at 32 px; its `scaling_factor` is set to one over the latents' standard
  deviation, as SD's was;
- **UNet** (SDXL's text_time conditioning: the two text towers' penultimate states, the second's pooled
  projection and the six size ids) and **both text towers**, trained jointly from scratch on the prompts the
  pipeline will be given (`sdxl_prompt` of a caption), through the pipeline's own `encode_prompt` and
  `_get_add_time_ids`, so training and generation read the text the same way. DDPM noise (1000 steps, scaled
  linear betas as SDXL's), the UNet predicting the clean latents (`prediction_type` 'sample': at a few
  hundred steps the world's pixel diffusion drew clean shapes this way and noise with epsilon,
  `negatives.diffusion`); the prompt is dropped with `P_UNCOND` by zeroing both embeddings, which is what
  the pipeline's classifier-free guidance feeds for the empty negative prompt (`force_zeros_for_empty_prompt`).
- sampling is the pipeline's Euler scheduler with that prediction type.

What it draws is measured by the world's recognizer in `benchmarks/small_models.py` (docs/coco.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from itmbench.negatives.sdxl import SDXLConfig, sdxl_pipeline_from_components, sdxl_prompt

P_UNCOND = 0.1
VAE_STEPS, UNET_STEPS, BATCH = 300, 400, 16
VAE_LR, UNET_LR = 5e-3, 1e-3
RESOLUTION = 32


def tiny_clip_tokenizer():
    """A CLIP tokenizer with no merges (one token per byte-level character), built locally."""
    from tokenizers import pre_tokenizers
    from transformers import CLIPTokenizer

    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for c in sorted(pre_tokenizers.ByteLevel.alphabet()):
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    return CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)


def make_sdxl(out: Path, seed: int) -> None:
    """SDXL's pipeline classes at toy sizes (32 px images), random weights, as `save_pretrained` writes them."""
    tiny_sdxl_pipeline(seed).save_pretrained(out, safe_serialization=True)


def tiny_sdxl_pipeline(seed: int = 0):
    """An SDXL pipeline of the real classes at toy sizes (`small_sdxl_parts`, 32 px images) with seeded random
    weights and the character-level CLIP tokenizer (the tests' pipeline too)."""
    return sdxl_pipeline_from_components(**small_sdxl_parts(tiny_clip_tokenizer(), seed, prediction_type="epsilon"))


def word_clip_tokenizer(texts: Sequence[str]):
    """A CLIP tokenizer (SDXL's class) whose BPE merges spell every word of `texts` whole: one token per word.

    The merges are built, not learnt: word by word in sorted order, each word is split by the merges so far
    (`_bpe`: BPE's rule, lowest-ranked pair first) and its first two pieces are joined by a new merge, ranked
    last, until the word is one piece. A later merge never splits an earlier word (that word is one piece before
    any later merge is tried), so the result depends on the words alone. Learning them with `tokenizers`'
    `BpeTrainer` did not: it ordered two merges of tied counts (`red</w>`, `res</w>`) either way from run to
    run, and so changed the trained pipeline's text towers and UNet."""
    import re

    from transformers import CLIPTokenizer

    words = sorted({w for t in texts for w in re.findall(r"[a-z]+|[0-9]|[^\sa-z0-9]+", t.lower())})
    vocab = dict(tiny_clip_tokenizer().get_vocab())  # every byte-level character, alone and word-final
    ranks: dict[tuple[str, str], int] = {}
    for word in words:
        pieces = _bpe(word, ranks)
        while len(pieces) > 1:
            pair = (pieces[0], pieces[1])
            ranks[pair] = len(ranks)
            vocab.setdefault(pair[0] + pair[1], len(vocab))
            pieces = _bpe(word, ranks)
    return CLIPTokenizer(vocab=vocab, merges=list(ranks), model_max_length=77)


def _bpe(word: str, ranks: dict[tuple[str, str], int]) -> list[str]:
    """`word` split by the ranked merges as a BPE model splits it: its characters, the last one
    word-final (`</w>`), then repeatedly every occurrence of the lowest-ranked adjacent pair joined."""
    pieces = [*word[:-1], word[-1] + "</w>"]
    while len(pieces) > 1:
        pair = min(zip(pieces, pieces[1:]), key=lambda p: ranks.get(p, math.inf))
        if pair not in ranks:
            break
        joined, i = [], 0
        while i < len(pieces):
            if i + 1 < len(pieces) and (pieces[i], pieces[i + 1]) == pair:
                joined.append(pair[0] + pair[1])
                i += 2
            else:
                joined.append(pieces[i])
                i += 1
        pieces = joined
    return pieces


def small_sdxl_parts(tokenizer, seed: int, prediction_type: str = "sample") -> dict[str, Any]:
    """SDXL's parts at toy sizes, seeded random weights, for `tokenizer`: a UNet with text_time conditioning
    (16 x 16 latents), two CLIP text towers, a VAE (32 px images <-> 4 x 16 x 16), Euler's scheduler reading the
    UNet's output as `prediction_type`."""
    from diffusers import EulerDiscreteScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    torch.manual_seed(seed)
    text = CLIPTextConfig(
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
        hidden_size=32,
        intermediate_size=64,
        num_attention_heads=4,
        num_hidden_layers=2,
        vocab_size=len(tokenizer),
        max_position_embeddings=77,
        projection_dim=32,
    )
    unet = UNet2DConditionModel(
        sample_size=RESOLUTION // 2,
        in_channels=4,
        out_channels=4,
        block_out_channels=(32, 64),
        layers_per_block=1,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=(2, 4),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=8,
        transformer_layers_per_block=(1, 1),
        projection_class_embeddings_input_dim=6 * 8 + 32,  # 6 size/crop ids x 8 + pooled text (projection_dim)
        cross_attention_dim=64,  # the two text towers' hidden states concatenated
        norm_num_groups=8,
    )
    vae = small_vae()
    scheduler = EulerDiscreteScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        steps_offset=1,
        timestep_spacing="leading",
        prediction_type=prediction_type,
    )
    return {
        "unet": unet,
        "vae": vae,
        "text_encoder": CLIPTextModel(text),
        "text_encoder_2": CLIPTextModelWithProjection(text),
        "tokenizer": tokenizer,
        "tokenizer_2": tokenizer,
        "scheduler": scheduler,
    }


def small_vae(block_out_channels: Sequence[int] = (32, 64)):
    """SDXL's VAE class at toy size on RESOLUTION px images: one downsampling per block after the first."""
    from diffusers import AutoencoderKL

    blocks = tuple(block_out_channels)
    return AutoencoderKL(
        block_out_channels=blocks,
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * len(blocks),
        up_block_types=("UpDecoderBlock2D",) * len(blocks),
        latent_channels=4,
        sample_size=RESOLUTION,
        norm_num_groups=8,
    )


def train_vae(vae, x_all: torch.Tensor, steps: int, batch_size: int, rng, gen, log=print) -> None:
    """Train a VAE on images (float [-1, 1] [N, 3, R, R]) by reconstruction (MSE, a small KL), AdamW at VAE_LR on a
    cosine schedule; batches drawn from `rng`, latents sampled with `gen` (both go on to the caller's next stage);
    frozen in eval mode after."""
    start = time.time()
    opt = torch.optim.AdamW(vae.parameters(), lr=VAE_LR, weight_decay=0.0)
    sched = _cosine(opt, steps, 20)
    vae.train()
    for step in range(steps):
        x = x_all[torch.from_numpy(rng.choice(len(x_all), size=batch_size, replace=False))]
        post = vae.encode(x).latent_dist
        recon = vae.decode(post.sample(generator=gen)).sample
        loss = F.mse_loss(recon, x) + 1e-6 * post.kl().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            log(f"small SDXL vae step {step}: loss {loss.item():.4f} ({time.time() - start:.0f} s)")
    vae.eval().requires_grad_(False)


def _images_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 [N, H, W, 3] world images as float [-1, 1] [N, 3, RESOLUTION, RESOLUTION] (area-downsampled)."""
    x = torch.from_numpy(np.asarray(images)).permute(0, 3, 1, 2).float() / 127.5 - 1.0
    return F.interpolate(x, size=(RESOLUTION, RESOLUTION), mode="area") if x.shape[-1] != RESOLUTION else x


def _cosine(opt, steps: int, warmup: int):
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / steps)))
    )


def train_small_sdxl(
    images: np.ndarray,
    captions: Sequence[Sequence[str]],
    seed: int = 0,
    vae_steps: int = VAE_STEPS,
    unet_steps: int = UNET_STEPS,
    batch_size: int = BATCH,
    log=print,
):
    """A StableDiffusionXLPipeline trained on the world's `images` (uint8 [N, H, W, 3]) and each image's
    captions (`captions[i]`, one drawn per step), on the CPU."""
    from diffusers import DDPMScheduler

    from itmbench.params import make_config

    cfg = make_config(SDXLConfig)
    prompts = [[sdxl_prompt(c, cfg) for c in caps] for caps in captions]
    tokenizer = word_clip_tokenizer([p for ps in prompts for p in ps])
    parts = small_sdxl_parts(tokenizer, seed)
    pipe = sdxl_pipeline_from_components(**parts)
    x_all = _images_tensor(images)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    start = time.time()

    vae = pipe.vae
    train_vae(vae, x_all, vae_steps, batch_size, rng, gen, log)
    with torch.no_grad():
        latents_all = torch.cat([vae.encode(x_all[i : i + 256]).latent_dist.mean for i in range(0, len(x_all), 256)])
    scale = float(1.0 / latents_all.std())
    vae.register_to_config(scaling_factor=scale)
    latents_all = latents_all * scale

    noise_sched = DDPMScheduler(
        num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear"
    )
    trained = [pipe.unet, pipe.text_encoder, pipe.text_encoder_2]
    params = [p for m in trained for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=UNET_LR, weight_decay=0.01)
    sched = _cosine(opt, unet_steps, 40)
    for m in trained:
        m.train()
    time_ids = pipe._get_add_time_ids(
        (RESOLUTION, RESOLUTION),
        (0, 0),
        (RESOLUTION, RESOLUTION),
        torch.float32,
        pipe.text_encoder_2.config.projection_dim,
    )
    for step in range(unet_steps):
        idx = rng.choice(len(latents_all), size=batch_size, replace=False)
        batch_prompts = [prompts[i][int(rng.integers(len(prompts[i])))] for i in idx]
        embeds, _, pooled, _ = pipe.encode_prompt(batch_prompts, device="cpu", do_classifier_free_guidance=False)
        keep = torch.from_numpy(rng.random(batch_size) >= P_UNCOND).float()
        embeds, pooled = embeds * keep[:, None, None], pooled * keep[:, None]
        x0 = latents_all[torch.from_numpy(idx)]
        noise = torch.randn(x0.shape, generator=gen)
        t = torch.randint(0, noise_sched.config.num_train_timesteps, (batch_size,), generator=gen)
        noisy = noise_sched.add_noise(x0, noise, t)
        pred = pipe.unet(
            noisy,
            t,
            encoder_hidden_states=embeds,
            added_cond_kwargs={"text_embeds": pooled, "time_ids": time_ids.repeat(batch_size, 1)},
        ).sample
        loss = F.mse_loss(pred, x0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == unet_steps - 1:
            log(f"small SDXL unet step {step}: loss {loss.item():.4f} ({time.time() - start:.0f} s)")
    for m in trained:
        m.eval().requires_grad_(False)
    return pipe
