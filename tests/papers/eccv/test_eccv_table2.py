"""ECCV Table 2 as section 3.3 defines it (papers/eccv/table2.py): a worked example, a naive reference, a world build
and the command."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.papers.eccv import build as eccv_build
from itmbench.papers.eccv import canonical, table2
from itmbench.papers.eccv.config import EccvConfig
from itmbench.params import make_config
from itmbench.world.generate import generate_world

I2T, T2I = "image_to_caption", "caption_to_image"
YES = ("100% YES", "Partially YES")


def _pairs(sets: dict[int, set[int]]) -> pd.DataFrame:
    rows = [(q, i) for q, items in sets.items() for i in sorted(items)]
    return pd.DataFrame(rows, columns=["query_id", "item_id"], dtype="int64")


# The worked example: h = the candidates shown to the workers, t = those answered positive, r = a dataset's positives.
H = {1: {1, 2, 3, 4, 5}, 2: {10, 11, 12}, 3: {20, 21}, 4: {40, 41, 42, 43}, 5: {50, 51}}
T = {1: {1, 2, 3}, 2: {10}, 3: {20, 21}, 4: {40, 41}, 5: set()}
R = {1: {1, 9}, 2: {11, 12, 13}, 3: {30}, 4: {40, 41, 42}, 5: {50}, 6: {60}}  # query 6 is not among the queries
# By hand:
# q1: r' = {1}; |r' ∩ t| = 1: Prec 1/1; Recall 1 - |{2, 3}| / 3 = 1/3
# q2: r' = {11, 12}; r' ∩ t = {}: Prec 0/2; Recall 1 - |{10}| / 1 = 0
# q3: r' = {} (the original item 30 was proposed by no annotator): filtered out of both
# q4: r' = {40, 41, 42}; r' ∩ t = {40, 41}: Prec 2/3; Recall 1 - 0 / 2 = 1
# q5: r' = {50}; t = {}: Prec 0/1; Recall 1 - 0/0 is not defined: left out of Recall only
# Prec = (1 + 0 + 2/3 + 0) / 4 = 5/12 over 4 queries; Recall = (1/3 + 0 + 1) / 3 = 4/9 over 3 queries
HAND_PREC = {1: 1.0, 2: 0.0, 3: np.nan, 4: 2 / 3, 5: 0.0}
HAND_RECALL = {1: 1 / 3, 2: 0.0, 3: np.nan, 4: 1.0, 5: np.nan}


def test_the_worked_example_by_hand():
    per_query = table2.per_query_precision_recall([1, 2, 3, 4, 5], _pairs(R), _pairs(H), _pairs(T))
    frame = per_query.set_index("query_id")
    assert frame["n_r_prime"].tolist() == [1, 2, 0, 3, 1]
    assert frame["n_t"].tolist() == [3, 1, 2, 2, 0]
    assert frame["n_hit"].tolist() == [1, 0, 0, 2, 0]
    np.testing.assert_allclose(frame["precision"], [HAND_PREC[q] for q in frame.index])
    np.testing.assert_allclose(frame["recall"], [HAND_RECALL[q] for q in frame.index])
    cells = table2.table2_cells({("COCO", I2T): per_query}, n_boot=200, seed=0).set_index("measure")
    assert cells.loc["Prec", "value"] == pytest.approx(100 * 5 / 12)
    assert cells.loc["Recall", "value"] == pytest.approx(100 * 4 / 9)
    assert cells.loc["Prec", "n_queries"] == 4 and cells.loc["Recall", "n_queries"] == 3
    for measure in ("Prec", "Recall"):
        assert cells.loc[measure, "lo"] <= cells.loc[measure, "value"] <= cells.loc[measure, "hi"]


def _naive(queries, r, h, t):
    """Section 3.3's sums, one query at a time."""
    prec, recall = [], []
    for q in queries:
        r_prime = r.get(q, set()) & h.get(q, set())
        if not r_prime:
            continue
        prec.append(len(r_prime & t.get(q, set())) / len(r_prime))
        if t.get(q):
            recall.append(1 - len(t[q] - r_prime) / len(t[q]))
    return 100 * np.mean(prec), 100 * np.mean(recall), len(prec), len(recall)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_sets_match_a_naive_loop(seed):
    rng = np.random.default_rng(seed)
    queries = list(range(60))
    h = {q: set(rng.choice(40, size=rng.integers(0, 12), replace=False).tolist()) for q in queries}
    t = {q: {i for i in h[q] if rng.random() < 0.5} for q in queries}
    r = {q: set(rng.choice(40, size=rng.integers(0, 8), replace=False).tolist()) for q in queries + [99]}
    per_query = table2.per_query_precision_recall(queries, _pairs(r), _pairs(h), _pairs(t))
    cells = table2.table2_cells({("set", T2I): per_query}, n_boot=100, seed=seed).set_index("measure")
    prec, recall, n_prec, n_recall = _naive(queries, r, h, t)
    assert cells.loc["Prec", "value"] == pytest.approx(prec)
    assert cells.loc["Recall", "value"] == pytest.approx(recall)
    assert (cells.loc["Prec", "n_queries"], cells.loc["Recall", "n_queries"]) == (n_prec, n_recall)


