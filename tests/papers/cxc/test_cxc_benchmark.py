"""CxC in the world: determinism, construction against truth, audit against a naive recount, dual scoring."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import torch
from unit_world import unit_world

from itmbench.papers.cxc import audit as cxc_audit
from itmbench.papers.cxc import build as cxc_build
from itmbench.papers.cxc import canonical as cxc_canonical
from itmbench.papers.cxc import score as cxc_score
from itmbench.papers.cxc.config import CAPTION_SCORER_NAMES, CxcConfig
from itmbench.papers.cxc.released import ITEM_COLUMNS, SAMPLING_METHODS, TASKS, pairs_schema
from itmbench.params import make_config, section_schema
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.scoring.retrieval import first_positive_ranks
from itmbench.world.captions import CaptionStructure, Mention
from itmbench.world.generate import generate_world
from itmbench.world.scene import COLOURS, SHAPES, Scene, WorldObject
from itmbench.world.truth import caption_fits

SMALL = unit_world(n_train=2, n_val=30, n_test=50)
MARGIN = SMALL.relation_margin


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


@pytest.fixture(scope="module")
def cfg():
    return make_config(CxcConfig)


@pytest.fixture(scope="module")
def tables(world, cfg):
    return cxc_build.build(world, cfg, world_cfg=SMALL)


@pytest.fixture(scope="module")
def lookup(world):
    """Scenes by image id, structures and image ids by caption id, caption rows per image."""
    scenes = dict(zip(world.scene_table["image_id"].to_numpy(), world.scenes()))
    structures = dict(zip(world.caption_table["caption_id"].to_numpy(), world.structures()))
    image_of = dict(zip(world.caption_table["caption_id"].to_numpy(), world.caption_table["image_id"].to_numpy()))
    return scenes, structures, image_of


def split_ids(world, split):
    images = np.sort(world.image_table.loc[world.image_table["split"] == split, "image_id"].to_numpy())
    captions = np.sort(world.caption_table.loc[world.caption_table["split"] == split, "caption_id"].to_numpy())
    return images, captions


# ----------------------------------------------------------------------------- config and files


def test_config_rejects_unknown_keys_and_bad_values():
    assert make_config(CxcConfig, {"splits": ["test"], "score_split": "test"}).splits == ("test",)
    with pytest.raises(ValueError, match="unknown keys.*'top_kk'"):
        make_config(CxcConfig, {"top_kk": 3})
    with pytest.raises(ValueError, match="score_split"):
        make_config(CxcConfig, splits=("val",), score_split="test")
    with pytest.raises(ValueError, match="sits_query"):
        make_config(CxcConfig, sits_query="both")


def test_schema_section_types():
    """Every cxc parameter is a plain value (tests/test_params_schema.py checks fields and defaults)."""
    for name, prop in section_schema("cxc")["properties"].items():
        assert prop["type"] in {"integer", "number", "string", "array"}, name


def test_build_is_deterministic_and_seeded(world, cfg, tables):
    again = cxc_build.build(world, cfg, world_cfg=SMALL)
    assert set(again) == set(tables)
    for name in tables:
        pd.testing.assert_frame_equal(tables[name], again[name])
    other = cxc_build.build(world, replace(cfg, seed=1), world_cfg=SMALL)
    assert not np.array_equal(other["sts"]["rating_0"].to_numpy(), tables["sts"]["rating_0"].to_numpy())
    # candidate sampling by the scorers does not depend on the seed
    sis_pairs = tables["sis"][["image1_id", "image2_id"]]
    pd.testing.assert_frame_equal(sis_pairs, other["sis"][["image1_id", "image2_id"]])


def test_write_read_round_trip_items_last(tables, tmp_path):
    cxc_canonical.write(tables, tmp_path)
    back = cxc_canonical.read(tmp_path)
    for name in tables:
        pd.testing.assert_frame_equal(back[name], tables[name], check_dtype=False)
    items_time = (tmp_path / "items.parquet").stat().st_mtime_ns
    assert all(p.stat().st_mtime_ns <= items_time for p in tmp_path.glob("*.parquet"))
    tables["sis"].drop(columns=["agg_score"]).to_parquet(tmp_path / "sis.parquet")
    with pytest.raises(ValueError, match=r"sis\.parquet: missing columns \['agg_score'\]"):
        cxc_canonical.read(tmp_path)
    tables["sis"].to_parquet(tmp_path / "sis.parquet")
    (tmp_path / "positives.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="positives.parquet"):
        cxc_canonical.read(tmp_path)


def test_bad_inputs_raise_with_a_clear_message(world, cfg):
    with pytest.raises(TypeError, match="unknown inputs"):
        cxc_build.build(world, cfg, images="x")
    with pytest.raises(ValueError, match="do not fit their own image under relation_margin=0.3"):
        cxc_build.build(world, cfg, relation_margin=0.3)


# ----------------------------------------------------------------------------- canonical tables


@pytest.mark.parametrize("task", TASKS)
def test_canonical_columns_and_consistency(tables, cfg, task):
    frame = tables[task]
    schema = pairs_schema(task)
    assert list(frame.columns[: len(schema)]) == list(schema)
    for name, dtype in schema.items():
        assert str(frame[name].dtype) == str(pd.Series([], dtype=dtype).dtype), name
    a, b = ITEM_COLUMNS[task]
    for col in (a, b):
        kind = "caption" if col.startswith("caption") else "image"
        assert (frame[col] == "world:" + kind + ":" + frame[f"{col}_id"].astype(str)).all()
    assert set(frame["sampling_method"]) == set(SAMPLING_METHODS[task])
    ratings = frame[[f"rating_{r}" for r in range(cfg.n_raters)]].to_numpy()
    assert ratings.min() >= 0 and ratings.max() <= 5
    assert np.allclose(frame["agg_score"], ratings.mean(axis=1))
    assert (frame["positive"] == (frame["agg_score"] >= cfg.threshold(task))).all()
    assert (frame["n_rows"] == 1).all()
    for _, part in frame.groupby("split"):
        assert list(part["line"]) == list(range(2, len(part) + 2))
        keys = cxc_audit._pair_keys(part, task)
        assert len(set(keys)) == len(keys), "a pair is rated twice"


def test_items_are_the_scored_split_gallery(world, tables):
    images, captions = split_ids(world, "test")
    items = tables["items"]
    assert list(items["kind"]) == ["image"] * len(images) + ["caption"] * len(captions)
    assert np.array_equal(items["item_id"].to_numpy(), np.concatenate([images, captions]))
    assert items["item_id"].dtype == np.int64


# ----------------------------------------------------------------------------- construction against truth


@pytest.mark.parametrize("split", ["val", "test"])
def test_other_modality_sampling_uses_the_other_modality(world, cfg, tables, split):
    images, captions = split_ids(world, split)
    text_of = dict(zip(world.caption_table["caption_id"], world.caption_table["text"]))
    image_of = dict(zip(world.caption_table["caption_id"], world.caption_table["image_id"]))
    s_captions = []
    for scorer in cfg.caption_scorers:
        vectors = cxc_build.caption_tfidf([text_of[c] for c in captions], scorer)
        groups = np.stack([vectors[[image_of[c] == i for c in captions]].mean(0) for i in images])
        groups /= np.linalg.norm(groups, axis=1, keepdims=True)
        s_captions.append(groups @ groups.T)
    feats = cxc_build.image_features(world.images[images], cfg)
    s_image = feats @ feats.T
    row = {int(i): r for r, i in enumerate(images)}

    def within_top_k(sim, i, j):
        others = np.delete(sim[i], i)
        return sim[i, j] >= np.sort(others)[::-1][cfg.top_k - 1]

    sis = tables["sis"][tables["sis"]["split"] == split]
    assert len(sis) > 0
    by_scorer = {name: 0 for name in cfg.caption_scorers}
    for a, b in zip(sis["image1_id"], sis["image2_id"]):
        found = [n for n, sim in zip(cfg.caption_scorers, s_captions) if within_top_k(sim, row[a], row[b])]
        assert a != b and found
        for name in found:
            by_scorer[name] += 1
    # each S^C gives each image its top_k: neither matrix alone explains the union (the paper's USE and BoW)
    assert all(n < len(sis) for n in by_scorer.values()), by_scorer
    sts = tables["sts"][tables["sts"]["split"] == split]
    isim = sts[sts["sampling_method"] == "c2c_isim"]
    for c1, c2 in zip(isim["caption1_id"], isim["caption2_id"]):
        i, j = row[image_of[c1]], row[image_of[c2]]
        assert i != j and within_top_k(s_image, i, j)
    co = sts[sts["sampling_method"] == "c2c_cocaption"]
    assert all(image_of[c1] == image_of[c2] and c1 != c2 for c1, c2 in zip(co["caption1_id"], co["caption2_id"]))
    assert len(co) == len(isim)  # cocaption_fraction = 0.5: half the STS pairs
    sits = tables["sits"][tables["sits"]["split"] == split]
    original = sits[sits["sampling_method"] == "c2i_original"]
    assert sorted(original["caption_id"]) == list(captions)
    assert all(image_of[c] == i for c, i in zip(original["caption_id"], original["image_id"]))
    intra = sits[sits["sampling_method"] == "c2i_intrasim"]
    assert len(intra) == round(cfg.intrasim_per_image * len(images))
    assert all(image_of[c] != i for c, i in zip(intra["caption_id"], intra["image_id"]))
    # every c2i_intrasim pair comes from a rated STS (c2, image of c1) or SIS (caption of i2, i1) pair
    from_sts = {(c2, image_of[c1]) for c1, c2 in zip(isim["caption1_id"], isim["caption2_id"])}
    from_sis = set(zip(sis["image2_id"], sis["image1_id"]))
    for c, i in zip(intra["caption_id"], intra["image_id"]):
        assert (c, i) in from_sts or (image_of[c], i) in from_sis


def test_top_k_union_of_two_matrices_against_a_hand_count():
    """SIS candidates from two S^C: each row's top 2 by each matrix, united, unordered duplicates dropped."""
    bow = np.array(
        [
            [1.0, 0.9, 0.8, 0.1],
            [0.9, 1.0, 0.2, 0.7],
            [0.8, 0.2, 1.0, 0.3],
            [0.1, 0.7, 0.3, 1.0],
        ]
    )
    ngram = np.array(
        [
            [1.0, 0.2, 0.5, 0.6],
            [0.2, 1.0, 0.4, 0.3],
            [0.5, 0.4, 1.0, 0.9],
            [0.6, 0.3, 0.9, 1.0],
        ]
    )
    # row 0: bow 1, 2; ngram 3, 2 -> (0,1) (0,2) (0,3). row 1: bow 0, 3; ngram 2, 3 -> (1,3) (1,2).
    # row 2: bow 0, 3; ngram 3, 0 -> (2,3). row 3: bow 1, 2; ngram 2, 0 -> nothing new.
    expected = [(0, 1), (0, 2), (0, 3), (1, 3), (1, 2), (2, 3)]
    assert cxc_build._top_k_pairs([bow, ngram], 2) == expected
    # one matrix: the single-S^C selection (caption_scorers: [bow])
    assert cxc_build._top_k_pairs(bow, 2) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert cxc_build._top_k_pairs([bow], 2) == cxc_build._top_k_pairs(bow, 2)


