"""ECCV Caption in the world: machine-proposed, human-verified positives on the test split (Chun et al., 2022).

Construction, following the paper (section 3), on the world's test split (the Karpathy 5k test analogue):

1. Queries: a uniform sample of the split's images (image_query_fraction = 1,261 / 5,000) and,
   independently, of its captions (caption_query_fraction = 1,332 / 25,000, the released count;
   the text says 1,333). The gallery of every query is the whole split of the other modality.
2. Machine annotators: each proposes its top_k = 5 gallery items per query. An annotator is any
   `MachineAnnotator(name, score)` where score(direction, query_ids, gallery_ids) -> float [Q, G]
   (higher = better). The paper's machine-in-the-loop is the default (annotator_source = 'models'):
   the trained models of annotator_models propose by the dot products of their cached embeddings of
   the split's items (`annotator_from_cache`; the workflow passes each model's embeddings file), so
   construction depends on training, as in the paper. No cycle: the models embed the world's items,
   which ECCV's positives do not change. The alternative (annotator_source = 'world') is five
   simulated oracles, distinct and each blind to something different:
   ignore_colour, ignore_size, ignore_relation, ignore_count (graded truth: the share of the
   caption's claims the scene satisfies, over the best assignment of mentions to objects, with one
   kind of claim dropped, plus Gaussian noise of sd annotator_noise), and bag_of_words (cosine of
   caption word counts; an image is the sum of its own captions). Ties break by the lower gallery
   position. Duplicate (query, candidate) pairs proposed by several annotators are judged once.
3. Simulated humans answer each unique pair on the paper's 4-level scale ('100% YES',
   'Partially YES', 'Partially NO', '100% NO') with probabilities set by the number of the
   caption's claims the scene violates (0: the pair fits; 1: all but one claim hold; 2 or more).
   One answer per pair (the paper's 43,200 pairs went to one worker each). The paper's golden
   pairs and its removal of meaningless captions have no analogue: world captions are well formed.
4. Positives: pairs answered '100% YES' or 'Partially YES' (positive_answers), union the CxC
   positives and the original COCO pairs of each query. Directions are kept apart, as in the
   released files: a pair verified for an image query is not a positive of a caption query.

Plausible match (PM, Chun et al. 2021): the paper defines an item's vector as the instance classes of
the image, and a caption's as those of its image ("the image corresponding to the query caption").
Decisions: classes = shapes; pm_vector = 'set' (y in {0,1}^5, the paper's binary vectors) or
'multiset' (shape counts); pm_caption_vector = 'image' (the paper's rule, default) or 'mentioned'
(the shapes the caption names; a generic 'shape'/'object' names none). Two items are PM when their
vectors differ in at most pm_zeta positions (L1 distance for multisets); pm_zeta = 0 as in the paper.
PM positives are listed for every query of the split (PMRP is a COCO 5K metric in Table 4); PMRP is
R-Precision with R -> min(R, pm_r_cap = 50), and the capped depth is stored per query in pm_vectors.

The world's relation margin and max_objects come from the WorldConfig passed as `world_cfg` to
build and audit (WorldConfig's defaults otherwise); build checks that the split's captions fit their
own images under that margin, which catches a mismatched margin.

The tables it makes are those of `itmbench.papers.eccv.canonical`.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.papers.eccv.canonical import (
    ANNOTATION_COLUMNS,
    GALLERY_KIND,
    I2T,
    ITEM_COLUMNS,
    PM_POSITIVE_COLUMNS,
    PM_VECTOR_COLUMNS,
    QUERY_COLUMNS,
    QUERY_KIND,
    STAGE_COLUMNS,
    T2I,
    _sort_positives,
)
from itmbench.papers.eccv.config import ANSWERS, WORLD_ANNOTATORS, EccvConfig
from itmbench.papers.eccv.graded import SplitData, claim_matrix, split_data
from itmbench.papers.eccv.released import DIRECTIONS
from itmbench.scoring.embed import EmbeddingCache
from itmbench.scoring.retrieval import first_k_best
from itmbench.world.generate import World, WorldConfig
from itmbench.world.scene import SHAPES

BOW_STOPWORDS = frozenset(
    {"a", "an", "the", "is", "are", "there", "picture", "image", "with", "showing", "plain", "background", "together"}
)
PUBLISHED_COUNTS: dict[str, int] = {
    "image queries": 1_261,
    "caption queries": 1_332,
    "proposed pairs": 64_850,
    "unique proposed pairs": 46_424,
    "human-verified positives": 21_995,
}

Scorer = Callable[[str, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class MachineAnnotator:
    """A machine annotator: score(direction, query_ids, gallery_ids) -> float [Q, G], higher = better match."""

    name: str
    score: Scorer


# --- deterministic per-pair randomness ------------------------------------------------------------


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def keyed_uniforms(*keys: int | np.ndarray) -> np.ndarray:
    """Uniforms in (0, 1), one per broadcast key tuple: a pair's draw does not depend on which other pairs exist."""
    arrays = np.broadcast_arrays(*[np.asarray(k).astype(np.int64).view(np.uint64) for k in keys])
    h = _mix64(np.array(arrays[0], dtype=np.uint64))
    for a in arrays[1:]:
        h = _mix64(h ^ a)
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) / float(2**53)


