"""ECCV Caption in the world: determinism, the construction against the truth, audit, scoring and files."""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.metrics.ranking import map_at_r, pmrp, r_precision
from itmbench.papers.eccv import audit as eccv_audit
from itmbench.papers.eccv import build as eccv_build
from itmbench.papers.eccv import canonical as eccv_canonical
from itmbench.papers.eccv import graded as eccv_graded
from itmbench.papers.eccv import score as eccv_score
from itmbench.papers.eccv.config import EccvConfig
from itmbench.papers.eccv.released import SCHEMA
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.world.generate import generate_world
from itmbench.world.scene import SHAPES, relation_holds
from itmbench.world.truth import caption_fits

WCFG = replace(unit_world(), n_train=0, n_val=0, n_test=160)  # below the schema's minimums: test only
CFG = make_config(EccvConfig, annotator_source="world")  # the simulated oracles; model annotators below
I2T, T2I = "image_to_caption", "caption_to_image"


@pytest.fixture(scope="module")
def world():
    return generate_world(WCFG)


@pytest.fixture(scope="module")
def lookups(world):
    """Scene by image id, structure by caption id, image of each caption."""
    return (
        dict(zip(world.scene_table["image_id"], world.scenes())),
        dict(zip(world.caption_table["caption_id"], world.structures())),
        dict(zip(world.caption_table["caption_id"], world.caption_table["image_id"])),
    )


@pytest.fixture(scope="module")
def cxc(world, lookups):
    """A CxC-like positive set: every third fitting (image, caption) pair of other images, by the truth."""
    scenes, structures, own = lookups
    test = world.caption_table[world.caption_table["split"] == "test"]
    rows = []
    for cid in test["caption_id"].to_numpy()[::7]:
        for iid in sorted(scenes)[::3]:
            if iid != own[cid] and caption_fits(structures[cid], scenes[iid], WCFG.relation_margin):
                rows.append((int(iid), int(cid)))
    return pd.DataFrame(rows, columns=["image_id", "caption_id"])


@pytest.fixture(scope="module")
def tables(world):
    return eccv_build.build(world, CFG, world_cfg=WCFG)


@pytest.fixture(scope="module")
def cxc_tables(world, cxc):
    return eccv_build.build(world, CFG, cxc_positives=cxc, world_cfg=WCFG)


def _fits(lookups, image_id: int, caption_id: int) -> bool:
    scenes, structures, _ = lookups
    return caption_fits(structures[int(caption_id)], scenes[int(image_id)], WCFG.relation_margin)


def _by_query(df: pd.DataFrame, direction: str) -> dict[int, set[int]]:
    q, t = ("image_id", "caption_id") if direction == I2T else ("caption_id", "image_id")
    return {int(k): set(map(int, v)) for k, v in df.groupby(q)[t]}


# ----------------------------------------------------------------------------------------------
# Config, determinism and files


def test_config_rejects_unknown_keys_and_bad_values():
    with pytest.raises(ValueError, match="unknown keys \\['top_kk'\\]"):
        make_config(EccvConfig, {"top_kk": 5})
    with pytest.raises(ValueError, match="answer_probs_fit"):
        make_config(EccvConfig, {"answer_probs_fit": [0.5, 0.5, 0.5, 0.0]})
    with pytest.raises(ValueError, match="annotators"):
        make_config(EccvConfig, {"annotators": ["clip"]})
    cfg = make_config(EccvConfig, {"annotators": ["exact", "bag_of_words"], "pm_zeta": 1})
    assert cfg.annotators == ("exact", "bag_of_words") and cfg.pm_zeta == 1


def test_same_params_give_identical_tables_and_bytes(world, tables, tmp_path):
    again = eccv_build.build(world, CFG, world_cfg=WCFG)
    for name in tables:
        pd.testing.assert_frame_equal(tables[name], again[name], check_exact=True)
    eccv_canonical.write(tables, tmp_path / "a")
    eccv_canonical.write(again, tmp_path / "b")
    for name in eccv_canonical.TABLE_ORDER:
        assert (tmp_path / "a" / f"{name}.parquet").read_bytes() == (tmp_path / "b" / f"{name}.parquet").read_bytes()


def test_other_seed_gives_other_queries_and_answers(world, tables):
    other = eccv_build.build(world, replace(CFG, seed=1), world_cfg=WCFG)
    assert not other["queries"].equals(tables["queries"])


