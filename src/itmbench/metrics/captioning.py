"""Captioning metrics of a candidate caption against reference captions, through the field's own code.

BLEU-4, CIDEr-D and METEOR are pycocoevalcap's (the COCO caption evaluation server's code, PyPI
``pycocoevalcap``): `caption_metric_scores` hands it one candidate and one reference set per entry
and returns its per-entry scores, so a value here is pycocoevalcap's value (tested against the library
called directly).

- ``bleu4``: ``pycocoevalcap.bleu.bleu.Bleu(4)``, its per-sentence BLEU-4 (brevity penalty against the
  closest reference length, the library's tiny smoothing constants); pure Python.
- ``cider_d``: ``pycocoevalcap.cider.cider.Cider`` (the COCO server's "CIDEr" is CIDEr-D: clipped
  n-gram counts, a Gaussian length penalty with sigma 6, x10); pure Python. Its IDF is computed over
  the reference sets of the entries passed in the same call: one document per entry. Callers decide
  which entries form that corpus (BISON: every reference set of the evaluation, see
  `itmbench.papers.bison.caption_metrics`).
- ``rouge_l``: ``pycocoevalcap.rouge.rouge.Rouge`` (ROUGE-L, LCS-based F-measure with beta 1.2, the best over
  the references); pure Python. Not one of `METRICS` (BISON's choices): MCIC's Table 5 uses it.
- ``meteor``: ``pycocoevalcap.meteor.meteor.Meteor``, which runs the ``meteor-1.5.jar`` and the
  English paraphrase table that the wheel ships, in a ``java`` subprocess: it needs Java on PATH
  (Debian's ``default-jre-headless``; ``.ci/install_slurm.sh`` installs it).
- SPICE is not offered (`NOT_POSSIBLE`): pycocoevalcap's ``Spice`` downloads Stanford CoreNLP 3.6.0
  and its models from the Stanford NLP site on first use, and no package of the registries these
  machines reach (PyPI, Debian) ships them.
- ``tuple_f1``: the world's SPICE analogue (`itmbench.metrics.tuple_f1`, not pycocoevalcap): F1 of the
  candidate's object, attribute and relation tuples, read by the world's own parser, against the union of
  its references'. It reads the world's captions only (`WORLD_ONLY`): on another source it is not computed.

Text is tokenized as the COCO evaluation does before scoring: Stanford's PTBTokenizer with
``-lowerCase``, then the punctuation tokens of pycocoevalcap's list dropped. That tokenizer is Java;
`ptb_tokenize` is its Python equivalent for captions (lower-casing; clitics split as PTB does,
``doesn't`` -> ``does n't``, ``can't`` -> ``ca n't``; brackets become ``-lrb-`` etc., which survive
because the library compares its punctuation list, ``-LRB-``, with lower-cased tokens; quotes, ``. , ; :
! ? - -- ...`` dropped; ``# $ % + =`` split off; abbreviations such as ``p.m.`` and numbers such as
``5:30``, ``3.5``, ``1,000`` kept whole). The tests hold it to the Java tokenizer's output on a list
of examples.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING

from itmbench.errors import InputError

if TYPE_CHECKING:  # numpy loads when scores are computed: the CLI's parser imports this module's names
    import numpy as np

METRICS: tuple[str, ...] = ("bleu4", "cider_d", "meteor", "tuple_f1")
METRIC_NAMES: dict[str, str] = {
    "bleu4": "BLEU-4",
    "cider_d": "CIDEr-D",
    "meteor": "METEOR",
    "rouge_l": "ROUGE-L",
    "tuple_f1": "Tuple F1 (world SPICE analogue)",
}
# scored by `caption_metric_scores` too, but not offered to BISON's caption metrics (params bison_caption_metrics)
OTHER_METRICS: tuple[str, ...] = ("rouge_l",)
NOT_POSSIBLE: dict[str, str] = {
    "spice": "pycocoevalcap's SPICE downloads Stanford CoreNLP 3.6.0 and its models from the Stanford NLP "
    "site on first use; no PyPI or Debian package ships them, and no other host can be reached here",
}
# metrics computed on the world's captions only (metric -> why): the others run on every source
WORLD_ONLY: dict[str, str] = {
    "tuple_f1": "the world's SPICE analogue reads captions with the world's grammar (world/parse.py); "
    "COCO's captions are free text it cannot read",
}


def metrics_on_source(metrics: Sequence[str], source: str) -> list[str]:
    """The metrics of `metrics` computed on `source` (`WORLD_ONLY` ones on the world alone), in their order."""
    return [m for m in metrics if source == "world" or m not in WORLD_ONLY]


# pycocoevalcap.tokenizer.ptbtokenizer.PUNCTUATIONS: the tokens its PTBTokenizer drops
PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-"]
                         + ["--", "...", ";"])  # fmt: skip
_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-"}
# words PTB splits in two (its "multi-word" contractions)
_SPLIT_WORDS = {"cannot": "can not", "gonna": "gon na", "gotta": "got ta", "wanna": "wan na"}
_CLITIC = re.compile(r"^(.+?)(n't|'s|'re|'ve|'ll|'d|'m)$")
_NUMBER = re.compile(r"^\d+(?:[.,:]\d+)*$")
_ABBREVIATION = re.compile(
    r"^(?:(?:[a-z]\.)+[a-z]?\.?|(?:mr|mrs|ms|dr|st|jr|sr|prof|vs|etc|mt|ft)\.)$"
)  # u.s., p.m., dr.
_EDGE_PUNCT = ".,;:!?"


def _split_token(token: str) -> list[str]:
    """One whitespace-free chunk (lower case, brackets already spaced) as PTB tokens."""
    out: list[str] = []
    tail: list[str] = []
    # quotes and apostrophes at the edges of a word are quote tokens
    while token and token[0] in "\"'`":
        out.append("``")
        token = token[1:]
    # trailing punctuation: a run of . , ; : ! ? and closing quotes, split off whole
    while token:
        if token.endswith("..."):
            tail.insert(0, "...")
            token = token[:-3]
        elif token[-1] in '"`/':
            tail.insert(0, "/" if token[-1] == "/" else "''")
            token = token[:-1]
        elif token.endswith("''") or (token[-1] == "'" and not re.search(r"(?:^|[^a-z])[a-z]'$|n'$", token)):
            tail.insert(0, "''")
            token = token[:-1]
        elif token[-1] in _EDGE_PUNCT:
            if token[-1] == "." and _ABBREVIATION.match(token):
                break
            run = re.search(rf"[{re.escape(_EDGE_PUNCT)}]+$", token)
            piece = run.group(0) if run else ""
            if piece.startswith(".") and _ABBREVIATION.match(token[: run.start()] + "."):
                piece = piece[1:]  # an abbreviation keeps its period: "t.v.?" -> "t.v." "?"
                tail.insert(0, piece)
                token = token[: run.start() + 1]
                break
            tail.insert(0, piece)
            token = token[: run.start()]
        else:
            break
    if not token:
        return out + tail
    if _NUMBER.match(token) or _ABBREVIATION.match(token):
        return [*out, token, *tail]
    # symbols PTB always splits off; runs of dashes and dots inside a word are tokens of their own
    pieces = [p for p in re.split(r"([#$%+=`]|-{2,}|\.{3,}|\"|;|(?<!\d),|,(?!\d))", token) if p]
    for piece in pieces:
        if piece in _SPLIT_WORDS:
            out += _SPLIT_WORDS[piece].split()
            continue
        m = _CLITIC.match(piece)
        if m:  # doesn't -> does n't, can't -> ca n't, man's -> man 's
            out += [m.group(1), m.group(2)]
        elif re.match(r"^[a-z]+'s-", piece):  # man's-room -> man 's - room
            stem, _, rest = piece.partition("'s-")
            out += [stem, "'s", "-", rest]
        else:
            out.append(piece)
    return out + tail


def ptb_tokens(text: str) -> list[str]:
    """The lower-cased PTB tokens of a caption, before punctuation is dropped (see the module docstring)."""
    text = text.lower()
    for bracket, name in _BRACKETS.items():
        text = text.replace(bracket, f" {name} ")
    tokens: list[str] = []
    for chunk in text.split():
        tokens += _split_token(chunk)
    return tokens


def ptb_tokenize(text: str) -> str:
    """A caption as pycocoevalcap's PTBTokenizer leaves it: lower-cased tokens, punctuation dropped, space-joined."""
    return " ".join(t for t in ptb_tokens(text) if t not in PUNCTUATIONS)


