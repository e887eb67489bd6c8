"""CIDEr-D with the document frequencies of a fixed corpus: self-critical sequence training's reward.

SCST (Rennie et al.) rewards a sampled caption by its CIDEr-D against its image's references, with the IDF of the
whole training corpus rather than of the batch (its code's ``coco-train-idxs``). pycocoevalcap's ``Cider``
(`itmbench.metrics.captioning`, ``cider_d``) computes the IDF over the reference sets of the entries of each call,
so a batch would change its own IDF. `CorpusCiderD` is the same computation as pycocoevalcap's
``CiderScorer.compute_cider`` (n-grams 1-4, tf-idf vectors, counts clipped by the reference's, a Gaussian length
penalty with sigma 6 on the difference of the bigram counts, the mean over n and over references, x10), with the
document frequencies counted once over `corpus` and each reference set's vectors cooked once: given as corpus the
reference sets being scored it equals pycocoevalcap's value (tested). Text is whitespace-tokenized (tokenize as
the COCO evaluation does first: `captioning.ptb_tokenize`).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence

import numpy as np

N, SIGMA = 4, 6.0


def ngram_counts(text: str, n: int = N) -> Counter:
    """The counts of every 1..n-gram of a whitespace-tokenized text (pycocoevalcap's `precook`)."""
    words = text.split()
    return Counter(tuple(words[i : i + k]) for k in range(1, n + 1) for i in range(len(words) - k + 1))


class CorpusCiderD:
    """CIDEr-D of candidates against reference sets, the IDF that of the reference sets of `corpus`."""

    def __init__(self, corpus: Sequence[Sequence[str]]) -> None:
        if not corpus:
            raise ValueError("CIDEr-D needs a corpus of at least one reference set")
        self.document_frequency: Counter = Counter()
        for refs in corpus:
            self.document_frequency.update({g for ref in refs for g in ngram_counts(ref)})
        self.ref_len = float(np.log(float(len(corpus))))
        self._cooked: dict[Hashable, list] = {}

    def _vector(self, counts: Counter):
        """pycocoevalcap's `counts2vec`: per n, the tf-idf weights and their norm; the bigram count as length."""
        vec: list[dict] = [defaultdict(float) for _ in range(N)]
        norm = [0.0] * N
        length = 0
        for gram, tf in counts.items():
            n = len(gram) - 1
            weight = float(tf) * (self.ref_len - np.log(max(1.0, self.document_frequency[gram])))
            vec[n][gram] = weight
            norm[n] += pow(weight, 2)
            if n == 1:
                length += tf
        return vec, [np.sqrt(x) for x in norm], length

    def _references(self, key: Hashable, refs: Sequence[str]) -> list:
        if key not in self._cooked:
            self._cooked[key] = [self._vector(ngram_counts(r)) for r in refs]
        return self._cooked[key]

    def score(self, candidate: str, refs: Sequence[str], key: Hashable | None = None) -> float:
        """One candidate's CIDEr-D against its references (cooked once per `key` when one is given)."""
        if not refs:
            raise ValueError("CIDEr-D: a candidate without references; expected at least one")
        vec, norm, length = self._vector(ngram_counts(candidate))
        cooked = self._references(key, refs) if key is not None else [self._vector(ngram_counts(r)) for r in refs]
        total = np.zeros(N)
        for vec_ref, norm_ref, length_ref in cooked:
            penalty = math.e ** (-(float(length - length_ref) ** 2) / (2 * SIGMA**2))
            for n in range(N):
                val = sum(min(w, vec_ref[n][g]) * vec_ref[n][g] for g, w in vec[n].items() if g in vec_ref[n])
                if norm[n] != 0 and norm_ref[n] != 0:
                    val /= norm[n] * norm_ref[n]
                total[n] += val * penalty
        return float(np.mean(total) / len(cooked) * 10.0)

    def scores(
        self, candidates: Sequence[str], references: Sequence[Sequence[str]], keys: Sequence[Hashable] | None = None
    ) -> np.ndarray:
        """Each candidate's CIDEr-D against its own reference set (`keys`: a reference set's identity, to cook it
        once across calls)."""
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} reference sets; expected one each")
        keys = keys if keys is not None else [None] * len(candidates)
        return np.array([self.score(c, r, k) for c, r, k in zip(candidates, references, keys)], dtype=np.float64)
