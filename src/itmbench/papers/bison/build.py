"""BISON in the world: binary image selection built by the paper's three-stage procedure (`build`).

Hu, Misra, van der Maaten, "Evaluating Text-to-Image Matching using Binary Image Selection".
One instance is a caption (query) and two similar images; the model must pick the image the
caption describes. Construction on one split of the world (the analogue of COCO val2014):

1. Pairs: each image gets a representation, the mean word embedding of all the words of all
   its captions (a FastText model, as in the paper, trained here on the world's TRAIN captions,
   seeded, one worker), and is paired with its nearest neighbour by cosine similarity.
2. Queries: a simulated annotator sees the positive image's captions and picks one that
   describes the positive but not the negative image (by the world's truth), or "none of the
   above"; "none" drops the pair.
3. Verification: independent simulated verifiers see the two images and the query and answer
   positive / negative / both / neither (by the world's truth); the triple is kept only if every
   verifier picks the positive image.

The tables it makes are those of `itmbench.papers.bison.canonical`.

Decisions where the paper is silent (each a `BisonConfig` field with this default):
- pairing = "both": every unordered nearest-neighbour pair {i, nn(i)} is posed both ways (each
  image once as the positive). The paper reads as one pair per image (query = positive), which
  would give 40,504 pairs on COCO val2014, yet it reports 67,564 = 2 x 33,782, between N/2 and N
  unordered pairs: posing each unordered pair both ways is the reading that fits the count. So
  does Table 2: 45,218 unique queries for 54,253 examples means images are positive more than once,
  which one pair per image (each image positive once, one query each) cannot give.
  "query" gives one pair per image (positive = the image, negative = its neighbour).
- Word embeddings: gensim FastText (embedding = "fasttext"; "word2vec" is the alternative),
  vector_size 64, window 5, min_count 1, epochs 10, character n-grams 3-6, 10,000 hash buckets
  (the vocabulary of the world is tens of words; gensim's 2M buckets would cost 512 MB). Text is
  lower-cased and split on whitespace. Nearest-neighbour ties go to the lower image id.
- Annotator (stage 2): with probability 1 - annotator_error it answers correctly, uniformly
  among the discriminative captions (those of the positive image that do not fit the negative),
  or "none" if there is none; with probability annotator_error it answers wrongly, uniformly
  among the wrong options (a non-discriminative caption, or "none" when a discriminative caption
  exists). Default 0.05. The paper notes annotators chose the longest caption about 30% of the
  time; the simulated annotator has no length preference.
- Verifiers (stage 3): n_verifiers = 2 (the paper's), each answers correctly with probability
  1 - verifier_error, else uniformly among the other three answers. verifier_error = 0.06 is
  calibrated so that (1 - 0.06)^2 = 88.4% of correct triples survive, near the paper's 87.70%.
- Candidate order: the two images of a triple are shown in a seeded random order
  (shuffle_candidates = true), so the position carries no information.
- Randomness: every draw of a pair comes from its own generator seeded by (seed, positive id,
  negative id, stage), so a pair's outcome does not depend on which other pairs exist.
- bison_id is the stage-1 pair id (pairs sorted by positive then negative image id): ids are
  stable when the annotator or verifier parameters change.
- The world's relation margin and max_objects come from the WorldConfig passed as `world_cfg`
  (the defaults of WorldConfig otherwise); build checks that every caption of the split fits its
  own image under that margin, which catches a mismatched margin.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from itmbench.papers.bison.canonical import ITEM_COLUMNS, NONE_CHOICE, PAIR_COLUMNS, STAGE_COLUMNS
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.bison.released import ANNOTATION_SCHEMA
from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import World, WorldConfig
from itmbench.world.scene import Scene
from itmbench.world.truth import truth_matrix

PUBLISHED_STAGE_COUNTS: dict[str, int] = {
    "1: image pairs": 67_564,
    "2: query triples": 61_861,
    "3: verified triples": 54_253,
}
STAGE_NAMES = tuple(PUBLISHED_STAGE_COUNTS)
VERIFIER_ANSWERS = ("positive", "negative", "both", "neither")
IMAGE_FILENAME = "world_{image_id}.png"
# A caption is generated on exact positions and judged on the scene JSON (positions to 4 decimals),
# so a relation at the margin can flip (1 of 13,750 captions in the default world). More than this
# share of misfits means the margin is not the world's.
MAX_OWN_MISFIT = 0.01


# ----------------------------------------------------------------------------------------------
# Stage 1: nearest neighbours by the mean word embedding of an image's captions


def _tokens(text: str) -> list[str]:
    return text.lower().split()


def _word_vectors(train_texts: list[str], cfg: BisonConfig) -> Any:
    """Train the seeded word embeddings on the train captions; returns gensim KeyedVectors."""
    from gensim.models import FastText, Word2Vec

    sentences = [_tokens(t) for t in train_texts]
    if not sentences:
        raise ValueError("world has no train captions to train the BISON word embeddings on")
    common = dict(
        sentences=sentences,
        vector_size=cfg.vector_size,
        window=cfg.window,
        min_count=cfg.min_count,
        epochs=cfg.epochs,
        seed=cfg.seed,
        workers=1,
    )
    if cfg.embedding == "fasttext":
        model = FastText(**common, min_n=cfg.fasttext_min_n, max_n=cfg.fasttext_max_n, bucket=cfg.fasttext_bucket)
    else:
        model = Word2Vec(**common)
    return model.wv


def image_text_embeddings(world: World, image_ids: np.ndarray, cfg: BisonConfig) -> np.ndarray:
    """Mean word embedding of all words of all captions of each image, float64 [N, D] (not normalised)."""
    wv = _word_vectors(world.caption_table.loc[world.caption_table["split"] == "train", "text"].tolist(), cfg)
    captions = world.caption_table[world.caption_table["image_id"].isin(image_ids)]
    words_of: dict[int, list[str]] = {int(i): [] for i in image_ids}
    for image_id, text in zip(captions["image_id"].to_numpy(), captions["text"]):
        words_of[int(image_id)].extend(_tokens(text))
    out = np.zeros((len(image_ids), cfg.vector_size), dtype=np.float64)
    for row, image_id in enumerate(image_ids):
        words = words_of[int(image_id)]
        if cfg.embedding == "word2vec":
            words = [w for w in words if w in wv.key_to_index]
        if not words:
            raise ValueError(f"image {int(image_id)}: no caption word has a {cfg.embedding} vector")
        out[row] = np.mean([wv[w] for w in words], axis=0, dtype=np.float64)
    return out


def nearest_neighbour_pairs(image_ids: np.ndarray, vectors: np.ndarray, pairing: str) -> pd.DataFrame:
    """Stage 1: (positive, negative) image pairs from cosine nearest neighbours, sorted, with pair ids."""
    if len(image_ids) < 2:
        raise ValueError(f"BISON needs at least 2 images in the split, got {len(image_ids)}")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms > 0, norms, 1.0)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    nn = np.argmax(sims, axis=1)  # first maximum: ties go to the lower row (image ids are sorted)
    if pairing == "query":
        pos, neg = np.arange(len(nn)), nn
    else:
        unordered = {(min(i, int(j)), max(i, int(j))) for i, j in enumerate(nn)}
        a = np.array(sorted(unordered), dtype=np.int64).reshape(-1, 2)
        pos, neg = np.concatenate([a[:, 0], a[:, 1]]), np.concatenate([a[:, 1], a[:, 0]])
    df = pd.DataFrame(
        {
            "positive_image_id": image_ids[pos].astype(np.int64),
            "negative_image_id": image_ids[neg].astype(np.int64),
            "cosine": sims[pos, neg].astype(np.float64),
            "mutual": (nn[pos] == neg) & (nn[neg] == pos),
        }
    )
    df = df.sort_values(["positive_image_id", "negative_image_id"], kind="stable", ignore_index=True)
    df.insert(0, "pair_id", np.arange(len(df), dtype=np.int64))
    return df


# ----------------------------------------------------------------------------------------------
# Stages 2 and 3: simulated annotator and verifiers, from the world's truth


def _pair_rng(seed: int, positive: int, negative: int, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, positive, negative, stream]))


def simulate_annotator(
    caption_ids: np.ndarray, discriminative: np.ndarray, error: float, rng: np.random.Generator
) -> tuple[int, bool]:
    """Stage 2: a caption id (or NONE_CHOICE) and whether the answer is correct, under the error model."""
    correct = [int(c) for c, d in zip(caption_ids, discriminative) if d] or [NONE_CHOICE]
    wrong = [int(c) for c, d in zip(caption_ids, discriminative) if not d]
    if correct[0] != NONE_CHOICE:
        wrong.append(NONE_CHOICE)
    erred = bool(rng.random() < error) and bool(wrong)
    options = wrong if erred else correct
    return options[int(rng.integers(len(options)))], not erred


def true_verifier_answer(fits_positive: bool, fits_negative: bool) -> str:
    """The correct stage-3 answer for a query that does or does not fit each image."""
    if fits_positive:
        return "both" if fits_negative else "positive"
    return "negative" if fits_negative else "neither"


def simulate_verifiers(truth: str, n: int, error: float, rng: np.random.Generator) -> list[str]:
    """Stage 3: n independent answers, each correct with probability 1 - error, else a uniform wrong one."""
    answers = []
    for _ in range(n):
        if rng.random() < error:
            others = [a for a in VERIFIER_ANSWERS if a != truth]
            answers.append(others[int(rng.integers(len(others)))])
        else:
            answers.append(truth)
    return answers


def _split_truth(
    world: World, split: str, margin: float, max_objects: int
) -> tuple[np.ndarray, pd.DataFrame, np.ndarray]:
    """Image ids of a split, its captions, and truth [captions, images] of the split."""
    images = world.image_table[world.image_table["split"] == split].sort_values("image_id", kind="stable")
    if images.empty:
        raise ValueError(f"world has no images in split {split!r}")
    image_ids = images["image_id"].to_numpy(dtype=np.int64)
    captions = world.caption_table[world.caption_table["split"] == split].sort_values("caption_id", kind="stable")
    scenes_by_id = dict(zip(world.scene_table["image_id"].to_numpy(), world.scene_table["scene"]))
    missing = [int(i) for i in image_ids if int(i) not in scenes_by_id]
    if missing:
        raise ValueError(f"world scene table: no scene for image ids {missing[:5]}; expected one per image")
    scenes = [Scene.from_json(scenes_by_id[int(i)]) for i in image_ids]
    structures = [CaptionStructure.from_json(s) for s in captions["structure"]]
    fits = truth_matrix(structures, scenes, margin, max_objects)
    col = {int(i): c for c, i in enumerate(image_ids)}
    own = np.array([col[int(i)] for i in captions["image_id"]], dtype=np.int64)
    bad = np.flatnonzero(~fits[np.arange(len(own)), own])
    if len(bad) > MAX_OWN_MISFIT * len(own):
        cid = int(captions["caption_id"].iloc[bad[0]])
        raise ValueError(
            f"world split {split!r}: {len(bad)} of {len(own)} captions (first: caption {cid}) do not fit their own "
            f"image under relation_margin={margin}; expected at most {MAX_OWN_MISFIT:.0%} "
            "(pass the world's WorldConfig as world_cfg)"
        )
    return image_ids, captions.reset_index(drop=True), fits


def _world_truth_params(world: World, world_cfg: WorldConfig | None) -> tuple[float, int]:
    wc = world_cfg or make_config(WorldConfig)
    max_objects = max(wc.max_objects, int(world.image_table["n_objects"].max()))
    return wc.relation_margin, max_objects


def build(
    world: World, cfg: BisonConfig, *, world_cfg: WorldConfig | None = None, **inputs: Any
) -> dict[str, pd.DataFrame]:
    """Build BISON on one split of the world: canonical annotations, items, per-pair outcomes, stage counts."""
    if inputs:
        raise TypeError(f"bison.build: unexpected inputs {sorted(inputs)}; expected only world_cfg")
    margin, max_objects = _world_truth_params(world, world_cfg)
    image_ids, captions, fits = _split_truth(world, cfg.split, margin, max_objects)
    col = {int(i): c for c, i in enumerate(image_ids)}
    vectors = image_text_embeddings(world, image_ids, cfg)
    pairs = nearest_neighbour_pairs(image_ids, vectors, cfg.pairing)

    caption_rows: dict[int, np.ndarray] = {
        int(k): v.to_numpy() for k, v in captions.groupby("image_id", sort=True).groups.items()
    }
    caption_ids_all = captions["caption_id"].to_numpy(dtype=np.int64)
    n_disc, chosen, ann_ok, fits_neg, answers, accepted = [], [], [], [], [], []
    for pos, neg in zip(pairs["positive_image_id"].to_numpy(), pairs["negative_image_id"].to_numpy()):
        rows = caption_rows[int(pos)]
        disc = ~fits[rows, col[int(neg)]]
        choice, ok = simulate_annotator(
            caption_ids_all[rows], disc, cfg.annotator_error, _pair_rng(cfg.seed, int(pos), int(neg), 2)
        )
        n_disc.append(int(disc.sum()))
        chosen.append(choice)
        ann_ok.append(ok)
        if choice == NONE_CHOICE:
            fits_neg.append(False)
            answers.append("")
            accepted.append(False)
            continue
        row = int(np.searchsorted(caption_ids_all, choice))
        fp, fn = bool(fits[row, col[int(pos)]]), bool(fits[row, col[int(neg)]])
        said = simulate_verifiers(
            true_verifier_answer(fp, fn),
            cfg.n_verifiers,
            cfg.verifier_error,
            _pair_rng(cfg.seed, int(pos), int(neg), 3),
        )
        fits_neg.append(fn)
        answers.append(",".join(said))
        accepted.append(all(a == "positive" for a in said))
    pairs = pairs.assign(
        n_discriminative=np.array(n_disc, dtype=np.int64),
        chosen_caption_id=np.array(chosen, dtype=np.int64),
        annotator_correct=np.array(ann_ok, dtype=bool),
        caption_fits_negative=np.array(fits_neg, dtype=bool),
        verifier_answers=pd.array(answers, dtype="string"),
        accepted=np.array(accepted, dtype=bool),
    ).astype(PAIR_COLUMNS)

    kept = pairs[pairs["accepted"]].reset_index(drop=True)
    annotations = _annotations(kept, cfg)
    items = _items(annotations)
    stages = pd.DataFrame(
        {
            "stage": list(STAGE_NAMES),
            "count": [len(pairs), int((pairs["chosen_caption_id"] != NONE_CHOICE).sum()), len(annotations)],
            "published_count": list(PUBLISHED_STAGE_COUNTS.values()),
        }
    ).astype(STAGE_COLUMNS)
    return {"annotations": annotations, "pairs": pairs, "stages": stages, "items": items}


def _annotations(kept: pd.DataFrame, cfg: BisonConfig) -> pd.DataFrame:
    """Canonical annotation rows of the accepted triples, candidates in seeded random order."""
    pos = kept["positive_image_id"].to_numpy(dtype=np.int64)
    neg = kept["negative_image_id"].to_numpy(dtype=np.int64)
    if cfg.shuffle_candidates:
        true_index = np.array(
            [int(_pair_rng(cfg.seed, int(p), int(n), 4).integers(2)) for p, n in zip(pos, neg)], dtype=np.int64
        )
    else:
        true_index = np.zeros(len(pos), dtype=np.int64)
    image_0 = np.where(true_index == 0, pos, neg)
    image_1 = np.where(true_index == 0, neg, pos)
    frame = pd.DataFrame(
        {
            "bison_id": kept["pair_id"].to_numpy(dtype=np.int64),
            "caption_id": kept["chosen_caption_id"].to_numpy(dtype=np.int64),
            "image_id_0": image_0,
            "image_filename_0": [IMAGE_FILENAME.format(image_id=int(i)) for i in image_0],
            "image_id_1": image_1,
            "image_filename_1": [IMAGE_FILENAME.format(image_id=int(i)) for i in image_1],
            "true_image_id": pos,
            "true_index": true_index,
            "false_image_id": neg,
        }
    ).astype(ANNOTATION_SCHEMA)
    frame["caption_fits_false"] = kept["caption_fits_negative"].to_numpy(dtype=bool)
    return frame


def _items(annotations: pd.DataFrame) -> pd.DataFrame:
    """Every image and caption a model must embed to score these annotations, sorted, each once."""
    images = np.unique(np.concatenate([annotations["image_id_0"].to_numpy(), annotations["image_id_1"].to_numpy()]))
    captions = np.unique(annotations["caption_id"].to_numpy())
    return pd.DataFrame(
        {
            "kind": ["caption"] * len(captions) + ["image"] * len(images),
            "item_id": np.concatenate([captions, images]).astype(np.int64),
        }
    ).astype(ITEM_COLUMNS)


def config_dict(cfg: BisonConfig) -> dict[str, Any]:
    """The config as a plain dict (for logs and metrics files)."""
    return asdict(cfg)