def test_repeated_queries_are_refused():
    with pytest.raises(ValueError, match="query 1 is listed twice"):
        table2.per_query_precision_recall([1, 1], _pairs(R), _pairs(H), _pairs(T))


# --- on the build's tables -------------------------------------------------------------------------------------

WCFG = replace(unit_world(), n_train=0, n_val=0, n_test=160)  # below the schema's minimums: test only
CFG = make_config(EccvConfig, annotator_source="world")


@pytest.fixture(scope="module")
def tables():
    world = generate_world(WCFG)
    captions = world.caption_table[world.caption_table["split"] == "test"]
    # a CxC-like set: every fifth caption with the next caption's image (only the plumbing matters here)
    cxc = pd.DataFrame(
        {"image_id": captions["image_id"].to_numpy()[1::5], "caption_id": captions["caption_id"].to_numpy()[:-1:5]}
    )
    return eccv_build.build(world, CFG, cxc_positives=cxc, world_cfg=WCFG)


def _by_query(frame: pd.DataFrame, direction: str, mask=None) -> dict[int, set[int]]:
    q, i = ("image_id", "caption_id") if direction == I2T else ("caption_id", "image_id")
    frame = frame if mask is None else frame[mask]
    out: dict[int, set[int]] = {}
    for a, b in zip(frame[q].tolist(), frame[i].tolist(), strict=True):
        out.setdefault(int(a), set()).add(int(b))
    return out


def test_a_world_build_matches_a_naive_recount_of_its_annotations(tables):
    per_query = table2.table2_per_query(tables, YES, CFG.pm_zeta)
    labels = ["Original MS-COCO Caption", "CxC", table2.pm_label(CFG.pm_zeta)]
    assert sorted(per_query) == sorted((label, d) for label in labels for d in (I2T, T2I))
    cells = table2.table2_cells(per_query, n_boot=100).set_index(["label", "direction", "measure"])
    pos, ann, q = tables["positives"], tables["annotations"], tables["queries"]
    for direction in (I2T, T2I):
        queries = q.loc[q["direction"] == direction, "query_id"].tolist()
        a = ann[ann["direction"] == direction]
        h = _by_query(a, direction)
        t = _by_query(a, direction, a["answer"].isin(YES))
        sources = {
            labels[0]: pos[(pos["source"] == "original") & (pos["direction"] == direction)],
            labels[1]: pos[(pos["source"] == "cxc") & (pos["direction"] == direction)],
            labels[2]: tables["pm_positives"][tables["pm_positives"]["direction"] == direction],
        }
        for label, frame in sources.items():
            prec, recall, n_prec, n_recall = _naive(queries, _by_query(frame, direction), h, t)
            assert cells.loc[(label, direction, "Prec"), "value"] == pytest.approx(prec)
            assert cells.loc[(label, direction, "Recall"), "value"] == pytest.approx(recall)
            assert cells.loc[(label, direction, "Prec"), "n_queries"] == n_prec > 0
            assert cells.loc[(label, direction, "Recall"), "n_queries"] == n_recall


def test_a_pair_verified_for_an_image_query_does_not_count_for_a_caption_query(tables):
    """Directions are apart: dropping the caption queries' annotations leaves their cells without a query."""
    ann = tables["annotations"]
    only_i2t = {**tables, "annotations": ann[ann["direction"] == I2T]}
    cells = table2.table2_cells(table2.table2_per_query(only_i2t, YES, 0), n_boot=20).set_index(["direction"])
    assert (cells.loc[T2I, "n_queries"] == 0).all() and cells.loc[T2I, "value"].isna().all()
    assert (cells.loc[I2T, "n_queries"] > 0).all()


def test_the_command_writes_table2_with_the_printed_table_and_refuses_a_build_without_answers(tables, tmp_path):
    from itmbench.cli import main

    canonical.write(tables, tmp_path / "eccv")
    out = tmp_path / "tables" / "table2.csv"
    argv = ["eccv-table2", "--bench", str(tmp_path / "eccv"), "--n-boot", "50", "--out-csv", str(out)]
    assert main(argv) == 0
    table = pd.read_csv(out, keep_default_na=False, na_values=[""], dtype={"note": str})
    world = table[table["source"] == "world"].set_index(["row", "column"])
    assert set(world.index.get_level_values("column")) == {"I2T Prec", "I2T Recall", "T2I Prec", "T2I Recall"}
    printed = table[table["source"] == "published"].set_index(["row", "column"])["note"]
    assert printed[("published Original MS-COCO Caption", "I2T Recall")] == "21.1"
    assert len(printed) == 12
    md = out.with_suffix(".md").read_text()
    assert "| Original MS-COCO Caption |" in md and "| published CxC |" in md and out.with_suffix(".tex").exists()
    # the coco source's build: the released files hold no candidates or answers
    coco = {k: v for k, v in tables.items() if k not in canonical.CONSTRUCTION_TABLES}
    canonical.write(coco, tmp_path / "coco_eccv")
    argv[2] = str(tmp_path / "coco_eccv")
    argv[-1] = str(tmp_path / "coco" / "table2.csv")
    assert main(argv) == 2
    assert not (tmp_path / "coco").exists()
