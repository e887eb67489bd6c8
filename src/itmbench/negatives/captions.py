"""SugarCrepe-style hard-negative captions, made by editing a caption's structure.

SugarCrepe (Hsieh et al. 2024; as BiVLC describes it) has 7 subsets: replace obj/att/rel,
swap obj/att, add obj/att. An LLM rewrites a COCO caption minimally, and the negatives that are
still true of the image are filtered out. In the world the rewrite is an edit of the caption's
structure (`world.captions.CaptionStructure`), and the edit is realised as a *minimal text edit*
of the positive caption: the noun phrases and the relation phrase that changed are substituted in
place, the template and every other word stay, so the text of a negative differs from its
positive only where its meaning does (no template bias a text-only model could exploit). Whether
the edit is false of the source image is decided by the caller with the world's truth.

Edits (each draws its choices from the rng it is given; `propose_edit` returns None where a
subset does not apply to a caption):
- replace_obj: one mention's shape -> another shape (mentions that name a shape);
- replace_att: one claimed colour or size -> another value of that attribute;
- replace_rel: the relation -> another relation (relation captions);
- swap_obj: the shapes of the two mentions are exchanged, attributes stay in place (two mentions
  naming two different shapes);
- swap_att: the colour (or size) of the two mentions is exchanged; an attribute claimed by one
  mention only moves to the other ('a red circle and a square' -> 'a circle and a red square');
- add_obj: a one-object caption gets a second object (a random shape and colour): 'single' ->
  'pair' ('a red circle' -> 'a red circle and a blue square');
- add_att: a mention gains a colour or size it did not claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from itmbench.world.captions import GENERIC_NOUNS, NUMBER_WORDS, RELATION_WORDS, CaptionStructure, Mention
from itmbench.world.scene import COLOURS, RELATIONS, SHAPES, SIZES

# SugarCrepe's subsets (type_subtype), its three types and three subtypes: the edit grammar's names,
# shared by the papers that build on them (SugarCrepe, BiVLC) and their released-file readers.
SUBSETS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")
TYPES = ("replace", "swap", "add")
SUBTYPES = ("obj", "att", "rel")
ATTRIBUTES: dict[str, tuple[str, ...]] = {"colour": COLOURS, "size": SIZES}


def split_subset(subset: str) -> tuple[str, str]:
    """(type, subtype) of a subset name such as 'replace_att'."""
    if subset not in SUBSETS:
        raise ValueError(f"unknown SugarCrepe subset {subset!r}; expected one of {SUBSETS}")
    kind, subtype = subset.split("_")
    return kind, subtype


@dataclass(frozen=True)
class CaptionEdit:
    """One hard-negative caption: its subset, edited structure, realised text and what changed."""

    subset: str
    structure: CaptionStructure
    text: str
    detail: str


def mention_text(m: Mention, generic: str = GENERIC_NOUNS[0]) -> str:
    """Deterministic noun phrase of a mention (as world.captions.noun_phrase, with a fixed generic noun)."""
    adjectives = [a for a in (m.size, m.colour) if a is not None]
    noun = m.shape if m.shape is not None else generic
    if m.count > 1:
        return " ".join([NUMBER_WORDS[m.count], *adjectives, noun + "s"])
    words = [*adjectives, noun]
    return " ".join(["an" if words[0][0] in "aeiou" else "a", *words])


def locate_mentions(text: str, structure: CaptionStructure) -> list[tuple[int, int, str]]:
    """Character spans (start, end, generic noun used) of each mention's noun phrase, in order."""
    spans: list[tuple[int, int, str]] = []
    start = 0
    for index, m in enumerate(structure.mentions):
        generics = GENERIC_NOUNS if m.shape is None else (GENERIC_NOUNS[0],)
        best: tuple[int, int, str] | None = None
        for generic in generics:
            pattern = r"(?<![a-z])" + re.escape(mention_text(m, generic)) + r"(?![a-z])"
            found = re.compile(pattern).search(text, start)
            if found is not None and (best is None or found.start() < best[0]):
                best = (found.start(), found.end(), generic)
        if best is None:
            raise ValueError(f"caption {text!r}: cannot find the noun phrase of mention {index} ({m}) in the text")
        spans.append(best)
        start = best[1]
    return spans


def _relation_span(text: str, lo: int, hi: int, relation: str) -> tuple[int, int, int]:
    """(start, end, variant index) of the relation phrase between two noun phrases."""
    middle = text[lo:hi]
    variants = RELATION_WORDS[relation]
    for index in sorted(range(len(variants)), key=lambda i: -len(variants[i])):
        found = re.search(r"(?<![a-z])" + re.escape(variants[index]) + r"(?![a-z])", middle)
        if found is not None:
            return lo + found.start(), lo + found.end(), index
    raise ValueError(f"caption {text!r}: no phrase of relation {relation!r} between its noun phrases")


