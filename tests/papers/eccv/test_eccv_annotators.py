"""ECCV Tables A.1 and B.2 in the world: the annotators' similarity and the answers per annotator and rank, against
worked examples and naive recomputations (scipy's Kendall tau-b over explicitly built lists, loops over rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from itmbench.papers.eccv import annotators
from itmbench.papers.eccv.config import ANSWERS
from itmbench.papers.published import load_published

I2T, T2I = "image_to_caption", "caption_to_image"


def _scores_from_lists(lists: list[list[int]], n_gallery: int) -> np.ndarray:
    """A score matrix whose top items are `lists` (best first); the rest score below, by lower position."""
    s = np.zeros((len(lists), n_gallery))
    for q, items in enumerate(lists):
        s[q] = -np.arange(n_gallery) / n_gallery - 10  # everything else: ordered by position, below the list
        for r, item in enumerate(items):
            s[q, item] = len(items) - r
    return s


def _naive_tau(list_a: list[int], list_b: list[int]) -> float:
    """scipy's tau-b over the union of two top-K lists, an absent item at rank K + 1."""
    k = len(list_a)
    union = list(dict.fromkeys(list_a + list_b))
    x = [list_a.index(i) + 1 if i in list_a else k + 1 for i in union]
    y = [list_b.index(i) + 1 if i in list_b else k + 1 for i in union]
    return float(kendalltau(x, y, variant="b").statistic)


def test_kendall_worked_examples():
    # identical lists: 1; reversed: -1; disjoint lists of 2: x = [1, 2, 3, 3], y = [3, 3, 1, 2]
    assert annotators.kendall_tau_b_topk(np.array([[0, 1, 2]]), np.array([[0, 1, 2]]), 5)[0] == pytest.approx(1.0)
    assert annotators.kendall_tau_b_topk(np.array([[0, 1, 2]]), np.array([[2, 1, 0]]), 5)[0] == pytest.approx(-1.0)
    disjoint = annotators.kendall_tau_b_topk(np.array([[0, 1]]), np.array([[2, 3]]), 5)[0]
    # pairs: (0,1) x< y tied; (0,2) x< y> D; (0,3) D; (1,2) D; (1,3) D; (2,3) x tied y<: 4 discordant,
    # ties only in x: 1, only in y: 1 -> -4 / sqrt(5 * 5)
    assert disjoint == pytest.approx(-4 / 5)
    assert disjoint == pytest.approx(kendalltau([1, 2, 3, 3], [3, 3, 1, 2], variant="b").statistic)


def test_kendall_matches_scipy_on_random_lists():
    rng = np.random.default_rng(0)
    n_gallery, k = 30, 6
    s_a, s_b = rng.normal(size=(40, n_gallery)), rng.normal(size=(40, n_gallery))
    s_b[:20] = s_a[:20] + 0.3 * rng.normal(size=(20, n_gallery))  # half the queries: similar lists
    top_a, top_b = annotators.top_k_lists(s_a, k), annotators.top_k_lists(s_b, k)
    fast = annotators.kendall_tau_b_topk(top_a, top_b, n_gallery, chunk=7)
    naive = [_naive_tau(list(map(int, a)), list(map(int, b))) for a, b in zip(top_a, top_b, strict=True)]
    np.testing.assert_allclose(fast, naive, atol=1e-12)
    assert fast[:20].mean() > fast[20:].mean()  # the similar half agrees more
    # symmetric
    np.testing.assert_allclose(fast, annotators.kendall_tau_b_topk(top_b, top_a, n_gallery), atol=1e-12)


def test_top1_rank_worked_example():
    row = np.array([[4, 0, 1], [2, 3, 0]])
    column = np.array([[1, 4, 0], [0, 1, 3]])
    # query 0: row's top-1 (4) is column's 2nd; query 1: row's top-1 (2) is absent -> K + 1 = 4
    np.testing.assert_array_equal(annotators.top1_rank_in(row, column, 6), [2.0, 4.0])


