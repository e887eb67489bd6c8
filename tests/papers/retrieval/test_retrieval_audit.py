"""The retrieval audit: the truth oracle's R@K against the original positives, against naive references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from unit_world import unit_world

from itmbench.papers.retrieval import audit as retrieval_audit
from itmbench.papers.retrieval import build as retrieval_build
from itmbench.papers.retrieval.config import RetrievalConfig
from itmbench.params import make_config
from itmbench.world.generate import generate_world


def _enumerated(n_true: int, n_original: int, k: int) -> float:
    """Every order of the true matches (originals first `n_original` of them), the share whose first k hold one."""
    hits = total = 0
    for order in itertools.permutations(range(n_true)):
        total += 1
        hits += any(j < n_original for j in order[:k])
    return hits / total if total else 0.0


@pytest.mark.parametrize("n_true", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_oracle_recall_equals_the_enumerated_orders(n_true, k):
    for n_original in range(n_true + 1):
        got = retrieval_audit.oracle_recall(np.array([n_true]), np.array([n_original]), k)[0]
        assert got == pytest.approx(_enumerated(n_true, n_original, k), abs=1e-12)


def test_oracle_recall_refuses_more_originals_than_true_matches():
    with pytest.raises(ValueError, match="n_original <= n_true"):
        retrieval_audit.oracle_recall(np.array([2]), np.array([3]), 1)


def test_audit_oracle_rows_equal_a_simulated_random_tie_order():
    """The audit's oracle R@1 equals the mean over many seeded shuffles of each query's true matches."""
    wcfg = unit_world(n_train=1, n_val=1, n_test=40)
    world = generate_world(wcfg)
    cfg = make_config(RetrievalConfig)
    tables = retrieval_build.build(world, cfg, world_cfg=wcfg)
    table = retrieval_audit.audit(world, tables, cfg, world_cfg=wcfg).set_index("row")["value"]
    image_ids, caption_ids, fits = retrieval_build.split_truth(world, "test", wcfg.relation_margin, wcfg.max_objects)
    owner = dict(zip(world.caption_table["caption_id"], world.caption_table["image_id"]))
    rng = np.random.default_rng(0)
    draws = 400
    t2i = [
        np.mean([image_ids[rng.permutation(np.flatnonzero(fits[c]))[0]] == owner[cid] for _ in range(draws)])
        for c, cid in enumerate(caption_ids)
    ]
    i2t = [
        np.mean([owner[caption_ids[rng.permutation(np.flatnonzero(fits[:, i]))[0]]] == iid for _ in range(draws)])
        for i, iid in enumerate(image_ids)
    ]
    assert table["truth oracle's t2i R@1, original positives (%)"] == pytest.approx(100 * np.mean(t2i), abs=1.5)
    assert table["truth oracle's i2t R@1, original positives (%)"] == pytest.approx(100 * np.mean(i2t), abs=1.5)
    # R@K grows with K and a perfect ranking of the truth never misses every original at K = 10 here
    for d in ("i2t", "t2i"):
        r = [table[f"truth oracle's {d} R@{k}, original positives (%)"] for k in retrieval_audit.ORACLE_KS]
        assert r == sorted(r) and 0 < r[0] <= 100
