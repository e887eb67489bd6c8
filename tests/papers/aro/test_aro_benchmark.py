"""ARO in the world: construction against the world's truth, the perturbations against a naive reference, the
authors' argmax rule and macro accuracy on a worked example, files and scoring."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.aro import build as aro_build
from itmbench.papers.aro import canonical as aro_canonical
from itmbench.papers.aro import perturb as aro_perturb
from itmbench.papers.aro import score as aro_score
from itmbench.papers.aro.config import AroConfig
from itmbench.papers.registry import benchmark
from itmbench.params import make_config
from itmbench.params import schema as params_schema
from itmbench.scoring.embed import EmbeddingCache, pair_dots, write_embeddings
from itmbench.scoring.pairs import PairScores, write_pair_scores
from itmbench.world.captions import CaptionStructure
from itmbench.world.generate import generate_world
from itmbench.world.parse import parse_caption
from itmbench.world.scene import Scene
from itmbench.world.truth import caption_fits

SMALL = unit_world(n_train=8, n_val=20, n_test=60)


@pytest.fixture(scope="module")
def world():
    return generate_world(SMALL)


@pytest.fixture(scope="module")
def tables(world):
    return benchmark("aro").build(world, {}, SMALL, {})


# --- config ------------------------------------------------------------------------------------------


def test_config_refuses_one_split_for_both_order_sets_and_unknown_keys():
    with pytest.raises(ValueError, match="coco_order_split = flickr30k_order_split = 'val'; expected two different"):
        make_config(AroConfig, coco_order_split="val", flickr30k_order_split="val", relation_margin=0.0, max_objects=3)
    with pytest.raises(ValueError, match="unknown keys"):
        make_config(AroConfig, {"sed": 1})


def test_params_section_is_the_schema():
    yaml = pytest.importorskip("yaml")
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    props = params_schema()["properties"]["aro"]["properties"]  # with params.yaml's defaults (their one home)
    params = yaml.safe_load((root / "params.yaml").read_text())
    assert "relation_margin" not in props and "max_objects" not in props  # the world's: the registry passes them
    assert params["aro"] == {k: v["default"] for k, v in props.items()}


# --- construction against the world's truth ----------------------------------------------------------


def _scenes(world):
    return {int(i): Scene.from_json(s) for i, s in zip(world.scene_table["image_id"], world.scene_table["scene"])}


def test_vg_true_caption_fits_and_the_swapped_one_does_not(world, tables):
    scenes, margin = _scenes(world), SMALL.relation_margin
    structure = dict(zip(tables["extra_captions"]["caption_id"], tables["extra_captions"]["structure"]))
    opts = tables["options"].merge(tables["instances"][["id", "dataset", "image_id", "label"]], on="id")
    for dataset in ("vg_relation", "vg_attribution"):
        o = opts[opts["dataset"] == dataset]
        assert len(o) > 20 and set(o["kind"]) == {"true", "false"}
        for kind, expected in (("true", True), ("false", False)):
            k = o[o["kind"] == kind]
            fits = [
                caption_fits(CaptionStructure.from_json(structure[c]), scenes[i], margin)
                for c, i in zip(k["caption_id"], k["image_id"])
            ]
            assert all(f == expected for f in fits), (dataset, kind)
        # each option reads back through the world's grammar to the structure stored
        for text, c in zip(o["text"], o["caption_id"]):
            assert parse_caption(text).structure == CaptionStructure.from_json(structure[c])


def test_vg_negatives_are_the_swaps(tables):
    opts = tables["options"].merge(tables["instances"][["id", "dataset", "label"]], on="id")
    for dataset in ("vg_relation", "vg_attribution"):
        o = opts[opts["dataset"] == dataset].sort_values(["id", "option"])
        true, false = o[o["kind"] == "true"], o[o["kind"] == "false"]
        for t, f, label in zip(true["text"], false["text"], true["label"]):
            a, b = parse_caption(t).structure.mentions, parse_caption(f).structure.mentions
            if dataset == "vg_relation":  # the two objects swapped, the relation kept
                assert (b[0], b[1]) == (a[1], a[0]) and parse_caption(f).structure.relation == label
            else:  # the two colours swapped, the shapes kept; the label is A1_A2 as the caption names them
                assert [(m.shape, m.size) for m in b] == [(m.shape, m.size) for m in a]
                assert [m.colour for m in b] == [a[1].colour, a[0].colour]
                assert label == f"{a[0].colour}_{a[1].colour}"


def test_order_sets_perturb_every_caption_of_their_split(world, tables):
    inst, caps = tables["instances"], world.caption_table
    images = world.image_table.set_index("image_id")["split"]
    for dataset, split in (("coco_order", "test"), ("flickr30k_order", "val")):
        i = inst[inst["dataset"] == dataset]
        assert sorted(i["caption_id"]) == sorted(caps.loc[caps["split"] == split, "caption_id"])
        assert set(images.loc[i["image_id"]]) == {split}
        assert (i["n_options"] == 5).all()
    opts = tables["options"][tables["options"]["id"].isin(inst.loc[inst["dataset"] == "coco_order", "id"])]
    assert list(opts.groupby("id")["kind"].apply(tuple).iloc[0]) == ["true", *aro_perturb.PERTURBATIONS]
    true = opts[opts["option"] == 0].set_index("id")["text"]
    for _, row in opts[opts["option"] > 0].iterrows():  # a perturbation keeps the caption's words
        assert sorted(row["text"].split()) == sorted(true[row["id"]].split())


def test_build_is_deterministic_and_ids_are_new(world, tables):
    again = benchmark("aro").build(world, {}, SMALL, {})
    for name in tables:
        pd.testing.assert_frame_equal(tables[name], again[name])
    extra = tables["extra_captions"]["caption_id"]
    assert extra.is_unique and extra.min() >= 10**9 and not extra.isin(world.caption_table["caption_id"]).any()


# --- the perturbations against a naive reference -----------------------------------------------------


def _naive_trigrams(tokens):
    out, tri = [], []
    for i, t in enumerate(tokens):  # the authors' get_trigrams, as written
        tri.append(t)
        if i % 3 == 2:
            out.append(tri[:])
            tri = []
    if tri:
        out.append(tri)
    return out


def test_perturbations_match_a_naive_reference():
    text = "a picture of a small red circle to the left of two large blue squares"
    tokens = text.split()
    assert aro_perturb.trigrams(tokens) == _naive_trigrams(tokens)
    pos = [aro_perturb.tag(t) for t in tokens]
    for seed in range(30):
        rng = np.random.default_rng(seed)
        nouns = aro_perturb.shuffle_nouns_and_adj(tokens, rng)
        others = aro_perturb.shuffle_allbut_nouns_and_adj(tokens, rng)
        within = aro_perturb.shuffle_within_trigrams(tokens, rng)
        whole = aro_perturb.shuffle_trigrams(tokens, rng)
        for out in (nouns, others, within, whole):
            assert sorted(out) == sorted(tokens)
        # nouns and adjectives move only among their own kind's positions; the rest stays
        assert [aro_perturb.tag(t) for t in nouns] == pos
        assert all(a == b for a, b, p in zip(nouns, tokens, pos) if p == "other")
        assert all(a == b for a, b, p in zip(others, tokens, pos) if p != "other")
        assert [aro_perturb.tag(t) for t in others] == pos
        # within trigrams: each trigram's words, in some order; whole trigrams: the trigrams, in some order
        ref = _naive_trigrams(tokens)
        assert [sorted(t) for t in _naive_trigrams(within)] == [sorted(t) for t in ref]
        assert sorted(map(tuple, ref)) == sorted(_split_like(whole, ref))
    assert aro_perturb.tag("circles") == "noun" and aro_perturb.tag("red") == "adj" and aro_perturb.tag("of") == "other"
    assert aro_perturb.pre_caption("A  Red circle", 2) == "a red"


def _split_like(tokens, ref):
    """Cut `tokens` into the lengths the shuffled trigrams have: the full ones and the short last one, wherever
    it landed (the only ambiguity: try each place for the short one)."""
    sizes = [len(t) for t in ref]
    for short_at in range(len(sizes)):
        order = sizes[:-1][:short_at] + [sizes[-1]] + sizes[:-1][short_at:]
        cuts = np.cumsum([0, *order])
        pieces = [tuple(tokens[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
        if sorted(pieces) == sorted(map(tuple, ref)):
            return pieces
    return []


def test_perturbations_move_words_on_most_captions(world):
    texts = world.caption_table["text"].tolist()[:200]
    for name in aro_perturb.PERTURBATIONS:
        changed = np.mean(
            [aro_perturb.perturb(t, name, np.random.default_rng(k), 30) != t for k, t in enumerate(texts)]
        )
        assert changed > 0.4, name


# --- scoring: the authors' argmax and macro accuracy -------------------------------------------------


def test_correct_follows_the_authors_argmax_on_ties():
    s = np.array([[1.0, 1.0, np.nan, np.nan, np.nan], [1.0, 1.0, 0.0, 0.0, 0.0], [2.0, 1.0, 3.0, 0.0, 0.0]])
    got = aro_score.correct_of(np.array(["vg_relation", "coco_order", "coco_order"]), s)
    assert got.tolist() == [False, True, False]  # VG [false, true]: a tie is wrong; Order [true, ...]: right


def test_macro_accuracy_worked_example():
    # relation A: 3 of 4 right (75%), B: 1 of 2 (50%), C: 0 of 1 (0%): macro 41.67, over items 4/7 = 57.1
    correct = np.array([1, 1, 1, 0, 1, 0, 0], bool)
    label = np.array(["A", "A", "A", "A", "B", "B", "C"])
    value, names = aro_score.macro_accuracy(correct, label)
    assert names == ["A", "B", "C"] and value == pytest.approx(125 / 3)
    value, names = aro_score.macro_accuracy(correct, label, min_items=2)  # VG-Attribution's threshold
    assert names == ["A", "B"] and value == pytest.approx(62.5)
    scores = pd.DataFrame({"id": range(7), "dataset": "vg_relation", "label": label, "s0": 0.0, "correct": correct})
    m = aro_score.summarize(scores, n_boot=200)["metrics"]
    assert m["vg_relation"]["value"] == pytest.approx(125 / 3)
    assert m["vg_relation_items"]["value"] == pytest.approx(400 / 7)
    assert m["vg_relation"]["lo"] <= m["vg_relation"]["value"] <= m["vg_relation"]["hi"]
    m = aro_score.summarize(scores.assign(dataset="vg_attribution"), min_attribute_pair_items=5)["metrics"]
    assert "vg_attribution" not in m and m["vg_attribution_items"]["n"] == 7  # no pair has 5 items


def test_scoring_through_an_embedding_cache(tmp_path, world, tables):
    """A cache that embeds the true caption (and a world caption) nearer the image than any other option: all right;
    the reverse: all wrong, except Order ties, which the true caption wins."""
    opts = tables["options"]
    items = tables["items"]
    images = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    captions = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    true_ids = set(opts.loc[opts["option"] == 0, "caption_id"])
    cap = np.array([[1.0 if c in true_ids else 0.5] for c in captions], np.float32)
    emb = {"image_ids": images, "image_emb": np.ones((len(images), 1), np.float32), "caption_ids": captions}
    write_embeddings(tmp_path / "e.npz", {**emb, "caption_emb": cap})
    scores = aro_score.score_dual(tables, EmbeddingCache([tmp_path / "e.npz"]))
    assert scores["correct"].all()
    s = aro_score.summarize(scores, n_boot=100)
    assert s["metrics"]["vg_relation"]["value"] == 100.0 and s["metrics"]["coco_order"]["value"] == 100.0
    write_embeddings(tmp_path / "e.npz", {**emb, "caption_emb": 1.5 - cap})
    scores = aro_score.score_dual(tables, EmbeddingCache([tmp_path / "e.npz"]))
    assert not scores.loc[scores["dataset"].str.startswith("vg_"), "correct"].any()
    pairs = aro_score.pairs_needed(tables)
    assert len(pairs) == len(opts.drop_duplicates(["caption_id"]))  # every option once: one image per option


def test_files_round_trip(tmp_path, tables):
    aro_canonical.write(tables, tmp_path)
    back = aro_canonical.read(tmp_path)
    for name in ("instances", "options", "candidates", "items", "extra_captions"):
        pd.testing.assert_frame_equal(back[name].reset_index(drop=True), tables[name].reset_index(drop=True))


def test_audit_finds_no_false_negative_fitting(world, tables):
    audit = benchmark("aro").audit(world, tables, {}, SMALL)
    row = audit[(audit["row"] == "vg_relation") & (audit["column"] == "false caption fits the image (%)")]
    assert row["value"].iloc[0] == 0.0
    row = audit[(audit["row"] == "vg_relation") & (audit["column"] == "true caption fits the image (%)")]
    assert row["value"].iloc[0] == 100.0


def test_build_refuses_inputs(world):
    with pytest.raises(TypeError, match="unexpected inputs"):
        aro_build.build(world, make_config(AroConfig, relation_margin=0.0, max_objects=3), pv_choice={})


def test_a_cross_scorers_pair_scores_give_the_dual_encoders_table(tmp_path, tables):
    items = tables["items"]
    rng = np.random.default_rng(1)
    images = items.loc[items["kind"] == "image", "item_id"].to_numpy()
    captions = items.loc[items["kind"] == "caption", "item_id"].to_numpy()
    emb = {
        "image_ids": images,
        "image_emb": rng.normal(size=(len(images), 4)).astype(np.float32),
        "caption_ids": captions,
        "caption_emb": rng.normal(size=(len(captions), 4)).astype(np.float32),
    }
    write_embeddings(tmp_path / "e.npz", emb)
    cache = EmbeddingCache([tmp_path / "e.npz"])
    dual = aro_score.score_dual(tables, cache)
    pairs = aro_score.pairs_needed(tables)
    scores = pair_dots(cache, pairs["caption_id"].to_numpy(), pairs["image_id"].to_numpy())
    write_pair_scores(tmp_path / "p.parquet", pairs, scores)
    pd.testing.assert_frame_equal(aro_score.score_pairs(tables, PairScores([tmp_path / "p.parquet"])), dual)
    assert 0 < dual["correct"].mean() < 1


def test_vg_objects_are_named_with_their_sizes_unless_vg_sizes_is_false(world, tables):
    """As the world's grammar names every object (p_size 1): each mention carries the size of an object of the
    image with its shape and colour; with vg_sizes false, no mention carries a size."""
    scenes = _scenes(world)
    plain = benchmark("aro").build(world, {"vg_sizes": False}, SMALL, {})
    for built, sizes in ((tables, True), (plain, False)):
        opts = built["options"].merge(built["instances"][["id", "dataset", "image_id"]], on="id")
        vg = opts[opts["dataset"].isin(["vg_relation", "vg_attribution"]) & (opts["kind"] == "true")]
        assert len(vg) > 20
        for text, image_id in zip(vg["text"], vg["image_id"]):
            objects = {(o.shape, o.colour, o.size) for o in scenes[int(image_id)].objects}
            for m in parse_caption(text).structure.mentions:
                if sizes:
                    assert (m.shape, m.colour, m.size) in objects, text
                else:
                    assert m.size is None and any((m.shape, m.colour) == o[:2] for o in objects), text
    assert set(plain["instances"]["dataset"]) == set(tables["instances"]["dataset"])
