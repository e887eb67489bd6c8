"""MCIC's OPTIMIZE-SCORE: wmgs-rank by hand (the paper's example and a 4-neighbour case) and against naive loops."""

from __future__ import annotations

import numpy as np
import pytest
from unit_world import unit_world

from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic.build import sentence_bleu
from itmbench.papers.mcic.config import MCICConfig
from itmbench.papers.mcic.optimize_score import Neighbourhoods, optimize_score, wmgs_ranks
from itmbench.papers.published import published_wide
from itmbench.params import make_config
from itmbench.world.generate import generate_world

WORLD = unit_world(n_train=200, n_val=30, n_test=20)
GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
CFG = make_config(
    MCICConfig,
    pv_grid={"vector_size": [64], "epochs": [20]},
    neighbourhood=40,
    lambda_grid=GRID,
    relation_margin=WORLD.relation_margin,
)


def test_paper_example_ranks_4_10_16_22_give_13():
    """Section 3.3: ground truths ranked #4, #10, #16 and #22 among the N-best give wmgs-rank 13 (as published)."""
    printed = published_wide("mcic", "Section 3.3", "wmgs-rank worked example").loc["c_r1"]
    ranks = [int(printed[f"rank of c_r{k}"]) for k in range(2, 6)]
    assert ranks == [4, 10, 16, 22]
    n = 30
    cos = np.linspace(0.9, 0.6, n)[None, :]  # strictly decreasing: position p has rank p + 1
    same = np.zeros((1, n), dtype=bool)
    same[0, [r - 1 for r in ranks]] = True
    nb = Neighbourhoods(cos, np.zeros((1, n)), same)
    assert wmgs_ranks(nb, 1.0, threshold=0.5)[0] == pytest.approx(printed["wmgs-rank"]) == pytest.approx(13.0)


def test_four_neighbours_by_hand():
    """cos 0.9 0.8 0.7 0.6, BLEU 0.1 0.6 0.3 0.2, co-captions at 2 and 4, L = 0.5 (BLEU 0.6 scores 0)."""
    nb = Neighbourhoods(
        np.array([[0.9, 0.8, 0.7, 0.6]]), np.array([[0.1, 0.6, 0.3, 0.2]]), np.array([[False, True, False, True]])
    )
    # lambda 1: scores .9 0 .7 .6 -> ranks 1 4 2 3 -> co-captions (4 + 3) / 2
    assert wmgs_ranks(nb, 1.0, 0.5)[0] == pytest.approx(3.5)
    # lambda 0: scores .1 0 .3 .2 -> ranks 3 4 1 2 -> (4 + 2) / 2
    assert wmgs_ranks(nb, 0.0, 0.5)[0] == pytest.approx(3.0)
    # lambda 0.5: scores .5 0 .5 .4 -> the tie shares rank 1.5: ranks 1.5 4 1.5 3 -> (4 + 3) / 2
    assert wmgs_ranks(nb, 0.5, 0.5)[0] == pytest.approx(3.5)
    chosen, table = optimize_score(nb, [1.0, 0.0, 0.5], 0.5)
    assert chosen == 0.0
    assert table["lambda"].tolist() == [0.0, 0.5, 1.0]
    assert table["wmgs_rank"].tolist() == pytest.approx([3.0, 3.5, 3.5])
    assert table["chosen"].tolist() == [True, False, False]
    assert table["captions"].tolist() == [1, 1, 1] and table["ranked_ground_truths"].tolist() == [2, 2, 2]


def test_ties_go_to_the_smallest_lambda_and_unranked_captions_are_skipped():
    same = np.array([[True, False], [False, False]])
    nb = Neighbourhoods(np.array([[0.9, 0.8], [0.9, 0.8]]), np.zeros((2, 2)), same)
    chosen, table = optimize_score(nb, [0.7, 0.4], 0.5)  # BLEU 0: the order by cosine at every lambda > 0
    assert table.loc[table["lambda"] == 0.7, "wmgs_rank"].item() == 1.0
    assert chosen == 0.4 and table["captions"].tolist() == [1, 1]
    with pytest.raises(ValueError, match="no caption of the search split"):
        optimize_score(Neighbourhoods(nb.cos, nb.bleu, np.zeros((2, 2), dtype=bool)), [0.3], 0.5)


