"""Pair scoring: each benchmark's pair list, and per-instance tables from pair scores equal those from embeddings."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.bison import build as bison_build
from itmbench.papers.bison import score as bison_score
from itmbench.papers.bison.config import BisonConfig
from itmbench.papers.bivlc import build as bivlc_build
from itmbench.papers.bivlc import score as bivlc_score
from itmbench.papers.bivlc.config import BiVLCConfig
from itmbench.papers.cxc import build as cxc_build
from itmbench.papers.cxc import score as cxc_score
from itmbench.papers.cxc.config import CxcConfig
from itmbench.papers.eccv import build as eccv_build
from itmbench.papers.eccv import score as eccv_score
from itmbench.papers.eccv.config import EccvConfig
from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic import score as mcic_score
from itmbench.papers.mcic.config import MCICConfig
from itmbench.papers.retrieval import build as retrieval
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.params import make_config
from itmbench.scoring.embed import EmbeddingCache, write_embeddings
from itmbench.scoring.pairs import PairScores, write_pair_scores
from itmbench.scoring.retrieval import score_retrieval
from itmbench.world.generate import generate_world

WCFG = unit_world(n_train=120, n_val=20, n_test=60)


def build_world_retrieval(world, split, margin, max_objects):
    """The retrieval benchmark's items and positives on one split of the world."""
    assert (margin, max_objects) == (WCFG.relation_margin, WCFG.max_objects)
    tables = retrieval.build(world, make_config(RetrievalConfig, split=split), world_cfg=WCFG)
    return tables["items"], tables["positives"]


@pytest.fixture(scope="module")
def world():
    return generate_world(WCFG)


@pytest.fixture(scope="module")
def built(world):
    return {
        "bison": bison_build.build(world, make_config(BisonConfig, vector_size=16, epochs=3), world_cfg=WCFG),
        "mcic": mcic_build.build(
            world,
            make_config(
                MCICConfig,
                pv_grid={"vector_size": [64], "epochs": [10]},
                neighbourhood=30,
                relation_margin=WCFG.relation_margin,
            ),
        ),
        "bivlc": bivlc_build.build(world, make_config(BiVLCConfig)),
        "cxc": cxc_build.build(world, make_config(CxcConfig), world_cfg=WCFG),
        "eccv": eccv_build.build(world, make_config(EccvConfig, annotator_source="world"), world_cfg=WCFG),
    }