def test_similarity_cells_are_means_over_queries_with_bootstrap_intervals():
    lists = {"a": [[0, 1, 2], [3, 4, 5]], "b": [[0, 1, 2], [5, 4, 3]], "c": [[2, 1, 0], [7, 8, 9]]}
    scores = {m: _scores_from_lists(v, 10) for m, v in lists.items()}
    cells = annotators.annotator_similarity(scores, k=3, n_boot=200, seed=1)
    cell = cells.set_index(["measure", "model", "other"])
    tau_ab = np.mean([_naive_tau(x, y) for x, y in zip(lists["a"], lists["b"], strict=True)])
    assert cell.loc[(annotators.KENDALL, "a", "b"), "value"] == pytest.approx(tau_ab)  # (1 + -1) / 2 = 0
    assert tau_ab == pytest.approx(0.0)
    assert cell.loc[(annotators.KENDALL, "b", "a"), "value"] == cell.loc[(annotators.KENDALL, "a", "b"), "value"]
    # a's top-1 in b's list: query 0 rank 1, query 1 (item 3) rank 3 -> 2; b's top-1 in a's: 1 and 3 (item 5) -> 2
    assert cell.loc[(annotators.AVERAGE_RANK, "a", "b"), "value"] == pytest.approx(2.0)
    # a's top-1 in c's list: item 0 rank 3, item 3 absent -> 4: mean 3.5
    assert cell.loc[(annotators.AVERAGE_RANK, "a", "c"), "value"] == pytest.approx(3.5)
    lo, hi = cell.loc[(annotators.AVERAGE_RANK, "a", "c"), ["lo", "hi"]]
    assert 3.0 <= lo <= 3.5 <= hi <= 4.0 and lo < hi
    assert len(cells) == 2 * 3 * 2  # two measures, ordered pairs without the diagonal
    assert (cells["n_queries"] == 2).all()
    again = annotators.annotator_similarity(scores, k=3, n_boot=200, seed=1)
    pd.testing.assert_frame_equal(cells, again)  # seeded


class _Cache:
    def __init__(self, emb: dict[str, dict[int, np.ndarray]]):
        self.emb = emb

    def get(self, kind, ids):
        return np.stack([self.emb[kind][int(i)] for i in ids])


def test_annotator_scores_are_dot_products_over_the_split():
    rng = np.random.default_rng(3)
    items = pd.DataFrame({"kind": ["image"] * 4 + ["caption"] * 6, "item_id": [*range(4), *range(10, 16)]})
    emb = {
        "image": {i: rng.normal(size=3) for i in range(4)},
        "caption": {i: rng.normal(size=3) for i in range(10, 16)},
    }
    out = annotators.annotator_scores({"m": _Cache(emb)}, items, T2I)["m"]
    assert out.shape == (6, 4)
    assert out[2, 1] == pytest.approx(float(emb["caption"][12] @ emb["image"][1]), rel=1e-6)
    assert annotators.annotator_scores({"m": _Cache(emb)}, items, I2T)["m"].shape == (4, 6)


def test_chunked_top_lists_equal_the_full_score_matrices_and_give_the_same_cells():
    """The command's path (top-k per query chunk, ranks looked up in the lists) equals the reference path (every
    [queries, gallery] score matrix, `list_ranks` over the whole gallery), cell for cell."""
    rng = np.random.default_rng(5)
    n_img, n_cap = 40, 200
    items = pd.DataFrame(
        {"kind": ["image"] * n_img + ["caption"] * n_cap, "item_id": [*range(n_img), *range(100, 100 + n_cap)]}
    )
    caches = {}
    for name in ("a", "b", "c"):
        emb = {
            "image": {i: rng.normal(size=4) for i in range(n_img)},
            "caption": {i: rng.normal(size=4) for i in range(100, 100 + n_cap)},
        }
        caches[name] = _Cache(emb)
    for direction in (T2I, I2T):
        scores = annotators.annotator_scores(caches, items, direction)
        tops, n_gallery = annotators.annotator_top_lists(caches, items, direction, 7, chunk=13)
        for name in caches:
            np.testing.assert_array_equal(tops[name], annotators.top_k_lists(scores[name], 7))
            full = annotators.list_ranks(tops[name], n_gallery)
            other = tops["a" if name != "a" else "b"]
            looked_up = annotators.rank_in(tops[name], other)
            np.testing.assert_array_equal(looked_up, np.take_along_axis(full, other, axis=1))
        pd.testing.assert_frame_equal(
            annotators.similarity_of_lists(tops, n_gallery, n_boot=50, seed=1),
            annotators.annotator_similarity(scores, 7, n_boot=50, seed=1),
        )


def _annotations(seed=0, n_queries=25, k=3, names=("a", "b")):
    rng = np.random.default_rng(seed)
    rows = []
    for direction in (T2I, I2T):
        for q in range(n_queries):
            for who in names:
                for rank in range(1, k + 1):
                    rows.append((direction, q, who, rank, ANSWERS[int(rng.integers(0, 4))]))
    return pd.DataFrame(rows, columns=["direction", "query_id", "annotator", "proposal_rank", "answer"])