def test_caption_scorers_bigrams_see_word_order():
    texts = ["a red circle left of a blue square", "a blue circle left of a red square"]
    bow = cxc_build.caption_tfidf(texts, "bow")
    ngram = cxc_build.caption_tfidf(texts, "ngram")
    assert float(bow[0] @ bow[1]) == pytest.approx(1.0)
    assert float(ngram[0] @ ngram[1]) < 0.9
    assert set(cxc_build.CAPTION_SCORERS) == set(CAPTION_SCORER_NAMES)
    with pytest.raises(ValueError, match="caption_scorers"):
        make_config(CxcConfig, caption_scorers=("bow", "use"))
    with pytest.raises(ValueError, match="caption_scorers"):
        make_config(CxcConfig, caption_scorers=())


def test_single_matrix_switch_keeps_the_old_selection(world, cfg, tables):
    """caption_scorers [bow] rates a subset of the default's SIS pairs: the one-matrix build before issue 31."""
    one = cxc_build.build(world, replace(cfg, caption_scorers=("bow",)), world_cfg=SMALL)
    pairs = {frozenset(p) for p in zip(one["sis"]["split"], one["sis"]["image1_id"], one["sis"]["image2_id"])}
    both = {frozenset(p) for p in zip(tables["sis"]["split"], tables["sis"]["image1_id"], tables["sis"]["image2_id"])}
    assert pairs < both
    stages = one["stages"].set_index(["split", "task", "sampling_method"])["n_candidates"]
    stages2 = tables["stages"].set_index(["split", "task", "sampling_method"])["n_candidates"]
    assert stages2["test", "sis", "i2i_csim"] == 2 * stages["test", "sis", "i2i_csim"]