def test_write_then_read_round_trips_and_items_come_last(tables, tmp_path):
    eccv_canonical.write(tables, tmp_path)
    back = eccv_canonical.read(tmp_path)
    for name in tables:
        pd.testing.assert_frame_equal(back[name], tables[name])
    mtimes = {n: (tmp_path / f"{n}.parquet").stat().st_mtime_ns for n in eccv_canonical.TABLE_ORDER}
    assert mtimes["items"] == max(mtimes.values())


def test_read_names_the_file_with_a_missing_column(tables, tmp_path):
    eccv_canonical.write(tables, tmp_path)
    tables["annotations"].drop(columns=["answer"]).to_parquet(tmp_path / "annotations.parquet")
    with pytest.raises(ValueError, match="annotations.parquet: missing columns \\['answer'\\]"):
        eccv_canonical.read(tmp_path)
    tables["annotations"].to_parquet(tmp_path / "annotations.parquet")
    (tmp_path / "stages.parquet").unlink()  # a construction table: optional (the coco source has none)
    assert "stages" not in eccv_canonical.read(tmp_path)
    (tmp_path / "queries.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="queries.parquet"):
        eccv_canonical.read(tmp_path)


def test_a_wrong_relation_margin_is_caught(world):
    with pytest.raises(ValueError, match="do not fit their own image"):
        eccv_build.build(world, CFG, world_cfg=replace(WCFG, relation_margin=0.4))


# ----------------------------------------------------------------------------------------------
# Construction against the truth


def test_canonical_columns_and_items(world, tables):
    pos = tables["positives"]
    assert list(pos.columns) == list(SCHEMA)
    assert {str(d) for d in pos.dtypes} == {"string", "int64"}
    assert set(pos["source"]) == {"eccv", "original"}  # no CxC given
    items = tables["items"]
    assert list(items.columns) == ["kind", "item_id"]
    assert (items["kind"] == "image").sum() == 160 and (items["kind"] == "caption").sum() == 800
    assert not items.duplicated().any()


def test_query_counts_follow_the_papers_fractions(tables):
    q = tables["queries"]
    assert (q["direction"] == I2T).sum() == round(160 * 1261 / 5000) == 40
    assert (q["direction"] == T2I).sum() == round(800 * 1332 / 25000) == 43
    assert not q.duplicated().any()


def test_claim_matrix_matches_a_naive_count_and_the_truth(world, lookups):
    scenes, structures, _ = lookups
    data = eccv_graded.split_data(world, "test", WCFG)
    sub_c = np.arange(0, len(data.caption_ids), 9)
    sub_s = np.arange(0, len(data.image_ids), 4)
    structs = [data.structures[i] for i in sub_c]
    scs = [data.scenes[i] for i in sub_s]

    def naive(c, scene, ignore):
        def attrs(m, o):
            return sum(
                getattr(m, a) == getattr(o, a) for a in ("shape", "colour", "size") if getattr(m, a) and a not in ignore
            )

        def n_attrs(m):
            return sum(1 for a in ("shape", "colour", "size") if getattr(m, a) and a not in ignore)

        objs = scene.objects
        if len(c.mentions) == 1:
            m = c.mentions[0]
            sat, tot = max(attrs(m, o) for o in objs), n_attrs(m)
            if m.count > 1 and "count" not in ignore:
                tot += 1
                sat += sum(attrs(m, o) == n_attrs(m) for o in objs) == m.count
            return sat, tot
        m0, m1 = c.mentions
        use_rel = c.relation is not None and "relation" not in ignore
        tot = n_attrs(m0) + n_attrs(m1) + use_rel
        if len(objs) < 2:
            return max(max(attrs(m0, o), attrs(m1, o)) for o in objs), tot
        best = max(
            attrs(m0, a) + attrs(m1, b) + (use_rel and relation_holds(a, b, c.relation, WCFG.relation_margin))
            for a, b in permutations(objs, 2)
        )
        return best, tot

    for ignore in (frozenset(), frozenset({"colour"}), frozenset({"count", "relation"})):
        sat, tot = eccv_graded.claim_matrix(structs, scs, WCFG.relation_margin, ignore)
        for i, c in enumerate(structs):
            for j, s in enumerate(scs):
                assert (sat[i, j], tot[i]) == naive(c, s, ignore), (i, j, ignore)
    sat, tot = eccv_graded.claim_matrix(structs, scs, WCFG.relation_margin)
    fits = np.array([[caption_fits(c, s, WCFG.relation_margin) for s in scs] for c in structs])
    assert np.array_equal(sat == tot[:, None], fits)
    assert fits.any() and (~fits).any()


def test_proposals_are_each_annotators_top_k(world, tables):
    data = eccv_graded.split_data(world, "test", WCFG)
    annotators = {a.name: a for a in eccv_build.world_annotators(data, CFG)}
    ann, q = tables["annotations"], tables["queries"]
    for direction, gallery in ((I2T, data.caption_ids), (T2I, data.image_ids)):
        q_ids = q.loc[q["direction"] == direction, "query_id"].to_numpy()
        for name, annotator in annotators.items():
            scores = annotator.score(direction, q_ids, gallery)
            sub = ann[(ann["direction"] == direction) & (ann["annotator"] == name)]
            for r, qid in enumerate(q_ids):
                proposed = sub[sub["query_id"] == qid].sort_values("proposal_rank")["candidate_id"].to_numpy()
                assert len(proposed) == CFG.top_k
                # the k proposals are the k highest scores, in order
                s_prop = scores[r, np.searchsorted(gallery, proposed)]
                assert np.all(np.diff(s_prop) <= 0)
                outside = np.delete(scores[r], np.searchsorted(gallery, proposed))
                assert s_prop.min() >= outside.max()
    # five distinct annotators propose overlapping but different candidates (paper: 46,424 of 64,850 unique)
    st = tables["stages"].set_index(["direction", "stage"])["n"]
    for direction in (I2T, T2I):
        unique = st[(direction, "unique proposed pairs")] / st[(direction, "proposed pairs (annotators x top-k)")]
        assert 0.3 < unique < 1.0


def test_answers_follow_the_truth_and_positives_are_yes_or_partially_yes(tables, lookups):
    ann = tables["annotations"]
    judged = ann.drop_duplicates(["direction", "query_id", "candidate_id"])
    # one answer per pair, whichever annotators proposed it
    assert (ann.groupby(["direction", "query_id", "candidate_id"])["answer"].nunique() == 1).all()
    truth = np.array([_fits(lookups, i, c) for i, c in zip(judged["image_id"], judged["caption_id"])])
    assert np.array_equal(truth, judged["fits"].to_numpy())
    assert np.array_equal(truth, judged["n_violated"].to_numpy() == 0)
    yes = judged["answer"].isin(CFG.positive_answers).to_numpy()
    assert yes[truth].mean() > 0.85  # configured 0.95
    assert yes[judged["n_violated"].to_numpy() >= 2].mean() < 0.15  # configured 0.05
    one_off = judged["n_violated"].to_numpy() == 1
    assert 0.2 < yes[one_off].mean() < 0.6  # configured 0.40: partial answers dominate
    partial = judged["answer"].isin(["Partially YES", "Partially NO"]).to_numpy()
    assert partial[one_off].mean() > partial[truth].mean() + 0.3


def test_eccv_positives_are_verified_union_original(tables):
    pos, ann, q = tables["positives"], tables["annotations"], tables["queries"]
    for direction in (I2T, T2I):
        q_ids = set(q.loc[q["direction"] == direction, "query_id"])
        eccv_pos = _by_query(pos[(pos["source"] == "eccv") & (pos["direction"] == direction)], direction)
        orig = _by_query(pos[(pos["source"] == "original") & (pos["direction"] == direction)], direction)
        a = ann[(ann["direction"] == direction) & ann["answer"].isin(["100% YES", "Partially YES"])]
        verified = _by_query(a, direction)
        proposed = _by_query(ann[ann["direction"] == direction], direction)
        assert set(eccv_pos) == q_ids
        for qid in q_ids:
            assert eccv_pos[qid] == verified.get(qid, set()) | orig[qid]
            assert verified.get(qid, set()) <= proposed[qid]
        assert len(orig) == (160 if direction == I2T else 800)  # original covers every query
    st = tables["stages"].set_index(["direction", "stage"])["n"]
    assert (
        st[(I2T, "after union with original (ECCV Caption positives)")]
        == ((pos["source"] == "eccv") & (pos["direction"] == I2T)).sum()
    )


def test_cxc_positives_are_merged(cxc_tables, cxc, tables):
    pos, q = cxc_tables["positives"], cxc_tables["queries"]
    assert set(pos["source"]) == {"eccv", "cxc", "original"}
    pairs = set(zip(cxc["image_id"], cxc["caption_id"]))
    orig = pos[(pos["source"] == "original") & (pos["direction"] == I2T)]
    expected = pairs | set(zip(orig["image_id"], orig["caption_id"]))
    for direction in (I2T, T2I):
        c = pos[(pos["source"] == "cxc") & (pos["direction"] == direction)]
        assert set(zip(c["image_id"], c["caption_id"])) == expected
        q_ids = set(q.loc[q["direction"] == direction, "query_id"])
        with_cxc = _by_query(pos[(pos["source"] == "eccv") & (pos["direction"] == direction)], direction)
        without = _by_query(
            tables["positives"][
                (tables["positives"]["source"] == "eccv") & (tables["positives"]["direction"] == direction)
            ],
            direction,
        )
        cx = _by_query(c, direction)
        for qid in q_ids:
            assert with_cxc[qid] == without[qid] | cx.get(qid, set())
    added = sum(len(with_cxc[k] - without[k]) for k in q_ids)
    assert added > 0  # CxC adds positives for some caption queries


def test_the_cxc_modules_positives_table_is_accepted(world, cxc, cxc_tables):
    as_module = pd.concat(
        [
            pd.DataFrame({"split": "test", "task": "sits", "a_id": cxc["caption_id"], "b_id": cxc["image_id"]}),
            pd.DataFrame({"split": "test", "task": "sts", "a_id": [0, 1], "b_id": [2, 3]}),  # ignored: not SITS
        ],
        ignore_index=True,
    )
    built = eccv_build.build(world, CFG, cxc_positives=as_module, world_cfg=WCFG)
    pd.testing.assert_frame_equal(built["positives"], cxc_tables["positives"])


def test_cxc_with_an_unknown_id_names_the_row(world, cxc):
    bad = pd.concat([cxc, pd.DataFrame({"image_id": [10**6], "caption_id": [0]})], ignore_index=True)
    with pytest.raises(ValueError, match=f"cxc_positives row {len(cxc)}: image_id 1000000 is not in the world"):
        eccv_build.build(world, CFG, cxc_positives=bad, world_cfg=WCFG)


def test_pm_positives_are_items_with_equal_shape_sets(world, tables, lookups):
    scenes, _, own = lookups
    vec = {i: "".join(str(int(any(o.shape == s for o in sc.objects))) for s in SHAPES) for i, sc in scenes.items()}
    pmv = tables["pm_vectors"].set_index(["kind", "item_id"])
    assert all(pmv.loc[("image", i), "pm_vector"] == v for i, v in vec.items())
    pm = tables["pm_positives"]
    i2t = pm[pm["direction"] == I2T]
    got = set(zip(i2t["image_id"], i2t["caption_id"]))
    want = {(i, c) for i in vec for c in own if vec[i] == vec[own[c]]}
    assert got == want
    t2i = pm[pm["direction"] == T2I]
    assert set(zip(t2i["image_id"], t2i["caption_id"])) == want
    counts = i2t.groupby("image_id").size()
    img = pmv.loc["image"]
    assert np.array_equal(img.loc[counts.index, "n_pm_positives"].to_numpy(), counts.to_numpy())
    assert np.array_equal(img["pm_depth"].to_numpy(), np.minimum(img["n_pm_positives"].to_numpy(), 50))
    assert (img["n_pm_positives"] > 50).any()  # the cap binds somewhere


def test_pm_zeta_and_mentioned_vectors_widen_or_change_the_sets(world, tables):
    wide = eccv_build.build(world, replace(CFG, pm_zeta=1), world_cfg=WCFG)["pm_positives"]
    base = tables["pm_positives"]
    key = ["direction", "image_id", "caption_id"]
    assert len(wide) > len(base)
    assert len(base.merge(wide, on=key)) == len(base)  # zeta=0 pairs stay PM at zeta=1
    mentioned = eccv_build.build(world, replace(CFG, pm_caption_vector="mentioned"), world_cfg=WCFG)
    assert not mentioned["pm_positives"].equals(base)


def test_any_list_of_scorers_can_annotate(world, tables):
    def by_id(direction, query_ids, gallery_ids):
        return -np.abs(np.asarray(query_ids)[:, None] * 5 - np.asarray(gallery_ids)[None, :]).astype(float)

    built = eccv_build.build(world, CFG, annotators=[eccv_build.MachineAnnotator("near_id", by_id)], world_cfg=WCFG)
    ann = built["annotations"]
    assert set(ann["annotator"]) == {"near_id"}
    assert len(ann) == CFG.top_k * len(built["queries"])
    pd.testing.assert_frame_equal(built["queries"], tables["queries"])
    # a pair's answer does not depend on which annotators proposed it
    key = ["direction", "query_id", "candidate_id"]
    both = ann.merge(tables["annotations"], on=key, suffixes=("", "_world"))
    assert len(both) > 0 and (both["answer"] == both["answer_world"]).all()

    def wrong_shape(direction, query_ids, gallery_ids):
        return np.zeros((len(query_ids), 3))

    with pytest.raises(ValueError, match="annotator 'broken'.*shape"):
        eccv_build.build(world, CFG, annotators=[eccv_build.MachineAnnotator("broken", wrong_shape)], world_cfg=WCFG)


def test_models_annotate_by_their_cached_embeddings_by_default(world, tables, tmp_path):
    """The paper's MITL (the default): each model proposes the top-k of its embeddings' dot products."""
    default = make_config(EccvConfig)
    assert default.annotator_source == "models" and len(default.annotator_models) == 5
    img, cap = _ids(tables)
    rng = np.random.default_rng(7)
    paths = {}
    for name in ("m_a", "m_b"):
        (tmp_path / name).mkdir()
        _cache(tmp_path / name, img, rng.normal(size=(len(img), 16)), cap, rng.normal(size=(len(cap), 16)))
        paths[name] = tmp_path / name / "emb.npz"
    cfg = make_config(EccvConfig, annotator_models=["m_a", "m_b"])
    built = eccv_build.build(world, cfg, world_cfg=WCFG, annotator_embeddings=paths)
    ann = built["annotations"]
    assert set(ann["annotator"]) == {"m_a", "m_b"}
    pd.testing.assert_frame_equal(built["queries"], tables["queries"])  # the queries do not depend on annotators
    for name, path in paths.items():
        cache = EmbeddingCache(path)
        for direction, q_kind, g_ids in ((I2T, "image", cap), (T2I, "caption", img)):
            g_kind = "caption" if q_kind == "image" else "image"
            sub = ann[(ann["annotator"] == name) & (ann["direction"] == direction)]
            for q in sub["query_id"].unique()[:10]:  # naive: the full ranking's first k
                sims = cache.get(q_kind, np.array([q])) @ cache.get(g_kind, g_ids).T
                expected = g_ids[np.argsort(-sims[0], kind="stable")[: cfg.top_k]]
                got = sub[sub["query_id"] == q].sort_values("proposal_rank")["candidate_id"].to_numpy()
                np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match=r"missing \['m_b'\]"):
        eccv_build.build(world, cfg, world_cfg=WCFG, annotator_embeddings={"m_a": paths["m_a"]})
    with pytest.raises(ValueError, match="annotator_source is 'world'"):
        eccv_build.build(world, CFG, world_cfg=WCFG, annotator_embeddings=paths)
    with pytest.raises(ValueError, match="annotator_source"):
        make_config(EccvConfig, annotator_source="oracle")