def test_answer_shares_against_a_naive_count():
    ann = _annotations()
    cells = annotators.answer_shares(ann, ["a", "b"], n_boot=100, seed=0).set_index(["model", "rank", "answer"])
    for who in ("a", "b"):
        for rank in (1, 2, 3):
            sub = ann[(ann["annotator"] == who) & (ann["proposal_rank"] == rank)]
            for answer in ANSWERS:
                expected = 100 * (sub["answer"] == answer).mean()
                assert cells.loc[(who, str(rank), answer), "value"] == pytest.approx(expected)
                assert cells.loc[(who, str(rank), answer), "n"] == len(sub)
        sub = ann[ann["annotator"] == who]
        for answer in ANSWERS:
            assert cells.loc[(who, "Avg.", answer), "value"] == pytest.approx(100 * (sub["answer"] == answer).mean())
            lo, hi, v = cells.loc[(who, "Avg.", answer), ["lo", "hi", "value"]]
            assert lo <= v <= hi
    sums = cells.groupby(level=["model", "rank"])["value"].sum()
    np.testing.assert_allclose(sums, 100.0)


def test_answer_shares_worked_example_and_refusals():
    ann = pd.DataFrame(
        [
            (T2I, 1, "a", 1, "100% YES"),
            (T2I, 1, "a", 2, "100% NO"),
            (T2I, 2, "a", 1, "Partially YES"),
            (T2I, 2, "a", 2, "100% NO"),
        ],
        columns=["direction", "query_id", "annotator", "proposal_rank", "answer"],
    )
    cells = annotators.answer_shares(ann, ["a"], n_boot=50).set_index(["rank", "answer"])["value"]
    assert cells[("1", "100% YES")] == 50.0 and cells[("1", "Partially YES")] == 50.0
    assert cells[("2", "100% NO")] == 100.0 and cells[("Avg.", "100% NO")] == 50.0
    with pytest.raises(ValueError, match="answers"):
        annotators.answer_shares(ann.assign(answer="maybe"), ["a"], n_boot=5)
    with pytest.raises(ValueError, match="annotators"):
        annotators.answer_shares(ann, ["z"], n_boot=5)


def test_long_tables_put_the_printed_tables_below():
    published = load_published("eccv")
    ann = _annotations(names=("clip", "vse"))
    b2 = annotators.table_b2_long(annotators.answer_shares(ann, ["clip", "vse"], n_boot=20), published)
    printed = b2[b2["source"] == "published"]
    assert len(printed) == 5 * 6 * 4 and set(printed["column"]) == set(ANSWERS)
    pcme = printed.set_index(["row", "column"])["value"]
    assert pcme[("published PCME: rank 5", "100% YES")] == 27.8  # the paper's example: 52.3% down to 27.8%
    assert pcme[("published VSRN: rank 1", "100% YES")] + pcme[("published VSRN: rank 1", "Partially YES")] == (
        pytest.approx(86.0)  # the paper's "86.0% for VSRN"
    )
    scores = {m: np.random.default_rng(i).normal(size=(8, 12)) for i, m in enumerate(("clip", "vse"))}
    cells = {T2I: annotators.annotator_similarity(scores, 4, n_boot=10)}
    a1 = annotators.table_a1_long(cells, published)
    assert set(a1.loc[a1["source"] == "world", "row"]) == {
        f"{m}, Text-to-Image: {x}" for m in annotators.SIMILARITY_MEASURES for x in ("clip", "vse")
    }
    printed_a1 = a1[a1["source"] == "published"]
    assert printed_a1["value"].notna().sum() == 20 + 16  # (b)'s CLIP column is cut off in the extraction
    assert printed_a1["value"].isna().sum() == 2 * 5  # the diagonals, printed '-'
    cell = printed_a1.set_index(["row", "column"])["note"]
    assert cell[("published (a) Kendall's τ: PVSE", "PCME")] == "0.430"  # at the printed precision
    assert cell[("published (b) average ranking: CLIP", "PVSE")] == "6.16"
    assert list(a1.loc[a1["source"] == "world", "column"].unique()) == ["clip", "vse"]  # annotator order
    assert printed.set_index(["row", "column"])["note"][("published PVSE: rank 2", "100% YES")] == "39.0"


