"""ECCV appendix E in the world: Table E.1 cells and Figure E.2's bias against naive recomputations."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.eccv import bias
from itmbench.papers.published import load_published

I2T, T2I = "image_to_caption", "caption_to_image"
ANNOTATORS = ["a", "b", "c"]
ANSWERS = ["100% YES", "Partially YES", "Partially NO", "100% NO"]
GRADE = {"100% YES": 1.0, "Partially YES": 0.5}


def _crowd(seed=0, n_queries=30, gallery=40):
    """Random proposals (top-3 per annotator per query) with one answer per pair, and two models' rankings."""
    rng = np.random.default_rng(seed)
    rows, query_rows = [], []
    for direction in (T2I, I2T):
        for q in range(n_queries):
            qid = 1000 * (direction == I2T) + q
            query_rows.append((direction, qid))
            answers = {}
            for a in ANNOTATORS:
                for rank, c in enumerate(rng.choice(gallery, size=3, replace=False), start=1):
                    answers.setdefault(int(c), ANSWERS[int(rng.integers(0, 4))])
                    rows.append((direction, qid, int(c), a, rank, answers[int(c)]))
    ann = pd.DataFrame(rows, columns=["direction", "query_id", "candidate_id", "annotator", "proposal_rank", "answer"])
    queries = pd.DataFrame(query_rows, columns=["direction", "query_id"])
    scores = {
        m: pd.DataFrame(
            {
                "direction": queries["direction"],
                "query_id": queries["query_id"],
                "ranked_ids": [rng.permutation(gallery) for _ in range(len(queries))],
            }
        )
        for m in ("a", "b")  # models named as two of the annotators: self-bias is defined
    }
    return ann, queries, scores


def _naive(ann, queries, scores, direction, metric, theta, model):
    """Graded R@1 / R-Precision over the queries with a positive proposed by theta, by loops."""
    values = []
    ranked = scores[model].set_index(["direction", "query_id"])["ranked_ids"]
    for q in queries.loc[queries["direction"] == direction, "query_id"]:
        sub = ann[(ann["direction"] == direction) & (ann["query_id"] == q) & ann["annotator"].isin(theta)]
        grades = {int(c): GRADE.get(a, 0.0) for c, a in zip(sub["candidate_id"], sub["answer"])}
        grades = {c: g for c, g in grades.items() if g > 0}
        if not grades:
            continue
        r = list(ranked[(direction, q)])
        if metric == "recall_at_1":
            values.append(grades.get(int(r[0]), 0.0))
        else:
            values.append(sum(grades.get(int(x), 0.0) for x in r[: len(grades)]) / len(grades))
    return 100 * np.mean(values)


@pytest.fixture(scope="module")
def analysis():
    ann, queries, scores = _crowd()
    cells, by_size = bias.annotator_bias_analysis(ann, queries, scores, ANNOTATORS, n_boot=60, seed=1)
    return ann, queries, scores, cells, by_size


def test_every_subset_cell_matches_a_naive_recount(analysis):
    ann, queries, scores, cells, _ = analysis
    assert len(cells) == 2 * 2 * 7 * 2  # directions x metrics x non-empty subsets x models
    for r in cells.itertuples(index=False):
        theta = ANNOTATORS if r.subset == "All" else r.subset.split("+")
        expected = _naive(ann, queries, scores, r.direction, r.metric, theta, r.model)
        assert r.value == pytest.approx(expected), r
        assert r.lo <= r.value + 1e-9 and r.value - 1e-9 <= r.hi


def test_bias_per_size_is_the_mean_of_eq_e5_over_the_subsets(analysis):
    _, _, _, cells, by_size = analysis
    for (direction, metric), part in cells.groupby(["direction", "metric"]):
        s = {(r.subset, r.model): r.value for r in part.itertuples(index=False)}
        for size in (1, 2):
            subsets = ["+".join(c) for c in itertools.combinations(ANNOTATORS, size)]
            b = [np.mean([abs(s[(t, m)] - s[("All", m)]) for m in ("a", "b")]) for t in subsets]
            own = [[abs(s[(t, m)] - s[("All", m)]) for m in ("a", "b") if m in t.split("+")] for t in subsets]
            row = by_size[
                (by_size["direction"] == direction) & (by_size["metric"] == metric) & (by_size["size"] == size)
            ]
            q = row.set_index("quantity")
            assert q.at["bias", "value"] == pytest.approx(np.mean(b))
            # a subset without a model of its own (c) has no self-bias: left out of the mean
            assert q.at["self_bias", "value"] == pytest.approx(np.mean([np.mean(o) for o in own if o]))
            assert q.at["bias", "n_subsets"] == len(subsets)
    assert set(by_size["size"]) == {1, 2}  # the full set is the reference, never a row