def _name_key(name: str) -> int:
    """A stable integer for a name (crc32), to key per-annotator randomness."""
    return zlib.crc32(name.encode("utf-8"))


# --- machine annotators ----------------------------------------------------------------------------


def _orient(matrix: np.ndarray, data: SplitData, direction: str, query_ids: np.ndarray, gallery_ids: np.ndarray):
    """Rows of a [captions, images] matrix as [queries, gallery] for a direction."""
    if direction == I2T:
        return matrix[np.ix_(data.caption_rows(gallery_ids), data.image_rows(query_ids))].T
    if direction == T2I:
        return matrix[np.ix_(data.caption_rows(query_ids), data.image_rows(gallery_ids))]
    raise ValueError(f"unknown direction {direction!r}; expected one of {DIRECTIONS}")


def _noise(seed: int, name: str, direction: str, query_ids: np.ndarray, gallery_ids: np.ndarray) -> np.ndarray:
    """Standard normal noise keyed by (seed, annotator, direction, query, candidate)."""
    from scipy.special import ndtri

    u = keyed_uniforms(
        seed,
        _name_key(name),
        DIRECTIONS.index(direction),
        np.asarray(query_ids, dtype=np.int64)[:, None],
        np.asarray(gallery_ids, dtype=np.int64)[None, :],
    )
    return ndtri(u)


def graded_truth_annotator(name: str, ignore: Sequence[str], data: SplitData, noise: float, seed: int):
    """A world annotator scoring the share of the caption's claims the scene satisfies, blind to `ignore`."""
    satisfied, total = claim_matrix(data.structures, data.scenes, data.margin, frozenset(ignore), data.max_objects)
    share = satisfied / np.maximum(total, 1)[:, None]

    def score(direction: str, query_ids: np.ndarray, gallery_ids: np.ndarray) -> np.ndarray:
        base = _orient(share, data, direction, query_ids, gallery_ids)
        return base + noise * _noise(seed, name, direction, query_ids, gallery_ids) if noise > 0 else base

    return MachineAnnotator(name, score)


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z]+", text.lower()) if t not in BOW_STOPWORDS]


def bag_of_words_annotator(name: str, data: SplitData, noise: float, seed: int) -> MachineAnnotator:
    """A text-only annotator: cosine of word counts; an image is the sum of its own captions' counts."""
    counts = [Counter(_tokens(t)) for t in data.caption_text]
    vocab = sorted({w for c in counts for w in c})
    col = {w: j for j, w in enumerate(vocab)}
    caps = np.zeros((len(counts), len(vocab)), dtype=np.float64)
    for i, c in enumerate(counts):
        for w, k in c.items():
            caps[i, col[w]] = k
    own = data.image_rows(data.caption_image)
    imgs = np.zeros((len(data.image_ids), len(vocab)), dtype=np.float64)
    np.add.at(imgs, own, caps)

    def unit(a: np.ndarray) -> np.ndarray:
        return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)

    caps, imgs = unit(caps), unit(imgs)

    def score(direction: str, query_ids: np.ndarray, gallery_ids: np.ndarray) -> np.ndarray:
        if direction == I2T:
            base = imgs[data.image_rows(query_ids)] @ caps[data.caption_rows(gallery_ids)].T
        elif direction == T2I:
            base = caps[data.caption_rows(query_ids)] @ imgs[data.image_rows(gallery_ids)].T
        else:
            raise ValueError(f"unknown direction {direction!r}; expected one of {DIRECTIONS}")
        return base + noise * _noise(seed, name, direction, query_ids, gallery_ids) if noise > 0 else base

    return MachineAnnotator(name, score)