def test_similarities_match_the_naive_truth(tables, cfg, lookup):
    scenes, structures, image_of = lookup
    sts = tables["sts"]
    for c1, c2, sim in zip(sts["caption1_id"], sts["caption2_id"], sts["similarity"]):
        s1, s2 = scenes[image_of[c1]], scenes[image_of[c2]]
        assert sim == cxc_build.sts_similarity(structures[c1], structures[c2], s1, s2, MARGIN, cfg)
    cocaption = sts["sampling_method"] == "c2c_cocaption"
    assert (sts.loc[cocaption, "similarity"] >= 5 * (1 - cfg.sts_overlap_weight)).all()
    sis = tables["sis"]
    for i1, i2, sim in zip(sis["image1_id"], sis["image2_id"], sis["similarity"]):
        assert (
            sim
            == cxc_build.sis_similarity(scenes[i1], scenes[i2], cfg)
            == cxc_build.sis_similarity(scenes[i2], scenes[i1], cfg)
        )
    sits = tables["sits"]
    for c, i, sim, truth in zip(sits["caption_id"], sits["image_id"], sits["similarity"], sits["truth"]):
        assert truth == caption_fits(structures[c], scenes[i], MARGIN)
        assert sim == cxc_build.sits_similarity(structures[c], scenes[i], MARGIN, cfg)
        assert (sim >= cfg.sits_fit_base) if truth else (sim < cfg.sits_partial_max)
    for task in ("sts", "sis"):
        frame = tables[task]
        assert (frame["truth"] == (frame["similarity"] >= cfg.threshold(task))).all()


