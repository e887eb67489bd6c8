"""Caption grammar: each caption is a structure (what it claims) realised as varied English text.

A caption claims part of a scene, as a COCO caption does: one object, two objects (with or
without a spatial relation), or a count. The structure, not the text, is what truth reads, and
hard-negative edits (BiVLC, SugarCrepe) operate on it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from itmbench.world.scene import COLOURS, RELATIONS, SHAPES, SIZES, Scene, WorldObject, relation_holds

NUMBER_WORDS = {2: "two", 3: "three", 4: "four"}
RELATION_WORDS: dict[str, tuple[str, ...]] = {
    "left_of": ("to the left of", "left of", "on the left of"),
    "right_of": ("to the right of", "right of", "on the right of"),
    "above": ("above", "over", "on top of"),
    "below": ("below", "under", "beneath"),
}
GENERIC_NOUNS = ("shape", "object")
CAPTION_KINDS = ("single", "relation", "pair", "count")
# The grammar's parts of speech (every other word is neither, and the grammar has no verb or adverb), for
# what reads the text rather than the structure as a tagger would (ARO's word-order perturbations, NegCLIP's
# swaps): the nouns are the shapes and generic nouns, singular and plural, and the template nouns ('a picture
# of', 'an image with', 'on a plain background', 'to the left of', 'on top of'); the adjectives are the
# colours, the sizes and 'plain'; the determiners open a noun phrase.
NOUNS = frozenset(
    {*SHAPES, *GENERIC_NOUNS, *(n + "s" for n in (*SHAPES, *GENERIC_NOUNS))}
    | {"picture", "image", "background", "left", "right", "top"}
)
ADJECTIVES = frozenset({*COLOURS, *SIZES, "plain"})
DETERMINERS = frozenset({"a", "an", *NUMBER_WORDS.values()})


def word_tag(word: str) -> str:
    """The grammar's part of speech of a word: 'noun', 'adj', 'det' or 'other'."""
    return "noun" if word in NOUNS else "adj" if word in ADJECTIVES else "det" if word in DETERMINERS else "other"


def noun_phrase_spans(words: list[str]) -> list[tuple[int, int]]:
    """The noun phrases of a caption's words as [start, end) spans: a determiner, any adjectives, a noun."""
    spans, i = [], 0
    while i < len(words):
        j = i + 1
        while word_tag(words[i]) == "det" and j < len(words) and word_tag(words[j]) == "adj":
            j += 1
        if word_tag(words[i]) == "det" and j < len(words) and word_tag(words[j]) == "noun":
            spans.append((i, j + 1))
            i = j + 1
        else:
            i += 1
    return spans


@dataclass(frozen=True)
class Mention:
    """A noun phrase: attributes left as None are not claimed; count>1 claims exactly that many."""

    shape: str | None = None
    colour: str | None = None
    size: str | None = None
    count: int = 1

    def matches(self, obj: WorldObject) -> bool:
        """Whether an object fits every attribute this mention claims."""
        return (
            (self.shape is None or obj.shape == self.shape)
            and (self.colour is None or obj.colour == self.colour)
            and (self.size is None or obj.size == self.size)
        )


@dataclass(frozen=True)
class CaptionStructure:
    """What a caption claims: one or two mentions, and optionally relation(mention 0, mention 1)."""

    mentions: tuple[Mention, ...]
    relation: str | None = None
    kind: str = field(default="single")

    def to_json(self) -> str:
        """Canonical JSON (sorted keys), the form stored in the captions table."""
        return json.dumps(
            {"kind": self.kind, "mentions": [asdict(m) for m in self.mentions], "relation": self.relation},
            sort_keys=True,
        )

    @staticmethod
    def from_json(text: str) -> CaptionStructure:
        """Parse the JSON written by to_json."""
        d = json.loads(text)
        return CaptionStructure(
            mentions=tuple(Mention(**m) for m in d["mentions"]),
            relation=d["relation"],
            kind=d["kind"],
        )


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def noun_phrase(m: Mention, rng: np.random.Generator) -> str:
    """Realise a mention as text: 'a small red circle', 'two blue shapes'."""
    adjectives = [a for a in (m.size, m.colour) if a is not None]
    noun = m.shape if m.shape is not None else GENERIC_NOUNS[int(rng.integers(len(GENERIC_NOUNS)))]
    if m.count > 1:
        words = [NUMBER_WORDS[m.count], *adjectives, noun + "s"]
        return " ".join(words)
    words = [*adjectives, noun]
    return " ".join([_article(words[0]), *words])