def world_annotators(data: SplitData, cfg: EccvConfig) -> list[MachineAnnotator]:
    """The configured world annotators (each blind to something different), in config order."""
    out = []
    for name in cfg.annotators:
        if name == "bag_of_words":
            out.append(bag_of_words_annotator(name, data, cfg.annotator_noise, cfg.seed))
        else:
            out.append(graded_truth_annotator(name, WORLD_ANNOTATORS[name], data, cfg.annotator_noise, cfg.seed))
    return out


def annotator_from_cache(name: str, cache: EmbeddingCache) -> MachineAnnotator:
    """A dual encoder as a machine annotator: dot products of its cached unit embeddings."""

    def score(direction: str, query_ids: np.ndarray, gallery_ids: np.ndarray) -> np.ndarray:
        q = cache.get(QUERY_KIND[direction], np.asarray(query_ids)).astype(np.float32, copy=False)
        g = cache.get(GALLERY_KIND[direction], np.asarray(gallery_ids)).astype(np.float32, copy=False)
        return (q @ g.T).astype(np.float64)

    return MachineAnnotator(name, score)


def configured_annotators(
    data: SplitData, cfg: EccvConfig, annotator_embeddings: Mapping[str, str | Path] | None = None
) -> list[MachineAnnotator]:
    """The annotators the config names: the models' embedding caches (annotator_source 'models', in the order of
    annotator_models) or the simulated oracles ('world'); a missing or unexpected embeddings file is refused."""
    given = dict(annotator_embeddings or {})
    if cfg.annotator_source == "world":
        if given:
            raise ValueError(
                f"eccv build: annotator embeddings given for {sorted(given)} but annotator_source is 'world'; "
                "expected none (the simulated oracles propose)"
            )
        return world_annotators(data, cfg)
    missing = [m for m in cfg.annotator_models if m not in given]
    extra = sorted(set(given) - set(cfg.annotator_models))
    if missing or extra:
        raise ValueError(
            f"eccv build: annotator embeddings for {sorted(given)}; expected exactly annotator_models "
            f"{list(cfg.annotator_models)} (missing {missing}, unexpected {extra})"
        )
    return [annotator_from_cache(m, EmbeddingCache(given[m])) for m in cfg.annotator_models]