@pytest.fixture(scope="module")
def cache(world, built, tmp_path_factory):
    """Random unit embeddings of every world item and of BiVLC's added items."""
    rng = np.random.default_rng(0)
    image_ids = np.concatenate([world.image_table["image_id"].to_numpy(), built["bivlc"]["extra_images"]["image_id"]])
    caption_ids = np.concatenate(
        [world.caption_table["caption_id"].to_numpy(), built["bivlc"]["extra_captions"]["caption_id"]]
    )

    def unit(n: int) -> np.ndarray:
        x = rng.normal(size=(n, 16)).astype(np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    path = tmp_path_factory.mktemp("cache") / "items.npz"
    write_embeddings(
        path,
        {
            "image_ids": image_ids.astype(np.int64),
            "image_emb": unit(len(image_ids)),
            "caption_ids": caption_ids.astype(np.int64),
            "caption_emb": unit(len(caption_ids)),
        },
    )
    return EmbeddingCache(path)


def pair_scores_from(cache: EmbeddingCache, pairs: pd.DataFrame, path) -> PairScores:
    """A pair-score file whose scores are the embeddings' dot products (float64)."""
    c = cache.get("caption", pairs["caption_id"].to_numpy()).astype(np.float64)
    i = cache.get("image", pairs["image_id"].to_numpy()).astype(np.float64)
    write_pair_scores(path, pairs, (c * i).sum(axis=1))
    return PairScores(path)


def as_set(pairs: pd.DataFrame) -> set[tuple[int, int]]:
    return set(zip(pairs["caption_id"].astype(int), pairs["image_id"].astype(int)))


def test_bison_lists_the_query_with_both_images(built):
    ann = built["bison"]["annotations"]
    pairs = bison_score.pairs_needed(built["bison"])
    want = set(zip(ann["caption_id"], ann["true_image_id"])) | set(zip(ann["caption_id"], ann["false_image_id"]))
    assert as_set(pairs) == {(int(c), int(i)) for c, i in want}
    assert len(pairs) == len(as_set(pairs)) <= 2 * len(ann) and len(ann) > 10


def test_mcic_lists_five_options_per_image(built):
    ex = built["mcic"]["examples"]
    pairs = mcic_score.pairs_needed(built["mcic"])
    want = {(int(c), int(i)) for ids, i in zip(ex["option_caption_ids"], ex["image_id"]) for c in ids}
    assert as_set(pairs) == want and len(ex) > 5
    assert len(pairs) == len(want) <= 5 * len(ex)


def test_bivlc_lists_two_pairs_per_sugarcrepe_and_four_per_bivlc_instance(built):
    tables = built["bivlc"]
    sc, inst = tables["sugarcrepe"], tables["instances"].set_index("sugarcrepe_id")
    want = set()
    for row in sc.itertuples(index=False):
        want |= {(row.caption_id, row.image_id), (row.negative_caption_id, row.image_id)}
        if row.in_bivlc:
            i1 = int(inst.loc[row.id, "negative_image"])
            want |= {(row.caption_id, i1), (row.negative_caption_id, i1)}
    assert as_set(bivlc_score.pairs_needed(tables)) == {(int(c), int(i)) for c, i in want}
    assert sc["in_bivlc"].sum() > 0


@pytest.mark.parametrize("name, module", [("bison", bison_score), ("mcic", mcic_score), ("bivlc", bivlc_score)])
def test_pair_scores_give_the_embedding_tables(name, module, built, cache, tmp_path):
    tables = built[name]
    from_pairs = module.score_pairs(
        tables, pair_scores_from(cache, module.pairs_needed(tables), tmp_path / "p.parquet")
    )
    from_embeddings = module.score_dual(tables, cache)
    assert list(from_pairs.columns) == list(from_embeddings.columns) and len(from_pairs) == len(from_embeddings)
    for col in from_pairs.columns:
        if pd.api.types.is_float_dtype(from_pairs[col]):
            np.testing.assert_allclose(from_pairs[col], from_embeddings[col], rtol=0, atol=1e-6)
        else:
            assert from_pairs[col].tolist() == from_embeddings[col].tolist(), col
    assert module.summarize(from_pairs, n_boot=50)["metrics"] == module.summarize(from_embeddings, n_boot=50)["metrics"]


def test_gallery_grid_gives_cxc_image_text_rows(built, cache, tmp_path):
    tables = built["cxc"]
    pairs = cxc_score.pairs_needed(tables)
    items = tables["items"]
    n_img, n_cap = (items["kind"] == "image").sum(), (items["kind"] == "caption").sum()
    assert len(pairs) == n_img * n_cap
    from_pairs = cxc_score.score_pairs(tables, pair_scores_from(cache, pairs, tmp_path / "p.parquet"))
    dual = cxc_score.score_dual(tables, cache)
    image_text = dual[dual["task"].isin(["i2t", "t2i", "sits"])].reset_index(drop=True)
    assert set(from_pairs["task"]) == {"i2t", "t2i", "sits"}  # a cross scorer has no t2t/i2i/STS/SIS rows
    assert from_pairs["rank"].tolist() == image_text["rank"].tolist()
    np.testing.assert_allclose(from_pairs["model_score"], image_text["model_score"], rtol=0, atol=1e-6)


def test_gallery_grid_gives_eccv_rankings(built, cache, tmp_path):
    tables = built["eccv"]
    from_pairs = eccv_score.score_pairs(
        tables, pair_scores_from(cache, eccv_score.pairs_needed(tables), tmp_path / "p.parquet")
    )
    dual = eccv_score.score_dual(tables, cache)
    assert [list(r) for r in from_pairs["ranked_ids"]] == [list(r) for r in dual["ranked_ids"]]
    for col in ("eccv_map_at_r", "eccv_r_precision", "pmrp"):
        np.testing.assert_allclose(from_pairs[col], dual[col], rtol=0, atol=1e-12)


def test_gallery_grid_gives_retrieval_ranks(world, cache, tmp_path):
    items, positives = build_world_retrieval(world, "test", WCFG.relation_margin, WCFG.max_objects)
    from itmbench.scoring.pairs import items_grid

    grid = pair_scores_from(cache, items_grid(items), tmp_path / "p.parquet").as_cache(
        items.loc[items["kind"] == "caption", "item_id"].to_numpy(), items.loc[items["kind"] == "image", "item_id"]
    )
    a, b = score_retrieval(items, positives, grid), score_retrieval(items, positives, cache)
    assert a["rank"].tolist() == b["rank"].tolist()


def test_a_missing_pair_is_named(built, tmp_path):
    pairs = bison_score.pairs_needed(built["bison"])
    write_pair_scores(tmp_path / "p.parquet", pairs.iloc[1:], np.zeros(len(pairs) - 1))
    first = pairs.iloc[0]
    with pytest.raises(KeyError, match=f"caption {int(first['caption_id'])}, image {int(first['image_id'])}"):
        bison_score.score_pairs(built["bison"], PairScores(tmp_path / "p.parquet"))


# --- shortlist re-ranking: a cross scorer ranks a dual encoder's top-k on the gallery benchmarks ---


@pytest.fixture(scope="module")
def cross_cache(world, tmp_path_factory):
    """A second set of random embeddings whose dot products stand for a cross scorer's pair scores."""
    rng = np.random.default_rng(1)
    image_ids = world.image_table["image_id"].to_numpy(np.int64)
    caption_ids = world.caption_table["caption_id"].to_numpy(np.int64)
    path = tmp_path_factory.mktemp("cross") / "items.npz"
    write_embeddings(
        path,
        {
            "image_ids": image_ids,
            "image_emb": rng.normal(size=(len(image_ids), 8)).astype(np.float32),
            "caption_ids": caption_ids,
            "caption_emb": rng.normal(size=(len(caption_ids), 8)).astype(np.float32),
        },
    )
    return EmbeddingCache(path)


def naive_rerank(q_id, direction, caption_ids, image_ids, shortlist_cache, cross_cache, k):
    """A query's ranked gallery ids, by hand: its top-k by the shortlist model sorted by the cross
    scores, then every other item by the shortlist model."""
    q_kind, g_kind, g_ids = ("image", "caption", caption_ids) if direction == "i2t" else ("caption", "image", image_ids)
    dual = (shortlist_cache.get(g_kind, g_ids).astype(np.float64) @ shortlist_cache.get(q_kind, [q_id]).T)[:, 0]
    cross = (cross_cache.get(g_kind, g_ids).astype(np.float64) @ cross_cache.get(q_kind, [q_id]).T)[:, 0]
    by_dual = sorted(range(len(g_ids)), key=lambda j: (-np.float32(dual[j]), j))
    short, rest = by_dual[:k], by_dual[k:]
    return [int(g_ids[j]) for j in sorted(short, key=lambda j: -cross[j]) + rest]


def test_shortlist_pairs_are_each_querys_top_k(world, cache):
    from itmbench.scoring.pairs import Shortlist, gallery_ids, shortlist_pairs

    items, _ = build_world_retrieval(world, "test", WCFG.relation_margin, WCFG.max_objects)
    c, i = gallery_ids(items)
    pairs = shortlist_pairs(items, Shortlist(cache, 4))
    got = as_set(pairs)
    for image in i[:10]:
        top = naive_rerank(image, "i2t", c, i, cache, cache, 4)[:4]
        assert {(cap, int(image)) for cap in top} <= got
    for caption in c[:10]:
        top = naive_rerank(caption, "t2i", c, i, cache, cache, 4)[:4]
        assert {(int(caption), img) for img in top} <= got
    # nothing else: at most k per query in each direction, far fewer than the grid
    assert len(pairs) <= 4 * (len(c) + len(i)) < len(c) * len(i)
    with pytest.raises(ValueError, match="positive number"):
        Shortlist(cache, 0)


def test_retrieval_rerank_agrees_with_a_naive_reranking(world, cache, cross_cache, tmp_path):
    from itmbench.scoring.pairs import Shortlist, by_direction, gallery_ids, rerank_caches, shortlist_pairs

    items, positives = build_world_retrieval(world, "test", WCFG.relation_margin, WCFG.max_objects)
    c, i = gallery_ids(items)
    k = 5
    shortlist = Shortlist(cache, k)
    pairs = pair_scores_from(cross_cache, shortlist_pairs(items, shortlist), tmp_path / "p.parquet")
    grids = rerank_caches(items, pairs, shortlist)
    got = by_direction({d: score_retrieval(items, positives, grids[d]) for d in grids}, "direction")
    checked = 0
    for row in got.itertuples():
        if row.n_positives == 0 or checked > 60:
            continue
        pset = positives[positives["positive_set"] == row.positive_set]
        q_col, g_col = ("image_id", "caption_id") if row.direction == "i2t" else ("caption_id", "image_id")
        pos = set(pset.loc[pset[q_col] == row.query_id, g_col].astype(int))
        ranked = naive_rerank(row.query_id, row.direction, c, i, cache, cross_cache, k)
        assert row.rank == 1 + next(r for r, g in enumerate(ranked) if g in pos), row
        checked += 1
    assert checked > 60


def test_a_shortlist_as_long_as_the_gallery_is_the_full_grid(world, cache, cross_cache, tmp_path):
    from itmbench.scoring.pairs import Shortlist, by_direction, items_grid, rerank_caches, shortlist_pairs

    items, positives = build_world_retrieval(world, "test", WCFG.relation_margin, WCFG.max_objects)
    shortlist = Shortlist(cache, 100_000)
    pairs = shortlist_pairs(items, shortlist)
    assert as_set(pairs) == as_set(items_grid(items))
    scores = pair_scores_from(cross_cache, pairs, tmp_path / "p.parquet")
    grids = rerank_caches(items, scores, shortlist)
    rerank = by_direction({d: score_retrieval(items, positives, grids[d]) for d in grids}, "direction")
    full = score_retrieval(
        items, positives, scores.as_cache(*[items.loc[items["kind"] == k, "item_id"] for k in ("caption", "image")])
    )
    assert rerank["rank"].tolist() == full["rank"].tolist()


def test_eccv_rerank_puts_the_cross_scorers_order_first(built, cache, cross_cache, tmp_path):
    from itmbench.scoring.pairs import Shortlist, gallery_ids

    tables, k = built["eccv"], 3
    shortlist = Shortlist(cache, k)
    pairs = eccv_score.pairs_needed(tables, shortlist=shortlist)
    got = eccv_score.score_pairs(
        tables, pair_scores_from(cross_cache, pairs, tmp_path / "p.parquet"), shortlist=shortlist
    )
    dual = eccv_score.score_dual(tables, cache)
    assert len(got) == len(dual) and got["direction"].tolist() == dual["direction"].tolist()
    c, i = gallery_ids(tables["items"])
    for row in got.iloc[:: max(1, len(got) // 40)].itertuples():
        want = naive_rerank(
            row.query_id,
            {"image_to_caption": "i2t", "caption_to_image": "t2i"}[row.direction],
            c,
            i,
            cache,
            cross_cache,
            k,
        )
        assert list(row.ranked_ids) == want[: len(row.ranked_ids)], row.query_id
    assert eccv_score.summarize(got, n_boot=20)["metrics"]  # the metrics path reads the re-ranked table


def test_cxc_rerank_scores_every_sits_pair_itself(built, cache, cross_cache, tmp_path):
    from itmbench.scoring.pairs import Shortlist

    tables = built["cxc"]
    shortlist = Shortlist(cache, 3)
    pairs = cxc_score.pairs_needed(tables, shortlist=shortlist)
    assert as_set(cxc_score.rated_pairs(tables)) <= as_set(pairs)
    got = cxc_score.score_pairs(
        tables, pair_scores_from(cross_cache, pairs, tmp_path / "p.parquet"), shortlist=shortlist
    )
    full_pairs = pair_scores_from(cross_cache, cxc_score.pairs_needed(tables), tmp_path / "full.parquet")
    full = cxc_score.score_pairs(tables, full_pairs)
    sits, full_sits = got[got["task"] == "sits"], full[full["task"] == "sits"]
    assert len(sits) > 10
    np.testing.assert_allclose(sits["model_score"], full_sits["model_score"], rtol=0, atol=1e-6)
    ranks = got.loc[got["task"].isin(["i2t", "t2i"]), "rank"].to_numpy()
    full_ranks = full.loc[full["task"].isin(["i2t", "t2i"]), "rank"].to_numpy()
    assert len(ranks) == len(full_ranks) and not np.array_equal(ranks, full_ranks)  # re-ranking changed something


def test_one_hot_rows_give_the_dense_products_values():
    """A pair-score grid's images are one-hot rows: every product the ranking takes with them (the
    ranking's dots, its gathered top-k dots, the row-wise dots of rated pairs) equals the dense
    matrix product's, bit for bit, on both sides and in float32 and float64."""
    from itmbench.scoring.embed import OneHot, row_dots
    from itmbench.scoring.retrieval import dots, first_positive_ranks, gathered_dots, top_k

    rng = np.random.default_rng(3)
    for dtype in (np.float64, np.float32):
        grid = rng.normal(size=(37, 11)).astype(dtype)
        grid[0, :3] = grid[0, 3]  # ties rank the same way
        hot = OneHot.identity(11).astype(dtype, copy=False)
        eye = np.eye(11, dtype=dtype)
        some = hot[np.array([4, 0, 4, 10])]
        assert some.shape == (4, 11) and len(hot[2:5]) == 3 and len(hot[np.arange(11) % 2 == 0]) == 6
        np.testing.assert_array_equal(some.dense(), eye[[4, 0, 4, 10]])
        for q, g, dq, dg in ((grid, hot, grid, eye), (hot, grid, eye, grid), (some, hot, eye[[4, 0, 4, 10]], eye)):
            dense = dq @ dg.T
            got = dots(q, g)
            assert got.dtype == dense.dtype and got.flags.c_contiguous
            np.testing.assert_array_equal(got, dense)
            top = top_k(dq, dg, 3)
            np.testing.assert_array_equal(top_k(q, g, 3), top)
            np.testing.assert_array_equal(gathered_dots(q, g, top), np.einsum("qd,qkd->qk", dq, dg[top]))
            positives = [np.array([r % dg.shape[0]]) for r in range(len(dq))]
            np.testing.assert_array_equal(
                first_positive_ranks(q, g, positives, chunk_size=5), first_positive_ranks(dq, dg, positives)
            )
        rows = rng.integers(0, 11, size=37)
        np.testing.assert_array_equal(row_dots(grid, hot[rows]), (grid.astype(np.float64) * eye[rows]).sum(axis=1))
        np.testing.assert_array_equal(row_dots(hot[rows], grid), row_dots(grid, hot[rows]))
    with pytest.raises(TypeError, match="one-hot rows"):
        OneHot.identity(3)[0]


@pytest.mark.parametrize("bench", ["retrieval", "cxc", "eccv"])
def test_each_rerank_grid_ranks_only_the_direction_taken_from_it(bench, world, built, cache, cross_cache, tmp_path):
    """score_pairs ranks a grid's own direction only: the table equals taking each direction's rows from the whole
    scoring of its grid (`by_direction`), as before it ranked both on both grids."""
    from itmbench.papers.retrieval import score as retrieval_score
    from itmbench.scoring.pairs import Shortlist, by_direction, rerank_caches

    if bench == "retrieval":
        items, positives = build_world_retrieval(world, "test", WCFG.relation_margin, WCFG.max_objects)
        tables = {"items": items, "positives": positives}
        module, whole, column = retrieval_score, lambda g: score_retrieval(items, positives, g), "direction"
    else:
        tables = built[bench]
        module = {"cxc": cxc_score, "eccv": eccv_score}[bench]
        whole, column = (lambda g: module.score_dual(tables, g)), {"cxc": "task", "eccv": "direction"}[bench]
    shortlist = Shortlist(cache, 3)
    pairs = pair_scores_from(cross_cache, module.pairs_needed(tables, shortlist=shortlist), tmp_path / "p.parquet")
    got = module.score_pairs(tables, pairs, shortlist=shortlist)
    grids = rerank_caches(tables["items"], pairs, shortlist)
    t2i = "caption_to_image" if bench == "eccv" else "t2i"
    want = by_direction({d: whole(grids[d]) for d in grids}, column, t2i=t2i)
    if bench == "cxc":  # its SITS rows then read the pair scores themselves, in score_pairs as before
        sits = (want["task"] == "sits").to_numpy()
        assert got.loc[~sits].equals(want.loc[~sits])
    else:
        assert got.equals(want)
    if "rank" in got.columns:
        assert (got.loc[got["part"] != "correlation", "rank"] > 0).all() if bench == "cxc" else (got["rank"] > 0).all()


def test_one_scoring_of_the_galleries_union_gives_each_gallery_benchmark_its_own_tables(
    world, built, cache, cross_cache, tmp_path
):
    """Rule score_gallery_pairs: retrieval, ECCV and CxC rank the same gallery; a cross scorer scores the union of
    their pairs once and each reads its table from that file, as it would from its own pair list's."""
    from itmbench.papers.retrieval import score as retrieval_score
    from itmbench.scoring.pairs import Shortlist, union_pairs

    shortlist = Shortlist(cache, 3)
    tables = {
        "retrieval": retrieval.build(world, make_config(RetrievalConfig, split="test"), world_cfg=WCFG),
        "eccv": built["eccv"],
        "cxc": built["cxc"],
    }
    modules = {"retrieval": retrieval_score, "eccv": eccv_score, "cxc": cxc_score}
    needed = {b: modules[b].pairs_needed(tables[b], shortlist=shortlist) for b in tables}
    union = union_pairs(list(needed.values()))
    assert as_set(union) == set().union(*(as_set(p) for p in needed.values()))
    assert len(union) == len(as_set(union)) < sum(len(p) for p in needed.values())  # shared pairs scored once
    shared = pair_scores_from(cross_cache, union, tmp_path / "union.parquet")
    for bench, module in modules.items():
        own = pair_scores_from(cross_cache, needed[bench], tmp_path / f"{bench}.parquet")
        got = module.score_pairs(tables[bench], shared, shortlist=shortlist)
        pd.testing.assert_frame_equal(got, module.score_pairs(tables[bench], own, shortlist=shortlist))
    with pytest.raises(ValueError, match="no pair list"):
        union_pairs([])