def java_available() -> bool:
    """Whether a ``java`` executable is on PATH (METEOR runs in Java)."""
    return shutil.which("java") is not None


def caption_metric_scores(metric: str, candidates: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """pycocoevalcap's per-entry score of candidates[i] against references[i] (tokenized text), in one call.

    For ``cider_d`` the IDF corpus is the reference sets of these entries, one document each. ``tuple_f1`` is
    not pycocoevalcap's: `itmbench.metrics.tuple_f1.tuple_f1_scores`.
    """
    import numpy as np

    if metric not in METRICS + OTHER_METRICS:
        reason = f" ({NOT_POSSIBLE[metric]})" if metric in NOT_POSSIBLE else ""
        raise ValueError(
            f"unknown captioning metric {metric!r}{reason}; expected one of {list(METRICS + OTHER_METRICS)}"
        )
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference sets; expected one each")
    for i, refs in enumerate(references):
        if len(refs) == 0:
            raise ValueError(f"entry {i}: no reference caption; every candidate needs at least one")
    if len(candidates) == 0:
        return np.zeros(0, dtype=np.float64)
    if metric == "tuple_f1":
        from itmbench.metrics.tuple_f1 import tuple_f1_scores

        return tuple_f1_scores(candidates, references)
    gts = {i: list(refs) for i, refs in enumerate(references)}
    res = {i: [cand] for i, cand in enumerate(candidates)}
    if metric == "bleu4":
        from pycocoevalcap.bleu.bleu import Bleu

        _, per_order = Bleu(4).compute_score(gts, res, verbose=0)
        scores = per_order[3]
    elif metric == "rouge_l":
        from pycocoevalcap.rouge.rouge import Rouge

        _, scores = Rouge().compute_score(gts, res)
    elif metric == "cider_d":
        from pycocoevalcap.cider.cider import Cider

        _, scores = Cider().compute_score(gts, res)
    else:
        scores = _meteor_scores(gts, res)
    return np.asarray(scores, dtype=np.float64)


def corpus_bleu4(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """pycocoevalcap's corpus BLEU-4 of candidates[i] against references[i] (tokenized text): the score the COCO
    caption evaluation reports (clipped n-gram counts and lengths pooled over the corpus, not a mean)."""
    from pycocoevalcap.bleu.bleu import Bleu

    if len(candidates) != len(references) or not candidates:
        raise ValueError(f"{len(candidates)} candidates, {len(references)} reference sets; expected equal and some")
    gts = {i: list(refs) for i, refs in enumerate(references)}
    res = {i: [cand] for i, cand in enumerate(candidates)}
    corpus, _ = Bleu(4).compute_score(gts, res, verbose=0)
    return float(corpus[3])


def bleu4_statistics(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Each candidate's BLEU sufficient statistics as pycocoevalcap counts them (its own n-gram cooking and
    'closest' reference length): one row per candidate of testlen, reflen, guess[1..4], correct[1..4] (int64).

    Corpus BLEU-4 is a function of their column sums (`bleu4_from_statistics`), so a bootstrap over
    candidates resamples rows and sums instead of re-cooking every n-gram of every resample.
    """
    import numpy as np
    from pycocoevalcap.bleu.bleu_scorer import BleuScorer

    if len(candidates) != len(references) or not candidates:
        raise ValueError(f"{len(candidates)} candidates, {len(references)} reference sets; expected equal and some")
    scorer = BleuScorer(n=4)
    for cand, refs in zip(candidates, references):
        scorer += (cand, list(refs))
    rows = []
    for comps in scorer.ctest:
        reflen = scorer._single_reflen(comps["reflen"], "closest", comps["testlen"])
        rows.append([comps["testlen"], reflen, *comps["guess"], *comps["correct"]])
    return np.asarray(rows, dtype=np.int64)


def bleu4_from_statistics(totals: np.ndarray) -> float:
    """Corpus BLEU-4 from summed `bleu4_statistics` columns, with pycocoevalcap's arithmetic (its tiny and small
    guards, brevity penalty on the summed lengths): equal to `corpus_bleu4` of the same candidates."""
    small, tiny = 1e-9, 1e-15
    testlen, reflen = float(totals[0]), float(totals[1])
    guess, correct = totals[2:6], totals[6:10]
    bleu = 1.0
    for k in range(4):
        bleu *= float(correct[k] + tiny) / (guess[k] + small)
    score = bleu ** (1.0 / 4)
    ratio = (testlen + tiny) / (reflen + small)
    if ratio < 1:
        score *= math.exp(1 - 1 / ratio)
    return float(score)


def _meteor_scores(gts: dict[int, list[str]], res: dict[int, list[str]]) -> list[float]:
    """pycocoevalcap's METEOR per entry; its Java subprocess is ended before returning, however this ends.

    Interrupted (SIGTERM's SystemExit, say) inside `compute_score`, pycocoevalcap's Meteor keeps its lock held
    and its Java process may be blocked writing to a pipe nobody reads: closing its stdin and waiting would
    wait forever, and so would `Meteor.__del__` (it takes the lock first). So the process is killed, and the
    object gets a free lock for its `__del__`."""
    if not java_available():
        raise InputError(
            "METEOR runs pycocoevalcap's meteor-1.5.jar and needs Java: no `java` on PATH "
            "(install Debian's default-jre-headless, as .ci/install_slurm.sh does)"
        )
    import threading

    from pycocoevalcap.meteor.meteor import Meteor

    meteor = Meteor()
    try:
        _, scores = meteor.compute_score(gts, res)
        meteor.meteor_p.stdin.close()  # done: Java ends at the end of its input
        meteor.meteor_p.wait()
    finally:
        meteor.meteor_p.kill()  # a no-op once it has ended
        meteor.meteor_p.wait()
        for pipe in (meteor.meteor_p.stdin, meteor.meteor_p.stdout, meteor.meteor_p.stderr):
            pipe.close()
        meteor.lock = threading.Lock()  # the one compute_score held when interrupted would block __del__
    return scores


def pycocoevalcap_version() -> str:
    """The installed pycocoevalcap's version (recorded beside the scores)."""
    from importlib.metadata import version

    return version("pycocoevalcap")