def propose(
    annotators: Sequence[MachineAnnotator],
    direction: str,
    query_ids: np.ndarray,
    gallery_ids: np.ndarray,
    k: int,
    chunk_size: int = 256,
) -> pd.DataFrame:
    """Each annotator's top-k gallery ids per query (ties by lower gallery position): long table of proposals."""
    frames = []
    k = min(k, len(gallery_ids))
    for annotator in annotators:
        for start in range(0, len(query_ids), chunk_size):
            q = query_ids[start : start + chunk_size]
            s = np.asarray(annotator.score(direction, q, gallery_ids), dtype=np.float64)
            if s.shape != (len(q), len(gallery_ids)):
                raise ValueError(
                    f"annotator {annotator.name!r} ({direction}): score matrix of shape {s.shape}; "
                    f"expected {(len(q), len(gallery_ids))}"
                )
            if not np.isfinite(s).all():
                raise ValueError(f"annotator {annotator.name!r} ({direction}): non-finite scores")
            top = np.array(first_k_best(s, k), dtype=np.int64).reshape(len(q), k)  # a stable argsort's first k
            frames.append(
                pd.DataFrame(
                    {
                        "query_id": np.repeat(q, k),
                        "candidate_id": gallery_ids[top].ravel(),
                        "annotator": annotator.name,
                        "proposal_rank": np.tile(np.arange(1, k + 1, dtype=np.int64), len(q)),
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "direction", direction)
    return out


# --- simulated humans ------------------------------------------------------------------------------


def answer_pairs(
    n_violated: np.ndarray, direction: str, query_ids: np.ndarray, candidate_ids: np.ndarray, cfg: EccvConfig
) -> np.ndarray:
    """One simulated answer per pair from its number of violated claims (0, 1, 2+), keyed by the pair."""
    table = np.array([cfg.answer_probs_fit, cfg.answer_probs_one_off, cfg.answer_probs_worse], dtype=np.float64)
    cum = np.cumsum(table, axis=1)
    cum[:, -1] = 1.0
    level = np.minimum(np.asarray(n_violated, dtype=np.int64), 2)
    u = keyed_uniforms(cfg.seed, _name_key("human"), DIRECTIONS.index(direction), query_ids, candidate_ids)
    idx = (u[:, None] > cum[level]).sum(axis=1)
    return np.array(ANSWERS, dtype=object)[np.minimum(idx, len(ANSWERS) - 1)]


# --- plausible match -------------------------------------------------------------------------------


def pm_vectors(data: SplitData, cfg: EccvConfig) -> tuple[np.ndarray, np.ndarray]:
    """PM vectors [images, 5] and [captions, 5] over SHAPES: shape counts, clipped to {0,1} for 'set'."""
    images = np.zeros((len(data.image_ids), len(SHAPES)), dtype=np.int64)
    for r, scene in enumerate(data.scenes):
        for o in scene.objects:
            images[r, SHAPES.index(o.shape)] += 1
    if cfg.pm_caption_vector == "image":
        captions = images[data.image_rows(data.caption_image)].copy()
    else:
        captions = np.zeros((len(data.caption_ids), len(SHAPES)), dtype=np.int64)
        for r, c in enumerate(data.structures):
            for m in c.mentions:
                if m.shape is not None:
                    captions[r, SHAPES.index(m.shape)] += m.count
    if cfg.pm_vector == "set":
        images, captions = np.minimum(images, 1), np.minimum(captions, 1)
    return images, captions


def pm_match(image_vectors: np.ndarray, caption_vectors: np.ndarray, zeta: int) -> np.ndarray:
    """bool [captions, images]: the vectors differ in at most zeta (L1 distance; Hamming on sets).

    Computed between the distinct vectors (a few dozen shape counts) and spread to every caption and image:
    a [captions, images, shapes] difference would take gigabytes at COCO's 25k x 5k."""
    img, img_row = np.unique(np.asarray(image_vectors), axis=0, return_inverse=True)
    cap, cap_row = np.unique(np.asarray(caption_vectors), axis=0, return_inverse=True)
    dist = np.abs(cap[:, None, :] - img[None, :, :]).sum(axis=2)
    return (dist <= zeta)[cap_row.ravel()][:, img_row.ravel()]


# --- build -----------------------------------------------------------------------------------------


def _sample_ids(ids: np.ndarray, fraction: float, seed: int, stream: int) -> np.ndarray:
    """A sorted uniform sample of round(fraction * n) ids (at least 1), seeded by (seed, stream)."""
    n = max(1, int(round(fraction * len(ids))))
    rng = np.random.default_rng(np.random.SeedSequence([seed, stream]))
    return np.sort(rng.choice(ids, size=min(n, len(ids)), replace=False)).astype(np.int64)


def _pairs_frame(source: str, direction: str, image_ids: np.ndarray, caption_ids: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source": source,
            "direction": direction,
            "image_id": np.asarray(image_ids, dtype=np.int64),
            "caption_id": np.asarray(caption_ids, dtype=np.int64),
        }
    )


def _validate_cxc(world: World, cxc: pd.DataFrame, data: SplitData) -> pd.DataFrame:
    """CxC positive pairs of the split; ids unknown to the world raise, pairs of other splits are dropped.

    Takes (image_id, caption_id) pairs, or the CxC module's `positives` table (task, a_id = caption,
    b_id = image), of which the 'sits' rows are used.
    """
    if not {"image_id", "caption_id"} <= set(cxc.columns) and {"task", "a_id", "b_id"} <= set(cxc.columns):
        sits = cxc[cxc["task"] == "sits"]
        cxc = pd.DataFrame({"image_id": sits["b_id"].to_numpy(), "caption_id": sits["a_id"].to_numpy()})
    missing = [c for c in ("image_id", "caption_id") if c not in cxc.columns]
    if missing:
        raise ValueError(f"cxc_positives: missing columns {missing}; expected image_id, caption_id")
    pairs = cxc[["image_id", "caption_id"]]
    if pairs.isna().any().any():
        row = int(np.flatnonzero(pairs.isna().any(axis=1).to_numpy())[0])
        raise ValueError(f"cxc_positives row {row}: missing id; expected integer image_id and caption_id")
    pairs = pairs.astype("int64")
    for col, known in (
        ("image_id", world.image_table["image_id"].to_numpy()),
        ("caption_id", world.caption_table["caption_id"].to_numpy()),
    ):
        unknown = ~np.isin(pairs[col].to_numpy(), known)
        if unknown.any():
            row = int(np.flatnonzero(unknown)[0])
            raise ValueError(f"cxc_positives row {row}: {col} {int(pairs[col].iloc[row])} is not in the world")
    keep = np.isin(pairs["image_id"].to_numpy(), data.image_ids) & np.isin(
        pairs["caption_id"].to_numpy(), data.caption_ids
    )
    return pairs[keep].drop_duplicates().reset_index(drop=True)


def _image_caption(direction: str, query: np.ndarray, candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (query, candidate) if direction == I2T else (candidate, query)


def build(
    world: World,
    cfg: EccvConfig,
    cxc_positives: pd.DataFrame | None = None,
    annotators: Sequence[MachineAnnotator] | None = None,
    *,
    world_cfg: WorldConfig | None = None,
    annotator_embeddings: Mapping[str, str | Path] | None = None,
) -> dict[str, pd.DataFrame]:
    """Build ECCV Caption on a split of the world: positives, queries, annotations, PM tables, stages, items.

    The annotators are `annotators` when given (any scorers), else those the config names
    (`configured_annotators`: the models' embeddings files of `annotator_embeddings`, or the oracles).
    """
    data = split_data(world, cfg.split, world_cfg)
    if annotators is None:
        annotators = configured_annotators(data, cfg, annotator_embeddings)
    elif annotator_embeddings:
        raise ValueError("eccv build: both annotators and annotator_embeddings given; expected one")
    names = [a.name for a in annotators]
    if not names or len(set(names)) != len(names):
        raise ValueError(f"eccv build: annotators {names}; expected at least one, with distinct names")
    satisfied, total = claim_matrix(data.structures, data.scenes, data.margin, frozenset(), data.max_objects)
    violated = total[:, None] - satisfied  # [captions, images]

    queries = {
        I2T: _sample_ids(data.image_ids, cfg.image_query_fraction, cfg.seed, 1),
        T2I: _sample_ids(data.caption_ids, cfg.caption_query_fraction, cfg.seed, 2),
    }
    gallery = {I2T: data.caption_ids, T2I: data.image_ids}
    original = _pairs_frame("original", I2T, data.caption_image, data.caption_ids)
    cxc = None if cxc_positives is None else _validate_cxc(world, cxc_positives, data)
    cxc_union = None
    if cxc is not None:
        cxc_union = pd.concat([cxc, original[["image_id", "caption_id"]]], ignore_index=True).drop_duplicates()

    annotations, positive_frames, stage_rows = [], [], []
    for direction in DIRECTIONS:
        q_ids = queries[direction]
        prop = propose(annotators, direction, q_ids, gallery[direction], cfg.top_k)
        pairs = prop[["query_id", "candidate_id"]].drop_duplicates().sort_values(["query_id", "candidate_id"])
        img, cap = _image_caption(direction, pairs["query_id"].to_numpy(), pairs["candidate_id"].to_numpy())
        c_rows, i_rows = data.caption_rows(cap), data.image_rows(img)
        n_viol = violated[c_rows, i_rows]
        answers = answer_pairs(n_viol, direction, pairs["query_id"].to_numpy(), pairs["candidate_id"].to_numpy(), cfg)
        judged = pairs.assign(
            image_id=img, caption_id=cap, answer=answers, n_violated=n_viol, fits=data.fits[c_rows, i_rows]
        )
        ann = prop.merge(judged, on=["query_id", "candidate_id"], how="left", validate="many_to_one")
        annotations.append(ann)

        human = judged[judged["answer"].isin(cfg.positive_answers)]
        qcol = "image_id" if direction == I2T else "caption_id"
        human_pairs = human[["image_id", "caption_id"]]
        own = original[original[qcol].isin(q_ids)][["image_id", "caption_id"]]
        merged = [human_pairs]
        if cxc_union is not None:
            merged.append(cxc_union[cxc_union[qcol].isin(q_ids)])
        merged.append(own)
        final = pd.concat(merged, ignore_index=True).drop_duplicates()
        positive_frames.append(_pairs_frame("eccv", direction, final["image_id"], final["caption_id"]))
        positive_frames.append(_pairs_frame("original", direction, original["image_id"], original["caption_id"]))
        if cxc_union is not None:
            positive_frames.append(_pairs_frame("cxc", direction, cxc_union["image_id"], cxc_union["caption_id"]))

        counts = judged["answer"].value_counts()
        running = human_pairs.drop_duplicates()
        steps = [
            ("queries", len(q_ids)),
            ("proposed pairs (annotators x top-k)", len(prop)),
            ("unique proposed pairs", len(pairs)),
            *[(f"answered {a}", int(counts.get(a, 0))) for a in ANSWERS],
            ("human-verified positives", len(running)),
        ]
        if cxc is not None:  # CxC's own SITS positives first, then the original pairs
            running = pd.concat([running, cxc[cxc[qcol].isin(q_ids)]]).drop_duplicates()
            steps.append(("after union with CxC", len(running)))
        running = pd.concat([running, own]).drop_duplicates()
        steps.append(("after union with original (ECCV Caption positives)", len(running)))
        stage_rows += [(direction, s, int(n)) for s, n in steps]

    annotations_df = (
        pd.concat(annotations, ignore_index=True)
        .assign(_d=lambda d: d["direction"].map({x: i for i, x in enumerate(DIRECTIONS)}))
        .sort_values(["_d", "query_id", "annotator", "proposal_rank"], kind="stable", ignore_index=True)[
            list(ANNOTATION_COLUMNS)
        ]
        .astype(ANNOTATION_COLUMNS)
    )
    pm_vec_df, pm_pos_df = _pm_tables(data, cfg)
    query_df = pd.concat(
        [pd.DataFrame({"direction": d, "query_id": queries[d]}) for d in DIRECTIONS], ignore_index=True
    ).astype(QUERY_COLUMNS)
    items = pd.concat(
        [
            pd.DataFrame({"kind": "image", "item_id": data.image_ids}),
            pd.DataFrame({"kind": "caption", "item_id": data.caption_ids}),
        ],
        ignore_index=True,
    ).astype(ITEM_COLUMNS)
    return {
        "positives": _sort_positives(pd.concat(positive_frames, ignore_index=True)),
        "queries": query_df,
        "annotations": annotations_df,
        "pm_vectors": pm_vec_df,
        "pm_positives": pm_pos_df,
        "stages": pd.DataFrame(stage_rows, columns=list(STAGE_COLUMNS)).astype(STAGE_COLUMNS),
        "items": items,
    }


def _pm_tables(data: SplitData, cfg: EccvConfig) -> tuple[pd.DataFrame, pd.DataFrame]:
    """PM vectors (with each query's PM count and capped PMRP depth) and PM positives of every split query."""
    img_vec, cap_vec = pm_vectors(data, cfg)
    match = pm_match(img_vec, cap_vec, cfg.pm_zeta)  # [captions, images]
    n_i2t = match.sum(axis=0)  # image query -> PM captions
    n_t2i = match.sum(axis=1)
    vec_df = pd.concat(
        [
            pd.DataFrame(
                {
                    "kind": kind,
                    "item_id": ids,
                    "pm_vector": ["".join(map(str, v)) for v in vec],
                    "n_pm_positives": n,
                    "pm_depth": np.minimum(n, cfg.pm_r_cap),
                }
            )
            for kind, ids, vec, n in (
                ("image", data.image_ids, img_vec, n_i2t),
                ("caption", data.caption_ids, cap_vec, n_t2i),
            )
        ],
        ignore_index=True,
    ).astype(PM_VECTOR_COLUMNS)
    ci, ii = np.nonzero(match)
    i2t = pd.DataFrame({"direction": I2T, "image_id": data.image_ids[ii], "caption_id": data.caption_ids[ci]})
    i2t = i2t.sort_values(["image_id", "caption_id"], kind="stable")
    t2i = pd.DataFrame({"direction": T2I, "image_id": data.image_ids[ii], "caption_id": data.caption_ids[ci]})
    pos_df = pd.concat([i2t, t2i], ignore_index=True).astype(PM_POSITIVE_COLUMNS)
    return vec_df, pos_df


def config_dict(cfg: EccvConfig) -> dict[str, Any]:
    """The config as a plain dict (for logs and metrics files)."""
    d = asdict(cfg)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}