# ----------------------------------------------------------------------------------------------
# Audit


def test_audit_matches_a_naive_recount(world, tables, lookups):
    audit = eccv_audit.audit(world, tables, CFG, world_cfg=WCFG)
    assert list(audit.columns) == ["row", "column", "value", "lo", "hi"]
    cell = audit.set_index(["row", "column"])
    scenes, structures, _ = lookups
    pos, q = tables["positives"], tables["queries"]
    for direction, short in ((I2T, "i2t"), (T2I, "t2i")):
        q_ids = q.loc[q["direction"] == direction, "query_id"].to_numpy()
        if direction == I2T:
            truth = {(int(i), int(c)) for i in q_ids for c in structures if _fits(lookups, i, c)}
        else:
            truth = {(int(i), int(c)) for c in q_ids for i in scenes if _fits(lookups, i, c)}
        for label, source in (("ECCV Caption", "eccv"), ("Original (COCO)", "original")):
            p = pos[(pos["source"] == source) & (pos["direction"] == direction)]
            qcol = "image_id" if direction == I2T else "caption_id"
            pairs = set(zip(p.loc[p[qcol].isin(q_ids), "image_id"], p.loc[p[qcol].isin(q_ids), "caption_id"]))
            hit = len(pairs & truth)
            prec, rec = cell.loc[(label, f"{short} precision")], cell.loc[(label, f"{short} recall")]
            assert prec["value"] == pytest.approx(100 * hit / len(pairs))
            assert rec["value"] == pytest.approx(100 * hit / len(truth))
            assert prec["lo"] <= prec["value"] <= prec["hi"]
            assert rec["lo"] <= rec["value"] <= rec["hi"]
        per_query = cell.loc[("Truth (every fitting pair)", f"{short} positives per query"), "value"]
        assert per_query == pytest.approx(len(truth) / len(q_ids))
        # ECCV finds many more true positives than COCO's originals, at a lower precision
        assert (
            cell.loc[("ECCV Caption", f"{short} recall"), "value"]
            > cell.loc[("Original (COCO)", f"{short} recall"), "value"]
        )
        assert cell.loc[("Original (COCO)", f"{short} precision"), "value"] >= 99.0
    assert np.isnan(cell.loc[("ECCV Caption", "i2t positives per query"), "lo"])