def realise(c: CaptionStructure, rng: np.random.Generator) -> str:
    """Realise a caption structure as one of several templates, chosen by rng."""
    nps = [noun_phrase(m, rng) for m in c.mentions]
    if c.kind == "single":
        templates = ("{0}", "there is {0}", "a picture of {0}", "{0} on a plain background", "an image with {0}")
    elif c.kind == "count":
        templates = ("{0}", "there are {0}", "a picture of {0}", "an image showing {0}")
    elif c.kind == "pair":
        templates = ("{0} and {1}", "there is {0} and {1}", "a picture of {0} and {1}", "{0} together with {1}")
    elif c.kind == "relation":
        assert c.relation is not None
        rel = RELATION_WORDS[c.relation][int(rng.integers(len(RELATION_WORDS[c.relation])))]
        templates = (
            "{0} " + rel + " {1}",
            "{0} is " + rel + " {1}",
            "there is {0} " + rel + " {1}",
            "a picture of {0} " + rel + " {1}",
        )
    else:
        raise ValueError(f"unknown caption kind {c.kind!r}; expected one of {CAPTION_KINDS}")
    return templates[int(rng.integers(len(templates)))].format(*nps)


def _describe(obj: WorldObject, rng: np.random.Generator, p_colour: float, p_size: float) -> Mention:
    """A mention of one object claiming a random part of its attributes (the shape or colour always)."""
    colour = obj.colour if rng.random() < p_colour else None
    size = obj.size if rng.random() < p_size else None
    shape = obj.shape if (colour is None or rng.random() < 0.85) else None
    return Mention(shape=shape, colour=colour, size=size)


def _sample_structure(
    scene: Scene, rng: np.random.Generator, kind: str, p_colour: float, p_size: float, margin: float
) -> CaptionStructure | None:
    """Sample a structure of `kind` that is true of `scene`, or None if the scene cannot have one."""
    objs = scene.objects
    if kind == "single":
        o = objs[int(rng.integers(len(objs)))]
        return CaptionStructure((_describe(o, rng, p_colour, p_size),), kind="single")
    if kind == "count":
        o = objs[int(rng.integers(len(objs)))]
        choice = int(rng.integers(3))
        m = Mention(
            shape=o.shape if choice in (0, 2) else None,
            colour=o.colour if choice in (1, 2) else None,
        )
        k = sum(m.matches(x) for x in objs)
        if k < 2:
            return None
        return CaptionStructure((Mention(m.shape, m.colour, None, k),), kind="count")
    if len(objs) < 2:
        return None
    i, j = (int(v) for v in rng.choice(len(objs), size=2, replace=False))
    if kind == "pair":
        return CaptionStructure(
            (_describe(objs[i], rng, p_colour, p_size), _describe(objs[j], rng, p_colour, p_size)), kind="pair"
        )
    if kind == "relation":
        holding = [r for r in RELATIONS if relation_holds(objs[i], objs[j], r, margin)]
        if not holding:
            return None
        rel = holding[int(rng.integers(len(holding)))]
        return CaptionStructure(
            (_describe(objs[i], rng, p_colour, p_size), _describe(objs[j], rng, p_colour, p_size)),
            relation=rel,
            kind="relation",
        )
    raise ValueError(f"unknown caption kind {kind!r}; expected one of {CAPTION_KINDS}")


def caption_scene(
    scene: Scene,
    rng: np.random.Generator,
    n_captions: int,
    kind_weights: dict[str, float],
    p_colour: float,
    p_size: float,
    margin: float,
) -> list[tuple[str, CaptionStructure]]:
    """Give a scene n captions (text, structure), each true of it, distinct texts where possible."""
    kinds = list(kind_weights)
    weights = np.array([kind_weights[k] for k in kinds], dtype=float)
    weights /= weights.sum()
    out: list[tuple[str, CaptionStructure]] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < n_captions:
        tries += 1
        kind = kinds[int(rng.choice(len(kinds), p=weights))]
        structure = _sample_structure(scene, rng, kind, p_colour, p_size, margin)
        if structure is None:
            continue
        text = realise(structure, rng)
        if text in seen and tries < 200:
            continue
        seen.add(text)
        out.append((text, structure))
    return out
