"""Read a caption string back into the grammar's structure: the inverse of `captions.realise`.

A caption a learnt captioner generates may leave the grammar (a word it never saw, a noun phrase cut short,
words after the end). `parse_caption` then says which word it could not read and what it expected there,
rather than guess: its `ParseResult` has no structure and an `error`.

The grammar read (as `realise` writes it): a noun phrase is an article (a, an) or a number (two, three, four),
an optional size, an optional colour and a noun (a shape, or 'shape'/'object' for a mention that claims no
shape), plural after a number; a caption is one of `realise`'s templates with its noun phrases. Read leniently
in one respect only: 'a' and 'an' are not checked against the next word (the article claims nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from itmbench.world.captions import GENERIC_NOUNS, NUMBER_WORDS, RELATION_WORDS, CaptionStructure, Mention
from itmbench.world.scene import COLOURS, SHAPES, SIZES

NP = None  # a noun-phrase slot in a template
NUMBERS = {word: count for count, word in NUMBER_WORDS.items()}
ARTICLES = ("a", "an")
NOUNS = (*SHAPES, *GENERIC_NOUNS)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _templates() -> list[tuple[str, str | None, tuple[str | None, ...]]]:
    """(kind, relation, words with NP slots) for every template `realise` can choose."""
    out: list[tuple[str, str | None, tuple[str | None, ...]]] = []
    single = ((NP,), ("there", "is", NP), ("a", "picture", "of", NP), (NP, *_words("on a plain background")))
    out += [("single", None, t) for t in (*single, ("an", "image", "with", NP))]
    out += [("count", None, t) for t in ((NP,), ("there", "are", NP), ("a", "picture", "of", NP))]
    out.append(("count", None, ("an", "image", "showing", NP)))
    pair = ((NP, "and", NP), ("there", "is", NP, "and", NP), ("a", "picture", "of", NP, "and", NP))
    out += [("pair", None, t) for t in (*pair, (NP, "together", "with", NP))]
    for relation, phrases in RELATION_WORDS.items():
        for phrase in phrases:
            rel = _words(phrase)
            for prefix, middle in (((), ()), ((), ("is",)), (("there", "is"), ()), (("a", "picture", "of"), ())):
                out.append(("relation", relation, (*prefix, NP, *middle, *rel, NP)))
    return out


TEMPLATES = _templates()


@dataclass(frozen=True)
class ParseResult:
    """A caption read back: its structure, or None and what could not be read (`error`)."""

    text: str
    structure: CaptionStructure | None
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.structure is not None


class _Fail(Exception):
    def __init__(self, position: int, expected: str):
        super().__init__(expected)
        self.position, self.expected = position, expected


def _noun_phrase(tokens: tuple[str, ...], i: int, counted: bool) -> tuple[Mention, int]:
    """The noun phrase starting at token i (a number first where `counted`, else an article) and the index after
    it (raises _Fail where it cannot be read)."""
    if counted and (i >= len(tokens) or tokens[i] not in NUMBERS):
        raise _Fail(i, "a number (two, three, four)")
    if not counted and (i >= len(tokens) or tokens[i] not in ARTICLES):
        raise _Fail(i, "an article (a, an)")
    count = NUMBERS.get(tokens[i], 1)
    i += 1
    size = colour = None
    if i < len(tokens) and tokens[i] in SIZES:
        size, i = tokens[i], i + 1
    if i < len(tokens) and tokens[i] in COLOURS:
        colour, i = tokens[i], i + 1
    nouns = tuple(n + "s" for n in NOUNS) if count > 1 else NOUNS
    if i >= len(tokens) or tokens[i] not in nouns:
        what = "a plural noun" if count > 1 else "a noun"
        expected = ["a size"] if size is None and colour is None else []
        expected += ["a colour"] if colour is None else []
        raise _Fail(i, " or ".join([*expected, what + " (" + ", ".join(nouns) + ")"]))
    noun = tokens[i][:-1] if count > 1 else tokens[i]
    return Mention(shape=None if noun in GENERIC_NOUNS else noun, colour=colour, size=size, count=count), i + 1


def _match(tokens: tuple[str, ...], kind: str, relation: str | None, template) -> CaptionStructure:
    i, mentions = 0, []
    for word in template:
        if word is NP:
            mention, i = _noun_phrase(tokens, i, counted=kind == "count")
            mentions.append(mention)
        elif i < len(tokens) and tokens[i] == word:
            i += 1
        else:
            raise _Fail(i, repr(word))
    if i < len(tokens):
        raise _Fail(i, "the end of the caption")
    return CaptionStructure(tuple(mentions), relation=relation, kind=kind)


def parse_caption(text: str) -> ParseResult:
    """Read `text` (whitespace-separated words, lower case as the grammar writes them) into its structure."""
    tokens = tuple(text.lower().split())
    if not tokens:
        return ParseResult(text, None, "empty caption: expected a noun phrase")
    found: dict[str, CaptionStructure] = {}
    furthest, expected = -1, set()
    for kind, relation, template in TEMPLATES:
        try:
            structure = _match(tokens, kind, relation, template)
        except _Fail as fail:
            if fail.position > furthest:
                furthest, expected = fail.position, {fail.expected}
            elif fail.position == furthest:
                expected.add(fail.expected)
            continue
        found[structure.to_json()] = structure
    if len(found) == 1:
        return ParseResult(text, next(iter(found.values())))
    if len(found) > 1:  # no template of the grammar reads so; kept as an error, not a guess
        return ParseResult(text, None, f"ambiguous: {len(found)} readings")
    where = f"word {furthest + 1} {tokens[furthest]!r}" if furthest < len(tokens) else f"after word {len(tokens)}"
    return ParseResult(text, None, f"{where}: expected " + " or ".join(sorted(expected)))


__all__ = ["TEMPLATES", "ParseResult", "parse_caption"]