def test_same_inputs_give_the_same_numbers_and_a_bigger_subset_is_closer_to_all(analysis):
    ann, queries, scores, cells, by_size = analysis
    again = bias.annotator_bias_analysis(ann, queries, scores, ANNOTATORS, n_boot=60, seed=1)
    pd.testing.assert_frame_equal(again[0], cells)
    pd.testing.assert_frame_equal(again[1], by_size)
    b = by_size[by_size["quantity"] == "bias"].groupby("size")["value"].mean()
    assert b[2] < b[1]  # pooling proposals brings the dataset closer to All (the paper's Figure E.2)


def test_table_e1_lays_out_singles_and_all_beside_the_printed_table(analysis):
    _, _, _, cells, _ = analysis
    long = bias.table_e1_long(cells, ANNOTATORS, load_published("eccv"))
    world = long[long["source"] == "world"]
    assert list(dict.fromkeys(world["column"])) == ["a", "b", "c", "All"]
    printed = long[long["source"] == "published"]
    cell = printed[(printed["row"] == "published (a) Text-to-Image Recall@1: PVSE") & (printed["column"] == "PVSE")]
    assert cell["value"].tolist() == [76.5]


def test_a_query_outside_the_queries_is_refused(analysis):
    ann, queries, scores, _, _ = analysis
    with pytest.raises(ValueError, match="not an ECCV query"):
        bias.annotator_bias_analysis(ann, queries.iloc[1:], scores, ANNOTATORS, n_boot=5)


def test_annotator_ranks_rank_one_is_best_and_ties_share_it():
    values = {
        "m1": {"r1": 50.0, "map_at_r": 10.0},
        "m2": {"r1": 60.0, "map_at_r": 10.0},
        "m3": {"r1": 40, "map_at_r": 30},
    }
    long = bias.annotator_ranks(values, ["m2"], "COCO 1K R@1")
    ranks = long.drop_duplicates("model").set_index("model")
    assert ranks["rank_r1"].to_dict() == {"m2": 1, "m1": 2, "m3": 3}
    assert ranks["rank_map_at_r"].to_dict() == {"m2": 2, "m1": 2, "m3": 1}
    assert ranks["annotator"].to_dict() == {"m2": True, "m1": False, "m3": False}


def test_the_commands_write_table_e1_figure_e2_and_draw_it_from_a_world_build(tmp_path):
    """build (models annotate) -> score -> eccv-appendix-e -> eccv-figure, on a small world."""
    from dataclasses import replace

    from itmbench.cli import main
    from itmbench.io import write_parquet
    from itmbench.papers.eccv import build as eccv_build
    from itmbench.papers.eccv import canonical, score
    from itmbench.papers.eccv.config import EccvConfig
    from itmbench.params import make_config
    from itmbench.scoring.embed import EmbeddingCache, write_embeddings
    from itmbench.world.generate import generate_world

    wcfg = replace(unit_world(), n_train=0, n_val=0, n_test=60)
    world = generate_world(wcfg)
    test = world.image_table["split"] == "test"
    img = world.image_table.loc[test, "image_id"].to_numpy(np.int64)
    cap = world.caption_table.loc[world.caption_table["split"] == "test", "caption_id"].to_numpy(np.int64)
    rng = np.random.default_rng(3)
    paths = {}
    for m in ("m1", "m2"):
        paths[m] = tmp_path / f"{m}.npz"
        emb = {"image_ids": img, "caption_ids": cap}
        emb["image_emb"] = rng.normal(size=(len(img), 8)).astype(np.float32)
        emb["caption_emb"] = rng.normal(size=(len(cap), 8)).astype(np.float32)
        write_embeddings(paths[m], emb)
    cfg = make_config(EccvConfig, annotator_models=["m1", "m2"], image_query_fraction=0.5, caption_query_fraction=0.2)
    tables = eccv_build.build(world, cfg, world_cfg=wcfg, annotator_embeddings=paths)
    canonical.write(tables, tmp_path / "eccv")
    flags = []
    for m, path in paths.items():
        write_parquet(tmp_path / f"{m}.parquet", score.score_dual(tables, EmbeddingCache(path)))
        flags += ["--scores", f"{m}={tmp_path / f'{m}.parquet'}"]
    out = tmp_path / "tables"
    argv = ["eccv-appendix-e", "--bench", str(tmp_path / "eccv"), *flags, "--n-boot", "20"]
    assert main([*argv, "--out-table", str(out / "tableE1.csv"), "--out-bias", str(out / "figureE2.csv")]) == 0
    e1 = pd.read_csv(out / "tableE1.csv")
    assert list(dict.fromkeys(e1.loc[e1["source"] == "world", "column"])) == ["m1", "m2", "All"]
    assert (out / "tableE1.md").read_text().count("Text-to-Image Recall@1: m1") == 1
    e2 = pd.read_csv(out / "figureE2.csv")
    assert set(e2["size"]) == {1} and set(e2["quantity"]) == set(bias.BIAS_QUANTITIES)
    png = tmp_path / "fig" / "figureE2.png"
    assert (
        main(
            ["eccv-figure", "--figure", "figureE2", "--data", str(out / "figureE2.csv")]
            + ["--source", "world", "--out-png", str(png)]
        )
        == 0
    )
    assert png.stat().st_size > 1000 and png.with_suffix(".pdf").exists()


