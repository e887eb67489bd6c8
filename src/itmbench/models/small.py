"""Small stand-ins for the COCO source's heavy models, saved as folders the real loaders read by path.

`itmbench make-small-models --out DIR [--world ITEMS]` writes:
- DIR/open_clip: an open_clip model folder (open_clip_config.json + open_clip_pytorch_model.bin) with seeded
  random weights, the `local-dir:` form open_clip's own factory and tokenizer read; it stands for ViT-B-32
  (OpenAI's weights) and is the starting point of the three fine-tunes;
- DIR/llm: a Llama-architecture causal LM with a byte-level BPE tokenizer and a chat template, as
  `save_pretrained` writes it: the text-generation pipeline loads it by path as it loads
  `openchat/openchat-3.5-0106` by name (`models.small_llm`);
- DIR/sdxl: a StableDiffusionXLPipeline (SDXL's UNet with text_time conditioning, its VAE, two CLIP text
  towers and tokenizers, Euler scheduler) at toy sizes, as `save_pretrained` writes it: the base pipeline
  and the UNet subfolder `build_sdxl_pipeline` loads by path as it loads SDXL base and the DPO UNet by name
  (`models.small_sdxl`).
With `--world` (a world's items folder) the LM and the pipeline are trained on its train split, so that the
COCO DAG's TROHN stages produce (the two at once, the pipeline in a second process: about the LM's time on two
cores instead of both models' one after the other); without it they keep seeded random weights (they load and
run, and write nothing the filters keep).

Same seed and world, same files' tensors (one torch thread, as the command sets it).
`workflow/config/coco-small.yaml` names these folders; docs/coco.md says how to run the small COCO DAG.
"""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

import torch

from itmbench import LOG_FORMAT
from itmbench.io import output_set
from itmbench.models import small_llm, small_sdxl

OPEN_CLIP_DIR, LLM_DIR, SDXL_DIR = "open_clip", "llm", "sdxl"

# ViT-B-32's layout (a ViT image tower, a causal text transformer, OpenAI's tokenizer) at toy widths.
OPEN_CLIP_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 32, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


def make_open_clip(out: Path, seed: int) -> None:
    """An open_clip `local-dir:` folder: the config and random weights of OPEN_CLIP_CONFIG."""
    import open_clip

    torch.manual_seed(seed)
    out.mkdir(parents=True, exist_ok=True)
    config = {
        "model_cfg": OPEN_CLIP_CONFIG,
        "preprocess_cfg": {"mean": list(OPENAI_MEAN), "std": list(OPENAI_STD)},
    }
    (out / "open_clip_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    model = open_clip.create_model(f"local-dir:{out}", load_weights=False)
    torch.save(model.state_dict(), out / "open_clip_pytorch_model.bin")


def make_small_models(out: str | Path, seed: int = 0, world: str | Path | None = None, log=print) -> dict[str, str]:
    """The three folders under `out` (written together or not at all); their paths by name.

    With `world` (a world's items folder), the LLM and the SDXL pipeline are trained on its train split
    (`models.small_llm`, `models.small_sdxl`), so that the COCO DAG's TROHN stages produce; without it they keep
    their random weights (what the loaders' tests need)."""
    out = Path(out)
    folders = {name: out / name for name in (OPEN_CLIP_DIR, LLM_DIR, SDXL_DIR)}
    with output_set(folders=list(folders.values())):
        make_open_clip(folders[OPEN_CLIP_DIR], seed)
        if world is None:
            small_llm.make_llm(folders[LLM_DIR], seed)
            small_sdxl.make_sdxl(folders[SDXL_DIR], seed)
        else:
            threads = torch.get_num_threads()  # the child's too: the same weights as in this process
            level = logging.getLogger("itmbench").getEffectiveLevel()
            with _beside(_train_sdxl_from_world, folders[SDXL_DIR], world, seed, threads, level):  # both at once
                _, caps = _train_split(world)
                train_llm(folders[LLM_DIR], caps, seed, log)
    return {name: str(path) for name, path in folders.items()}


@contextlib.contextmanager
def _beside(target, *args):
    """Run `target(*args)` in a second (spawned) process while the block runs;
    the block ends when both have. Either failing fails the whole: the other is stopped, the error names it."""
    import multiprocessing

    proc = multiprocessing.get_context("spawn").Process(target=target, args=args, name=target.__name__)
    proc.start()
    try:
        yield
    except BaseException:
        proc.terminate()
        proc.join()
        raise
    proc.join()
    if proc.exitcode != 0:
        raise RuntimeError(f"{target.__name__} (its own process) failed with exit status {proc.exitcode}: see its log")


def _train_sdxl_from_world(out: Path, world: str | Path, seed: int, threads: int, level: int) -> None:
    """`train_sdxl` on `world`'s train split with `threads` torch threads, in the process `_beside` starts (its
    log lines as the command's, at the command's level)."""
    torch.set_num_threads(threads)
    logging.basicConfig(level=level, format=LOG_FORMAT)
    items, caps = _train_split(world)
    train_sdxl(out, items, caps, seed, logging.getLogger("itmbench").info)


def _train_split(world: str | Path):
    """The world and its train captions in caption-id order (read by each of the two training processes)."""
    from itmbench.world.generate import read_world

    w = read_world(world)
    caps = w.caption_table[w.caption_table["split"] == "train"].sort_values("caption_id", kind="stable")
    if caps.empty:
        raise ValueError(f"{world}: no train captions; expected a world items folder with a train split")
    return w, caps


def train_llm(out: Path, caps, seed: int, log=print) -> None:
    """A Llama-architecture causal LM trained on the world's train captions to answer TROHN-Text's prompts."""
    from itmbench.world.captions import CaptionStructure

    structures = [CaptionStructure.from_json(s) for s in caps["structure"]]
    model, tokenizer, corpus = small_llm.train_small_llm(caps["text"].tolist(), structures, seed=seed, log=log)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    kept = sum(k for *_, k in corpus)
    log(f"small LLM: the teacher's answers kept by the template filter: {kept} of {len(corpus)}")


def train_sdxl(out: Path, w, caps, seed: int, log=print, **steps: int) -> None:
    """An SDXL pipeline (SDXL's classes at toy sizes) trained on the world's train images and captions (`steps`:
    `vae_steps`, `unet_steps` other than `train_small_sdxl`'s, as benchmarks/sdxl_unet.py compares them)."""
    import numpy as np

    by_image = caps.groupby("image_id", sort=True)["text"].apply(list)
    images = np.asarray(w.images[by_image.index.to_numpy()])
    pipe = small_sdxl.train_small_sdxl(images, by_image.tolist(), seed=seed, log=log, **steps)
    pipe.save_pretrained(out, safe_serialization=True)
