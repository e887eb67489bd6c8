"""Tuple F1: the world's analogue of SPICE (Anderson et al., 2016), never SPICE itself.

SPICE parses each caption into a scene graph (Stanford CoreNLP's dependency parse and rules), flattens the
graph into semantic propositional tuples -- objects (``(o)``), attributes (``(o, a)``) and relations
(``(s, r, o)``) -- and scores a candidate by the F1 of its tuples against the union of its references'
tuples, tuples matching when equal or WordNet synonyms. Real SPICE is not possible here
(`itmbench.metrics.captioning.NOT_POSSIBLE`: its CoreNLP models cannot be installed). The world's captions
come from a closed grammar that `itmbench.world.parse.parse_caption` reads back exactly, so the scene graph
is the parse itself and no synonym matching is needed (the parse already maps ``over`` and ``above`` to
one relation).

A caption's tuples (`caption_tuples`), from each `Mention` of its `ParseResult.structure`, its noun being
the mention's shape, or ``object`` for a mention that claims no shape (the grammar's ``shape``/``object``):

- object: ``(noun,)``;
- attributes: ``(noun, colour)``, ``(noun, size)`` where the mention claims them, and ``(noun, count
  word)`` for a counted mention (``two``, ``three``, ``four``: SPICE makes numbers attributes too);
- relation: ``(noun of mention 0, relation, noun of mention 1)`` where the structure has a relation (its
  canonical name: ``left_of``, ``right_of``, ``above``, ``below``).

Tuples are a set, as SPICE's are: ``a red circle and a blue circle`` is ``{(circle,), (circle, red),
(circle, blue)}``.

The score of a candidate against its references (`tuple_f1`): with C its tuples and R the union of the
references' tuples, precision |C & R| / |C|, recall |C & R| / |R|, F1 their harmonic mean, 0 where
C & R is empty. Decisions where SPICE's definition does not reach:

- a candidate the grammar cannot read (`ParseResult.readable` false) has no tuples and scores 0;
- a reference the grammar cannot read contributes no tuples; where no reference can be read R is empty
  and the score is 0;
- `tuple_f1_scores` refuses (InputError) a call in which not one reference parses: those are not the
  world's captions (COCO's, say), and the analogue is computed on the world only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from itmbench.errors import InputError
from itmbench.world.captions import NUMBER_WORDS, CaptionStructure
from itmbench.world.parse import parse_caption

if TYPE_CHECKING:
    import numpy as np

Tuple = tuple[str, ...]
GENERIC_NODE = "object"  # the node of a mention that claims no shape


def structure_tuples(structure: CaptionStructure) -> frozenset[Tuple]:
    """The object, attribute and relation tuples of a caption's structure (see the module docstring)."""
    nouns = [m.shape or GENERIC_NODE for m in structure.mentions]
    tuples: set[Tuple] = set()
    for noun, mention in zip(nouns, structure.mentions):
        tuples.add((noun,))
        for attribute in (mention.colour, mention.size):
            if attribute is not None:
                tuples.add((noun, attribute))
        if mention.count > 1:
            tuples.add((noun, NUMBER_WORDS[mention.count]))
    if structure.relation is not None:
        tuples.add((nouns[0], structure.relation, nouns[1]))
    return frozenset(tuples)


def caption_tuples(text: str) -> frozenset[Tuple] | None:
    """A caption's tuples, or None where the world's grammar cannot read it."""
    parsed = parse_caption(text)
    return structure_tuples(parsed.structure) if parsed.structure is not None else None


def tuple_f1(candidate: frozenset[Tuple] | None, references: Iterable[frozenset[Tuple] | None]) -> float:
    """F1 of a candidate's tuples against the union of its references' tuples (None: unreadable, see above)."""
    pooled: set[Tuple] = set()
    for ref in references:
        pooled |= ref or set()
    if not candidate or not pooled:
        return 0.0
    matched = len(candidate & pooled)
    if matched == 0:
        return 0.0
    precision, recall = matched / len(candidate), matched / len(pooled)
    return 2 * precision * recall / (precision + recall)


def tuple_f1_scores(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Each candidates[i]'s tuple F1 against references[i] (each caption parsed once)."""
    import numpy as np

    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference sets; expected one each")
    cache: dict[str, frozenset[Tuple] | None] = {}

    def tuples(text: str) -> frozenset[Tuple] | None:
        if text not in cache:
            cache[text] = caption_tuples(text)
        return cache[text]

    parsed_refs = [[tuples(r) for r in refs] for refs in references]
    texts = [r for refs in references for r in refs]
    if texts and not any(t is not None for refs in parsed_refs for t in refs):
        raise InputError(
            f"tuple_f1 (the world's SPICE analogue): none of the {len(texts)} reference captions is a caption of "
            f"the world's grammar (the first, {texts[0]!r}: {parse_caption(texts[0]).error}); expected the "
            "world's captions: the analogue is computed on source=world only"
        )
    return np.asarray([tuple_f1(tuples(c), refs) for c, refs in zip(candidates, parsed_refs)], dtype=np.float64)


__all__ = ["GENERIC_NODE", "caption_tuples", "structure_tuples", "tuple_f1", "tuple_f1_scores"]