def test_audit_reports_cxc_union_original_when_built_with_cxc(world, cxc_tables, tables):
    with_cxc = eccv_audit.audit(world, cxc_tables, CFG, world_cfg=WCFG)
    without = eccv_audit.audit(world, tables, CFG, world_cfg=WCFG)
    assert "CxC ∪ original" in set(with_cxc["row"]) and "CxC ∪ original" not in set(without["row"])
    cell = with_cxc.set_index(["row", "column"])["value"]
    assert cell[("CxC ∪ original", "t2i recall")] > cell[("Original (COCO)", "t2i recall")]
    assert cell[("CxC ∪ original", "t2i precision")] == pytest.approx(100.0)  # the fixture's CxC is the truth


# ----------------------------------------------------------------------------------------------
# Scoring


def _cache(tmp_path, image_ids, image_emb, caption_ids, caption_emb) -> EmbeddingCache:
    def unit(a):
        return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)

    path = tmp_path / "emb.npz"
    write_embeddings(
        path,
        {
            "image_ids": np.asarray(image_ids, dtype=np.int64),
            "image_emb": unit(np.asarray(image_emb, dtype=np.float64)),
            "caption_ids": np.asarray(caption_ids, dtype=np.int64),
            "caption_emb": unit(np.asarray(caption_emb, dtype=np.float64)),
        },
    )
    return EmbeddingCache(path)


