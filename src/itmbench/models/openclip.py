"""The open_clip family: any open_clip architecture by name behind the dual-encoder interface.

Where an open_clip model's weights come from (`ModelSpec.pretrained`, resolved by `resolve_weights`):
- None: random initialisation (the world's models, before training);
- an open_clip pretrained tag of `arch` ('openai', 'laion2b_s34b_b79k'): open_clip downloads it;
- 'hf-hub:OWNER/REPO/FILE' (or 'hf-hub:OWNER/REPO' when the repo holds one checkpoint file): a
  checkpoint file in a Hugging Face repository, fetched with huggingface_hub (BiVLC's CLIP_COCO,
  CLIP_TROHN-Text, CLIP_TROHN-Img under imirandam/);
- an http(s):// or file:// URL: downloaded once into the checkpoint cache (`ITMBENCH_CHECKPOINTS`,
  default ~/.cache/itmbench/checkpoints);
- a local file: an open_clip state dict, or a training checkpoint holding one under 'state_dict'
  (open_clip's trainer, NegCLIP) or 'model_state_dict' (BiVLC's fine-tuning script), with or
  without DistributedDataParallel's 'module.' prefixes.
An `arch` of 'hf-hub:OWNER/REPO' or 'local-dir:PATH' is an open_clip model folder (its
open_clip_config.json and weights), which open_clip itself reads. `quick_gelu` forces QuickGELU:
OpenAI's weights and every model fine-tuned from them (NegCLIP, BiVLC's) need it (SugarCrepe
issue #7: GELU silently changes every score).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from itmbench.models.spec import ModelSpec, autocast
from itmbench.reading import load_torch

CONFIG_DIR = Path(__file__).parent / "configs"


class OpenClipEncoder:
    """An open_clip model behind the encoder interface; images arrive as uint8 arrays."""

    def __init__(self, model: torch.nn.Module, tokenizer: Any, device: torch.device) -> None:
        self.model, self.tokenizer, self.device = model, tokenizer, device
        cfg = getattr(model.visual, "preprocess_cfg", {}) or {}
        mean = cfg.get("mean", (0.48145466, 0.4578275, 0.40821073))
        std = cfg.get("std", (0.26862954, 0.26130258, 0.27577711))
        self.mean = torch.tensor(mean, device=device).view(1, 3, 1, 1)
        self.std = torch.tensor(std, device=device).view(1, 3, 1, 1)
        size = model.visual.image_size
        self.image_size = size[0] if isinstance(size, (tuple, list)) else int(size)

    def image_tensor(self, images: np.ndarray) -> torch.Tensor:
        """uint8 [N,H,W,3] -> normalised float [N,3,S,S] on the device (bicubic resize if needed)."""
        x = torch.from_numpy(np.ascontiguousarray(images)).to(self.device).permute(0, 3, 1, 2).float() / 255.0
        if x.shape[-1] != self.image_size or x.shape[-2] != self.image_size:
            x = torch.nn.functional.interpolate(
                x, size=(self.image_size, self.image_size), mode="bicubic", align_corners=False
            )
        return (x - self.mean) / self.std

    def text_tensor(self, texts: list[str]) -> torch.Tensor:
        """Tokenise with the model's own tokenizer and context length."""
        return self.tokenizer(texts).to(self.device)

    @torch.no_grad()
    def encode_images(self, images: np.ndarray) -> torch.Tensor:
        """Unit-norm image embeddings."""
        self.model.eval()
        with autocast(self.device):
            out = self.model.encode_image(self.image_tensor(images), normalize=True)
        return out.float()

    @torch.no_grad()
    def encode_texts(self, texts: list[str]) -> torch.Tensor:
        """Unit-norm text embeddings, in the caller's order. A batch of at least two groups runs as groups of
        `TEXT_GROUP` texts of like length, each cut after its longest (`encode_text`): the same embeddings bit for
        bit (tests/models/test_text_trim.py), at about three quarters of the cost on the world's captions
        (`benchmarks/job_cost.py`, docs/performance.md). A smaller batch runs whole: groups of a few texts would
        take other matrix kernels, whose rounding differs."""
        self.model.eval()
        tokens = self.text_tensor(texts)
        ends = pooled_positions(self.model, tokens)
        with autocast(self.device):
            if ends is None or len(tokens) < 2 * TEXT_GROUP:
                return self.model.encode_text(tokens, normalize=True).float()
            order = torch.argsort(ends, stable=True)
            groups = order.tensor_split(len(tokens) // TEXT_GROUP)  # each of TEXT_GROUP texts or a few more
            parts = [_encode_cut(self.model, tokens[rows], ends[rows], normalize=True).float() for rows in groups]
        out = parts[0].new_empty((len(tokens), parts[0].shape[1]))
        out[order] = torch.cat(parts)
        return out


# Texts per group of like length in `OpenClipEncoder.encode_texts`: each group's tokens are cut after its longest text.
TEXT_GROUP = 64
# `encode_text` cuts the tokens to a multiple of this many positions (or the whole context): the attention's
# softmax and sums then run over the same vector lanes as over the whole context, so each embedding is the
# uncut one bit for bit, not only up to rounding (a tie between two texts that are the same stays a tie).
TEXT_LENGTH_STEP = 16


def pooled_positions(model: torch.nn.Module, tokens: torch.Tensor) -> torch.Tensor | None:
    """Where the text tower of an open_clip CLIP reads each row's embedding (its end-of-text token), or None when
    a row's embedding may depend on the positions after that token.

    It does not where the tower is causal (each position attends to itself and those before it) and pools at
    the end-of-text token (`text_pool_type` 'argmax', the highest id, or 'eos'): the padding after it changes
    nothing the embedding reads, so the tokens may be cut after the last such position of a batch. Any other
    tower (no causal mask, pooling at the first or last position, a custom text model) gives None.
    """
    needs = ("token_embedding", "positional_embedding", "transformer", "ln_final", "text_projection")
    mask = getattr(model, "attn_mask", None)
    if not all(hasattr(model, n) for n in needs) or mask is None or tokens.ndim != 2 or tokens.shape[1] == 0:
        return None
    causal = torch.ones(mask.shape, dtype=torch.bool, device=mask.device).triu(1)  # every later position masked
    if mask.shape != (tokens.shape[1], tokens.shape[1]) or not torch.equal(torch.isinf(mask), causal):
        return None
    pool = getattr(model, "text_pool_type", None)
    if pool == "argmax":
        return tokens.argmax(dim=-1)
    eos = getattr(model, "text_eos_id", None)
    if pool == "eos" and eos is not None:
        return (tokens == eos).int().argmax(dim=-1)
    return None


def encode_text(model: torch.nn.Module, tokens: torch.Tensor, normalize: bool = True) -> torch.Tensor:
    """open_clip's `CLIP.encode_text` on the tokens cut after the batch's last pooled position (`pooled_positions`),
    rounded up to a multiple of `TEXT_LENGTH_STEP`: the text tower runs over the positions the longest text needs
    instead of the whole context, and gives the same embeddings. A tower where cutting could change an embedding
    runs as open_clip runs it.
    """
    ends = pooled_positions(model, tokens)
    if ends is None:
        return model.encode_text(tokens, normalize=normalize)
    return _encode_cut(model, tokens, ends, normalize)


def _encode_cut(model: torch.nn.Module, tokens: torch.Tensor, ends: torch.Tensor, normalize: bool) -> torch.Tensor:
    """`encode_text` of a tower `pooled_positions` allows to cut, given its answer `ends` for these tokens."""
    from open_clip.transformer import text_global_pool

    step = TEXT_LENGTH_STEP
    length = min(tokens.shape[1], -(-(int(ends.max()) + 1) // step) * step)
    text = tokens[:, :length]
    cast_dtype = model.transformer.get_cast_dtype()
    x = model.token_embedding(text).to(cast_dtype)
    x = x + model.positional_embedding[:length].to(cast_dtype)
    x = model.transformer(x, attn_mask=model.attn_mask[:length, :length])
    x = model.ln_final(x)
    x = text_global_pool(x, text, model.text_pool_type, eos_token_id=getattr(model, "text_eos_id", None))
    if isinstance(model.text_projection, torch.nn.Linear):
        x = model.text_projection(x)
    elif model.text_projection is not None:
        x = x @ model.text_projection
    return torch.nn.functional.normalize(x, dim=-1) if normalize else x


def register_local_configs() -> None:
    """Make the project's small architectures known to open_clip's own factory."""
    import open_clip

    if "itm-clip-tiny" not in open_clip.list_models():
        open_clip.add_model_config(CONFIG_DIR)


CHECKPOINT_KEYS = ("state_dict", "model_state_dict")  # open_clip's trainer / NegCLIP; BiVLC's fine-tuning
HF_FILE = re.compile(r"^hf-hub:(?P<repo>[^/]+/[^/]+)(?:/(?P<file>.+))?$")
WEIGHT_SUFFIXES = (".pt", ".pth", ".bin", ".safetensors")


def checkpoint_cache() -> Path:
    """Where downloaded checkpoint files are kept: $ITMBENCH_CHECKPOINTS, else ~/.cache/itmbench/checkpoints."""
    return Path(os.environ.get("ITMBENCH_CHECKPOINTS", Path.home() / ".cache" / "itmbench" / "checkpoints"))


def fetch_url(url: str, cache: Path | None = None) -> Path:
    """Download a URL once into the checkpoint cache (atomically: a killed download leaves nothing)."""
    from torch.hub import download_url_to_file

    from itmbench.io import atomic_path

    cache = cache or checkpoint_cache()
    name = Path(url.split("?")[0]).name or "checkpoint.pt"
    dest = cache / hashlib.sha256(url.encode()).hexdigest()[:16] / name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(dest) as tmp:
            download_url_to_file(url, str(tmp), progress=False)
    return dest


def fetch_hf_file(repo: str, filename: str | None) -> Path:
    """A checkpoint file of a Hugging Face repository (the only weights file there when no name is given)."""
    import huggingface_hub

    if filename is None:
        files = [f for f in huggingface_hub.list_repo_files(repo) if f.endswith(WEIGHT_SUFFIXES)]
        if len(files) != 1:
            raise ValueError(f"hf-hub:{repo}: {len(files)} checkpoint files {files}; expected one, or name it")
        filename = files[0]
    return Path(huggingface_hub.hf_hub_download(repo_id=repo, filename=filename))


def resolve_weights(spec: ModelSpec) -> tuple[str | None, Path | None]:
    """(open_clip pretrained tag, local checkpoint file) of a spec's `pretrained` (at most one is set)."""
    import open_clip

    p = spec.pretrained
    if p is None or spec.arch is None or spec.arch.startswith(("hf-hub:", "local-dir:")):
        return None, None
    if p in open_clip.list_pretrained_tags_by_model(spec.arch):
        return p, None
    hf = HF_FILE.match(p)
    if hf:
        return None, fetch_hf_file(hf["repo"], hf["file"])
    if re.match(r"^(https?|file)://", p):
        return None, fetch_url(p)
    if not Path(p).is_file():
        tags = open_clip.list_pretrained_tags_by_model(spec.arch)
        raise ValueError(
            f"models.{spec.name}: pretrained {p!r} is neither an open_clip tag of {spec.arch} ({tags}), "
            "'hf-hub:OWNER/REPO[/FILE]', a URL, nor an existing checkpoint file"
        )
    return None, Path(p)


def checkpoint_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """The model weights in a checkpoint file: a bare state dict or one under 'state_dict'/'model_state_dict',
    'module.' prefixes (DistributedDataParallel) removed; .safetensors read with safetensors."""
    try:
        if str(path).endswith(".safetensors"):
            from safetensors.torch import load_file

            obj: Any = load_file(str(path))
        else:
            obj = load_torch(path)
    except Exception as err:  # noqa: BLE001 - re-raised with the file named
        raise ValueError(f"{path}: not a readable checkpoint ({err})") from err
    if isinstance(obj, dict):
        for key in CHECKPOINT_KEYS:
            if isinstance(obj.get(key), dict):
                obj = obj[key]
                break
    if not isinstance(obj, dict) or not obj or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(f"{path}: expected a state dict of tensors, bare or under one of {list(CHECKPOINT_KEYS)}")
    if all(k.startswith("module.") for k in obj):
        obj = {k[len("module.") :]: v for k, v in obj.items()}
    return obj


def load_weights(model: torch.nn.Module, path: str | Path, name: str) -> None:
    """Load a checkpoint file's weights into an open_clip model, strictly, naming the file and the mismatch."""
    state = checkpoint_state_dict(path)
    own = model.state_dict()
    if "logit_scale" in state and state["logit_scale"].ndim != own["logit_scale"].ndim:
        state["logit_scale"] = state["logit_scale"].reshape(own["logit_scale"].shape)
    missing, unexpected = sorted(set(own) - set(state)), sorted(set(state) - set(own))
    shapes = [k for k in set(own) & set(state) if own[k].shape != state[k].shape]
    if missing or unexpected or shapes:
        raise ValueError(
            f"models.{name}: {path} does not fit the architecture: missing {missing[:5]}, unexpected "
            f"{unexpected[:5]}, shape mismatch {sorted(shapes)[:5]} (is `arch` the checkpoint's?)"
        )
    model.load_state_dict(state)


def build_open_clip(spec: ModelSpec, device: torch.device, checkpoint: str | Path | None = None) -> OpenClipEncoder:
    """open_clip by architecture name: weights from `spec.pretrained` (module docstring), else random init.

    `checkpoint` (a file this project trained, or the starting point of a fine-tuning) overrides
    `spec.pretrained`. QuickGELU is forced when the spec says so.
    """
    import open_clip

    register_local_configs()
    if spec.arch is None:
        raise ValueError(f"models.{spec.name}: family open_clip needs an `arch`")
    tag, weights = (None, Path(checkpoint)) if checkpoint is not None else resolve_weights(spec)
    model, _, _ = open_clip.create_model_and_transforms(
        spec.arch, pretrained=tag, force_quick_gelu=spec.quick_gelu, device=device
    )
    if weights is not None:
        load_weights(model, weights, spec.name)
        model.to(device)
    return OpenClipEncoder(model, word_cached(open_clip.get_tokenizer(spec.arch)), device)


# Printable ASCII without '&': text that ftfy.fix_text, html.unescape and strip leave as it is (ftfy's fixes need
# a non-ASCII or control character, HTML unescaping an '&'), so open_clip's 'lower' cleaning of it is
# " ".join(text.split()).lower().
_PLAIN = re.compile(r"[ -%'-~]*")


class WordCachedTokenizer:
    """open_clip's SimpleTokenizer (BPE, 'lower' cleaning, truncation) with each distinct word's ids remembered:
    the same tensor as the tokenizer's own for every text, in a fraction of the time on captions made of few words.

    A text of printable ASCII without '&' (`_PLAIN`) is cleaned without ftfy, split at whitespace, and each
    word's ids are the tokenizer's own for that word (its token pattern never matches across whitespace, so
    a text's tokens are its words' tokens in order); any other text goes through the tokenizer itself.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.inner = tokenizer
        self._words: dict[str, list[int]] = {}

    def __getattr__(self, name: str) -> Any:  # context_length, vocab_size, decode, ...: the tokenizer's own
        return getattr(self.inner, name)

    def _word(self, word: str) -> list[int]:
        """One whitespace-free, cleaned word's BPE ids, as SimpleTokenizer.encode computes them."""
        t = self.inner
        ids: list[int] = []
        for token in t.pat.findall(word):
            token = "".join(t.byte_encoder[b] for b in token.encode("utf-8"))
            ids.extend(t.encoder[piece] for piece in t.bpe(token).split(" "))
        self._words[word] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """The tokenizer's `encode(text)`."""
        if not _PLAIN.fullmatch(text):
            return self.inner.encode(text)
        ids: list[int] = []
        words = self._words
        for word in text.lower().split():
            got = words.get(word)
            ids.extend(got if got is not None else self._word(word))
        return ids

    def __call__(self, texts: str | list[str], context_length: int | None = None) -> torch.Tensor:
        """[N, context_length] int64 token ids: start, the text's ids, end, zeros; a long text is cut and ends
        with the end token (the tokenizer's own truncation)."""
        if isinstance(texts, str):
            texts = [texts]
        context_length = context_length or self.context_length
        if not context_length:
            raise ValueError("open_clip tokenizer: no context length")
        sot, eot = self.inner.sot_token_id, self.inner.eot_token_id
        out = np.zeros((len(texts), context_length), dtype=np.int64)
        for i, text in enumerate(texts):
            tokens = [sot, *self.encode(text), eot]
            if len(tokens) > context_length:
                tokens = tokens[:context_length]
                tokens[-1] = eot
            out[i, : len(tokens)] = tokens
        return torch.from_numpy(out)


def word_cached(tokenizer: Any) -> Any:
    """`WordCachedTokenizer` around open_clip's SimpleTokenizer with its default 'lower' cleaning and no reduction;
    any other tokenizer (an HF one, another cleaning) as it is."""
    from open_clip.tokenizer import SimpleTokenizer, _clean_lower

    if type(tokenizer) is SimpleTokenizer and tokenizer.clean_fn is _clean_lower and tokenizer.reduction_fn is None:
        return WordCachedTokenizer(tokenizer)
    return tokenizer
