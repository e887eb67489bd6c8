"""BISON's queries against all captions: Table 2's counts, Figure 6's length and part-of-speech distributions,
and Figure 14's BISON accuracy when the query is another caption of the positive image.

Decisions where the paper is silent (each stated in the tables' titles):

- **Table 2.** "Number of examples" of the captioning split is its number of captions (COCO val's 202,654),
  of BISON its number of triples; "Unique captions" counts distinct caption texts in both columns (COCO
  val's 197,792 < 202,654 is only possible by text); "Unique images" counts images with a caption, and
  BISON's the images that appear as either candidate (38,680 of 40,504 on COCO). The share of the split's
  images with a BISON example carries a Wilson interval; counts carry none.
- **Figure 6.** Length is the number of whitespace-separated words of the lower-cased caption (the world's
  captions are lower-case words, COCO's are tokenised the same way by `ptb_tokenize` upstream). The paper
  tags parts of speech with NLTK; no tagger is installed here, and the world's grammar is a closed lexicon,
  so each word's part of speech is read from the grammar's own word lists (`world_pos`, Universal tags);
  a word outside the grammar is refused. Shares carry Wilson intervals (tokens of one caption are not
  independent: the intervals are optimistic for part of speech).
- **Figure 14.** "Random caption": one of the positive image's captions (the query among them) drawn
  uniformly by a generator seeded with (seed, bison_id); "Longest caption": the caption with the most
  words, ties broken by the smallest caption id. Each model scores the chosen caption against both
  candidates exactly as it scores the BISON query (the dot product of its cached unit embeddings; a tie is
  wrong). Only models with item embeddings are shown: a cross scorer's pair scores hold the BISON query's
  pairs alone.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval
from itmbench.scoring.embed import EmbeddingCache
from itmbench.world.captions import GENERIC_NOUNS, NUMBER_WORDS, RELATION_WORDS
from itmbench.world.scene import COLOURS, SHAPES, SIZES

CAPTION_COLUMNS = ("caption_id", "image_id", "split", "text")
TABLE2_ROWS = ("Number of examples", "Unique images", "Unique captions")
SHARE_ROW = "Images with a BISON example (% of the split)"
QUERY_KINDS = {"bison": "BISON query", "random": "Random caption", "longest": "Longest caption"}

# The world's grammar (itmbench.world.captions: templates, relation phrases, noun phrases) word by word, with
# Universal part-of-speech tags; `tests/papers/bison/test_bison_queries.py` checks it covers every word the
# grammar realises.
_FUNCTION_WORDS: dict[str, str] = {
    "a": "DET", "an": "DET", "the": "DET", "there": "PRON", "is": "VERB", "are": "VERB", "showing": "VERB",
    "and": "CONJ", "with": "ADP", "of": "ADP", "to": "ADP", "on": "ADP", "above": "ADP", "over": "ADP",
    "below": "ADP", "under": "ADP", "beneath": "ADP", "together": "ADV", "picture": "NOUN",
    "image": "NOUN", "background": "NOUN", "plain": "ADJ", "top": "NOUN", "left": "NOUN", "right": "NOUN",
}  # fmt: skip


def world_lexicon() -> dict[str, str]:
    """Each word of the world's grammar with its Universal part-of-speech tag (shapes and their plurals are
    nouns, colours and sizes adjectives, counts numerals)."""
    lexicon = dict(_FUNCTION_WORDS)
    for shape in (*SHAPES, *GENERIC_NOUNS):
        lexicon[shape] = lexicon[_plural(shape)] = "NOUN"
    lexicon.update({w: "ADJ" for w in (*COLOURS, *SIZES)})
    lexicon.update({w: "NUM" for w in NUMBER_WORDS.values()})
    for phrases in RELATION_WORDS.values():
        for word in " ".join(phrases).split():
            if word not in lexicon:
                raise ValueError(f"world_lexicon: relation word {word!r} has no part of speech")
    return lexicon


def _plural(noun: str) -> str:
    return noun + "s"  # as `itmbench.world.captions.noun_phrase` writes a count


def world_pos(text: str, lexicon: Mapping[str, str]) -> list[str]:
    """The part-of-speech tags of a world caption's words, refusing a word outside the grammar."""
    tags = []
    for word in words(text):
        if word not in lexicon:
            raise InputError(f"caption {text!r}: word {word!r} is not in the world's grammar; expected its lexicon")
        tags.append(lexicon[word])
    return tags


