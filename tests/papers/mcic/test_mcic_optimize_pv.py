"""MCIC's OPTIMIZE-PV: mgs-rank by hand and against a naive loop, the choice rule, the search on a small world and
the build taking its choice."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from unit_world import unit_world

from itmbench.errors import InputError
from itmbench.papers.mcic import build as mcic_build
from itmbench.papers.mcic.config import MCICConfig
from itmbench.papers.mcic.optimize_pv import choose, mgs_ranks, optimize_pv_on_world
from itmbench.papers.mcic.tables import pv_search_long
from itmbench.params import make_config
from itmbench.world.generate import generate_world, write_world

WORLD = unit_world(n_train=200, n_val=30, n_test=20)
GRID = {"vector_size": [16], "epochs": [5, 20]}
CFG = make_config(MCICConfig, pv_grid=GRID, neighbourhood=40, relation_margin=WORLD.relation_margin)


def test_five_captions_by_hand():
    """Images A A B B C; c4 alone on C (no mgs-rank) but in every pool; c4 is not unit norm.

    cosines: c0.c1 0, c0.c2 .707, c0.c3 -1, c0.c4 .949, c1.c2 .707, c1.c3 0, c1.c4 .316, c2.c3 -.707,
    c2.c4 .894, c3.c4 -.949. Ranks of the co-caption among the other four:
    c0: c4 1, c2 2, c1 3, c3 4 -> 3;   c1: c2 1, c4 2, c0 = c3 tie at 3 and 4 -> 3.5;
    c2: c4 1, c0 = c1 tie at 2 and 3, c3 4 -> 4;   c3: c1 1, c2 2, c4 3, c0 4 -> 2."""
    vecs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0], [3.0, 1.0]])
    ranks = mgs_ranks(vecs, [7, 7, 8, 8, 9])
    assert ranks[:4] == pytest.approx([3.0, 3.5, 4.0, 2.0])
    assert np.isnan(ranks[4])
    assert np.nanmean(ranks) == pytest.approx(3.125)


def naive_mgs_ranks(vecs: np.ndarray, images: np.ndarray) -> list[float]:
    out = []
    for c in range(len(vecs)):
        cos = {
            o: float(vecs[c] @ vecs[o] / np.linalg.norm(vecs[c]) / np.linalg.norm(vecs[o])) for o in range(len(vecs))
        }
        del cos[c]
        ranks = []
        for o in cos:
            if images[o] != images[c]:
                continue
            above = sum(1 for x in cos.values() if x > cos[o] + 1e-12)
            tied = sum(1 for p, x in cos.items() if p != o and abs(x - cos[o]) <= 1e-12)
            ranks.append(1 + above + tied / 2)
        out.append(float(np.mean(ranks)) if ranks else float("nan"))
    return out


def test_against_a_naive_loop_with_ties():
    rng = np.random.default_rng(3)
    vecs = rng.normal(size=(40, 6))
    vecs[10] = vecs[3]  # identical texts give identical vectors: tied cosines
    vecs[25] = 2 * vecs[17]
    images = rng.integers(0, 12, size=40)
    np.testing.assert_allclose(mgs_ranks(vecs, images), naive_mgs_ranks(vecs, images), equal_nan=True)


def grid_table(rows: list[tuple[int, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["vector_size", "epochs", "mgs_rank"])


def test_the_choice_is_the_least_and_ties_go_to_the_cheaper_point():
    assert choose(grid_table([(32, 40, 5.0), (64, 40, 4.0), (32, 80, 4.5)])) == (64, 40)
    # 64 x 40 and 32 x 80 cost the same (2560): fewer epochs; 16 x 80 is cheaper than both
    assert choose(grid_table([(32, 80, 4.0), (64, 40, 4.0), (128, 80, 4.0)])) == (64, 40)
    assert choose(grid_table([(32, 80, 4.0), (64, 40, 4.0), (16, 80, 4.0)])) == (16, 80)
    with pytest.raises(ValueError, match="no caption"):
        choose(grid_table([(32, 80, float("nan"))]))


@pytest.fixture(scope="module")
def world():
    return generate_world(WORLD)


def test_the_search_on_a_small_world_trains_pv_as_the_build_does(world):
    chosen, table = optimize_pv_on_world(world, CFG)
    assert list(zip(table["vector_size"], table["epochs"], strict=True)) == [(16, 5), (16, 20)]
    val = mcic_build.pv_split_captions(world, "val")
    assert (table["captions"] == len(val)).all() and (table["pool"] == len(val) - 1).all()  # 5 captions per image
    train = mcic_build.pv_split_captions(world, "train")["text"].tolist()
    for r in table.itertuples():
        model = mcic_build.train_pv(train, CFG, (r.vector_size, r.epochs))
        per_caption = mgs_ranks(mcic_build.infer_pv(model, val["text"].tolist()), val["image_id"].to_numpy())
        assert r.mgs_rank == pytest.approx(per_caption.mean())
        assert r.mgs_rank_se == pytest.approx(per_caption.std(ddof=1) / np.sqrt(per_caption.size))
    assert table["chosen"].sum() == 1
    assert chosen == tuple(table.loc[table["mgs_rank"].idxmin(), ["vector_size", "epochs"]])
    long = pv_search_long(table)
    assert long["row"].iloc[-1] == "published (MCIC-COCO dev): dim 1024, 5 epochs"


def test_the_build_uses_the_choice_and_refuses_one_off_the_grid(world):
    with pytest.raises(ValueError, match="several points"):
        mcic_build.build(world, CFG)
    with pytest.raises(InputError, match="not a point of params mcic.pv_grid"):
        mcic_build.build(world, CFG, pv_choice={"vector_size": 64, "epochs": 20})
    tables = mcic_build.build(world, CFG, pv_choice={"vector_size": 16, "epochs": 5})
    construction = tables["construction"].set_index(["split", "stage"])["value"]
    assert construction[("dev", "pv_vector_size")] == 16 and construction[("dev", "pv_epochs")] == 5


def test_the_commands_write_the_choice_the_build_reads(world, tmp_path):
    write_world(world, tmp_path / "items")
    world_json = json.dumps({"n_train": 200, "n_val": 30, "n_test": 20})
    config = json.dumps({"pv_grid": GRID, "neighbourhood": 40})
    choice = tmp_path / "pv_choice.json"
    run = [sys.executable, "-m", "itmbench.cli"]
    common = ["--items", str(tmp_path / "items"), "--world", world_json, "--config", config]
    res = subprocess.run(
        [
            *run,
            "mcic-optimize-pv",
            *common,
            "--out-csv",
            str(tmp_path / "t" / "pv_search.csv"),
            "--out-choice",
            str(choice),
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    point = json.loads(choice.read_text())
    assert {"vector_size", "epochs", "mgs_rank"} <= set(point)
    assert (tmp_path / "t" / "pv_search.md").is_file() and (tmp_path / "t" / "pv_search.tex").is_file()
    build = [*run, "build-benchmark", "--name", "mcic", *common, "--out", str(tmp_path / "mcic")]
    res = subprocess.run([*build, "--input", f"pv_choice={choice}"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    construction = pd.read_parquet(tmp_path / "mcic" / "construction.parquet").set_index(["split", "stage"])["value"]
    assert construction[("dev", "pv_epochs")] == point["epochs"]
    choice.write_text(json.dumps({**point, "epochs": 7}))
    res = subprocess.run([*build, "--input", f"pv_choice={choice}"], capture_output=True, text=True)
    assert res.returncode == 2 and "not a point of params mcic.pv_grid" in res.stderr
