"""ARO's four word-order perturbations of a caption (COCO-Order, Flickr30k-Order), ported from the authors' code.

The authors' `dataset_zoo/perturbations.py` (mertyg/vision-language-models-are-bows, `TextShuffler`):
- `shuffle_nouns_and_adj`: the nouns (Penn tags NN, NNS, NNP, NNPS) permuted among the nouns' positions and
  the adjectives (JJ, JJR, JJS) among the adjectives' positions;
- `shuffle_allbut_nouns_and_adj`: every other token permuted among the other tokens' positions;
- `shuffle_within_trigrams`: the tokens cut into consecutive trigrams (the last may be shorter), each
  trigram's tokens shuffled in place;
- `shuffle_trigrams`: the trigrams' order shuffled, each trigram kept whole.
The authors tag words with spaCy's `en_core_web_sm` and tokenize with NLTK; the world's captions are lower-case
words without punctuation from a fixed lexicon, so a token is a whitespace-separated word and its part of
speech is the world grammar's (`itmbench.world.captions.word_tag`: no tagger model is downloaded at run
time). Every draw comes from the generator given (the authors' are unseeded `np.random` and `random`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from itmbench.world.captions import word_tag


def tag(token: str) -> str:
    """The world lexicon's part of speech of a word as the perturbations use it (`word_tag`, the grammar's):
    'noun', 'adj' or 'other' (a determiner is neither a noun nor an adjective)."""
    kind = word_tag(token)
    return kind if kind in ("noun", "adj") else "other"


def _permute_at(tokens: list[str], positions: list[int], rng: np.random.Generator) -> list[str]:
    out = list(tokens)
    for i, j in zip(positions, rng.permutation(positions).tolist()):
        out[i] = tokens[j]
    return out


def shuffle_nouns_and_adj(tokens: list[str], rng: np.random.Generator) -> list[str]:
    """Nouns permuted among the nouns' positions, then adjectives among the adjectives'."""
    nouns = [i for i, t in enumerate(tokens) if tag(t) == "noun"]
    adjectives = [i for i, t in enumerate(tokens) if tag(t) == "adj"]
    return _permute_at(_permute_at(tokens, nouns, rng), adjectives, rng)


def shuffle_allbut_nouns_and_adj(tokens: list[str], rng: np.random.Generator) -> list[str]:
    """Every word that is neither a noun nor an adjective permuted among those words' positions."""
    return _permute_at(tokens, [i for i, t in enumerate(tokens) if tag(t) == "other"], rng)


def trigrams(tokens: list[str]) -> list[list[str]]:
    """Consecutive trigrams of the tokens, the last one shorter when the length is no multiple of 3."""
    return [list(tokens[i : i + 3]) for i in range(0, len(tokens), 3)]


def shuffle_within_trigrams(tokens: list[str], rng: np.random.Generator) -> list[str]:
    """Each trigram's words shuffled in place."""
    return [t for tri in trigrams(tokens) for t in (tri[k] for k in rng.permutation(len(tri)).tolist())]


def shuffle_trigrams(tokens: list[str], rng: np.random.Generator) -> list[str]:
    """The trigrams' order shuffled, each trigram whole."""
    tris = trigrams(tokens)
    return [t for k in rng.permutation(len(tris)).tolist() for t in tris[k]]


# The four perturbations of the Order sets, in the authors' order (options 1-4 of each test case).
PERTURBATIONS: dict[str, Callable[[list[str], np.random.Generator], list[str]]] = {
    "shuffle_nouns_and_adj": shuffle_nouns_and_adj,
    "shuffle_allbut_nouns_and_adj": shuffle_allbut_nouns_and_adj,
    "shuffle_within_trigrams": shuffle_within_trigrams,
    "shuffle_trigrams": shuffle_trigrams,
}


def pre_caption(text: str, max_words: int) -> str:
    """The authors' `pre_caption` on the world's captions: lower case, single spaces, at most `max_words` words
    (the world's captions carry no punctuation to strip)."""
    return " ".join(text.lower().split()[:max_words])


def perturb(text: str, name: str, rng: np.random.Generator, max_words: int) -> str:
    """One perturbation of a caption, as the authors build an option: perturb the caption, then `pre_caption`."""
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {name!r}; expected one of {list(PERTURBATIONS)}")
    return pre_caption(" ".join(PERTURBATIONS[name](text.split(), rng)), max_words)
