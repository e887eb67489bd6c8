"""The corpus-IDF CIDEr-D (SCST's reward) against pycocoevalcap's CIDEr-D: the same value when the corpus is the
reference sets scored, another when the corpus is larger, and each reference set cooked once."""

from __future__ import annotations

import numpy as np
import pytest

from itmbench.metrics.captioning import caption_metric_scores
from itmbench.metrics.cider import CorpusCiderD, ngram_counts

REFS = [
    ["a red square left of a blue circle", "a blue circle right of a red square", "two shapes"],
    ["a small green hexagon", "a green hexagon above a yellow star", "a hexagon"],
    ["a large purple diamond", "a purple diamond below a red circle", "a diamond near a circle"],
]
CANDIDATES = ["a red square left of a blue circle", "a green star", "a purple diamond below a red square square"]


def test_it_equals_pycocoevalcap_when_the_corpus_is_the_scored_reference_sets():
    want = caption_metric_scores("cider_d", CANDIDATES, REFS)
    got = CorpusCiderD(REFS).scores(CANDIDATES, REFS)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert got[0] > got[2] > got[1] >= 0


def test_a_larger_corpus_changes_the_idf_and_cooked_references_give_the_same_scores():
    corpus = REFS + [["a red square"], ["a blue circle and a red square"]]
    scorer = CorpusCiderD(corpus)
    plain = scorer.scores(CANDIDATES, REFS)
    assert not np.allclose(plain, CorpusCiderD(REFS).scores(CANDIDATES, REFS))
    keyed = scorer.scores(CANDIDATES, REFS, keys=[0, 1, 2])
    again = scorer.scores(CANDIDATES, REFS, keys=[0, 1, 2])  # the cooked vectors of keys 0-2 reused
    np.testing.assert_array_equal(keyed, plain)
    np.testing.assert_array_equal(again, plain)


def test_ngram_counts_and_refusals():
    assert ngram_counts("a b a")[("a",)] == 2 and ngram_counts("a b a")[("a", "b", "a")] == 1
    with pytest.raises(ValueError, match="corpus of at least one"):
        CorpusCiderD([])
    with pytest.raises(ValueError, match="one each"):
        CorpusCiderD(REFS).scores(CANDIDATES[:2], REFS)
    with pytest.raises(ValueError, match="without references"):
        CorpusCiderD(REFS).score("a", [])