def realise_edit(text: str, old: CaptionStructure, new: CaptionStructure) -> str:
    """Text of `new` as a minimal edit of `text` (the realisation of `old`): changed phrases substituted in place."""
    spans = locate_mentions(text, old)
    pieces: list[tuple[int, int, str]] = []  # (start, end, replacement), non-overlapping
    for index, (start, end, generic) in enumerate(spans):
        if index >= len(new.mentions):
            raise ValueError(f"caption {text!r}: an edit may not remove mentions ({old} -> {new})")
        if new.mentions[index] != old.mentions[index]:
            pieces.append((start, end, mention_text(new.mentions[index], generic)))
    if len(new.mentions) > len(old.mentions):
        if len(old.mentions) != 1 or len(new.mentions) != 2 or new.relation is not None:
            raise ValueError(f"caption {text!r}: only 'single' -> 'pair' additions are realisable ({old} -> {new})")
        end = spans[0][1]
        added = " and " + mention_text(new.mentions[1], spans[0][2])
        if pieces and pieces[-1][1] == end:
            start, _, phrase = pieces.pop()
            pieces.append((start, end, phrase + added))
        else:
            pieces.append((end, end, added))
    if old.relation != new.relation:
        if old.relation is None or new.relation is None:
            raise ValueError(f"caption {text!r}: an edit may not add or remove a relation ({old} -> {new})")
        start, end, variant = _relation_span(text, spans[0][1], spans[1][0], old.relation)
        pieces.append((start, end, RELATION_WORDS[new.relation][variant]))
    out = text
    for start, end, phrase in sorted(pieces, reverse=True):
        out = out[:start] + phrase + out[end:]
    return out


def _other(values: tuple[str, ...], current: str | None, rng: np.random.Generator) -> str:
    """A random value different from `current`."""
    choices = [v for v in values if v != current]
    return choices[int(rng.integers(len(choices)))]


def _pick(options: list, rng: np.random.Generator):
    """A random element of a non-empty list."""
    return options[int(rng.integers(len(options)))]


def edit_structure(structure: CaptionStructure, subset: str, rng: np.random.Generator) -> tuple[CaptionStructure, str]:
    """Apply one edit of `subset` to `structure`: (edited structure, detail), or raise LookupError if inapplicable."""
    ms = list(structure.mentions)
    two = len(ms) == 2
    if subset == "replace_obj":
        options = [i for i, m in enumerate(ms) if m.shape is not None]
        if not options:
            raise LookupError(subset)
        i = _pick(options, rng)
        new = _other(SHAPES, ms[i].shape, rng)
        detail = f"mention {i} shape {ms[i].shape}->{new}"
        ms[i] = replace(ms[i], shape=new)
    elif subset == "replace_att":
        options = [(i, a) for i, m in enumerate(ms) for a in ATTRIBUTES if getattr(m, a) is not None]
        if not options:
            raise LookupError(subset)
        i, attr = _pick(options, rng)
        new = _other(ATTRIBUTES[attr], getattr(ms[i], attr), rng)
        detail = f"mention {i} {attr} {getattr(ms[i], attr)}->{new}"
        ms[i] = replace(ms[i], **{attr: new})
    elif subset == "replace_rel":
        if structure.relation is None:
            raise LookupError(subset)
        new = _other(RELATIONS, structure.relation, rng)
        return replace(structure, relation=new), f"relation {structure.relation}->{new}"
    elif subset == "swap_obj":
        if not (two and None not in (ms[0].shape, ms[1].shape) and ms[0].shape != ms[1].shape):
            raise LookupError(subset)
        detail = f"shapes {ms[0].shape}<->{ms[1].shape}"
        ms = [replace(ms[0], shape=ms[1].shape), replace(ms[1], shape=ms[0].shape)]
    elif subset == "swap_att":
        options = [a for a in ATTRIBUTES if two and getattr(ms[0], a) != getattr(ms[1], a)]
        if not options:
            raise LookupError(subset)
        attr = _pick(options, rng)
        a0, a1 = getattr(ms[0], attr), getattr(ms[1], attr)
        detail = f"{attr} {a0}<->{a1}"
        ms = [replace(ms[0], **{attr: a1}), replace(ms[1], **{attr: a0})]
    elif subset == "add_obj":
        if structure.kind != "single" or len(ms) != 1 or ms[0].count != 1:
            raise LookupError(subset)
        added = Mention(shape=_pick(list(SHAPES), rng), colour=_pick(list(COLOURS), rng))
        return CaptionStructure((ms[0], added), kind="pair"), f"added {added.colour} {added.shape}"
    elif subset == "add_att":
        options = [(i, a) for i, m in enumerate(ms) for a in ATTRIBUTES if getattr(m, a) is None]
        if not options:
            raise LookupError(subset)
        i, attr = _pick(options, rng)
        new = _pick(list(ATTRIBUTES[attr]), rng)
        detail = f"mention {i} +{attr} {new}"
        ms[i] = replace(ms[i], **{attr: new})
    else:
        raise ValueError(f"unknown SugarCrepe subset {subset!r}; expected one of {SUBSETS}")
    return replace(structure, mentions=tuple(ms)), detail


def propose_edit(structure: CaptionStructure, text: str, subset: str, rng: np.random.Generator) -> CaptionEdit | None:
    """One hard-negative candidate of `subset` for a caption (structure and text), or None if it does not apply."""
    try:
        edited, detail = edit_structure(structure, subset, rng)
    except LookupError:
        return None
    if edited == structure:
        return None
    return CaptionEdit(subset=subset, structure=edited, text=realise_edit(text, structure, edited), detail=detail)
