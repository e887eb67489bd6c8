"""Every text the world can give a model fits the world models' context length, so none is truncated.

itm-clip-tiny's text context is 24 tokens (SOT and EOT included), not CLIP's 77 nor the 32 it once
was: its text tower is causal and pools at EOT, so a shorter context changes nothing but the cost,
provided no text is cut. The captioner (itm-coca-tiny, a word per token) has the same 24. The
captions are built from a finite grammar (templates, relation phrases, mentions) and the hard
negatives edit them; this test realises the longest mentions in every template and edits them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from itmbench.models.captioner import words
from itmbench.models.openclip import CONFIG_DIR
from itmbench.negatives.captions import propose_edit
from itmbench.papers.sugarcrepe.released import SUBSETS
from itmbench.world.captions import RELATION_WORDS, CaptionStructure, Mention, realise
from itmbench.world.scene import COLOURS, SHAPES, SIZES


class AllChoices:
    """An rng stand-in whose integers() returns a fixed index: realise() then picks each template in turn."""

    def __init__(self, index: int) -> None:
        self.index = index

    def integers(self, n: int) -> int:
        return min(self.index, n - 1)


def _every_caption() -> list[tuple[str, CaptionStructure]]:
    """Each template and relation phrase, realised with the mentions whose words tokenise longest."""
    singles = [Mention(shape=s, colour=c, size=z) for s, c, z in itertools.product(SHAPES, COLOURS, SIZES)]
    counts = [Mention(shape=s, colour=c, count=4) for s, c in itertools.product(SHAPES, COLOURS)]
    out = []
    n_choices = 1 + max(len(v) for v in RELATION_WORDS.values()) + 5  # more than any list realise() picks from
    for index in range(n_choices):
        rng = AllChoices(index)
        for m in singles:
            s = CaptionStructure((m,), kind="single")
            out.append((realise(s, rng), s))
        for m in counts:
            s = CaptionStructure((m,), kind="count")
            out.append((realise(s, rng), s))
        for a, b in itertools.product(singles[::7], singles[::5]):
            for kind, rel in [("pair", None), *[("relation", r) for r in RELATION_WORDS]]:
                s = CaptionStructure((a, b), relation=rel, kind=kind)
                out.append((realise(s, rng), s))
    return out


def _lengths(texts: list[str]) -> np.ndarray:
    import open_clip

    tokenizer = open_clip.get_tokenizer("ViT-B-32")  # the BPE of itm-clip-tiny (CLIP's, 49408 tokens)
    return np.array([len(tokenizer.encode(t)) + 2 for t in texts])  # + SOT, EOT


@pytest.fixture(scope="module")
def world_texts() -> list[str]:
    captions = _every_caption()
    texts = [t for t, _ in captions]
    rng = np.random.default_rng(0)
    for text, structure in captions[::3]:
        for subset in SUBSETS:
            edit = propose_edit(structure, text, subset, rng)
            if edit is not None:
                texts.append(edit.text)
    return texts


def _context(arch: str) -> int:
    return json.loads(Path(CONFIG_DIR / f"{arch}.json").read_text())["text_cfg"]["context_length"]


def test_every_world_text_fits_the_tiny_models_context(world_texts: list[str]) -> None:
    context = _context("itm-clip-tiny")
    lengths = _lengths(world_texts)
    assert len(world_texts) > 10_000
    longest = world_texts[int(lengths.argmax())]
    assert lengths.max() <= context, f"{longest!r} has {lengths.max()} tokens; the context holds {context}"
    # the enumeration reaches the long end of the grammar (the longest default-world caption has 19 tokens)
    assert lengths.max() >= 19


def test_every_world_text_fits_the_captioners_context(world_texts: list[str]) -> None:
    context = _context("itm-coca-tiny")
    lengths = np.array([len(words(t)) + 2 for t in world_texts])  # + start, end
    assert lengths.max() <= context, f"{world_texts[int(lengths.argmax())]!r}: {lengths.max()} word tokens > {context}"
    assert lengths.max() >= 17
