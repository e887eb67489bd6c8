"""SugarCrepe on its own: construction in the world (truth-checked), the metric vs a naive reference, files, scoring."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from unit_world import UNIT_TRUTH, unit_world

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.papers.registry import benchmark
from itmbench.papers.sugarcrepe import audit as sc_audit
from itmbench.papers.sugarcrepe import build as sc_build
from itmbench.papers.sugarcrepe import canonical as sc_canonical
from itmbench.papers.sugarcrepe import score as sc_score
from itmbench.papers.sugarcrepe.config import SugarCrepeConfig
from itmbench.params import make_config
from itmbench.params import schema as params_schema
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import generate_world
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

SMALL = unit_world(n_train=8, n_val=4, n_test=60)
CFG = make_config(SugarCrepeConfig, UNIT_TRUTH)


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


@pytest.fixture(scope="module")
def tables(world):
    return sc_build.build(world, CFG)


# --- config ------------------------------------------------------------------------------------------


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match="unknown keys"):
        make_config(SugarCrepeConfig, {"sed": 1})
    with pytest.raises(ValueError, match="subsets"):
        make_config(SugarCrepeConfig, {"subsets": ["swap_rel"]})
    with pytest.raises(ValueError, match="instances_per_image_subset"):
        make_config(SugarCrepeConfig, instances_per_image_subset=0)


def test_params_section_is_the_schema_and_the_registry_passes_the_world_truth():
    yaml = pytest.importorskip("yaml")
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    schema = params_schema()["properties"]  # with params.yaml's defaults (their one home)
    params = yaml.safe_load((root / "params.yaml").read_text())
    props = schema["sugarcrepe"]["properties"]
    assert "relation_margin" not in props and "max_objects" not in props  # the world's: the registry passes them
    assert params["sugarcrepe"] == {k: v["default"] for k, v in props.items()}
    world = unit_world(relation_margin=0.11, max_objects=3)
    cfg = benchmark("sugarcrepe").config(params["sugarcrepe"], world)
    assert cfg.relation_margin == 0.11 and cfg.max_objects == 3


# --- construction ------------------------------------------------------------------------------------


def test_seven_subtypes_present(tables):
    inst = tables["instances"]
    assert set(inst["subset"]) == set(SUBSETS)
    assert (inst["type"] + "_" + inst["subtype"] == inst["subset"]).all()
    assert inst["id"].tolist() == list(range(len(inst)))
    assert (inst["negative_caption_id"] == CFG.id_offset + inst["id"]).all()


def test_every_negative_fails_the_truth_and_every_positive_fits(world, tables):
    scenes = {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}
    positive = dict(zip(world.caption_table["caption_id"], world.caption_table["structure"]))
    inst = tables["instances"]
    for r in inst.itertuples(index=False):
        scene = scenes[int(r.image_id)]
        assert caption_fits(CaptionStructure.from_json(positive[int(r.caption_id)]), scene, CFG.relation_margin)
        assert not caption_fits(CaptionStructure.from_json(r.negative_structure), scene, CFG.relation_margin)
        assert r.caption != r.negative_caption
    edits = tables["edits"]
    assert edits["true_of_image"].any()  # the filter had something to reject
    assert len(edits) - int(edits["true_of_image"].sum()) >= len(inst)


def test_audit_confirms_the_truth(world, tables):
    a = sc_audit.audit(world, tables, CFG).set_index(["row", "column"])["value"]
    assert a[("overall", "positive caption fits the image (%)")] == 100.0
    assert a[("overall", "negative caption fits the image (%)")] == 0.0
    assert a[("overall", "instances")] == len(tables["instances"])


def test_deterministic_by_seed_and_the_same_as_bivlc_step_0(world, tables):
    again = sc_build.build(world, CFG)
    for name in tables:
        pd.testing.assert_frame_equal(tables[name], again[name])
    other = sc_build.build(world, make_config(SugarCrepeConfig, UNIT_TRUTH, seed=1))["instances"]
    assert not other[["caption_id", "negative_caption"]].equals(tables["instances"][["caption_id", "negative_caption"]])
    step0, _ = bivlc_build.sugarcrepe_instances(world, make_config(BiVLCConfig, UNIT_TRUTH))
    pd.testing.assert_frame_equal(step0[list(sc_canonical.INSTANCE_COLUMNS)], tables["instances"])


def test_write_read_round_trip(tmp_path, tables):
    sc_canonical.write(tables, tmp_path)
    back = sc_canonical.read(tmp_path)
    for name in ("instances", "edits", "stages", "items", "extra_captions"):
        pd.testing.assert_frame_equal(back[name], tables[name], check_dtype=False)
    assert np.load(tmp_path / "extra_items" / "images.npy").shape[0] == 0
    with pytest.raises(FileNotFoundError, match="sugarcrepe rule"):
        sc_canonical.read(tmp_path / "nowhere")


# --- metric ------------------------------------------------------------------------------------------


def _naive(rows: list[tuple[str, float, float]]) -> dict[str, float]:
    """Per-subtype accuracy and their mean, by hand: correct when the positive scores strictly higher."""
    per: dict[str, list[int]] = {}
    for subset, pos, neg in rows:
        per.setdefault(subset, []).append(1 if pos > neg else 0)
    acc = {s: 100.0 * sum(v) / len(v) for s, v in per.items()}
    acc["mean"] = sum(acc[s] for s in per) / len(per)
    acc["pooled"] = 100.0 * sum(sum(v) for v in per.values()) / len(rows)
    return acc


def test_metric_matches_a_naive_reference_on_a_worked_example():
    rows = [
        ("replace_obj", 0.9, 0.1),  # right
        ("replace_obj", 0.2, 0.3),  # wrong
        ("replace_obj", 0.5, 0.5),  # tie: wrong
        ("swap_att", 0.7, 0.6),  # right
        ("add_obj", 0.1, 0.4),  # wrong
        ("add_obj", 0.8, 0.2),  # right
        ("add_obj", 0.6, 0.1),  # right
        ("add_obj", 0.3, 0.2),  # right
    ]
    scores = pd.DataFrame(rows, columns=["subset", "s_pos", "s_neg"])
    out = sc_score.summarize(scores, n_boot=200, seed=0)
    m, ref = out["metrics"], _naive(rows)
    assert m["replace_obj"]["value"] == pytest.approx(100 / 3) == pytest.approx(ref["replace_obj"])
    assert m["swap_att"]["value"] == 100.0 and m["add_obj"]["value"] == 75.0
    assert m["mean_over_subtypes"]["value"] == pytest.approx(ref["mean"]) == pytest.approx((100 / 3 + 100 + 75) / 3)
    assert m["pooled"]["value"] == pytest.approx(ref["pooled"]) == 62.5
    assert set(m) == {"mean_over_subtypes", "pooled", "replace_obj", "swap_att", "add_obj"}
    for entry in m.values():
        assert entry["lo"] <= entry["value"] <= entry["hi"]
    assert out["chance"] == 50.0 and out["n_instances"] == 8 and out["ties_count_as_wrong"]
    # the same instances as correct flags give the same numbers (the released files' path)
    flags = scores.assign(correct=scores["s_pos"] > scores["s_neg"])[["subset", "correct"]]
    assert sc_score.summarize(flags, n_boot=200, seed=0)["metrics"] == m


def test_metric_interval_of_the_mean_is_seeded_and_stratified():
    rng = np.random.default_rng(3)
    subset = np.repeat(SUBSETS, 40)
    scores = pd.DataFrame({"subset": subset, "correct": rng.random(len(subset)) < 0.7})
    a = sc_score.summarize(scores, n_boot=300, seed=5)["metrics"]["mean_over_subtypes"]
    b = sc_score.summarize(scores, n_boot=300, seed=5)["metrics"]["mean_over_subtypes"]
    assert a == b and a["lo"] < a["value"] < a["hi"]
    with pytest.raises(ValueError, match="unknown subsets"):
        sc_score.summarize(pd.DataFrame({"subset": ["swap_rel"], "correct": [True]}))


# --- scoring -----------------------------------------------------------------------------------------


def test_score_dual_from_an_embedding_cache(tmp_path, tables):
    items = tables["items"]
    rng = np.random.default_rng(0)
    images = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    captions = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    emb = {
        "image_ids": images,
        "image_emb": rng.normal(size=(len(images), 8)).astype(np.float32),
        "caption_ids": captions,
        "caption_emb": rng.normal(size=(len(captions), 8)).astype(np.float32),
    }
    write_embeddings(tmp_path / "e.npz", emb)
    scores = sc_score.score_dual(tables, EmbeddingCache([tmp_path / "e.npz"]))
    assert list(scores.columns) == list(sc_score.SCORE_COLUMNS) and len(scores) == len(tables["instances"])
    assert (scores["correct"] == (scores["s_pos"] > scores["s_neg"])).all()
    pairs = sc_score.pairs_needed(tables)
    assert len(pairs) <= 2 * len(tables["instances"])
    summary = sc_score.summarize(scores)
    assert 0 <= summary["metrics"]["pooled"]["value"] <= 100


def test_a_cross_scorers_pair_scores_give_the_same_table_as_the_dot_products(tmp_path, tables):
    from itmbench.scoring.pairs import PairScores, write_pair_scores

    items = tables["items"]
    rng = np.random.default_rng(1)
    ids = {k: items.loc[items["kind"] == k, "item_id"].to_numpy() for k in ("image", "caption")}
    emb = {f"{k}_ids": v for k, v in ids.items()}
    emb |= {f"{k}_emb": rng.normal(size=(len(v), 4)).astype(np.float32) for k, v in ids.items()}
    write_embeddings(tmp_path / "e.npz", emb)
    cache = EmbeddingCache([tmp_path / "e.npz"])
    dual = sc_score.score_dual(tables, cache)
    pairs = sc_score.pairs_needed(tables)
    c = cache.get("caption", pairs["caption_id"].to_numpy()).astype(np.float64)
    i = cache.get("image", pairs["image_id"].to_numpy()).astype(np.float64)
    write_pair_scores(tmp_path / "p.parquet", pairs, (c * i).sum(axis=1))
    crossed = sc_score.score_pairs(tables, PairScores([tmp_path / "p.parquet"]))
    pd.testing.assert_frame_equal(crossed, dual)