def test_similarity_definitions_on_hand_made_cases(cfg):
    red_circle = WorldObject("circle", "red", "large", 0.2, 0.5)
    blue_square = WorldObject("square", "blue", "small", 0.8, 0.5)
    scene = Scene(0, (red_circle, blue_square), 220)
    assert cxc_build.sis_similarity(scene, scene, cfg) == 5.0
    far = Scene(1, (WorldObject("triangle", "green", "small", 0.9, 0.9),), 220)
    # best object: same size as the blue square (0.5 of 3 weight units), nothing else shared, /2 objects
    close = max(0.0, 1 - math.hypot(0.1, 0.4) / cfg.sis_position_scale)
    assert cxc_build.sis_similarity(scene, far, cfg) == pytest.approx(5 * (0.5 + 0.5 * close) / 3 / 2, abs=1e-6)
    left = CaptionStructure((Mention("circle", "red"), Mention("square", "blue")), "left_of", "relation")
    right = CaptionStructure((Mention("square", "blue"), Mention("circle", "red")), "right_of", "relation")
    assert cxc_build.claim_atoms(left) == cxc_build.claim_atoms(right)
    assert cxc_build.sts_similarity(left, right, scene, scene, MARGIN, cfg) == 5.0
    wrong = CaptionStructure((Mention("circle", "red"), Mention("square", "blue")), "right_of", "relation")
    assert cxc_build.sits_similarity(left, scene, MARGIN, cfg) == 5.0  # fits, covers both objects
    assert cxc_build.sits_similarity(wrong, scene, MARGIN, cfg) == pytest.approx(cfg.sits_partial_max * 2 / 3, abs=1e-6)
    half = CaptionStructure((Mention("circle", "blue"),), None, "single")
    assert cxc_build.sits_similarity(half, scene, MARGIN, cfg) == pytest.approx(cfg.sits_partial_max / 2)


