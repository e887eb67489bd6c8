"""Captioning metrics through pycocoevalcap: our path gives the library's own values; the Python PTB tokenizer
gives the Java PTBTokenizer's output; METEOR runs where Java is (the CI installs it)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider

from itmbench.errors import InputError
from itmbench.metrics.captioning import (
    bleu4_from_statistics,
    bleu4_statistics,
    caption_metric_scores,
    corpus_bleu4,
    java_available,
    ptb_tokenize,
)

NEEDS_JAVA = pytest.mark.skipif(not java_available(), reason="METEOR and PTBTokenizer run in Java: no `java` on PATH")

CANDIDATES = ["a man riding a horse on the beach", "two dogs play in the snow", "a red bus", "a cat"]
REFERENCES = [
    ["a man rides a horse on a beach", "a person riding a brown horse near the ocean", "a horse and its rider"],
    ["dogs playing in the snow", "two dogs running through snow", "a pair of dogs outside in winter"],
    ["a red double decker bus on the street", "a bus parked by the curb"],
    ["a cat sleeping on a sofa", "a kitten on the couch", "a cat"],
]


def _library(metric) -> np.ndarray:
    gts = {i: refs for i, refs in enumerate(REFERENCES)}
    res = {i: [c] for i, c in enumerate(CANDIDATES)}
    if metric == "bleu4":
        return np.asarray(Bleu(4).compute_score(gts, res, verbose=0)[1][3])
    return np.asarray(Cider().compute_score(gts, res)[1])


@pytest.mark.parametrize("metric", ["bleu4", "cider_d"])
def test_scores_are_pycocoevalcaps_own(metric) -> None:
    ours = caption_metric_scores(metric, CANDIDATES, REFERENCES)
    np.testing.assert_array_equal(ours, _library(metric))  # the same calls: bit-identical
    assert ours.shape == (4,) and np.all(np.isfinite(ours))
    assert ours[3] > ours[2]  # "a cat" is one of its references


def test_bleu4_worked_example_by_hand() -> None:
    """Candidate a b c d e against reference a b c d f: p1..p4 = 4/5, 3/4, 2/3, 1/2, equal lengths (BP 1)."""
    value = caption_metric_scores("bleu4", ["a b c d e"], [["a b c d f"]])[0]
    assert value == pytest.approx((4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25, rel=1e-8)  # 0.6687
    # brevity penalty: candidate a b c d against a b c d e f -> exp(1 - 6/4), all precisions 1
    short = caption_metric_scores("bleu4", ["a b c d"], [["a b c d e f"]])[0]
    assert short == pytest.approx(math.exp(1 - 6 / 4), rel=1e-8)


def test_corpus_bleu4_from_summed_statistics_equals_pycocoevalcaps_on_any_resample() -> None:
    """The bootstrap's shortcut: corpus BLEU-4 of a resample from its rows' summed statistics is pycocoevalcap's
    corpus score of the same candidates (duplicates included), the brevity penalty and a zero count too."""
    cands = [*CANDIDATES, "a b c d", "x"]
    refs = [*REFERENCES, ["a b c d e f"], ["y z"]]
    stats = bleu4_statistics(cands, refs)
    assert stats.shape == (6, 10) and stats.dtype == np.int64
    assert bleu4_from_statistics(stats.sum(axis=0)) == corpus_bleu4(cands, refs)
    rng = np.random.default_rng(0)
    for _ in range(20):
        sample = rng.integers(0, len(cands), len(cands))
        expected = corpus_bleu4([cands[i] for i in sample], [refs[i] for i in sample])
        assert bleu4_from_statistics(stats[sample].sum(axis=0)) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert bleu4_from_statistics(stats[[5]].sum(axis=0)) == pytest.approx(corpus_bleu4(["x"], [["y z"]]), abs=1e-15)


def test_cider_d_idf_is_over_the_entries_of_one_call() -> None:
    """CIDEr-D depends on the reference corpus of the call (IDF): one entry alone scores differently."""
    together = caption_metric_scores("cider_d", CANDIDATES, REFERENCES)
    alone = caption_metric_scores("cider_d", CANDIDATES[:1], REFERENCES[:1])
    assert alone[0] == 0.0  # a one-document corpus: every n-gram has IDF log(1/1) = 0
    assert together[0] > 0.0


@NEEDS_JAVA
def test_meteor_is_pycocoevalcaps_own() -> None:
    from pycocoevalcap.meteor.meteor import Meteor

    ours = caption_metric_scores("meteor", CANDIDATES, REFERENCES)
    meteor = Meteor()
    try:
        _, theirs = meteor.compute_score(
            {i: r for i, r in enumerate(REFERENCES)}, {i: [c] for i, c in enumerate(CANDIDATES)}
        )
    finally:
        meteor.meteor_p.stdin.close()
        meteor.meteor_p.wait()
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=0)
    assert 0.0 < ours[2] < ours[0] < 1.0 and ours[3] > 0.9  # an exact match scores near 1


def test_without_java_bleu_and_cider_run_and_meteor_says_what_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no java (nor anything else) on PATH
    assert not java_available()
    for metric in ("bleu4", "cider_d"):  # pure Python in pycocoevalcap
        np.testing.assert_array_equal(caption_metric_scores(metric, CANDIDATES, REFERENCES), _library(metric))
    with pytest.raises(InputError, match="default-jre-headless"):
        caption_metric_scores("meteor", ["a cat"], [["a cat"]])


def test_bad_calls_are_refused() -> None:
    with pytest.raises(ValueError, match="CoreNLP"):
        caption_metric_scores("spice", ["a"], [["a"]])
    with pytest.raises(ValueError, match="expected one of"):
        caption_metric_scores("rouge", ["a"], [["a"]])
    with pytest.raises(ValueError, match="one each"):
        caption_metric_scores("bleu4", ["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="entry 1: no reference"):
        caption_metric_scores("cider_d", ["a", "b"], [["a"], []])
    assert caption_metric_scores("bleu4", [], []).shape == (0,)


# The Java PTBTokenizer's output (pycocoevalcap 1.2, stanford-corenlp-3.4.1, -lowerCase, punctuation dropped)
# on COCO-style captions, recorded from the jar; `test_the_java_tokenizer_agrees` re-runs it where Java is.
PTB_EXAMPLES = {
    "A man riding a wave on top of a surfboard.": "a man riding a wave on top of a surfboard",
    "A kitchen with a stove, sink, and refrigerator.": "a kitchen with a stove sink and refrigerator",
    "A person's hand holding a hot dog.": "a person 's hand holding a hot dog",
    "A man's dog doesn't run.": "a man 's dog does n't run",
    "I'm sure they can't and won't, cannot, gonna wanna gotta": (
        "i 'm sure they ca n't and wo n't can not gon na wan na got ta"
    ),
    "They're we've you'll she'd": "they 're we 've you 'll she 'd",
    "A 'No Parking' sign on a pole": "a no parking sign on a pole",
    'Someone is cutting a cake that says "Happy Birthday".': "someone is cutting a cake that says happy birthday",
    "the kids' toys are on the floor": "the kids toys are on the floor",
    "Two dogs (brown & white) play.": "two dogs -lrb- brown & white -rrb- play",
    "A plate of food [with] {sauce}": "a plate of food -lsb- with -rsb- -lcb- sauce -rcb-",
    "An old-fashioned clock tower.": "an old-fashioned clock tower",
    "A clock shows 10:45 on a building.": "a clock shows 10:45 on a building",
    "3.5 inches of snow": "3.5 inches of snow",
    "The train is at 5:30 p.m.": "the train is at 5:30 p.m.",
    "Dr. Smith's office at 5 p.m.": "dr. smith 's office at 5 p.m.",
    "Is it a T.V.?": "is it a t.v.",
    "A bus?!": "a bus ?!",
    "Kids play... outside": "kids play outside",
    "one...two": "one two",
    "Hello--world": "hello world",
    "A man's-room": "a man 's room",
    "#1 fan with $5 and 50% @home e-mail": "# 1 fan with $ 5 and 50 % @home e-mail",
    "A dog w/ a frisbee": "a dog w / a frisbee",
    "A cat/dog on a mat": "a cat/dog on a mat",
    "People are walking in the street,while others ride bikes": (
        "people are walking in the street while others ride bikes"
    ),
    "A bathroom with a toilet , sink and mirror .": "a bathroom with a toilet sink and mirror",
    "a man`s hat": "a man s hat",
    "the man is 6' tall": "the man is 6 tall",
    "A TENNIS player\tswings ": "a tennis player swings",
    "A 1950's style car": "a 1950 's style car",
    "a+b=c": "a + b = c",
    "A café crème": "a café crème",
    "there is a large orange circle above a cyan hexagon": "there is a large orange circle above a cyan hexagon",
}


@pytest.mark.parametrize("text", list(PTB_EXAMPLES))
def test_python_tokenizer_gives_the_java_tokenizers_output(text) -> None:
    assert ptb_tokenize(text) == PTB_EXAMPLES[text]


@NEEDS_JAVA
def test_the_java_tokenizer_agrees() -> None:
    """The recorded outputs are the jar's (run here): the Python tokenizer is held to the real one."""
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    texts = list(PTB_EXAMPLES)
    out = PTBTokenizer().tokenize({i: [{"caption": t}] for i, t in enumerate(texts)})
    assert {t: out[i][0] for i, t in enumerate(texts)} == PTB_EXAMPLES
