"""Crisscrossed Captions (CxC) in the world: graded STS / SIS / SITS ratings by the paper's procedure.

Construction per split (`splits`, the world's val and test, as CxC extends the Karpathy val/test):
1. Other-modality candidates (paper section 2). The paper's unimodal encoders are replaced by two
   world scorers that read only the surface of the items, not the scene graph:
   - caption scorers, one S^C matrix each (the paper's two: USE and GloVe BoW), named by
     `caption_scorers`: `bow`, a TF-IDF bag of words of the caption text (lower-cased alphabetic
     tokens, smooth idf fitted on the split's captions, rows L2-normalised), standing for the
     order-free averaged GloVe BoW; `ngram`, the same TF-IDF over the words and the adjacent word
     pairs (bigrams), standing for USE, whose DAN encoder averages word and bigram embeddings, so
     word order (which noun a colour binds to, which side of a relation) moves it where BoW is
     blind. An image's co-caption group is the normalised mean of its captions' vectors; S^C =
     cosine between groups;
   - image scorer: read from pixels; the colour histogram (`colour_bins`^3 RGB bins) of the
     saturated pixels (max - min channel > `saturation_min`, i.e. not the grey background) and
     their coarse layout (`layout_grid`^2 cell masses), square-rooted, each block L2-normalised,
     the layout block weighted by `layout_weight`; S^I = cosine (the paper's Graph-RISE).
   The diagonals are excluded. i2i_csim: the union of each image's `top_k` images by each S^C (the
   paper "glosses over" how its two combine and its appendix does not say; its SIS counts, about
   twice one top-5 list per image, fit a union). c2c_isim: each image's `top_k` images by S^I, one
   random caption of each image. Unordered duplicates are dropped at construction (first
   occurrence kept, in image-id, then `caption_scorers`, then rank order), so `n_rows` is always 1;
   the item whose neighbour list produced a pair is listed first (caption1 / image1).
   c2c_cocaption: co-caption pairs drawn uniformly without replacement, as many as make them
   `cocaption_fraction` of the STS pairs (paper: half).
2. Simulated raters (5 per pair, continuous 0-5, rounded to `rating_decimals`): rating =
   clip(similarity + N(0, rater_sd_<task>), 0, 5); agg_score = the mean. The noise-free similarity:
   - STS(c1, c2) = 5 * (w * J + (1 - w) * f), w = `sts_overlap_weight`; J = Jaccard of the claim
     atoms (per mention: its shape, colour, size, full descriptor, count; the relation with both
     descriptors, right_of/below rewritten as left_of/above with the arguments swapped); f = mean
     of [c1 fits the image of c2] and [c2 fits the image of c1] by the truth function. Co-captions
     have f = 1, so they score >= 5 (1 - w) = 2; w = 0.6 brings the co-caption mean to the paper's 3.0.
   - SIS(s1, s2) = 5 * best one-to-one object assignment / max(#objects), object similarity =
     (w_shape [same shape] + w_colour [same colour] + w_size [same size] + w_position
     max(0, 1 - distance / position_scale)) / sum of weights (`sis_*`); identical scenes give 5.
   - SITS(c, s) = `sits_fit_base` + (5 - base) * coverage when c fits s by the truth function
     (coverage = share of the scene's objects that some mention of c fully matches); otherwise
     `sits_partial_max` * p, p = mean over the claims (each mention: its best share of matched
     attributes over objects, for a count k with n matching objects min(n,k)/max(n,k); for two
     mentions a third claim, the combination, which holds only when c fits) < 1, so a caption
     that does not fit has SITS < `sits_partial_max` (3: "roughly matched").
   Similarities are rounded to 6 decimals, so the naive and the vectorised forms agree exactly.
3. c2i_intrasim (paper: C2I from the rated C2C and I2I pairs by decreasing rating): for a rated
   c2c_isim pair (c1, c2) the candidate is (c2, image of c1); for a rated i2i_csim pair (i1, i2) it
   is (a random caption of i2, i1). round(`intrasim_per_image` * n_images) pairs (paper: ~19.8k
   over 5k images, 3.96 per image), `intrasim_sts_fraction` of them from the STS ranks, the rest
   from the SIS ranks skipping pairs already taken. c2i_original: every (caption, own image) pair.
4. Positives: agg_score >= `threshold_<task>` (paper: STS >= 3, SITS >= 3, SIS >= 2.5).

The tables it makes are those of `itmbench.papers.cxc.canonical`.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from itmbench.papers.cxc.canonical import POSITIVE_COLUMNS
from itmbench.papers.cxc.config import SPLIT_CODES, CxcConfig
from itmbench.papers.cxc.released import ITEM_COLUMNS, SAMPLING_METHODS, TASKS, pairs_schema
from itmbench.params import make_config
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import World, WorldConfig
from itmbench.world.scene import Scene, WorldObject, scene_arrays
from itmbench.world.truth import caption_fits, truth_matrix

TASK_CODES = {"sts": 0, "sis": 1, "sits": 2}
SIMILARITY_DECIMALS = 6
# Share of a split's own captions allowed not to fit their image by truth: the stored scenes round positions
# to 4 decimals, so a relation sampled at the margin can flip (1 of 13,750 captions in the default world);
# a wrong relation_margin flips far more and is an error.
OWN_MISFIT_TOLERANCE = 0.01


# ----------------------------------------------------------------------------- world scorers


def _tokens(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


def _bigrams(words: list[str]) -> list[str]:
    return [f"{a} {b}" for a, b in zip(words, words[1:])]


CAPTION_SCORERS = {"bow": _tokens, "ngram": lambda text: _tokens(text) + _bigrams(_tokens(text))}


def caption_tfidf(texts: list[str], scorer: str = "bow") -> np.ndarray:
    """TF-IDF vectors [C, V] (smooth idf, L2 rows) of a scorer's terms: words (bow), words and bigrams (ngram)."""
    docs = [CAPTION_SCORERS[scorer](t) for t in texts]
    vocab = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
    tf = np.zeros((len(docs), len(vocab)), dtype=np.float64)
    for r, d in enumerate(docs):
        for w in d:
            tf[r, vocab[w]] += 1.0
    df = (tf > 0).sum(axis=0)
    idf = np.log((1.0 + len(docs)) / (1.0 + df)) + 1.0
    vec = tf * idf
    return _normalise_rows(vec)


