"""BISON in the world: determinism, the three stages against the truth, audit, scoring and files."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.bison import audit as bison_audit
from itmbench.papers.bison import build as bison_build
from itmbench.papers.bison import canonical as bison_canonical
from itmbench.papers.bison import score as bison_score
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.bison.released import ANNOTATION_SCHEMA
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.world.generate import generate_world
from itmbench.world.truth import caption_fits

WCFG = unit_world(n_train=300, n_val=10, n_test=150)
CFG = make_config(BisonConfig, vector_size=32, epochs=5)
EXACT = replace(CFG, annotator_error=0.0, verifier_error=0.0)


@pytest.fixture(scope="module")
def world():
    return generate_world(WCFG)


@pytest.fixture(scope="module")
def tables(world):
    return bison_build.build(world, CFG, world_cfg=WCFG)


@pytest.fixture(scope="module")
def exact_tables(world):
    return bison_build.build(world, EXACT, world_cfg=WCFG)


_LOOKUPS: dict[int, tuple[dict, dict]] = {}


def _lookups(world) -> tuple[dict, dict]:
    """Scene by image id and caption structure by caption id, built once per world."""
    if id(world) not in _LOOKUPS:
        _LOOKUPS[id(world)] = (
            dict(zip(world.scene_table["image_id"], world.scenes())),
            dict(zip(world.caption_table["caption_id"], world.structures())),
        )
    return _LOOKUPS[id(world)]


def _fits(world, caption_id: int, image_id: int) -> bool:
    """Naive truth of one (caption, image) pair."""
    scenes, structures = _lookups(world)
    return caption_fits(structures[caption_id], scenes[image_id], WCFG.relation_margin)


# ----------------------------------------------------------------------------------------------
# Determinism and files


def test_same_params_give_identical_tables_and_bytes(world, tables, tmp_path):
    again = bison_build.build(world, CFG, world_cfg=WCFG)
    assert set(again) == set(tables)
    for name in tables:
        pd.testing.assert_frame_equal(tables[name], again[name])
    bison_canonical.write(tables, tmp_path / "a")
    bison_canonical.write(again, tmp_path / "b")
    for name in tables:
        assert (tmp_path / "a" / f"{name}.parquet").read_bytes() == (tmp_path / "b" / f"{name}.parquet").read_bytes()


def test_other_seed_changes_the_simulated_annotators(world, tables):
    other = bison_build.build(world, replace(CFG, seed=1), world_cfg=WCFG)
    assert not other["pairs"]["verifier_answers"].equals(tables["pairs"]["verifier_answers"])


def test_write_then_read_round_trips_and_items_come_last(tables, tmp_path):
    bison_canonical.write(tables, tmp_path)
    back = bison_canonical.read(tmp_path)
    for name in bison_canonical.REQUIRED_COLUMNS:
        pd.testing.assert_frame_equal(back[name].reset_index(drop=True), tables[name], check_dtype=False)
    mtimes = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("*.parquet")}
    assert mtimes["items.parquet"] == max(mtimes.values())


def test_read_names_the_file_with_a_missing_column(tables, tmp_path):
    bison_canonical.write(tables, tmp_path)
    tables["annotations"].drop(columns=["true_index"]).to_parquet(tmp_path / "annotations.parquet")
    with pytest.raises(ValueError, match=r"annotations\.parquet.*true_index"):
        bison_canonical.read(tmp_path)
    bison_canonical.write(tables, tmp_path)
    (tmp_path / "stages.parquet").unlink()  # a construction table: optional (the coco source has none)
    assert set(bison_canonical.read(tmp_path)) == {"annotations", "pairs", "items"}
    (tmp_path / "annotations.parquet").unlink()
    with pytest.raises(FileNotFoundError, match=r"annotations\.parquet"):
        bison_canonical.read(tmp_path)


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match="verifer_error"):
        make_config(BisonConfig, {"verifer_error": 0.1})
    with pytest.raises(ValueError, match="annotator_error"):
        make_config(BisonConfig, {"annotator_error": 1.5})
    assert make_config(BisonConfig, {"split": "val"}).split == "val"


def test_a_wrong_relation_margin_is_caught(world):
    with pytest.raises(ValueError, match="relation_margin"):
        bison_build.build(world, CFG, world_cfg=replace(WCFG, relation_margin=0.3))


# ----------------------------------------------------------------------------------------------
# Construction against the world's truth


def test_canonical_columns_and_candidates(tables):
    ann = tables["annotations"]
    assert list(ann.columns[: len(ANNOTATION_SCHEMA)]) == list(ANNOTATION_SCHEMA)
    assert ann["bison_id"].is_unique
    ids = ann[["image_id_0", "image_id_1"]].to_numpy()
    true = ann["true_image_id"].to_numpy()
    assert (ids[np.arange(len(ann)), ann["true_index"].to_numpy()] == true).all()
    assert (ids[np.arange(len(ann)), 1 - ann["true_index"].to_numpy()] == ann["false_image_id"].to_numpy()).all()
    assert (ann["image_filename_0"] == [f"world_{i}.png" for i in ann["image_id_0"]]).all()
    # each query is one of the positive image's own captions (caption_id = image_id * 5 + k)
    assert ((ann["caption_id"] // 5) == ann["true_image_id"]).all()
    # the candidate order is shuffled: neither position holds the true image every time
    share = ann["true_index"].mean()
    assert 0.35 < share < 0.65


def test_items_are_exactly_the_images_and_queries(tables):
    ann, items = tables["annotations"], tables["items"]
    images = set(ann["image_id_0"]) | set(ann["image_id_1"])
    assert set(items.loc[items["kind"] == "image", "item_id"]) == images
    assert set(items.loc[items["kind"] == "caption", "item_id"]) == set(ann["caption_id"])
    assert not items.duplicated().any()
    assert str(items["item_id"].dtype) == "int64"


def test_stage1_pairs_are_nearest_neighbours_by_mean_word_embedding(world, tables):
    test_ids = world.image_table.loc[world.image_table["split"] == "test", "image_id"].to_numpy()
    vec = bison_build.image_text_embeddings(world, test_ids, CFG)
    nn = {}
    for a, va in zip(test_ids, vec):  # naive nearest neighbour by cosine, self excluded
        best, best_id = -np.inf, None
        for b, vb in zip(test_ids, vec):
            if a == b:
                continue
            cos = float(va @ vb / (np.linalg.norm(va) * np.linalg.norm(vb)))
            if cos > best + 1e-12:
                best, best_id = cos, int(b)
        nn[int(a)] = best_id
    pairs = tables["pairs"]
    expected = {(a, b) for a, b in nn.items()} | {(b, a) for a, b in nn.items()}
    got = set(zip(pairs["positive_image_id"], pairs["negative_image_id"]))
    assert got == expected
    assert len(pairs) == len(expected) and pairs["pair_id"].tolist() == list(range(len(pairs)))
    mutual = {(a, b) for a, b in got if nn[a] == b and nn[b] == a}
    assert int(pairs["mutual"].sum()) == len(mutual)
    # pairing 'query': one pair per image, its nearest neighbour as the negative
    query = bison_build.build(world, replace(CFG, pairing="query"), world_cfg=WCFG)["pairs"]
    assert len(query) == len(test_ids)
    assert dict(zip(query["positive_image_id"], query["negative_image_id"])) == nn


def test_without_annotator_errors_every_query_separates_the_images(world, exact_tables):
    ann, pairs = exact_tables["annotations"], exact_tables["pairs"]
    for c, t, f in zip(ann["caption_id"], ann["true_image_id"], ann["false_image_id"]):
        assert _fits(world, int(c), int(t)) and not _fits(world, int(c), int(f))
    # 'none' exactly where no caption of the positive image is discriminative (naive recount)
    caps = world.caption_table.groupby("image_id")["caption_id"].apply(list).to_dict()
    for pos, neg, chosen in zip(pairs["positive_image_id"], pairs["negative_image_id"], pairs["chosen_caption_id"]):
        any_disc = any(_fits(world, c, int(pos)) and not _fits(world, c, int(neg)) for c in caps[int(pos)])
        assert (chosen != bison_canonical.NONE_CHOICE) == any_disc
    stages = exact_tables["stages"].set_index("stage")["count"]
    assert stages["3: verified triples"] == stages["2: query triples"] == int((pairs["n_discriminative"] > 0).sum())
    assert exact_tables["stages"]["published_count"].tolist() == [67_564, 61_861, 54_253]


def test_stage3_keeps_a_triple_only_if_every_verifier_picks_the_positive(tables):
    pairs = tables["pairs"]
    queried = pairs[pairs["chosen_caption_id"] != bison_canonical.NONE_CHOICE]
    answers = queried["verifier_answers"].str.split(",")
    assert (answers.map(len) == CFG.n_verifiers).all()
    assert (queried["accepted"] == answers.map(lambda a: all(x == "positive" for x in a))).all()
    assert not pairs.loc[pairs["chosen_caption_id"] == bison_canonical.NONE_CHOICE, "accepted"].any()
    counts = tables["stages"]["count"].tolist()
    assert counts == [len(pairs), len(queried), int(pairs["accepted"].sum())]
    assert counts[0] >= counts[1] >= counts[2] > 0


def test_simulated_error_rates_match_the_configured_ones():
    rng = np.random.default_rng(0)
    answers = [bison_build.simulate_verifiers("positive", 1, 0.3, rng)[0] for _ in range(4000)]
    wrong = np.mean([a != "positive" for a in answers])
    assert abs(wrong - 0.3) < 4 * np.sqrt(0.3 * 0.7 / 4000)
    assert set(answers) == set(bison_build.VERIFIER_ANSWERS)  # wrong answers cover the other three
    ids, disc = np.array([10, 11, 12]), np.array([True, False, False])
    picks = [bison_build.simulate_annotator(ids, disc, 0.2, rng) for _ in range(4000)]
    err = np.mean([not ok for _, ok in picks])
    assert abs(err - 0.2) < 4 * np.sqrt(0.2 * 0.8 / 4000)
    assert all((c == 10) == ok for c, ok in picks)
    # nothing discriminative: the correct answer is 'none'
    assert bison_build.simulate_annotator(ids, np.zeros(3, bool), 0.0, rng) == (bison_canonical.NONE_CHOICE, True)


# ----------------------------------------------------------------------------------------------
# Audit


def test_audit_matches_a_naive_recount(world, tables):
    audit = bison_audit.audit(world, tables, CFG, world_cfg=WCFG)
    assert list(audit.columns) == ["row", "column", "value", "lo", "hi"]
    cell = audit.set_index(["row", "column"])
    pairs, ann = tables["pairs"], tables["annotations"]
    queried = pairs[pairs["chosen_caption_id"] != bison_canonical.NONE_CHOICE]
    leak2 = [_fits(world, int(c), int(n)) for c, n in zip(queried["chosen_caption_id"], queried["negative_image_id"])]
    leak3 = [_fits(world, int(c), int(f)) for c, f in zip(ann["caption_id"], ann["false_image_id"])]
    assert cell.loc[("stage 1: image pairs", "world"), "value"] == len(pairs)
    assert cell.loc[("stage 3: verified triples", "world"), "value"] == len(ann)
    assert cell.loc[("stage 2 survivor rate (%)", "world"), "value"] == pytest.approx(100 * len(queried) / len(pairs))
    assert cell.loc[("stage 3 survivor rate (%)", "world"), "value"] == pytest.approx(100 * len(ann) / len(queried))
    row = cell.loc[("stage-2 queries that also fit the negative (%)", "world")]
    assert row["value"] == pytest.approx(100 * np.mean(leak2))
    assert row["lo"] <= row["value"] <= row["hi"]
    assert cell.loc[("BISON queries that also fit the negative (%)", "world"), "value"] == pytest.approx(
        100 * np.mean(leak3)
    )
    assert (ann["caption_fits_false"].to_numpy() == np.array(leak3)).all()
    assert cell.loc[("stage 3 survivor rate (%)", "published"), "value"] == pytest.approx(87.70, abs=0.01)
    assert np.isnan(cell.loc[("stage 3 survivor rate (%)", "published"), "lo"])


def test_annotator_errors_leak_and_verification_filters_them(world):
    noisy = replace(CFG, annotator_error=0.5, verifier_error=0.0)
    audit = bison_audit.audit(world, bison_build.build(world, noisy, world_cfg=WCFG), noisy, world_cfg=WCFG)
    cell = audit.set_index(["row", "column"])["value"]
    assert cell[("stage-2 queries that also fit the negative (%)", "world")] > 5.0
    assert cell[("BISON queries that also fit the negative (%)", "world")] == 0.0


# ----------------------------------------------------------------------------------------------
# Scoring


def _cache(tmp_path, image_ids, image_emb, caption_ids, caption_emb) -> EmbeddingCache:
    path = tmp_path / "emb.npz"
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


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_random_embeddings_score_near_chance(tables, tmp_path):
    items = tables["items"]
    img = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    cap = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    accs = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        cache = _cache(
            tmp_path, img, _unit(rng.normal(size=(len(img), 32))), cap, _unit(rng.normal(size=(len(cap), 32)))
        )
        scores = bison_score.score_dual(tables, cache)
        accs.append(bison_score.summarize(scores, n_boot=50)["metrics"]["bison"]["value"])
    n = len(tables["annotations"])
    assert abs(np.mean(accs) - 50.0) < 4 * 100 * np.sqrt(0.25 / (5 * n))


def test_truth_oracle_scores_every_non_leaking_triple(world, tables, tmp_path):
    """Images are orthogonal one-hots; a caption is the normalised sum of the images it fits (naive truth)."""
    items = tables["items"]
    img = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    cap = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    scenes, structures = _lookups(world)
    fit = np.array([[caption_fits(structures[c], scenes[i], WCFG.relation_margin) for i in img] for c in cap], float)
    cache = _cache(tmp_path, img, np.eye(len(img)), cap, _unit(fit))
    scores = bison_score.score_dual(tables, cache)
    assert list(scores.columns) == bison_score.SCORE_COLUMNS
    assert scores["bison_id"].tolist() == tables["annotations"]["bison_id"].tolist()
    summary = bison_score.summarize(scores, n_boot=50)
    metric = summary["metrics"]["bison"]
    leak = tables["annotations"]["caption_fits_false"].mean()
    assert metric["value"] == pytest.approx(100 * (1 - leak))
    assert metric["value"] > 90.0
    assert metric["lo"] < metric["value"] <= metric["hi"] and metric["n"] == len(scores)
    assert summary["ties"] == int(tables["annotations"]["caption_fits_false"].sum())


def test_a_tie_counts_as_wrong(tables, tmp_path):
    items = tables["items"]
    img = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    cap = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    same = np.tile(np.eye(4)[0], (len(img), 1))  # every image identical: every instance a tie
    cache = _cache(tmp_path, img, same, cap, np.tile(np.eye(4)[0], (len(cap), 1)))
    summary = bison_score.summarize(bison_score.score_dual(tables, cache), n_boot=20)
    assert summary["metrics"]["bison"]["value"] == 0.0
    assert summary["ties"] == len(tables["annotations"])


def test_score_predictions_in_the_released_format(tables):
    ann = tables["annotations"]
    perfect = pd.DataFrame({"bison_id": ann["bison_id"], "predicted_image_id": ann["true_image_id"]})
    assert bison_score.score_predictions(tables, perfect)["correct"].all()
    first = pd.DataFrame({"bison_id": ann["bison_id"][::-1], "predicted_image_id": ann["image_id_0"][::-1]})
    scored = bison_score.score_predictions(tables, first)
    summary = bison_score.summarize(scored)
    assert summary["metrics"]["bison"]["value"] == pytest.approx(100 * (ann["true_index"] == 0).mean())
    bad = perfect.copy()
    bad.loc[0, "predicted_image_id"] = -7
    with pytest.raises(ValueError, match=f"bison_id {int(ann['bison_id'].iloc[0])} predicts image -7"):
        bison_score.score_predictions(tables, bad)
    with pytest.raises(ValueError, match="no prediction for bison_id"):
        bison_score.score_predictions(tables, perfect.iloc[1:])
