"""Tuple F1, the world's SPICE analogue: a worked example by hand and a naive reference on random world captions."""

from __future__ import annotations

import numpy as np
import pytest

from itmbench.errors import InputError
from itmbench.metrics.captioning import METRIC_NAMES, caption_metric_scores, metrics_on_source
from itmbench.metrics.tuple_f1 import caption_tuples, tuple_f1, tuple_f1_scores
from itmbench.world.captions import caption_scene
from itmbench.world.scene import sample_scene

REFERENCES = [
    "a red circle above a blue square",
    "two small triangles",
    "a circle near a thing",  # not the world's grammar: no tuples
]


def test_tuples_of_each_kind_of_caption() -> None:
    assert caption_tuples(REFERENCES[0]) == {
        ("circle",),
        ("square",),
        ("circle", "red"),
        ("square", "blue"),
        ("circle", "above", "square"),
    }
    assert caption_tuples(REFERENCES[1]) == {("triangle",), ("triangle", "small"), ("triangle", "two")}
    assert caption_tuples(REFERENCES[2]) is None
    # a mention without a shape is an object; a set: the same node twice is one tuple
    assert caption_tuples("a large shape and a green object") == {("object",), ("object", "large"), ("object", "green")}
    # the parser's relation is canonical: 'over' is 'above', 'on the left of' is left_of (SPICE's synonyms)
    assert caption_tuples("a picture of a circle over a square") == {("circle",), ("square",)} | {
        ("circle", "above", "square")
    }
    assert ("square", "left_of", "circle") in caption_tuples("a square on the left of a circle")


def test_worked_example_by_hand() -> None:
    # the references' union R: 5 tuples of the first, 3 of the second, none of the unreadable third = 8
    cases = {
        # circle, square, (circle, red), (square, blue) match; (circle, below, square) does not: P 4/5, R 4/8
        "a red circle below a blue square": 2 * (4 / 5) * (4 / 8) / (4 / 5 + 4 / 8),  # 8/13
        # (triangle), (triangle, two) both in R: P 1, R 2/8
        "there are two triangles": 2 * 1 * (2 / 8) / (1 + 2 / 8),  # 2/5
        # 'over' reads as above: all 5 of the first reference's tuples, P 1, R 5/8
        "a red circle over a blue square": 2 * 1 * (5 / 8) / (1 + 5 / 8),  # 10/13
        "a green object": 0.0,  # (object), (object, green): nothing matches
        "a red circle which is nice": 0.0,  # the grammar cannot read it: scores 0
    }
    scores = tuple_f1_scores(list(cases), [REFERENCES] * len(cases))
    assert scores == pytest.approx([8 / 13, 2 / 5, 10 / 13, 0.0, 0.0])
    assert scores == pytest.approx(list(cases.values()))
    # through the captioning metrics' entry point, as BISON's rules call it
    assert caption_metric_scores("tuple_f1", list(cases), [REFERENCES] * len(cases)) == pytest.approx(scores)
    # an unreadable reference adds nothing: dropping it changes no score
    assert tuple_f1_scores(list(cases), [REFERENCES[:2]] * len(cases)) == pytest.approx(scores)
    assert tuple_f1(None, [caption_tuples(REFERENCES[0])]) == 0.0
    assert tuple_f1(caption_tuples(REFERENCES[0]), [None]) == 0.0


def _naive_tuples(structure) -> list[str]:
    """A caption's tuples written out as strings from the structure it was generated from (not parsed)."""
    out = []
    names = []
    for m in structure.mentions:
        noun = m.shape if m.shape else "object"
        names.append(noun)
        out.append(noun)
        if m.colour:
            out.append(noun + ":" + m.colour)
        if m.size:
            out.append(noun + ":" + m.size)
        if m.count == 2:
            out.append(noun + ":two")
        if m.count == 3:
            out.append(noun + ":three")
        if m.count == 4:
            out.append(noun + ":four")
    if structure.relation:
        out.append(names[0] + ":" + structure.relation + ":" + names[1])
    return out


def _naive_f1(candidate: list[str] | None, references: list[list[str] | None]) -> float:
    pooled = []
    for ref in references:
        for t in ref or []:
            if t not in pooled:
                pooled.append(t)
    cand = []
    for t in candidate or []:
        if t not in cand:
            cand.append(t)
    hits = 0
    for t in cand:
        if t in pooled:
            hits += 1
    if hits == 0:
        return 0.0
    p = hits / len(cand)
    r = hits / len(pooled)
    return 2 * p * r / (p + r)


def test_agrees_with_a_naive_reference_on_random_world_captions() -> None:
    rng = np.random.default_rng(3)
    kinds = {"single": 1.0, "relation": 1.0, "pair": 1.0, "count": 1.0}
    captioned = [
        caption_scene(sample_scene(i, rng, 1, 4), rng, 5, kinds, 0.8, 0.5, 0.05) for i in range(60)
    ]  # (text, structure) pairs: five per scene
    unreadable = "a circle near a thing"
    candidates, references, expected = [], [], []
    for i in range(len(captioned)):
        # the candidate: a caption of this scene or of the next; references: this scene's other captions,
        # one of them sometimes replaced by text the grammar cannot read
        source = captioned[i] if rng.random() < 0.5 else captioned[(i + 1) % len(captioned)]
        cand_text, cand_structure = source[0]
        refs = list(captioned[i][1:])
        ref_texts = [t for t, _ in refs]
        ref_naive = [_naive_tuples(s) for _, s in refs]
        if rng.random() < 0.3:
            ref_texts[0], ref_naive[0] = unreadable, None
        cand_naive = _naive_tuples(cand_structure)
        if rng.random() < 0.1:
            cand_text, cand_naive = cand_text + " nearby", None
        candidates.append(cand_text)
        references.append(ref_texts)
        expected.append(_naive_f1(cand_naive, ref_naive))
    scores = tuple_f1_scores(candidates, references)
    assert scores == pytest.approx(expected, abs=1e-12)
    assert 0 < np.mean(scores == 0) < 0.5 and np.mean(scores == 1) < 0.5  # varied cases, not all trivial


def test_captions_none_of_which_parse_are_refused_and_the_coco_source_skips_it() -> None:
    with pytest.raises(InputError, match="none of the 2 reference captions is a caption of the world's grammar"):
        tuple_f1_scores(["a man riding a horse"], [["A man rides a horse.", "a person on a brown horse"]])
    assert metrics_on_source(["bleu4", "tuple_f1", "meteor"], "world") == ["bleu4", "tuple_f1", "meteor"]
    assert metrics_on_source(["bleu4", "tuple_f1", "meteor"], "coco") == ["bleu4", "meteor"]
    assert "SPICE analogue" in METRIC_NAMES["tuple_f1"] and not METRIC_NAMES["tuple_f1"].startswith("SPICE")