def caption_similarity(texts: list[str], captions_of: list[np.ndarray], scorer: str) -> np.ndarray:
    """One S^C [images, images]: cosine of the images' co-caption groups (normalised mean of a scorer's vectors)."""
    vectors = caption_tfidf(texts, scorer)
    groups = _normalise_rows(np.stack([vectors[rows].mean(axis=0) for rows in captions_of]))
    return groups @ groups.T


def _normalise_rows(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def image_features(images: np.ndarray, cfg: CxcConfig) -> np.ndarray:
    """Pixel features [N, F]: colour histogram and layout of the saturated pixels (the world's image encoder)."""
    px = np.asarray(images, dtype=np.int16)
    n, h, w, _ = px.shape
    mask = (px.max(axis=-1) - px.min(axis=-1)) > cfg.saturation_min
    q = np.clip(px.astype(np.int64) * cfg.colour_bins // 256, 0, cfg.colour_bins - 1)
    code = (q[..., 0] * cfg.colour_bins + q[..., 1]) * cfg.colour_bins + q[..., 2]
    n_col = cfg.colour_bins**3
    colour = np.zeros((n, n_col), dtype=np.float64)
    rows = np.broadcast_to(np.arange(n)[:, None, None], mask.shape)
    np.add.at(colour, (rows[mask], code[mask]), 1.0)
    g = cfg.layout_grid
    cell = (np.arange(h)[:, None] * g // h) * g + (np.arange(w)[None, :] * g // w)
    layout = np.zeros((n, g * g), dtype=np.float64)
    np.add.at(layout, (rows[mask], np.broadcast_to(cell, mask.shape)[mask]), 1.0)
    feats = np.concatenate([_normalise_rows(np.sqrt(colour)), cfg.layout_weight * _normalise_rows(np.sqrt(layout))], 1)
    return _normalise_rows(feats)


def _top_k_pairs(sims: np.ndarray | list[np.ndarray], k: int) -> list[tuple[int, int]]:
    """Row-index pairs (i, j): the union of each row's k most similar other rows by each matrix.

    Unordered duplicates are dropped, the first kept in row, then matrix, then rank order.
    """
    mats = [sims] if isinstance(sims, np.ndarray) else list(sims)
    orders = []
    for sim in mats:
        s = sim.astype(np.float64, copy=True)
        np.fill_diagonal(s, -np.inf)
        orders.append(np.argsort(-s, axis=1, kind="stable")[:, : min(k, s.shape[0] - 1)])
    seen: set[tuple[int, int]] = set()
    out: list[tuple[int, int]] = []
    for i in range(mats[0].shape[0]):
        for j in itertools.chain.from_iterable(order[i] for order in orders):
            key = (min(i, int(j)), max(i, int(j)))
            if key not in seen:
                seen.add(key)
                out.append((i, int(j)))
    return out


# ----------------------------------------------------------------------------- semantic similarity (truth)


def _descriptor(m: Mention) -> tuple:
    return (m.shape, m.colour, m.size, m.count)


def claim_atoms(c: CaptionStructure) -> frozenset:
    """The atoms a caption claims (attributes, descriptors, counts, canonical relation): STS overlap units."""
    atoms: set[tuple] = set()
    for m in c.mentions:
        for name, value in (("shape", m.shape), ("colour", m.colour), ("size", m.size)):
            if value is not None:
                atoms.add((name, value))
        atoms.add(("object", *_descriptor(m)))
        if m.count > 1:
            atoms.add(("count", m.count))
    if c.relation is not None:
        first, second = _descriptor(c.mentions[0]), _descriptor(c.mentions[1])
        relation = c.relation
        if relation in ("right_of", "below"):
            relation = "left_of" if relation == "right_of" else "above"
            first, second = second, first
        atoms.add(("relation", relation, first, second))
    return frozenset(atoms)


def _sts_value(inter: np.ndarray, union: np.ndarray, cross_fit: np.ndarray, weight: float) -> np.ndarray:
    """STS from claim intersection/union sizes and cross-fit (shared by the naive and vectorised forms)."""
    jac = np.asarray(inter, dtype=np.float64) / np.maximum(np.asarray(union, dtype=np.float64), 1.0)
    value = 5.0 * (weight * jac + (1.0 - weight) * np.asarray(cross_fit, dtype=np.float64))
    return np.round(value, SIMILARITY_DECIMALS)


def sts_similarity(
    c1: CaptionStructure, c2: CaptionStructure, scene1: Scene, scene2: Scene, margin: float, cfg: CxcConfig
) -> float:
    """Naive STS of two captions of scenes 1 and 2: claim overlap and whether each fits the other's image."""
    a, b = claim_atoms(c1), claim_atoms(c2)
    cross = (float(caption_fits(c1, scene2, margin)) + float(caption_fits(c2, scene1, margin))) / 2.0
    return float(_sts_value(np.array(len(a & b)), np.array(len(a | b)), np.array(cross), cfg.sts_overlap_weight))


def _object_similarity(o1: WorldObject | None, o2: WorldObject | None, cfg: CxcConfig) -> float:
    if o1 is None or o2 is None:
        return 0.0
    total = cfg.sis_w_shape + cfg.sis_w_colour + cfg.sis_w_size + cfg.sis_w_position
    close = max(0.0, 1.0 - float(np.hypot(o1.x - o2.x, o1.y - o2.y)) / cfg.sis_position_scale)
    value = (
        cfg.sis_w_shape * (o1.shape == o2.shape)
        + cfg.sis_w_colour * (o1.colour == o2.colour)
        + cfg.sis_w_size * (o1.size == o2.size)
        + cfg.sis_w_position * close
    )
    return value / total


def sis_similarity(s1: Scene, s2: Scene, cfg: CxcConfig) -> float:
    """Naive SIS of two scenes: best one-to-one object assignment (all permutations) / larger object count."""
    n = max(len(s1.objects), len(s2.objects))
    if n == 0:
        return 0.0
    a = list(s1.objects) + [None] * (n - len(s1.objects))
    b = list(s2.objects) + [None] * (n - len(s2.objects))
    best = max(sum(_object_similarity(a[i], b[p[i]], cfg) for i in range(n)) for p in itertools.permutations(range(n)))
    return float(np.round(5.0 * best / n, SIMILARITY_DECIMALS))


def _sis_pairs(arrays: dict[str, np.ndarray], i: np.ndarray, j: np.ndarray, cfg: CxcConfig) -> np.ndarray:
    """Vectorised SIS of scene rows i[p], j[p] (padded arrays of scene_arrays)."""
    total = cfg.sis_w_shape + cfg.sis_w_colour + cfg.sis_w_size + cfg.sis_w_position
    va, vb = arrays["valid"][i][:, :, None], arrays["valid"][j][:, None, :]
    same = {k: arrays[k][i][:, :, None] == arrays[k][j][:, None, :] for k in ("shape", "colour", "size")}
    dist = np.hypot(
        arrays["x"][i][:, :, None] - arrays["x"][j][:, None, :], arrays["y"][i][:, :, None] - arrays["y"][j][:, None, :]
    )
    close = np.maximum(0.0, 1.0 - dist / cfg.sis_position_scale)
    obj = (
        cfg.sis_w_shape * same["shape"]
        + cfg.sis_w_colour * same["colour"]
        + cfg.sis_w_size * same["size"]
        + cfg.sis_w_position * close
    ) / total
    obj = np.where(va & vb, obj, 0.0)
    m = obj.shape[1]
    best = np.zeros(len(i), dtype=np.float64)
    for perm in itertools.permutations(range(m)):
        s = np.zeros(len(i), dtype=np.float64)
        for r in range(m):
            s = s + obj[:, r, perm[r]]
        best = np.maximum(best, s)
    n = np.maximum(arrays["valid"][i].sum(1), arrays["valid"][j].sum(1))
    return np.round(5.0 * best / np.maximum(n, 1), SIMILARITY_DECIMALS)


def _attribute_share(m: Mention, o: WorldObject) -> float:
    claimed = [(v, getattr(o, k)) for k, v in (("shape", m.shape), ("colour", m.colour), ("size", m.size)) if v]
    if not claimed:
        return 1.0
    return sum(v == w for v, w in claimed) / len(claimed)


def sits_similarity(c: CaptionStructure, scene: Scene, margin: float, cfg: CxcConfig) -> float:
    """SITS of a caption and a scene: high with coverage when it fits by truth, else scaled partial fit."""
    objs = scene.objects
    if caption_fits(c, scene, margin):
        covered = sum(any(m.matches(o) for m in c.mentions) for o in objs)
        coverage = covered / len(objs) if objs else 0.0
        value = cfg.sits_fit_base + (5.0 - cfg.sits_fit_base) * coverage
        return float(np.round(value, SIMILARITY_DECIMALS))
    claims = []
    for m in c.mentions:
        if m.count > 1:
            k = sum(m.matches(o) for o in objs)
            claims.append(min(k, m.count) / max(k, m.count) if k else 0.0)
        else:
            claims.append(max((_attribute_share(m, o) for o in objs), default=0.0))
    if len(c.mentions) == 2:
        claims.append(0.0)  # the combination (distinct objects, relation) fails, else the caption would fit
    p = sum(claims) / len(claims)
    return float(np.round(cfg.sits_partial_max * p, SIMILARITY_DECIMALS))


def simulate_ratings(similarity: np.ndarray, sd: float, cfg: CxcConfig, rng: np.random.Generator) -> np.ndarray:
    """Ratings [P, n_raters]: the similarity plus rater noise, clipped to [0, 5], on the slider's decimals."""
    sim = np.asarray(similarity, dtype=np.float64)
    noise = rng.normal(0.0, sd, size=(len(sim), cfg.n_raters)) if sd > 0 else np.zeros((len(sim), cfg.n_raters))
    return np.round(np.clip(sim[:, None] + noise, 0.0, 5.0), cfg.rating_decimals)


# ----------------------------------------------------------------------------- one split


@dataclass
class _Split:
    """The items of one split and their truth."""

    name: str
    image_ids: np.ndarray
    caption_ids: np.ndarray
    caption_image: np.ndarray
    caption_image_row: np.ndarray
    texts: list[str]
    structures: list[CaptionStructure]
    scenes: list[Scene]
    fits: np.ndarray  # [captions, images] truth
    captions_of: list[np.ndarray]  # per image row: caption rows


def _split_data(world: World, split: str, margin: float) -> _Split:
    images = world.image_table[world.image_table["split"] == split].sort_values("image_id", kind="stable")
    captions = world.caption_table[world.caption_table["split"] == split].sort_values("caption_id", kind="stable")
    if len(images) < 2:
        raise ValueError(f"world split {split!r} has {len(images)} images; CxC needs at least 2 per split")
    image_ids = images["image_id"].to_numpy(dtype=np.int64)
    row_of = {int(i): r for r, i in enumerate(image_ids)}
    caption_image = captions["image_id"].to_numpy(dtype=np.int64)
    unknown = [int(i) for i in caption_image if int(i) not in row_of]
    if unknown:
        raise ValueError(f"world captions of split {split!r}: image ids {unknown[:5]} are not images of that split")
    caption_image_row = np.array([row_of[int(i)] for i in caption_image], dtype=np.int64)
    scenes_by_id = dict(zip(world.scene_table["image_id"].to_numpy(), world.scene_table["scene"]))
    missing = [int(i) for i in image_ids if int(i) not in scenes_by_id]
    if missing:
        raise ValueError(f"world scene table: no scene for images {missing[:5]} of split {split!r}")
    scenes = [Scene.from_json(scenes_by_id[int(i)]) for i in image_ids]
    structures = [CaptionStructure.from_json(s) for s in captions["structure"]]
    max_objects = max(1, max(len(s.objects) for s in scenes))
    fits = truth_matrix(structures, scenes, margin, max_objects)
    own = fits[np.arange(len(structures)), caption_image_row]
    if (~own).mean() > OWN_MISFIT_TOLERANCE:
        bad = int(captions["caption_id"].to_numpy()[np.argmin(own)])
        raise ValueError(
            f"world split {split!r}: {int((~own).sum())} of {len(own)} captions (first: {bad}) do not fit their own "
            f"image under relation_margin={margin}; expected the world's relation_margin (pass world_cfg= to build)"
        )
    captions_of = [np.flatnonzero(caption_image_row == r) for r in range(len(image_ids))]
    return _Split(
        name=split,
        image_ids=image_ids,
        caption_ids=captions["caption_id"].to_numpy(dtype=np.int64),
        caption_image=caption_image,
        caption_image_row=caption_image_row,
        texts=captions["text"].tolist(),
        structures=structures,
        scenes=scenes,
        fits=fits,
        captions_of=captions_of,
    )


def _rng(cfg: CxcConfig, split: str, stream: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([cfg.seed, SPLIT_CODES[split], stream]))


def _pairs_frame(
    task: str,
    split: str,
    a_ids: np.ndarray,
    b_ids: np.ndarray,
    methods: list[str],
    similarity: np.ndarray,
    truth: np.ndarray,
    ratings: np.ndarray,
    cfg: CxcConfig,
) -> pd.DataFrame:
    """A task's canonical pairs table for one split, plus the world-only columns."""
    a, b = ITEM_COLUMNS[task]
    kind_a = "caption" if a.startswith("caption") else "image"
    kind_b = "caption" if b.startswith("caption") else "image"
    agg = ratings.mean(axis=1) if len(ratings) else np.zeros(0)
    frame = pd.DataFrame(
        {
            "split": split,
            a: [f"world:{kind_a}:{int(i)}" for i in a_ids],
            b: [f"world:{kind_b}:{int(i)}" for i in b_ids],
            f"{a}_id": np.asarray(a_ids, dtype=np.int64),
            f"{b}_id": np.asarray(b_ids, dtype=np.int64),
            "agg_score": agg.astype(np.float64),
            "sampling_method": methods,
            "line": np.arange(2, len(a_ids) + 2, dtype=np.int64),
            "n_rows": np.ones(len(a_ids), dtype=np.int64),
            "positive": agg >= cfg.threshold(task),
        }
    )
    frame = frame.astype(pairs_schema(task))
    frame["similarity"] = np.asarray(similarity, dtype=np.float64)
    frame["truth"] = np.asarray(truth, dtype=bool)
    for r in range(cfg.n_raters):
        frame[f"rating_{r}"] = ratings[:, r] if len(ratings) else np.zeros(0)
    return frame


def _build_split(sd: _Split, world: World, cfg: CxcConfig, margin: float) -> dict[str, Any]:
    """Sample, rate and select the pairs of one split; returns the three tables and stage counts."""
    split = sd.name
    n_img = len(sd.image_ids)
    choice_rng = _rng(cfg, split, 10)
    # 1. other-modality candidates
    s_captions = [caption_similarity(sd.texts, sd.captions_of, scorer) for scorer in cfg.caption_scorers]
    feats = image_features(np.asarray(world.images[sd.image_ids]), cfg)
    s_image = feats @ feats.T
    sis_pairs = _top_k_pairs(s_captions, cfg.top_k)
    isim_pairs = _top_k_pairs(s_image, cfg.top_k)
    n_sis_candidates = len(s_captions) * n_img * min(cfg.top_k, n_img - 1)

    def random_caption(image_row: int) -> int:
        rows = sd.captions_of[image_row]
        return int(rows[int(choice_rng.integers(len(rows)))])

    isim_rows = [(random_caption(i), random_caption(j)) for i, j in isim_pairs]
    co_all = [(int(p), int(q)) for rows in sd.captions_of for p, q in itertools.combinations(rows, 2)]
    n_co = min(len(co_all), int(round(len(isim_rows) * cfg.cocaption_fraction / (1.0 - cfg.cocaption_fraction))))
    co_pick = np.sort(choice_rng.choice(len(co_all), size=n_co, replace=False)) if n_co else np.zeros(0, np.int64)
    co_rows = [co_all[int(k)] for k in co_pick]
    # 2. rate STS and SIS
    sts_rows = co_rows + isim_rows
    sts_methods = ["c2c_cocaption"] * len(co_rows) + ["c2c_isim"] * len(isim_rows)
    p = np.array([r[0] for r in sts_rows], dtype=np.int64)
    q = np.array([r[1] for r in sts_rows], dtype=np.int64)
    atoms = [claim_atoms(s) for s in sd.structures]
    inter = np.array([len(atoms[i] & atoms[j]) for i, j in zip(p, q)], dtype=np.int64)
    union = np.array([len(atoms[i] | atoms[j]) for i, j in zip(p, q)], dtype=np.int64)
    cross = (
        sd.fits[p, sd.caption_image_row[q]].astype(np.float64) + sd.fits[q, sd.caption_image_row[p]].astype(np.float64)
    ) / 2.0
    sts_sim = _sts_value(inter, union, cross, cfg.sts_overlap_weight)
    sts_ratings = simulate_ratings(sts_sim, cfg.rater_sd("sts"), cfg, _rng(cfg, split, TASK_CODES["sts"]))
    sts = _pairs_frame(
        "sts",
        split,
        sd.caption_ids[p],
        sd.caption_ids[q],
        sts_methods,
        sts_sim,
        sts_sim >= cfg.threshold("sts"),
        sts_ratings,
        cfg,
    )
    arrays = scene_arrays(sd.scenes, max_objects=max(1, max(len(s.objects) for s in sd.scenes)))
    si = np.array([i for i, _ in sis_pairs], dtype=np.int64)
    sj = np.array([j for _, j in sis_pairs], dtype=np.int64)
    sis_sim = _sis_pairs(arrays, si, sj, cfg)
    sis_ratings = simulate_ratings(sis_sim, cfg.rater_sd("sis"), cfg, _rng(cfg, split, TASK_CODES["sis"]))
    sis = _pairs_frame(
        "sis",
        split,
        sd.image_ids[si],
        sd.image_ids[sj],
        ["i2i_csim"] * len(si),
        sis_sim,
        sis_sim >= cfg.threshold("sis"),
        sis_ratings,
        cfg,
    )
    # 3. c2i_intrasim from the rated pairs, by decreasing rating; then every original pair
    n_intra = int(round(cfg.intrasim_per_image * n_img))
    n_from_sts = int(round(n_intra * cfg.intrasim_sts_fraction))
    isim_part = sts[sts["sampling_method"] == "c2c_isim"]
    order = np.argsort(-isim_part["agg_score"].to_numpy(), kind="stable")
    isim_idx = np.flatnonzero(sts["sampling_method"].to_numpy() == "c2c_isim")[order]
    sts_candidates = [(int(q[k]), int(sd.caption_image_row[p[k]])) for k in isim_idx]
    sis_caption = [random_caption(int(j)) for j in sj]
    sis_order = np.argsort(-sis["agg_score"].to_numpy(), kind="stable")
    sis_candidates = [(sis_caption[k], int(si[k])) for k in sis_order]
    chosen: list[tuple[int, int]] = []
    taken: set[tuple[int, int]] = set()
    for candidates, quota in ((sts_candidates, n_from_sts), (sis_candidates, n_intra)):
        for cand in candidates:
            if len(chosen) >= quota:
                break
            if cand in taken or sd.caption_image_row[cand[0]] == cand[1]:
                continue
            taken.add(cand)
            chosen.append(cand)
    original = [(c, int(sd.caption_image_row[c])) for c in range(len(sd.caption_ids))]
    sits_rows = chosen + original
    sits_methods = ["c2i_intrasim"] * len(chosen) + ["c2i_original"] * len(original)
    sits_sim = np.array([sits_similarity(sd.structures[c], sd.scenes[i], margin, cfg) for c, i in sits_rows])
    sits_truth = np.array([bool(sd.fits[c, i]) for c, i in sits_rows], dtype=bool)
    sits_ratings = simulate_ratings(sits_sim, cfg.rater_sd("sits"), cfg, _rng(cfg, split, TASK_CODES["sits"]))
    sits = _pairs_frame(
        "sits",
        split,
        sd.caption_ids[[c for c, _ in sits_rows]],
        sd.image_ids[[i for _, i in sits_rows]],
        sits_methods,
        sits_sim,
        sits_truth,
        sits_ratings,
        cfg,
    )
    candidates = {
        ("sts", "c2c_cocaption"): len(co_all),
        ("sts", "c2c_isim"): n_img * min(cfg.top_k, n_img - 1),
        ("sis", "i2i_csim"): n_sis_candidates,
        ("sits", "c2i_intrasim"): len(sts_candidates) + len(sis_candidates),
        ("sits", "c2i_original"): len(original),
    }
    return {"sts": sts, "sis": sis, "sits": sits, "candidates": candidates}


# ----------------------------------------------------------------------------- build


def _margin_from_inputs(inputs: dict[str, Any]) -> float:
    """The world's relation margin: from world_cfg= or relation_margin=, else the world default."""
    unknown = set(inputs) - {"world_cfg", "relation_margin"}
    if unknown:
        raise TypeError(f"cxc.build: unknown inputs {sorted(unknown)}; expected world_cfg and/or relation_margin")
    if inputs.get("world_cfg") is not None:
        return float(inputs["world_cfg"].relation_margin)
    if inputs.get("relation_margin") is not None:
        return float(inputs["relation_margin"])
    return make_config(WorldConfig).relation_margin


def build(world: World, cfg: CxcConfig, **inputs: Any) -> dict[str, pd.DataFrame]:
    """Build CxC in the world: sample, rate and threshold pairs per split; items are the scored split's gallery.

    Inputs: `world_cfg` (WorldConfig) or `relation_margin` (float): the margin the truth uses
    (default: the world default); a margin under which a caption does not fit its own image raises.
    """
    margin = _margin_from_inputs(inputs)
    per_task: dict[str, list[pd.DataFrame]] = {t: [] for t in TASKS}
    stage_rows = []
    positive_frames = []
    items = None
    for split in cfg.splits:
        sd = _split_data(world, split, margin)
        out = _build_split(sd, world, cfg, margin)
        for task in TASKS:
            frame = out[task]
            per_task[task].append(frame)
            a, b = ITEM_COLUMNS[task]
            for method in SAMPLING_METHODS[task]:
                sub = frame[frame["sampling_method"] == method]
                stage_rows.append(
                    {
                        "split": split,
                        "task": task,
                        "sampling_method": method,
                        "n_candidates": int(out["candidates"][task, method]),
                        "n_pairs": len(sub),
                        "n_positive": int(sub["positive"].sum()),
                        "mean_score": float(sub["agg_score"].mean()) if len(sub) else float("nan"),
                    }
                )
            pos = frame[frame["positive"]]
            positive_frames.append(
                pd.DataFrame({"split": split, "task": task, "a_id": pos[f"{a}_id"], "b_id": pos[f"{b}_id"]})
            )
        positive_frames.append(
            pd.DataFrame({"split": split, "task": "original", "a_id": sd.caption_ids, "b_id": sd.caption_image})
        )
        if split == cfg.score_split:
            items = pd.concat(
                [
                    pd.DataFrame({"kind": "image", "item_id": sd.image_ids}),
                    pd.DataFrame({"kind": "caption", "item_id": sd.caption_ids}),
                ],
                ignore_index=True,
            ).astype({"kind": "string", "item_id": "int64"})
    assert items is not None  # score_split is among splits (checked by the config)
    tables: dict[str, pd.DataFrame] = {t: pd.concat(per_task[t], ignore_index=True) for t in TASKS}
    tables["positives"] = pd.concat(positive_frames, ignore_index=True).astype(POSITIVE_COLUMNS)
    tables["stages"] = pd.DataFrame(stage_rows).astype(
        {"split": "string", "task": "string", "sampling_method": "string", "n_candidates": "int64"}
    )
    settings = {**asdict(cfg), "splits": list(cfg.splits), "relation_margin": margin}
    tables["config"] = pd.DataFrame(
        {"key": list(settings), "value": [json.dumps(v) for v in settings.values()]}
    ).astype("string")
    tables["items"] = items
    return tables