def test_noise_free_raters_make_positives_the_truth(world, cfg):
    exact = cxc_build.build(world, replace(cfg, rater_sd_sts=0, rater_sd_sis=0, rater_sd_sits=0), world_cfg=SMALL)
    for task in TASKS:
        frame = exact[task]
        assert np.allclose(frame["agg_score"], frame["similarity"].round(cfg.rating_decimals))
    sits = exact["sits"]
    assert (sits["positive"] == sits["truth"]).all()


def test_positive_tables(world, tables):
    pos = tables["positives"]
    for task in TASKS:
        a, b = ITEM_COLUMNS[task]
        frame = tables[task][tables[task]["positive"]]
        got = pos[pos["task"] == task]
        assert sorted(zip(got["a_id"], got["b_id"])) == sorted(zip(frame[f"{a}_id"], frame[f"{b}_id"]))
    original = pos[pos["task"] == "original"]
    caps = world.caption_table[world.caption_table["split"].isin(["val", "test"])]
    assert sorted(zip(original["a_id"], original["b_id"])) == sorted(zip(caps["caption_id"], caps["image_id"]))
    eccv = cxc_canonical.cxc_positives(tables)
    assert list(eccv.columns) == ["image_id", "caption_id"]
    sits = tables["sits"]
    expected = sits[(sits["split"] == "test") & sits["positive"]]
    assert sorted(zip(eccv["image_id"], eccv["caption_id"])) == sorted(
        zip(expected["image_id"], expected["caption_id"])
    )
    assert len(eccv) > 0


# ----------------------------------------------------------------------------- audit


@pytest.fixture(scope="module")
def audit_table(world, tables, cfg):
    return cxc_audit.audit(world, tables, cfg, world_cfg=SMALL)


def audit_value(table, row, column):
    hit = table[(table["row"] == row) & (table["column"] == column)]
    assert len(hit) == 1, (row, column)
    return hit.iloc[0]


def naive_true_positives(world, split, task, cfg, lookup):
    scenes, structures, image_of = lookup
    images, captions = split_ids(world, split)
    out = set()
    if task == "sits":
        for c in captions:
            out |= {(int(c), int(i)) for i in images if caption_fits(structures[c], scenes[i], MARGIN)}
    elif task == "sts":
        for c1, c2 in itertools.combinations(captions, 2):
            sim = cxc_build.sts_similarity(
                structures[c1], structures[c2], scenes[image_of[c1]], scenes[image_of[c2]], MARGIN, cfg
            )
            if sim >= cfg.threshold_sts:
                out.add((int(c1), int(c2)))
    else:
        for i1, i2 in itertools.combinations(images, 2):
            if cxc_build.sis_similarity(scenes[i1], scenes[i2], cfg) >= cfg.threshold_sis:
                out.add((int(i1), int(i2)))
    return out


@pytest.mark.parametrize("task", TASKS)
def test_audit_never_rated_share_matches_a_naive_recount(world, tables, cfg, lookup, audit_table, task):
    split = "val"
    truth = naive_true_positives(world, split, task, cfg, lookup)
    frame = tables[task][tables[task]["split"] == split]
    a, b = ITEM_COLUMNS[task]
    rated = set()
    for x, y in zip(frame[f"{a}_id"], frame[f"{b}_id"]):
        rated.add((int(x), int(y)) if task == "sits" else (int(min(x, y)), int(max(x, y))))
    never = len(truth - rated)
    label = f"{split} {cxc_audit.TASK_LABELS[task]}"
    assert len(truth) > 0
    assert audit_value(audit_table, label, "true positives")["value"] == len(truth)
    assert audit_value(audit_table, label, "rated true positives")["value"] == len(truth & rated)
    cell = audit_value(audit_table, label, "true positives never rated (%)")
    assert cell["value"] == pytest.approx(100 * never / len(truth))
    assert cell["lo"] <= cell["value"] <= cell["hi"]
    if task == "sits":  # originals are rated, so some true positives are always rated
        assert never < len(truth)