def _bench(tmp_path, n_images=12, n_captions=30, seed=0):
    """A hand-built ECCV folder (items, queries, positives, annotations) and two annotators' embedding caches."""
    from itmbench.papers.eccv import canonical

    rng = np.random.default_rng(seed)
    images, captions = np.arange(n_images), np.arange(100, 100 + n_captions)
    items = pd.DataFrame({"kind": ["image"] * n_images + ["caption"] * n_captions, "item_id": [*images, *captions]})
    queries = pd.DataFrame({"direction": [T2I] * 5 + [I2T] * 4, "query_id": [*captions[:5], *images[:4]]})
    positives = pd.DataFrame(
        {"source": "eccv", "direction": T2I, "image_id": images[:5], "caption_id": captions[:5]}
    ).astype(canonical.SCHEMA)
    rows = []
    for d, q in queries.itertuples(index=False):
        for who in ("a", "b"):
            for rank in (1, 2):
                rows.append((d, int(q), who, rank, ANSWERS[int(rng.integers(0, 4))]))
    ann = pd.DataFrame(rows, columns=["direction", "query_id", "annotator", "proposal_rank", "answer"])
    ann = ann.assign(candidate_id=0, image_id=0, caption_id=0, n_violated=0, fits=True)
    folder = tmp_path / "eccv"
    canonical.write(
        {
            "positives": positives,
            "queries": queries.astype(canonical.QUERY_COLUMNS),
            "annotations": ann[list(canonical.ANNOTATION_COLUMNS)].astype(canonical.ANNOTATION_COLUMNS),
            "items": items.astype(canonical.ITEM_COLUMNS),
        },
        folder,
    )
    caches = {}
    for who in ("a", "b"):
        path = tmp_path / f"{who}.npz"
        np.savez(
            path,
            image_ids=images,
            image_emb=rng.normal(size=(n_images, 4)).astype(np.float32),
            caption_ids=captions,
            caption_emb=rng.normal(size=(n_captions, 4)).astype(np.float32),
        )
        caches[who] = path
    return folder, caches, ann


def test_the_commands_write_both_tables_deterministically(tmp_path):
    from itmbench.cli import main

    folder, caches, ann = _bench(tmp_path)
    emb = [x for who, p in caches.items() for x in ("--embeddings", f"{who}={p}")]
    outputs = {}
    for run in ("one", "two"):
        a1, b2 = tmp_path / run / "tableA1.csv", tmp_path / run / "tableB2.csv"
        argv = ["eccv-annotator-similarity", "--bench", str(folder), *emb, "--config", '{"similarity_top_k": 5}']
        assert main([*argv, "--n-boot", "50", "--out-csv", str(a1)]) == 0
        assert main(["eccv-answer-shares", "--bench", str(folder), "--n-boot", "50", "--out-csv", str(b2)]) == 0
        outputs[run] = [p.with_suffix(x).read_bytes() for p in (a1, b2) for x in (".csv", ".md", ".tex")]
    assert outputs["one"] == outputs["two"]  # byte-identical on CPU
    a1 = pd.read_csv(tmp_path / "one" / "tableA1.csv")
    world = a1[(a1["source"] == "world") & a1["value"].notna()]  # the diagonal is empty, as printed
    assert (a1.loc[a1["row"].str.endswith(": a") & (a1["column"] == "a"), "value"].isna()).all()
    assert set(world["direction"]) == {T2I, I2T}
    assert set(world.loc[world["direction"] == T2I, "n_queries"]) == {30}  # every caption of the split
    assert set(world.loc[world["direction"] == I2T, "n_queries"]) == {12}
    ranks = world[world["measure"] == annotators.AVERAGE_RANK]["value"]
    assert ((ranks >= 1) & (ranks <= 6)).all()  # within the list, or one past it (K = 5)
    b2 = pd.read_csv(tmp_path / "one" / "tableB2.csv", dtype={"rank": str})
    mine = b2[(b2["source"] == "world") & (b2["model"] == "a") & (b2["rank"] == "1")].set_index("column")["value"]
    sub = ann[(ann["annotator"] == "a") & (ann["proposal_rank"] == 1)]
    for answer in ANSWERS:
        assert mine[answer] == pytest.approx(100 * (sub["answer"] == answer).mean(), abs=1e-6)
    assert "published PCME: rank 1" in (tmp_path / "one" / "tableB2.md").read_text()


def test_the_similarity_command_refuses_a_single_annotator(tmp_path):
    from itmbench.cli import main

    folder, caches, _ = _bench(tmp_path)
    argv = ["eccv-annotator-similarity", "--bench", str(folder), "--embeddings", f"a={caches['a']}"]
    assert main([*argv, "--out-csv", str(tmp_path / "t.csv")]) != 0
    assert not (tmp_path / "t.csv").exists()