def words(text: str) -> list[str]:
    """A caption's words: lower-cased, split on whitespace."""
    return str(text).lower().split()


def split_captions(captions: pd.DataFrame, split: str, source: str = "captions") -> pd.DataFrame:
    """The captions of one split, refusing a split with none."""
    missing = [c for c in CAPTION_COLUMNS if c not in captions.columns]
    if missing:
        raise InputError(f"{source}: columns {missing} are missing; expected {list(CAPTION_COLUMNS)}")
    rows = captions[captions["split"].astype(str) == split]
    if rows.empty:
        raise InputError(f"{source}: no caption of split {split!r}; expected the split BISON pairs")
    return rows.reset_index(drop=True)


def _query_texts(annotations: pd.DataFrame, captions: pd.DataFrame, source: str) -> pd.Series:
    texts = dict(zip(captions["caption_id"].astype("int64"), captions["text"].astype(str)))
    missing = [int(c) for c in annotations["caption_id"] if int(c) not in texts]
    if missing:
        raise InputError(f"{source}: BISON query caption_id {missing[0]} is not a caption of the split")
    return pd.Series([texts[int(c)] for c in annotations["caption_id"]], dtype=object)


# --- Table 2 -------------------------------------------------------------------------------------------------


def table2_counts(annotations: pd.DataFrame, captions: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Table 2's counts of the captioning split (`captions`: one split's) and of BISON on it."""
    queries = _query_texts(annotations, captions, "the BISON annotations")
    images = np.unique(annotations[["image_id_0", "image_id_1"]].to_numpy())
    return {
        "split": {
            "Number of examples": len(captions),
            "Unique images": int(captions["image_id"].nunique()),
            "Unique captions": int(captions["text"].astype(str).nunique()),
        },
        "bison": {
            "Number of examples": len(annotations),
            "Unique images": len(images),
            "Unique captions": int(queries.nunique()),
        },
    }


def table2_long(
    annotations: pd.DataFrame,
    captions: pd.DataFrame,
    published: pd.DataFrame,
    labels: Mapping[str, str],
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """BISON Table 2 in the paper's layout: the printed columns (Flickr-30K, COCO val, COCO-BISON) beside the
    source's split and its BISON (`labels`: 'split' and 'bison' -> column name); `published` is the printed
    table (`published_wide('bison', 'Table 2')`). The last row is the share of the split's images with a
    BISON example (Wilson interval; printed: 38,680 of 40,504)."""
    counts = table2_counts(annotations, captions)
    records = []
    for row in TABLE2_ROWS:
        for column in published.columns:
            records.append((row, f"{column} (printed)", float(published.loc[row, column]), np.nan, np.nan))
        for key in ("split", "bison"):
            records.append((row, labels[key], float(counts[key][row]), np.nan, np.nan))
    printed_images = published["COCO-BISON"]["Unique images"] / published["COCO val"]["Unique images"]
    records.append((SHARE_ROW, "COCO-BISON (printed)", 100 * float(printed_images), np.nan, np.nan))
    n, k = counts["split"]["Unique images"], counts["bison"]["Unique images"]
    lo, hi = wilson_interval(k, n, confidence)
    records.append((SHARE_ROW, labels["bison"], 100 * k / n, 100 * lo, 100 * hi))
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi"])


# --- Figure 6 ------------------------------------------------------------------------------------------------


def _share_records(panel: str, counts: Mapping[str, pd.Series], confidence: float) -> list[dict]:
    """One record per (bin, group): the group's share of its total in the bin, with a Wilson interval."""
    keys = sorted(set().union(*(c.index for c in counts.values())), key=lambda k: (isinstance(k, str), k))
    records = []
    for key in keys:
        for group, series in counts.items():
            total, k = int(series.sum()), int(series.get(key, 0))
            lo, hi = wilson_interval(k, total, confidence)
            row = f"{key} words" if panel == "length" else str(key)
            records.append(
                {
                    "row": row,
                    "column": group,
                    "value": 100 * k / total,
                    "lo": 100 * lo,
                    "hi": 100 * hi,
                    "panel": panel,
                    "bin": str(key),
                    "count": k,
                }  # fmt: skip
            )
    return records


