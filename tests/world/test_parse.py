"""Reading a caption back into the grammar's structure: every caption `realise` writes (the tiny world's and
every template with every relation phrase) reads back to its structure; broken strings are refused naming the
word that could not be read."""

from __future__ import annotations

import numpy as np
import pytest
from unit_world import unit_world

from itmbench.world.captions import RELATION_WORDS, CaptionStructure, Mention, realise
from itmbench.world.generate import generate_world
from itmbench.world.parse import TEMPLATES, parse_caption
from itmbench.world.scene import COLOURS, SHAPES, SIZES

TINY = unit_world(n_train=40, n_val=10, n_test=30)


def test_every_caption_of_the_tiny_world_reads_back_to_its_structure():
    world = generate_world(TINY)
    texts, structures = world.caption_table["text"].tolist(), world.structures()
    assert len(texts) > 300
    for text, structure in zip(texts, structures):
        parsed = parse_caption(text)
        assert parsed.error is None, (text, parsed.error)
        assert parsed.structure == structure, text
        assert realise(parsed.structure, np.random.default_rng(0)) in _all_realisations(structure)


def _all_realisations(structure: CaptionStructure, seeds: int = 200) -> set[str]:
    return {realise(structure, np.random.default_rng(s)) for s in range(seeds)}


def _structures() -> list[CaptionStructure]:
    """Mentions claiming every combination of shape, colour and size, in every kind (counts 2-4)."""
    mentions = [
        Mention(shape, colour, size)
        for shape in (None, SHAPES[0], SHAPES[-1])
        for colour in (None, COLOURS[0], COLOURS[-1])
        for size in (None, *SIZES)
        if shape is not None or colour is not None
    ]
    out = [CaptionStructure((m,), kind="single") for m in mentions]
    out += [
        CaptionStructure((Mention(m.shape, m.colour, m.size, k),), kind="count") for m in mentions for k in (2, 3, 4)
    ]
    out += [CaptionStructure((a, b), kind="pair") for a, b in zip(mentions, mentions[::-1])]
    out += [
        CaptionStructure((a, b), relation=r, kind="relation")
        for r in RELATION_WORDS
        for a, b in zip(mentions, mentions[3:] + mentions[:3])
    ]
    return out


def test_every_template_and_relation_phrase_round_trips():
    """realise with many seeds hits every template; each text reads back to the structure (naive reference:
    structure equality, since realise draws the template and generic noun at random)."""
    used = set()
    for structure in _structures():
        for text in _all_realisations(structure, seeds=40):
            parsed = parse_caption(text)
            assert parsed.structure == structure, (text, parsed.error)
            used.add(text)
    assert len(used) > 1000
    for kind, relation, template in TEMPLATES:  # every template is written by realise for some structure
        words = [w for w in template if w is not None]
        assert any(all(w in t.split() for w in words) for t in used), (kind, relation, template)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "empty caption"),
        ("a red", "after word 2: expected a noun ("),
        ("a picture of a bleu circle", "word 5 'bleu': expected a size or a colour or a noun ("),
        ("two red circle", "word 3 'circle': expected a plural noun (circles,"),
        ("a red circles", "word 3 'circles': expected a noun (circle,"),
        ("a red circle left of", "after word 5: expected an article (a, an)"),
        ("a red circle and", "after word 4: expected an article (a, an)"),
        ("there is a red circle .", "word 6 '.': expected "),
        ("there are a red circle", "word 3 'a': expected a number (two, three, four)"),
        ("a red circle left of two blue squares", "word 6 'two': expected an article (a, an)"),
        ("cat", "word 1 'cat': expected "),
        ("a large small circle", "word 3 'small': expected a colour or a noun ("),
    ],
)
def test_a_broken_caption_names_the_word_it_could_not_read(text, error):
    parsed = parse_caption(text)
    assert parsed.structure is None and not parsed.readable
    assert parsed.error is not None and parsed.error.startswith(error), parsed.error


def test_the_article_is_not_checked_and_generic_nouns_claim_no_shape():
    assert parse_caption("a orange circle").structure == CaptionStructure((Mention("circle", "orange"),))
    assert parse_caption("there is an object").structure == CaptionStructure((Mention(),))
    assert parse_caption("three blue shapes").structure == CaptionStructure(
        (Mention(None, "blue", None, 3),), kind="count"
    )
    relation = parse_caption("a picture of a red square on top of a circle").structure
    assert relation == CaptionStructure((Mention("square", "red"), Mention("circle")), "above", "relation")