def _naive_search(world, cfg):
    """OPTIMIZE-SCORE as loops over the build's PV vectors: {lambda: mean wmgs-rank}."""
    caps = world.caption_table.sort_values("caption_id")
    pool = caps[caps["split"] == cfg.lambda_search_split].reset_index(drop=True)
    model = mcic_build.train_pv(caps.loc[caps["split"] == cfg.pv_train_split, "text"].tolist(), cfg)
    vecs = mcic_build.infer_pv(model, pool["text"].tolist())
    cos = vecs @ vecs.T
    texts, images = pool["text"].tolist(), pool["image_id"].tolist()
    out = {}
    for lam in cfg.lambda_grid:
        per_caption = []
        for t in range(len(pool)):
            others = sorted((j for j in range(len(pool)) if j != t), key=lambda j: (-cos[t, j], j))
            best = others[: cfg.neighbourhood]
            scores = []
            for j in best:
                b = sentence_bleu(texts[j].split(), texts[t].split(), cfg.bleu_order, cfg.bleu_smoothing)
                scores.append(0.0 if b >= cfg.bleu_threshold else lam * cos[t, j] + (1 - lam) * b)
            ranks = [
                1 + sum(o > s for o in scores) + (sum(o == s for o in scores) - 1) / 2
                for s, j in zip(scores, best)
                if images[j] == images[t]
            ]
            if ranks:
                per_caption.append(sum(ranks) / len(ranks))
        out[lam] = sum(per_caption) / len(per_caption)
    return out


@pytest.fixture(scope="module")
def world():
    return generate_world(WORLD)


@pytest.fixture(scope="module")
def tables(world):
    return mcic_build.build(world, CFG)


def test_search_equals_naive_loops_and_feeds_the_decoys(world, tables):
    search = tables["lambda_search"]
    naive = _naive_search(world, CFG)
    assert search["lambda"].tolist() == list(GRID)
    assert search["wmgs_rank"].to_numpy() == pytest.approx([naive[lam] for lam in GRID], abs=1e-9)
    chosen = min(GRID, key=lambda lam: (naive[lam], lam))
    assert search.loc[search["chosen"], "lambda"].tolist() == [chosen]
    construction = tables["construction"].set_index(["split", "stage"])["value"]
    assert construction[("dev", "score_lambda")] == construction[("test", "score_lambda")] == chosen
    dec = tables["decoys"]
    assert np.allclose(dec["score"], chosen * dec["cos_pv"] + (1 - chosen) * dec["bleu"])
    assert search["wmgs_rank"].nunique() > 1  # lambda moves the ranks: the search is not vacuous


def test_a_one_point_grid_fixes_lambda(world, tables):
    fixed = mcic_build.build(world, make_config(MCICConfig, **{**CFG.__dict__, "lambda_grid": (0.25,)}))
    search = fixed["lambda_search"]
    assert search["lambda"].tolist() == [0.25] and search["chosen"].all()
    full = tables["lambda_search"].set_index("lambda")
    assert search["wmgs_rank"].item() == full.at[0.25, "wmgs_rank"]  # the same search at that point
    dec = fixed["decoys"]
    assert np.allclose(dec["score"], 0.25 * dec["cos_pv"] + 0.75 * dec["bleu"])


def test_lambda_search_table_has_every_grid_point_the_choice_and_the_published_lambda(tables):
    from itmbench.papers.mcic.tables import lambda_search_long

    long = lambda_search_long(tables["lambda_search"], confidence=0.95)
    wmgs = long[long["column"] == "wmgs-rank"].set_index("row")
    assert list(wmgs.index[: len(GRID)]) == [f"λ = {lam:g}" for lam in GRID]
    search = tables["lambda_search"]
    assert wmgs["value"].iloc[: len(GRID)].to_numpy() == pytest.approx(search["wmgs_rank"].to_numpy())
    half = wmgs["hi"].iloc[: len(GRID)].to_numpy() - wmgs["value"].iloc[: len(GRID)].to_numpy()
    assert half == pytest.approx(1.959964 * search["wmgs_rank_se"].to_numpy(), rel=1e-5)
    chosen = long[(long["column"] == "chosen λ") & long["value"].notna()].set_index("row")["value"]
    assert chosen.iloc[-1] == 0.3 and chosen.index[-1].startswith("published")  # Section 3.3's choice
    assert chosen.iloc[:-1].tolist() == search.loc[search["chosen"], "lambda"].tolist()
