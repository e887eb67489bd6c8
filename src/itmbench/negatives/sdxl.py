"""BiVLC's step 2 on COCO: 4 SDXL-DPO images per hard-negative caption (diffusers StableDiffusionXLPipeline).

As the released generation script (IMirandaM/BiVLC, src/BiVLC_Generation/BiVLC_img_generation.py):
- the pipeline is SDXL base 1.0 (`stabilityai/stable-diffusion-xl-base-1.0`, fp16 variant) whose UNet
  is replaced by the DPO-tuned one (`mhdang/dpo-sdxl-text2image-v1`, subfolder `unet`);
- prompt = the negative caption with its periods removed + ", high resolution, professional, 4k,
  highly detailed" (`sdxl_prompt`; the script removes every '.', `strip_periods` = True);
- guidance scale 5, 4 images per prompt, the pipeline's defaults otherwise (50 steps, 1024 px,
  its Euler scheduler), each image resized to 512 x 512 (PIL's default bicubic filter).
Decisions where the script is silent or differs:
- seeding: the script creates a seeded generator but never passes it to the pipeline, so its
  images are not reproducible. Here image k of a prompt starts from latents drawn by a CPU
  generator seeded with `prompt_seed(seed, prompt, k)`: a prompt gets the same images whatever
  batch it is in, on any device (up to the GPU's floating-point nondeterminism);
- images are written as PNG (the script wrote JPEG at PIL's default quality 75), one file per
  candidate, `<id>_<k>.png`, each atomically; a rerun skips instances whose files all exist, so an
  interrupted 30k-image run resumes; the manifest (`manifest.parquet`) is written last.

`build_sdxl_pipeline` loads the pipeline by name (network or the Hugging Face cache); the rest takes
a pipeline, so the tests run the whole path on a tiny one built from configs with random weights
(`sdxl_pipeline_from_components`). `SDXLGenerator` adapts a pipeline to the `ImageGenerator`
interface (scene=None).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import torch
from PIL import Image

from itmbench.io import atomic_path, write_parquet
from itmbench.negatives.diffusion import prompt_seed
from itmbench.negatives.generator import GeneratedImage
from itmbench.params import make_config, section_defaults
from itmbench.world.captions import CaptionStructure
from itmbench.world.scene import Scene

PROMPT_SUFFIX: str = section_defaults("$defs.sdxl")["prompt_suffix"]
MANIFEST_FILE = "manifest.parquet"
MANIFEST_COLUMNS = ("id", "candidate", "caption", "prompt", "seed", "path")


@dataclass(frozen=True)
class SDXLConfig:
    """SDXL-DPO generation settings (defaults: BiVLC's released script; see the module docstring)."""

    SECTION: ClassVar[str] = "$defs.sdxl"

    base_model: str
    unet_model: str
    unet_subfolder: str
    variant: str | None
    dtype: str
    guidance_scale: float
    images_per_prompt: int
    num_inference_steps: int
    height: int | None
    width: int | None
    output_size: int
    prompt_suffix: str
    strip_periods: bool
    seed: int
    prompts_per_batch: int


def sdxl_prompt(caption: str, cfg: SDXLConfig | None = None) -> str:
    """BiVLC's prompt: the caption without periods, then the quality suffix."""
    cfg = cfg or make_config(SDXLConfig)
    text = caption.replace(".", "") if cfg.strip_periods else caption
    return text + cfg.prompt_suffix


def build_sdxl_pipeline(cfg: SDXLConfig | None = None, device: str = "cuda") -> Any:
    """SDXL base with the DPO UNet, loaded by name (needs the network or a populated Hugging Face cache)."""
    cfg = cfg or make_config(SDXLConfig)
    from diffusers import StableDiffusionXLPipeline, UNet2DConditionModel

    dtype = getattr(torch, cfg.dtype)
    pipe = StableDiffusionXLPipeline.from_pretrained(
        cfg.base_model, dtype=dtype, variant=cfg.variant, use_safetensors=True
    )
    pipe.unet = UNet2DConditionModel.from_pretrained(cfg.unet_model, subfolder=cfg.unet_subfolder, dtype=dtype)
    return pipe.to(device)


def sdxl_pipeline_from_components(
    unet: Any, vae: Any, text_encoder: Any, text_encoder_2: Any, tokenizer: Any, tokenizer_2: Any, scheduler: Any
) -> Any:
    """A StableDiffusionXLPipeline from prebuilt parts (no watermarker, no IP-adapter image encoder)."""
    from diffusers import StableDiffusionXLPipeline

    return StableDiffusionXLPipeline(
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        tokenizer=tokenizer,
        tokenizer_2=tokenizer_2,
        unet=unet,
        scheduler=scheduler,
        add_watermarker=False,
    )


def _resize(image: Image.Image, size: int) -> np.ndarray:
    """uint8 [size, size, 3] of a PIL image (bicubic, PIL's default for RGB as in the released script)."""
    return np.asarray(image.convert("RGB").resize((size, size), Image.Resampling.BICUBIC), dtype=np.uint8)


@torch.no_grad()
def generate_sdxl(pipe: Any, captions: Sequence[str], cfg: SDXLConfig | None = None) -> list[list[np.ndarray]]:
    """images_per_prompt uint8 [output_size, output_size, 3] images per caption, in caption order."""
    cfg = cfg or make_config(SDXLConfig)
    out: list[list[np.ndarray]] = []
    k = cfg.images_per_prompt
    for start in range(0, len(captions), cfg.prompts_per_batch):
        prompts = [sdxl_prompt(c, cfg) for c in captions[start : start + cfg.prompts_per_batch]]
        seeds = [prompt_seed(cfg.seed, p, j) for p in prompts for j in range(k)]
        generators = [torch.Generator("cpu").manual_seed(s) for s in seeds]
        images = pipe(
            prompt=prompts,
            num_images_per_prompt=k,
            guidance_scale=cfg.guidance_scale,
            num_inference_steps=cfg.num_inference_steps,
            height=cfg.height,
            width=cfg.width,
            generator=generators,
            output_type="pil",
        ).images
        if len(images) != len(prompts) * k:
            raise RuntimeError(f"sdxl pipeline: {len(images)} images for {len(prompts)} prompts; expected {k} each")
        out += [[_resize(images[p * k + j], cfg.output_size) for j in range(k)] for p in range(len(prompts))]
    return out


def write_sdxl_images(pipe: Any, instances: pd.DataFrame, cfg: SDXLConfig, out_dir: str | Path) -> pd.DataFrame:
    """Generate the images of every (id, negative_caption) row into out_dir; write and return the manifest."""
    missing = [c for c in ("id", "negative_caption") if c not in instances.columns]
    if missing:
        raise ValueError(f"sdxl: instances table lacks columns {missing}; expected id and negative_caption")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ids = instances["id"].to_numpy().tolist()
    captions = [str(c) for c in instances["negative_caption"]]
    path = {(i, j): out / f"{i}_{j}.png" for i in ids for j in range(cfg.images_per_prompt)}
    todo = [n for n, i in enumerate(ids) if not all(path[i, j].exists() for j in range(cfg.images_per_prompt))]
    for start in range(0, len(todo), cfg.prompts_per_batch):
        chunk = todo[start : start + cfg.prompts_per_batch]
        for n, images in zip(chunk, generate_sdxl(pipe, [captions[n] for n in chunk], cfg)):
            for j, image in enumerate(images):
                with atomic_path(path[ids[n], j]) as tmp:
                    Image.fromarray(image).save(tmp, format="PNG")
    rows = [
        (i, j, c, sdxl_prompt(c, cfg), prompt_seed(cfg.seed, sdxl_prompt(c, cfg), j), path[i, j].name)
        for i, c in zip(ids, captions)
        for j in range(cfg.images_per_prompt)
    ]
    manifest = pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS)).astype({"seed": "uint64"})
    write_parquet(out / MANIFEST_FILE, manifest)
    return manifest


@dataclass
class SDXLGenerator:
    """An SDXL pipeline as an ImageGenerator: n images of the caption text, resized to image_size, scene=None."""

    pipe: Any
    cfg: SDXLConfig = field(default_factory=lambda: make_config(SDXLConfig))
    image_size: int = 512

    def generate(
        self,
        structure: CaptionStructure | None,
        source_scene: Scene | None,
        n: int,
        rng: np.random.Generator | None,
        text: str | None = None,
    ) -> list[GeneratedImage]:
        """n candidates prompted by `text` (structure, scene and rng unused: seeds come from the prompt)."""
        if text is None:
            raise ValueError("SDXLGenerator: no caption text; a text-to-image model is prompted with the text")
        cfg = replace(self.cfg, images_per_prompt=n, output_size=self.image_size)
        return [GeneratedImage(None, pixels=image) for image in generate_sdxl(self.pipe, [text], cfg)[0]]
