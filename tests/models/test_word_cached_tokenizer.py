"""`models.openclip.WordCachedTokenizer` gives open_clip's own token tensor for every text: the world's captions
and their ARO word-order perturbations, random printable ASCII (the fast path), and text that must take
the tokenizer's own path (non-ASCII, '&', control characters)."""

from __future__ import annotations

import string

import numpy as np
import open_clip
import pytest
import torch

from itmbench.models.openclip import WordCachedTokenizer, word_cached
from itmbench.world.generate import generate_world
from tests.unit_world import unit_world


@pytest.fixture(scope="module")
def pair() -> tuple[object, WordCachedTokenizer]:
    own = open_clip.get_tokenizer("ViT-B-32")
    fast = word_cached(open_clip.get_tokenizer("ViT-B-32"))
    assert isinstance(fast, WordCachedTokenizer)
    return own, fast


def _random_texts(alphabet: list[str], n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(alphabet, size=int(rng.integers(0, 40)))) for _ in range(n)]


def test_the_worlds_captions_and_their_shuffles_tokenize_as_open_clips_own(pair):
    own, fast = pair
    texts = generate_world(unit_world(n_train=40, n_val=10, n_test=60)).caption_table["text"].tolist()
    rng = np.random.default_rng(0)
    shuffled = [" ".join(rng.permutation(t.split())) for t in texts]
    for batch in (texts, shuffled, [t.upper() for t in texts]):
        assert torch.equal(fast(batch), own(batch))


WORDS = ["a", "red", "Circle", "it's", "we'll", "x2", "10", "<start_of_text>", "<end_of_text>", "(left)", "!?", "..."]


@pytest.mark.parametrize(
    "alphabet",
    [
        list(string.printable[:95]) + WORDS,  # printable ASCII, '&' included: '&' texts take the slow path
        list(" abcXYZ019'-.,") + WORDS,  # the fast path only
        list(" ab&;\t\n\x00\x1b\x7fé\u00a0\u2019ﬁＡ")
        + ["&amp;", "&lt;b&gt;", "Ã©"]
        + WORDS,  # the tokenizer's own path
    ],
    ids=["printable", "plain", "other"],
)
def test_random_text_tokenizes_as_open_clips_own(pair, alphabet):
    own, fast = pair
    texts = _random_texts(alphabet, 3000, seed=len(alphabet))
    texts += ["", "   ", " lead and trail  ", "word " * 100, "x" * 300]  # empty, blank, truncated at 77
    assert torch.equal(fast(texts), own(texts))
    assert all(fast.encode(t) == own.encode(t) for t in texts[:500])
    assert torch.equal(fast(texts[7]), own(texts[7]))  # one string, as the tokenizer takes it
    assert torch.equal(fast(texts[:50], context_length=9), own(texts[:50], context_length=9))


def test_other_tokenizers_are_left_as_they_are():
    hf_like = object()
    assert word_cached(hf_like) is hf_like
    canonical = open_clip.tokenizer.SimpleTokenizer(clean="canonicalize")
    assert word_cached(canonical) is canonical
    reduced = open_clip.tokenizer.SimpleTokenizer(reduction_mask="simple")
    assert word_cached(reduced) is reduced


def test_the_open_clip_encoder_uses_it():
    from itmbench.models.openclip import build_open_clip
    from itmbench.models.spec import model_spec

    encoder = build_open_clip(model_spec("m", {"family": "open_clip", "arch": "itm-clip-tiny"}), torch.device("cpu"))
    assert isinstance(encoder.tokenizer, WordCachedTokenizer)
    assert encoder.tokenizer.vocab_size == 49408  # attributes reach the wrapped tokenizer