def figure6_long(
    annotations: pd.DataFrame, captions: pd.DataFrame, labels: Mapping[str, str], confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Figure 6's numbers: per query length (words) and per part of speech, the share of the split's captions
    and of the BISON queries (Wilson intervals), the mean length of each (Student t interval) and the share of
    BISON queries that are their positive image's longest caption beside its rate under a uniform pick.

    `labels`: 'split' and 'bison' -> group name. Extra columns: panel (length, pos, summary), bin, count."""
    from scipy.stats import t as student_t

    queries = _query_texts(annotations, captions, "the BISON annotations")
    texts = {"split": captions["text"].astype(str), "bison": queries}
    lengths = {key: pd.Series([len(words(t)) for t in series]) for key, series in texts.items()}
    lexicon = world_lexicon()
    tags = {key: pd.Series([tag for t in series for tag in world_pos(t, lexicon)]) for key, series in texts.items()}
    records = _share_records("length", {labels[k]: v.value_counts() for k, v in lengths.items()}, confidence)
    records += _share_records("pos", {labels[k]: v.value_counts() for k, v in tags.items()}, confidence)
    for key, series in lengths.items():
        values = series.to_numpy(dtype=float)
        half = float(student_t.ppf(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))
        mean = float(values.mean())
        records.append(
            {
                "row": "mean length (words)",
                "column": labels[key],
                "value": mean,
                "lo": mean - half,
                "hi": mean + half,
                "panel": "summary",
                "bin": "mean",
                "count": len(values),
            }  # fmt: skip
        )
    longest, expected = longest_choice(annotations, captions)
    lo, hi = wilson_interval(int(longest.sum()), len(longest), confidence)
    records.append(
        {
            "row": "query is a longest caption (%)",
            "column": labels["bison"],
            "value": 100 * float(longest.mean()),
            "lo": 100 * lo,
            "hi": 100 * hi,
            "panel": "summary",
            "bin": "longest",
            "count": int(longest.sum()),
        }  # fmt: skip
    )
    records.append(
        {
            "row": "query is a longest caption (%)",
            "column": "uniform pick (expected)",
            "value": 100 * expected,
            "lo": np.nan,
            "hi": np.nan,
            "panel": "summary",
            "bin": "longest",
            "count": len(longest),
        }  # fmt: skip
    )
    return pd.DataFrame(records)


def longest_choice(annotations: pd.DataFrame, captions: pd.DataFrame) -> tuple[np.ndarray, float]:
    """Whether each BISON query has the most words among its positive image's captions (ties count), and the
    rate a uniform pick among those captions would have (the mean share of longest captions)."""
    n_words = captions["text"].astype(str).map(lambda t: len(words(t))).to_numpy()
    by_image = pd.DataFrame({"image_id": captions["image_id"].astype("int64"), "n": n_words})
    longest_n = by_image.groupby("image_id")["n"].max()
    share = by_image.assign(top=by_image["n"] == by_image["image_id"].map(longest_n)).groupby("image_id")["top"].mean()
    length_of = dict(zip(captions["caption_id"].astype("int64"), n_words))
    true_ids = annotations["true_image_id"].astype("int64")
    chosen = np.array([length_of[int(c)] for c in annotations["caption_id"]]) == true_ids.map(longest_n).to_numpy()
    return chosen, float(true_ids.map(share).mean())


# --- Figure 14 -----------------------------------------------------------------------------------------------


def query_choices(annotations: pd.DataFrame, captions: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Per BISON instance, the caption id of each query kind: the BISON query, a random caption of the
    positive image (seeded by (seed, bison_id)) and its longest (most words; ties: the smallest caption id)."""
    own = captions.assign(
        caption_id=captions["caption_id"].astype("int64"), image_id=captions["image_id"].astype("int64")
    )
    own = own.assign(n=own["text"].astype(str).map(lambda t: len(words(t)))).sort_values("caption_id", kind="stable")
    groups = {int(i): g for i, g in own.groupby("image_id", sort=False)}
    random_ids, longest_ids = [], []
    for bison_id, image_id in zip(
        annotations["bison_id"].astype("int64"), annotations["true_image_id"].astype("int64")
    ):
        group = groups.get(int(image_id))
        if group is None:
            raise InputError(f"BISON instance {int(bison_id)}: its true image {int(image_id)} has no caption")
        ids = group["caption_id"].to_numpy()
        random_ids.append(int(ids[np.random.default_rng([seed, int(bison_id)]).integers(len(ids))]))
        longest_ids.append(int(ids[int(np.argmax(group["n"].to_numpy()))]))
    return pd.DataFrame(
        {
            "bison_id": annotations["bison_id"].to_numpy(dtype=np.int64),
            "bison": annotations["caption_id"].to_numpy(dtype=np.int64),
            "random": np.asarray(random_ids, dtype=np.int64),
            "longest": np.asarray(longest_ids, dtype=np.int64),
        }
    )


def choice_correct(annotations: pd.DataFrame, queries: np.ndarray, cache: EmbeddingCache) -> np.ndarray:
    """Whether each instance's true image scores strictly higher than its false one for the given queries."""
    q = cache.get("caption", np.asarray(queries, dtype=np.int64)).astype(np.float64)
    s_true = (q * cache.get("image", annotations["true_image_id"].to_numpy()).astype(np.float64)).sum(axis=1)
    s_false = (q * cache.get("image", annotations["false_image_id"].to_numpy()).astype(np.float64)).sum(axis=1)
    return s_true > s_false


def figure14_long(
    annotations: pd.DataFrame,
    choices: pd.DataFrame,
    caches: Mapping[str, EmbeddingCache],
    rows: Mapping[str, str],
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Figure 14's numbers: each model's BISON accuracy with each query kind (Wilson intervals); rows by the
    report's row names (`rows`: model -> row), extra columns model, query, correct (count), n."""
    records = []
    n = len(annotations)
    for model in sorted(caches):
        for kind, label in QUERY_KINDS.items():
            k = int(choice_correct(annotations, choices[kind].to_numpy(), caches[model]).sum())
            lo, hi = wilson_interval(k, n, confidence)
            records.append(
                {
                    "row": rows.get(model, model),
                    "column": label,
                    "value": 100 * k / n,
                    "lo": 100 * lo,
                    "hi": 100 * hi,
                    "model": model,
                    "query": kind,
                    "correct": k,
                    "n": n,
                }  # fmt: skip
            )
    return pd.DataFrame(records)


# --- Figure 9: automatic query perturbations -------------------------------------------------------------------

PERTURBATIONS = ("negation", "synonym", "hypernym", "permutation", "reversal")
PERTURBATION_LABELS = {
    "negation": "Negation",
    "synonym": "Synonym",
    "hypernym": "Hypernym",
    "permutation": "Permutation",
    "reversal": "Reverse",
}
PERTURBED_COLUMNS = ("bison_id", "perturbation", "text", "altered")
_VERBS = ("is", "are")  # the grammar's finite verbs: negated as "is not", "are not"
_PARTICIPLES = ("showing",)  # negated as "not showing"
_SYNONYM_NOUNS = {"shape": "object", "object": "shape", "shapes": "objects", "objects": "shapes"}


def _relation_spans(tokens: list[str]) -> list[tuple[int, int, str]]:
    """The relation phrases of a caption, left to right, longest first at each position: (start, length, relation)."""
    phrases = sorted(((p.split(), rel) for rel, ps in RELATION_WORDS.items() for p in ps), key=lambda pr: -len(pr[0]))
    spans, i = [], 0
    while i < len(tokens):
        for words_, rel in phrases:
            if tokens[i : i + len(words_)] == words_:
                spans.append((i, len(words_), rel))
                i += len(words_)
                break
        else:
            i += 1
    return spans


def perturb(text: str, kind: str, rng: np.random.Generator) -> str:
    """One automatic perturbation of a world caption (the paper's F.1, on the world grammar's words).

    negation: "not" after the first verb ("is", "are") or before "showing"; a caption without a verb gets a
    leading "not". synonym: one relation phrase (chosen uniformly) becomes another phrase of the same
    relation, or a generic noun its synonym ("shape" <-> "object"). hypernym: one shape noun (chosen
    uniformly) becomes its hypernym "shape" ("circles" -> "shapes"). permutation: a uniform random
    permutation of the words; reversal: the words in reverse order. A caption offering no such word is
    returned unchanged."""
    tokens = words(text)
    if kind == "negation":
        for i, w in enumerate(tokens):
            if w in _VERBS:
                return " ".join([*tokens[: i + 1], "not", *tokens[i + 1 :]])
            if w in _PARTICIPLES:
                return " ".join([*tokens[:i], "not", *tokens[i:]])
        return " ".join(["not", *tokens])
    if kind == "synonym":
        options: list[tuple[int, int, list[str]]] = []
        for start, length, rel in _relation_spans(tokens):
            here = tokens[start : start + length]
            others = [p.split() for p in RELATION_WORDS[rel] if p.split() != here]
            options += [(start, length, o) for o in others]
        options += [(i, 1, [_SYNONYM_NOUNS[w]]) for i, w in enumerate(tokens) if w in _SYNONYM_NOUNS]
        if not options:
            return " ".join(tokens)
        start, length, replacement = options[int(rng.integers(len(options)))]
        return " ".join([*tokens[:start], *replacement, *tokens[start + length :]])
    if kind == "hypernym":
        nouns = {**{s: "shape" for s in SHAPES}, **{_plural(s): "shapes" for s in SHAPES}}
        spots = [i for i, w in enumerate(tokens) if w in nouns]
        if not spots:
            return " ".join(tokens)
        i = spots[int(rng.integers(len(spots)))]
        return " ".join([*tokens[:i], nouns[tokens[i]], *tokens[i + 1 :]])
    if kind == "permutation":
        return " ".join(tokens[j] for j in rng.permutation(len(tokens)))
    if kind == "reversal":
        return " ".join(reversed(tokens))
    raise ValueError(f"unknown perturbation {kind!r}; expected one of {PERTURBATIONS}")


def perturbed_queries(annotations: pd.DataFrame, captions: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each BISON query and its perturbations (one generator per (seed, bison_id, perturbation)): bison_id,
    perturbation ('original' first), text, and whether the text differs from the query."""
    queries_ = _query_texts(annotations, captions, "the BISON annotations")
    records = []
    for bison_id, text in zip(annotations["bison_id"].astype("int64"), queries_):
        original = " ".join(words(text))
        records.append((int(bison_id), "original", original, False))
        for k, kind in enumerate(PERTURBATIONS):
            changed = perturb(text, kind, np.random.default_rng([seed, int(bison_id), k]))
            records.append((int(bison_id), kind, changed, changed != original))
    return pd.DataFrame(records, columns=list(PERTURBED_COLUMNS))


PICK_NONE = -1  # a tie: neither image is picked


def perturbation_scores(annotations: pd.DataFrame, perturbed: pd.DataFrame, score) -> pd.DataFrame:
    """Each (instance, perturbation)'s scores of the true and false image, the image picked (PICK_NONE on a tie)
    and whether the pick differs from the original query's. `score(texts, image_ids)` is the model's s(q, I)."""
    ann = annotations.set_index("bison_id")
    ids = perturbed["bison_id"].to_numpy(np.int64)
    true_ids = ann.loc[ids, "true_image_id"].to_numpy(np.int64)
    false_ids = ann.loc[ids, "false_image_id"].to_numpy(np.int64)
    texts = perturbed["text"].astype(str).tolist()
    s_true = np.asarray(score(texts, true_ids), dtype=np.float64)
    s_false = np.asarray(score(texts, false_ids), dtype=np.float64)
    pick = np.where(s_true > s_false, true_ids, np.where(s_false > s_true, false_ids, PICK_NONE))
    out = perturbed.assign(score_true=s_true, score_false=s_false, picked_image_id=pick, correct=pick == true_ids)
    original = out[out["perturbation"] == "original"].set_index("bison_id")["picked_image_id"]
    return out.assign(changed=out["picked_image_id"].to_numpy() != original.loc[ids].to_numpy())


def figure9_long(
    scores: Mapping[str, pd.DataFrame], rows: Mapping[str, str], confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Figure 9's numbers: per model and perturbation, the share (%) of BISON predictions that change, among the
    instances whose query the perturbation alters (Wilson intervals); extra columns model, perturbation,
    changed (count), n (altered instances) and accuracy (%, on those instances after the perturbation)."""
    records = []
    for model in sorted(scores):
        frame = scores[model]
        for kind in PERTURBATIONS:
            part = frame[(frame["perturbation"] == kind) & frame["altered"].astype(bool)]
            n, k = len(part), int(part["changed"].sum())
            lo, hi = wilson_interval(k, n, confidence)
            records.append(
                {
                    "row": rows.get(model, model),
                    "column": PERTURBATION_LABELS[kind],
                    "value": 100 * k / n if n else np.nan,
                    "lo": 100 * lo,
                    "hi": 100 * hi,
                    "model": model,
                    "perturbation": kind,
                    "changed": k,
                    "n": n,
                    "accuracy": 100 * float(part["correct"].mean()) if n else np.nan,
                }  # fmt: skip
            )
    return pd.DataFrame(records)