def test_audit_histograms_and_quoted_means(tables, audit_table):
    for task in TASKS:
        frame = tables[task][tables[task]["split"] == "test"]
        scores = frame["agg_score"].to_numpy()
        counts = [
            audit_value(
                audit_table, f"test {cxc_audit.TASK_LABELS[task]} rating [{lo:.1f}, {lo + 0.5:.1f}{close}", "All"
            )["value"]
            for lo, close in zip(np.arange(0, 5, 0.5), [")"] * 9 + ["]"])
        ]
        naive = [sum(lo <= s < lo + 0.5 or (lo == 4.5 and s == 5.0) for s in scores) for lo in np.arange(0, 5, 0.5)]
        assert counts == naive
    sts = tables["sts"]
    co = sts[(sts["split"] == "test") & (sts["sampling_method"] == "c2c_cocaption")]["agg_score"]
    cell = audit_value(audit_table, "test co-captions (STS)", "mean rating")
    assert cell["value"] == pytest.approx(co.mean())
    assert cell["lo"] < cell["value"] < cell["hi"]
    assert audit_value(audit_table, "test original pairs (SITS)", "paper")["value"] == 4.85
    assert list(audit_table.columns) == ["row", "column", "value", "lo", "hi"]


# ----------------------------------------------------------------------------- scoring


def cache_file(tmp_path, name, image_ids, image_emb, caption_ids, caption_emb):
    path = tmp_path / f"{name}.npz"
    write_embeddings(
        path,
        {
            "image_ids": np.asarray(image_ids, dtype=np.int64),
            "image_emb": np.asarray(image_emb, dtype=np.float32),
            "caption_ids": np.asarray(caption_ids, dtype=np.int64),
            "caption_emb": np.asarray(caption_emb, dtype=np.float32),
        },
    )
    return EmbeddingCache(path)


def unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def gallery(tables):
    items = tables["items"]
    return (
        items.loc[items["kind"] == "image", "item_id"].to_numpy(),
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(),
    )


def test_ranks_exclude_the_query_from_its_own_gallery():
    emb = torch.tensor([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0], [0.96, 0.28]])
    positives = [np.array([1]), np.array([0])]
    # each query scores itself 1 and item 3 above its positive: excluding itself leaves only item 3 above
    ranks = cxc_score.first_positive_ranks_excluding(emb[[0, 1]], emb, positives, np.array([0, 1]))
    assert list(ranks) == [2, 2]
    assert list(first_positive_ranks(emb[[0, 1]], emb, positives)) == [3, 3]
    with pytest.raises(ValueError, match="list themselves"):
        cxc_score.first_positive_ranks_excluding(emb[[0]], emb, [np.array([0])], np.array([0]))


def chance_at_k(n_gallery: int, n_positives: np.ndarray, k: int = 10) -> float:
    """Expected R@k (%) when each query's positives fall uniformly at random in the gallery."""
    return 100 * float(np.mean([1 - math.comb(n_gallery - n, k) / math.comb(n_gallery, k) for n in n_positives]))


