"""Small stand-ins for the COCO source's heavy models, saved as folders the real loaders read by path.

`itmbench make-small-models --out DIR` writes, from configs with seeded random weights:
- DIR/open_clip: an open_clip model folder (open_clip_config.json + open_clip_pytorch_model.bin), the
  `local-dir:` form open_clip's own factory and tokenizer read; it stands for ViT-B-32 (OpenAI's weights)
  and is the starting point of the three fine-tunes;
- DIR/llm: a GPT-2 causal LM (transformers' GPT2LMHeadModel, 2 layers) with a byte-level BPE tokenizer
  trained on the TROHN-Text templates and a chat template, as `save_pretrained` writes it: the
  text-generation pipeline loads it by path as it loads `openchat/openchat-3.5-0106` by name;
- DIR/sdxl: a StableDiffusionXLPipeline (SDXL's UNet with text_time conditioning, its VAE, two CLIP text
  towers and tokenizers, Euler scheduler) at toy sizes, as `save_pretrained` writes it: the base pipeline
  and the UNet subfolder `build_sdxl_pipeline` loads by path as it loads SDXL base and the DPO UNet by name.

Same seed, same files' tensors: the weights come from `torch.manual_seed(seed)` before each model is built.
`workflow/config/coco-small.yaml` names these folders; docs/coco.md says how to run the small COCO DAG.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from itmbench.io import output_set

OPEN_CLIP_DIR, LLM_DIR, SDXL_DIR = "open_clip", "llm", "sdxl"

# ViT-B-32's layout (a ViT image tower, a causal text transformer, OpenAI's tokenizer) at toy widths.
OPEN_CLIP_CONFIG = {
    "embed_dim": 32,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 8, "head_width": 16},
    "text_cfg": {"context_length": 32, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 2},
}
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
# OpenChat-style turns (the chat path of `render_prompt`), in Jinja as transformers applies it.
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ 'GPT4 Correct ' + ('User' if m['role'] == 'user' else 'Assistant') + ': ' "
    "+ m['content'] + '<eos>' }}{% endfor %}{% if add_generation_prompt %}GPT4 Correct Assistant:{% endif %}"
)


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


def _llm_tokenizer():
    """A byte-level BPE tokenizer (400 tokens) trained on the TROHN-Text templates, with a chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from itmbench.negatives.llm_captions import TEMPLATES

    corpus = [t.instruction + "\n" + t.example_answer for _, t in sorted(TEMPLATES.items())]
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>", pad_token="<eos>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def make_llm(out: Path, seed: int) -> None:
    """A random-weight GPT-2 (2 layers, width 32) and its tokenizer, as `save_pretrained` writes them."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _llm_tokenizer()
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=2048,  # the templates' prompts are ~1000 tokens of this small vocabulary
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.eos_token_id,
    )
    model = GPT2LMHeadModel(config)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


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
    """An SDXL pipeline of the real classes at toy sizes (32 px images) with seeded random weights: a UNet with
    text_time conditioning, two CLIP text towers, a small VAE (the tests' pipeline too)."""
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    from itmbench.negatives.sdxl import sdxl_pipeline_from_components

    torch.manual_seed(seed)
    tokenizer = tiny_clip_tokenizer()
    text = CLIPTextConfig(
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=1,
        hidden_size=32,
        intermediate_size=37,
        num_attention_heads=4,
        num_hidden_layers=2,
        vocab_size=len(tokenizer),
        max_position_embeddings=77,
        projection_dim=32,
    )
    unet = UNet2DConditionModel(
        sample_size=16,
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
        norm_num_groups=1,
    )
    vae = AutoencoderKL(
        block_out_channels=(32, 64),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        latent_channels=4,
        sample_size=32,
        norm_num_groups=8,
    )
    scheduler = EulerDiscreteScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", steps_offset=1, timestep_spacing="leading"
    )
    return sdxl_pipeline_from_components(
        unet, vae, CLIPTextModel(text), CLIPTextModelWithProjection(text), tokenizer, tokenizer, scheduler
    )


def make_small_models(out: str | Path, seed: int = 0) -> dict[str, str]:
    """The three folders under `out` (written together or not at all); their paths by name."""
    out = Path(out)
    folders = {name: out / name for name in (OPEN_CLIP_DIR, LLM_DIR, SDXL_DIR)}
    with output_set(folders=list(folders.values())):
        make_open_clip(folders[OPEN_CLIP_DIR], seed)
        make_llm(folders[LLM_DIR], seed)
        make_sdxl(folders[SDXL_DIR], seed)
    return {name: str(path) for name, path in folders.items()}