def _ids(tables):
    items = tables["items"]
    return (
        items.loc[items["kind"] == "image", "item_id"].to_numpy(),
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(),
    )


def _random_cache(tables, tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    img, cap = _ids(tables)
    return _cache(tmp_path, img, rng.normal(size=(len(img), 32)), cap, rng.normal(size=(len(cap), 32)))


def _oracle_cache(world, tables, tmp_path):
    """Images one-hot; a caption is its truth row over the images plus a bonus on its own image."""
    data = eccv_graded.split_data(world, "test", WCFG)
    img, cap = _ids(tables)
    caption_emb = data.fits.astype(float)
    caption_emb[np.arange(len(cap)), data.image_rows(data.caption_image)] += 2.0
    return _cache(tmp_path, img, np.eye(len(img)), cap, caption_emb)


def test_scores_are_one_row_per_query_with_rankings(tables, tmp_path):
    scores = eccv_score.score_dual(tables, _random_cache(tables, tmp_path))
    assert (scores["direction"] == I2T).sum() == 160 and (scores["direction"] == T2I).sum() == 800
    assert scores["eccv_query"].sum() == len(tables["queries"])
    assert scores.loc[~scores["eccv_query"], "eccv_map_at_r"].isna().all()
    assert scores.loc[scores["eccv_query"], "eccv_map_at_r"].notna().all()
    k = len(scores["ranked_ids"].iloc[0])
    assert k >= max(scores["n_eccv"].max(), scores["pm_depth"].max(), 10)
    assert all(np.all(np.diff(s) <= 0) for s in scores["ranked_scores"])


def test_per_query_metrics_match_a_naive_full_ranking(world, tables, tmp_path):
    cache = _random_cache(tables, tmp_path, seed=3)
    scores = eccv_score.score_dual(tables, cache)
    img, cap = _ids(tables)
    pos, pm = tables["positives"], tables["pm_positives"]
    for direction, q_kind, g_ids in ((I2T, "image", cap), (T2I, "caption", img)):
        rows = scores[(scores["direction"] == direction) & scores["eccv_query"]].head(12)
        g_kind = "caption" if q_kind == "image" else "image"
        sims = cache.get(q_kind, rows["query_id"].to_numpy()) @ cache.get(g_kind, g_ids).T
        eccv_pos = _by_query(pos[(pos["source"] == "eccv") & (pos["direction"] == direction)], direction)
        pm_pos = _by_query(pm[pm["direction"] == direction], direction)
        for r, (_, row) in enumerate(rows.iterrows()):
            full = g_ids[np.argsort(-sims[r], kind="stable")]
            p = sorted(eccv_pos[row["query_id"]])
            assert row["eccv_map_at_r"] == pytest.approx(map_at_r(full, p))
            assert row["eccv_r_precision"] == pytest.approx(r_precision(full, p))
            assert row["eccv_r1"] == float(full[0] in p)
            assert row["pmrp"] == pytest.approx(pmrp(full, sorted(pm_pos[row["query_id"]]), r_cap=50))


def test_random_embeddings_score_near_chance(tables, tmp_path):
    scores = eccv_score.score_dual(tables, _random_cache(tables, tmp_path, seed=1))
    summary = eccv_score.summarize(scores, n_boot=200)
    m = summary["metrics"]
    for short, g in (("i2t", 800), ("t2i", 160)):
        sub = scores[scores["direction"] == (I2T if short == "i2t" else T2I)]
        n_orig = sub["n_original"].to_numpy()
        # expected R@10 of a random ranking: 1 - C(G-R, 10) / C(G, 10)
        chance = 100 * np.mean([1 - np.prod([(g - r - j) / (g - j) for j in range(10)]) for r in n_orig])
        assert m[f"original_r10_{short}"]["lo"] - 3 < chance < m[f"original_r10_{short}"]["hi"] + 3
        e = sub[sub["eccv_query"]]
        rp_chance = 100 * np.mean(e["n_eccv"] / g)
        assert m[f"eccv_r_precision_{short}"]["value"] < rp_chance + 8
        assert m[f"eccv_map_at_r_{short}"]["value"] < 10
    assert m["eccv_map_at_r"]["value"] < 8


def test_truth_oracle_scores_well_above_chance(world, tables, tmp_path):
    oracle_cache = _oracle_cache(world, tables, tmp_path)
    oracle = eccv_score.summarize(eccv_score.score_dual(tables, oracle_cache), n_boot=200)["metrics"]
    rand = eccv_score.summarize(eccv_score.score_dual(tables, _random_cache(tables, tmp_path)), n_boot=200)["metrics"]
    assert oracle["original_r1_t2i"]["value"] == 100.0  # its own image always ranks first
    for name in ("eccv_map_at_r", "eccv_r_precision", "eccv_r1", "pmrp"):
        assert oracle[name]["lo"] > rand[name]["hi"], name
    # a truth oracle ranks every fitting image first, but ECCV lists only part of them: R-P stays far below 100
    assert 35 < oracle["eccv_r_precision_t2i"]["value"] < 90
    assert oracle["eccv_r1"]["value"] > 80


def test_summarize_is_the_mean_of_directions_with_intervals(cxc_tables, tmp_path):
    scores = eccv_score.score_dual(cxc_tables, _random_cache(cxc_tables, tmp_path))
    summary = eccv_score.summarize(scores, n_boot=100, seed=4)
    json.dumps(summary)  # serialisable
    m = summary["metrics"]
    for name in ("eccv_map_at_r", "eccv_r_precision", "eccv_r1", "eccv_r5", "eccv_r10", "pmrp", "cxc_r1"):
        assert m[name]["value"] == pytest.approx((m[f"{name}_i2t"]["value"] + m[f"{name}_t2i"]["value"]) / 2)
        assert m[name]["lo"] <= m[name]["value"] <= m[name]["hi"]
        assert m[name]["n"] == m[f"{name}_i2t"]["n"] + m[f"{name}_t2i"]["n"]
    assert m["eccv_map_at_r_i2t"]["n"] == 40 and m["pmrp_t2i"]["n"] == 800
    assert eccv_score.summarize(scores, n_boot=100, seed=4) == summary
    no_cxc = eccv_score.summarize(scores.drop(columns=[c for c in scores.columns if c.startswith("cxc_")]), n_boot=50)
    assert "cxc_r1" not in no_cxc["metrics"]


def test_coco_1k_folds_are_five_consecutive_fifths_of_the_images_with_their_captions(world, tables):
    image_fold, caption_fold = eccv_score.coco_1k_folds(tables)
    img, cap = _ids(tables)
    assert image_fold.value_counts().sort_index().tolist() == [32] * 5  # 160 images
    assert np.all(np.diff(image_fold.loc[np.sort(img)].to_numpy()) >= 0)  # world captions follow image ids
    own = dict(zip(world.caption_table["caption_id"], world.caption_table["image_id"]))
    assert all(caption_fold[c] == image_fold[own[c]] for c in cap)


def test_coco_1k_recalls_and_rsum_match_a_naive_per_fold_ranking(world, tables, tmp_path):
    cache = _random_cache(tables, tmp_path, seed=5)
    scores = eccv_score.score_dual(tables, cache)
    img, cap = _ids(tables)
    own = dict(zip(world.caption_table["caption_id"], world.caption_table["image_id"]))
    folds = np.array_split(np.sort(img), 5)  # naive: consecutive fifths of the sorted image ids
    expected = {}
    for f_imgs in folds:
        f_caps = np.array([c for c in cap if own[c] in set(f_imgs)])
        sims = cache.get("image", f_imgs) @ cache.get("caption", f_caps).T
        for r, i in enumerate(f_imgs):
            ranked = f_caps[np.argsort(-sims[r], kind="stable")]
            first = min(np.flatnonzero([own[c] == i for c in ranked]))
            expected[(I2T, int(i))] = first
        for r, c in enumerate(f_caps):
            ranked = f_imgs[np.argsort(-sims[:, r], kind="stable")]
            expected[(T2I, int(c))] = int(np.flatnonzero(ranked == own[c])[0])
    for row in scores.itertuples():
        first = expected[(row.direction, int(row.query_id))]
        for k in (1, 5, 10):
            assert getattr(row, f"coco_1k_r{k}") == float(first < k)
    summary = eccv_score.summarize(scores, n_boot=50)["metrics"]
    naive = {
        d: {k: 100 * np.mean([v < k for (dd, _), v in expected.items() if dd == d]) for k in (1, 5, 10)}
        for d in (I2T, T2I)
    }
    assert summary["coco_1k_r1"]["value"] == pytest.approx((naive[I2T][1] + naive[T2I][1]) / 2)
    assert summary["coco_1k_rsum"]["value"] == pytest.approx(sum(naive[d][k] for d in naive for k in (1, 5, 10)))
    assert summary["coco_1k_rsum"]["lo"] <= summary["coco_1k_rsum"]["value"] <= summary["coco_1k_rsum"]["hi"]
    assert "coco_1k_rsum_part" not in summary and "coco_1k_rsum_part_i2t" not in summary
    # a fold's gallery is a fifth of the split: R@1 in 1K is at least as high as in 5K for the same ranking
    assert summary["coco_1k_r1"]["value"] >= summary["original_r1"]["value"]


def test_figure3a_counts_queries_by_positives_as_a_naive_recount(cxc_tables):
    from itmbench.papers.eccv.tables import positives_per_query_long

    long = positives_per_query_long(cxc_tables)
    pos, queries = cxc_tables["positives"], cxc_tables["queries"]
    for direction, short, qcol in ((I2T, "i2t", "image_id"), (T2I, "t2i", "caption_id")):
        q_ids = queries.loc[queries["direction"] == direction, "query_id"].tolist()
        for source in ("eccv", "cxc", "original"):
            sub = pos[(pos["source"] == source) & (pos["direction"] == direction)]
            naive = [int((sub[qcol] == q).sum()) for q in q_ids]
            col = long[long["column"] == f"{source} {short}"]
            assert col["value"].sum() == len(q_ids)
            for n, v in zip(col["n_positives"], col["value"], strict=True):
                assert v == naive.count(n)
    eccv_mean = long[long["column"] == "eccv t2i"].eval("n_positives * value").sum()
    orig_mean = long[long["column"] == "original t2i"].eval("n_positives * value").sum()
    assert eccv_mean > orig_mean  # ECCV adds positives to a caption query's one original image


@pytest.mark.parametrize("zeta", [0, 1, 2])
@pytest.mark.parametrize("n_captions", [0, 1, 300])
def test_pm_match_is_the_l1_distance_of_every_pair(zeta, n_captions):
    rng = np.random.default_rng(zeta + n_captions)
    images = rng.integers(0, 3, size=(120, len(SHAPES)))  # shape counts: many repeated vectors
    captions = rng.integers(0, 3, size=(n_captions, len(SHAPES)))
    naive = np.array([[np.abs(c - i).sum() <= zeta for i in images] for c in captions], dtype=bool).reshape(
        n_captions, len(images)
    )
    assert np.array_equal(eccv_build.pm_match(images, captions, zeta), naive)