def test_random_cache_scores_near_chance(tables, tmp_path):
    images, captions = gallery(tables)
    rng = np.random.default_rng(0)
    cache = cache_file(
        tmp_path,
        "random",
        images,
        unit(rng.normal(size=(len(images), 64))),
        captions,
        unit(rng.normal(size=(len(captions), 64))),
    )
    scores = cxc_score.score_dual(tables, cache)
    assert list(scores.columns) == cxc_score.SCORE_COLUMNS
    summary = cxc_score.summarize(scores, n_boot=200)
    json.dumps(summary)
    metrics = summary["metrics"]
    retrieval = scores[scores["part"] == "retrieval"]
    for (task, pset), group in retrieval.groupby(["task", "positive_set"]):
        n_gallery = len(images) if task in ("t2i", "i2i") else len(captions)
        n_gallery -= task in ("t2t", "i2i")
        p = chance_at_k(n_gallery, group["n_positives"].to_numpy()) / 100
        tolerance = 100 * (4 * math.sqrt(p * (1 - p) / len(group)) + 0.01)
        assert abs(metrics[f"{task}/{pset}/R@10"]["value"] - 100 * p) < tolerance, (task, pset)
    for task in TASKS:
        assert abs(metrics[f"{task}/spearman"]["value"]) < 15, task


def test_own_image_oracle_ranks_every_true_pair_first(tables, tmp_path, lookup):
    """Captions embedded at their image's vector: i2t, t2i and t2t-coco (query excluded) all reach R@1 = 100."""
    _, _, image_of = lookup
    images, captions = gallery(tables)
    rng = np.random.default_rng(1)
    basis = unit(rng.normal(size=(len(images), 256)))
    row = {int(i): r for r, i in enumerate(images)}
    caption_emb = unit(
        np.stack([basis[row[image_of[c]]] for c in captions]) + 0.01 * rng.normal(size=(len(captions), 256))
    )
    scores = cxc_score.score_dual(tables, cache_file(tmp_path, "own", images, basis, captions, caption_emb))
    metrics = cxc_score.summarize(scores, n_boot=100)["metrics"]
    for key in ("i2t/coco", "i2t/cxc", "t2i/coco", "t2t/coco"):
        assert metrics[f"{key}/R@1"]["value"] == 100.0, key
        assert metrics[f"{key}/MedR"]["value"] == 1.0
    # t2i under CxC positives also counts other images that a caption fits, so R@1 stays 100
    assert metrics["t2i/cxc/R@1"]["value"] == 100.0
    assert metrics["sits/spearman"]["value"] > 50  # originals score ~1, other rated pairs ~0


def test_semantic_oracle_scores_well_above_chance(tables, tmp_path, lookup):
    """Images and captions embedded by the shapes and colours they show or claim: every task beats chance."""
    scenes, structures, _ = lookup
    images, captions = gallery(tables)

    def vector(pairs):
        v = np.zeros(len(SHAPES) * len(COLOURS) + len(SHAPES) + len(COLOURS))
        for shape, colour, count in pairs:
            if shape and colour:
                v[SHAPES.index(shape) * len(COLOURS) + COLOURS.index(colour)] += 2 * count
            if shape:
                v[len(SHAPES) * len(COLOURS) + SHAPES.index(shape)] += count
            if colour:
                v[len(SHAPES) * len(COLOURS) + len(SHAPES) + COLOURS.index(colour)] += count
        return v

    image_emb = unit(np.stack([vector([(o.shape, o.colour, 1) for o in scenes[i].objects]) for i in images]))
    caption_emb = unit(
        np.stack([vector([(m.shape, m.colour, m.count) for m in structures[c].mentions]) for c in captions])
    )
    scores = cxc_score.score_dual(tables, cache_file(tmp_path, "semantic", images, image_emb, captions, caption_emb))
    metrics = cxc_score.summarize(scores, n_boot=200)["metrics"]
    for task in TASKS:
        assert metrics[f"{task}/spearman"]["value"] > 30, task
        assert metrics[f"{task}/spearman"]["std"] > 0
    retrieval = scores[scores["part"] == "retrieval"]
    for task, n_gallery in (("i2t", len(captions)), ("t2i", len(images)), ("i2i", len(images) - 1)):
        n_positives = retrieval.loc[(retrieval["task"] == task) & (retrieval["positive_set"] == "cxc"), "n_positives"]
        chance = chance_at_k(n_gallery, n_positives.to_numpy())
        assert metrics[f"{task}/cxc/R@10"]["value"] > min(2 * chance, chance + 20), task


