"""`models.openclip.encode_text` cuts the tokens after a batch's last end-of-text token (to a multiple of
`TEXT_LENGTH_STEP`): the same embeddings as open_clip's own `encode_text` over the whole context, bit for bit,
in the caller's order, and open_clip's own path wherever cutting could change an embedding (pooling at the last
position, no causal mask)."""

from __future__ import annotations

import json

import numpy as np
import open_clip
import pytest
import torch
from open_clip.model import CLIP

from itmbench.models.openclip import (
    CONFIG_DIR,
    TEXT_GROUP,
    TEXT_LENGTH_STEP,
    OpenClipEncoder,
    encode_text,
    pooled_positions,
    register_local_configs,
    word_cached,
)
from itmbench.world.generate import generate_world
from tests.unit_world import unit_world


def _encoder(context: int = 0) -> OpenClipEncoder:
    """The world's itm-clip-tiny, random weights; with `context`, open_clip's CLIP class with that text context
    (77: OpenAI's CLIPs, whose captions fill a fifth of it)."""
    register_local_configs()
    torch.manual_seed(0)
    model = open_clip.create_model("itm-clip-tiny")
    if context:
        cfg = json.loads((CONFIG_DIR / "itm-clip-tiny.json").read_text())
        model = CLIP(cfg["embed_dim"], cfg["vision_cfg"], {**cfg["text_cfg"], "context_length": context})
    tokenizer = word_cached(open_clip.get_tokenizer("itm-clip-tiny"))
    tokenizer.context_length = model.context_length
    return OpenClipEncoder(model, tokenizer, torch.device("cpu"))


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """The world's captions and word lists of every length from one word to past the tiny context."""
    captions = generate_world(unit_world(n_train=20, n_val=5, n_test=30)).caption_table["text"].tolist()
    rng = np.random.default_rng(0)
    words = " ".join(captions).split()
    lengths = rng.permutation(np.arange(1, 30).repeat(4))
    return captions + [" ".join(rng.choice(words, size=int(n))) for n in lengths]


@pytest.mark.parametrize("context", [0, 77])
def test_cut_tokens_give_open_clips_embeddings_bit_for_bit_in_the_callers_order(context, texts):
    """Bit for bit, not up to rounding: two texts that are the same get the same embedding whatever their batch,
    as with the whole context (ARO's word-order sets count such a tie as right)."""
    encoder = _encoder(context)
    model = encoder.model.eval()
    assert len(texts) > 2 * TEXT_GROUP  # several groups of like length
    tokens = encoder.text_tensor(texts)
    ends = pooled_positions(model, tokens)
    assert ends is not None
    shortest = torch.argsort(ends, stable=True)[:TEXT_GROUP]
    assert int(ends[shortest].max()) + 1 <= TEXT_LENGTH_STEP < tokens.shape[1]  # this batch is cut
    with torch.no_grad():
        own = model.encode_text(tokens, normalize=True)
        cut = encode_text(model, tokens[shortest], normalize=True)
        grouped = encoder.encode_texts(texts)
    assert torch.equal(cut, own[shortest])
    assert torch.equal(grouped, own)


def test_a_tower_that_reads_past_the_end_of_text_is_not_cut(texts):
    encoder = _encoder()
    model = encoder.model.eval()
    tokens = encoder.text_tensor(texts[:50])
    assert pooled_positions(model, tokens) is not None
    model.text_pool_type = "last"  # the last position: the padding is what it reads
    assert pooled_positions(model, tokens) is None
    with torch.no_grad():
        assert torch.equal(encode_text(model, tokens), model.encode_text(tokens, normalize=True))
    model.text_pool_type = "argmax"
    causal = model.attn_mask
    model.attn_mask = torch.zeros_like(causal)  # every position sees the padding after it
    assert pooled_positions(model, tokens) is None
    model.attn_mask = None
    assert pooled_positions(model, tokens) is None
    model.attn_mask = causal
    assert pooled_positions(model, tokens[:, :5]) is None  # tokens not of the context's length: not this tower's