def test_annotator_ranks_command_reads_metrics_and_the_figure_draws_them(tmp_path):
    import json

    from itmbench.cli import main

    values = {"clip": (30.0, 5.0), "vse": (20.0, 7.0), "de_i2t": (25.0, 6.0), "random": (0.1, 0.0)}
    paths = []
    for m, (r1, map_r) in values.items():
        doc = {"metrics": {}}
        for name in ("original_r1", "original_r5", "original_r10", "cxc_r1", "eccv_r1", "eccv_r_precision", "pmrp"):
            doc["metrics"][name] = {"value": r1, "lo": r1, "hi": r1}
        doc["metrics"]["coco_1k_r1"] = {"value": r1 + 10, "lo": r1, "hi": r1 + 20}
        doc["metrics"]["eccv_map_at_r"] = {"value": map_r, "lo": map_r, "hi": map_r}
        path = tmp_path / "metrics" / "eccv" / f"{m}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        paths.append(str(path))
    out = tmp_path / "figureE3.csv"
    kinds = json.dumps({"random": "chance"})
    fig5 = tmp_path / "figure5.csv"
    argv = ["eccv-annotator-ranks", *paths, "--kinds", kinds, "--annotator", "vse", "--out-csv", str(out)]
    assert main([*argv, "--out-ranks", str(fig5)]) == 0
    ranks = pd.read_csv(fig5)
    # Figure 5: every Table 5 metric the models have, ranked; naive: sort the values by hand
    by_map = ranks[ranks["metric"] == "ECCV mAP@R"].set_index("model")["rank"].to_dict()
    assert by_map == {"vse": 1, "de_i2t": 2, "clip": 3}
    assert ranks[ranks["metric"] == "COCO 1K R@1"].set_index("model")["rank"].to_dict() == {
        "clip": 1,
        "de_i2t": 2,
        "vse": 3,
    }
    assert "RSUM" not in set(ranks["metric"])  # no model has it: left out, not ranked on nothing
    assert (
        main(
            [
                "eccv-figure",
                "--figure",
                "figure5",
                "--data",
                str(fig5),
                "--source",
                "world",
                "--out-png",
                str(tmp_path / "f5.png"),
            ]
        )
        == 0
    )
    assert (tmp_path / "f5.pdf").exists()
    table = pd.read_csv(out).drop_duplicates("model").set_index("model")
    assert "random" not in table.index  # the chance model is no image-text model
    assert table["rank_r1"].to_dict() == {"clip": 1, "de_i2t": 2, "vse": 3}
    assert table["rank_map_at_r"].to_dict() == {"clip": 3, "de_i2t": 2, "vse": 1}
    assert "rank by COCO 1K R@1" in set(pd.read_csv(out)["column"])
    png = tmp_path / "figureE3.png"
    assert (
        main(["eccv-figure", "--figure", "figureE3", "--data", str(out), "--source", "world"] + ["--out-png", str(png)])
        == 0
    )
    assert png.exists() and png.with_suffix(".pdf").exists()


def test_each_quantity_carries_its_trend_over_the_sizes(analysis):
    """Figure E.2's trend test: the least-squares slope of each quantity on |Theta|, its interval around it."""
    *_, by_size = analysis
    for _, part in by_size.groupby(["direction", "metric", "quantity"]):
        part = part.sort_values("size")
        assert part["slope"].nunique() == 1  # one trend per quantity, on each of its rows
        assert part["slope"].iloc[0] == pytest.approx(np.polyfit(part["size"], part["value"], 1)[0])
        assert part["slope_lo"].iloc[0] <= part["slope"].iloc[0] + 1e-9 <= part["slope_hi"].iloc[0] + 2e-9
    long = bias.figure_e2_long(by_size)
    assert list(long.columns[-3:]) == ["slope", "slope_lo", "slope_hi"]