def test_score_dual_ranks_match_a_naive_recount(tables, tmp_path):
    """Coarse integer embeddings (exact dot products, many ties): every rank equals a pessimistic full sort."""
    images, captions = gallery(tables)
    rng = np.random.default_rng(2)
    img = rng.integers(-2, 3, size=(len(images), 4)).astype(np.float32)
    cap = rng.integers(-2, 3, size=(len(captions), 4)).astype(np.float32)
    scores = cxc_score.score_dual(tables, cache_file(tmp_path, "coarse", images, img, captions, cap))
    pos = tables["positives"][tables["positives"]["split"] == "test"]
    original = set(zip(pos.loc[pos["task"] == "original", "a_id"], pos.loc[pos["task"] == "original", "b_id"]))
    cxc_pairs = original | set(zip(pos.loc[pos["task"] == "sits", "a_id"], pos.loc[pos["task"] == "sits", "b_id"]))
    sts = {frozenset(p) for p in zip(pos.loc[pos["task"] == "sts", "a_id"], pos.loc[pos["task"] == "sts", "b_id"])}
    emb = {"image": dict(zip(images, img)), "caption": dict(zip(captions, cap))}

    def naive_rank(q_emb, g_ids, g_emb, positive, exclude=None):
        sims = {g: float(q_emb @ e) for g, e in zip(g_ids, g_emb) if g != exclude}
        best = max(sims[g] for g in positive)
        return 1 + sum(s >= best for g, s in sims.items() if g not in positive)

    checked = 0
    for _, r in scores[scores["part"] == "retrieval"].iterrows():
        q = r["query_id"]
        if r["task"] == "i2t":
            pairs = cxc_pairs if r["positive_set"] == "cxc" else original
            expected = naive_rank(emb["image"][q], captions, cap, {c for c, i in pairs if i == q})
        elif r["task"] == "t2i":
            pairs = cxc_pairs if r["positive_set"] == "cxc" else original
            expected = naive_rank(emb["caption"][q], images, img, {i for c, i in pairs if c == q})
        elif r["task"] == "t2t" and r["positive_set"] == "cxc":
            positive = {next(iter(p - {q})) for p in sts if q in p}
            expected = naive_rank(emb["caption"][q], captions, cap, positive, exclude=q)
        else:
            continue
        assert r["rank"] == expected, (r["task"], r["positive_set"], q)
        assert r["n_positives"] > 0
        checked += 1
    assert checked > len(images) + len(captions)
    corr = scores[scores["part"] == "correlation"]
    sits = corr[corr["task"] == "sits"]
    assert np.allclose(
        sits["model_score"],
        [float(emb["image"][q] @ emb["caption"][c]) for q, c in zip(sits["query_id"], sits["item_id"])],
    )
    assert len(sits) == (tables["sits"]["split"] == "test").sum()


def test_summarize_is_deterministic_and_shaped(tables, tmp_path):
    images, captions = gallery(tables)
    rng = np.random.default_rng(3)
    cache = cache_file(
        tmp_path,
        "r",
        images,
        unit(rng.normal(size=(len(images), 8))),
        captions,
        unit(rng.normal(size=(len(captions), 8))),
    )
    scores = cxc_score.score_dual(tables, cache)
    first, second = cxc_score.summarize(scores, n_boot=100, seed=5), cxc_score.summarize(scores, n_boot=100, seed=5)
    assert first == second
    metrics = first["metrics"]
    expected = {
        f"{t}/{p}/{m}"
        for t, p in [
            ("i2t", "coco"),
            ("i2t", "cxc"),
            ("t2i", "coco"),
            ("t2i", "cxc"),
            ("t2t", "coco"),
            ("t2t", "cxc"),
            ("i2i", "cxc"),
        ]
        for m in ("R@1", "R@5", "R@10", "MedR")
    }
    assert expected | {f"{t}/spearman" for t in TASKS} == set(metrics)
    for name, cell in metrics.items():
        assert {"value", "lo", "hi", "n"} <= set(cell), name
        assert cell["lo"] - 1e-9 <= cell["value"] <= cell["hi"] + 1e-9 or name.endswith("spearman"), name
