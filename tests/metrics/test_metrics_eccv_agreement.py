"""Agreement with the authors' `eccv_caption` package (PyPI) on the same rankings.

The package ships the ECCV, CxC and original COCO positives of the 5K test split; we rank its
real ids with synthetic noisy scores and compare every metric it implements. It fails on some
inputs that ours handles (documented in the tests at the bottom):

- a ranking shorter than R (a top-K list with K < number of positives, e.g. top-5 for an image
  with 8 ECCV positives) -> IndexError in `compute_eccv_metrics`; ours raises a ValueError that
  names the query (strict) or returns the exact lower bound (strict=False);
- a query with an empty positive list -> UnboundLocalError; ours returns nan for that query;
- COCO 1K with a top-K list holding no item of the fold -> IndexError; ours counts a miss;
- silently: `rprecision` on a list shorter than R divides by the list length (inflated R-P,
  which is what its PMRP uses), and a ranking that repeats an id is scored on its set
  (mAP@R 1.0 for [p]*R); ours gives the lower bound, and refuses repeated ids.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from itmbench.metrics.ranking import (
    as_aligned,
    coco_1k_recall_at_k,
    map_at_r,
    map_at_r_batch,
    pmrp_batch,
    r_precision,
    r_precision_batch,
    recall_at_k_batch,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    eccv_caption = pytest.importorskip(
        "eccv_caption",
        reason="eccv_caption (PyPI) is not installed: `pip install eccv_caption` to run the "
        "agreement tests against the authors' metric code",
    )
    from eccv_caption import _metrics as eccv_metrics

DATA = Path(eccv_caption.__file__).resolve().parent / "data"


def load(name: str) -> dict[int, list[int]]:
    raw = json.loads((DATA / f"{name}.json").read_text())
    return {int(k): [int(x) for x in v] for k, v in raw.items()}


@pytest.fixture(scope="module")
def gts() -> dict[str, dict[str, dict[int, list[int]]]]:
    return {
        src: {d: load(f"{src}_{'image_to_caption' if d == 'i2t' else 'caption_to_image'}") for d in ("i2t", "t2i")}
        for src in ("original", "cxc", "eccv")
    }


def noisy_rankings(queries, gallery, positives_of, depth, rng):
    """Top-`depth` lists over the real gallery: positives get a random bonus, so ranks vary."""
    out = {}
    for q in queries:
        pos = np.array(sorted(positives_of.get(q, set())), dtype=np.int64)
        neg = np.unique(gallery[rng.integers(0, gallery.size, size=depth + 80)])
        neg = neg[~np.isin(neg, pos)]
        cand = np.concatenate([pos, neg])
        score = rng.normal(size=cand.size)
        score[: pos.size] += rng.uniform(0.0, 3.0)
        out[q] = cand[np.argsort(-score, kind="stable")][:depth].tolist()
    return out


@pytest.fixture(scope="module")
def rankings(gts):
    rng = np.random.default_rng(2022)
    coco_ids = np.load(DATA / "coco_test_ids.npy")
    images = np.array(sorted(gts["original"]["i2t"]), dtype=np.int64)
    union = {}
    for d in ("i2t", "t2i"):
        union[d] = {}
        for src in ("original", "cxc", "eccv"):
            for q, items in gts[src][d].items():
                union[d].setdefault(q, set()).update(items)
    i2t = noisy_rankings(images.tolist(), coco_ids, union["i2t"], 100, rng)
    t2i = noisy_rankings(coco_ids.tolist(), images, union["t2i"], 60, rng)
    return {"i2t": i2t, "t2i": t2i, "coco_ids": coco_ids}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("direction", ["i2t", "t2i"])
def test_eccv_map_rprecision_r1_agree(gts, rankings, direction):
    gt = gts["eccv"][direction]
    theirs = quiet(eccv_metrics.compute_eccv_metrics, rankings[direction], gt)
    _, ranked, pos = as_aligned(rankings[direction], gt)
    assert np.mean(map_at_r_batch(ranked, pos)) == pytest.approx(theirs["eccv_map_at_r"], abs=1e-12)
    assert np.mean(r_precision_batch(ranked, pos)) == pytest.approx(theirs["eccv_rprecision"], abs=1e-12)
    assert np.mean(recall_at_k_batch(ranked, pos, 1)) == pytest.approx(theirs["eccv_r1"], abs=1e-12)
    assert 0.05 < theirs["eccv_map_at_r"] < 0.95  # the rankings are neither trivial nor hopeless


@pytest.mark.parametrize("source", ["original", "cxc", "eccv"])
@pytest.mark.parametrize("direction", ["i2t", "t2i"])
def test_recall_at_k_agrees(gts, rankings, source, direction):
    gt = gts[source][direction]
    _, ranked, pos = as_aligned(rankings[direction], gt)
    for k in (1, 5, 10):
        theirs = quiet(eccv_metrics.compute_r_at_k, rankings[direction], gt, K=k)
        assert np.mean(recall_at_k_batch(ranked, pos, k)) == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("direction", ["i2t", "t2i"])
def test_uncapped_pmrp_agrees_with_their_rprecision(gts, rankings, direction):
    """Their PMRP is compute_rprecision on the PM positives, without the paper's min(R, 50) cap;
    the PM files are not public offline, so CxC positives stand in (all R <= list depth)."""
    gt = gts["cxc"][direction]
    theirs = quiet(eccv_metrics.compute_rprecision, rankings[direction], gt)
    _, ranked, pos = as_aligned(rankings[direction], gt)
    assert np.mean(pmrp_batch(ranked, pos, r_cap=None)) == pytest.approx(theirs, abs=1e-12)


def test_coco_1k_recalls_agree_with_metrics_class(gts, rankings):
    metrics = quiet(eccv_caption.Metrics)
    c2i = {c: v[0] for c, v in gts["original"]["t2i"].items()}
    for k in (1, 5):
        theirs = quiet(metrics.coco_1k_recalls, {"i2t": rankings["i2t"], "t2i": rankings["t2i"]}, "all", K=k)
        ours = coco_1k_recall_at_k(rankings["i2t"], rankings["t2i"], rankings["coco_ids"], c2i, k=k)
        assert ours["i2t"] == pytest.approx(theirs["i2t"], abs=1e-12)
        assert ours["t2i"] == pytest.approx(theirs["t2i"], abs=1e-12)


# --- inputs on which eccv_caption fails, and what ours does -----------------------------------

POS8 = [10, 11, 12, 13, 14, 15, 16, 17]


def test_ranking_shorter_than_r_crashes_theirs_and_not_ours():
    top5 = [10, 11, 99, 12, 13]  # top-5 list for a query with R = 8 positives
    with pytest.raises(IndexError):
        quiet(eccv_metrics.compute_eccv_metrics, {1: top5}, {1: POS8})
    with pytest.raises(ValueError, match="needs the top 8"):
        map_at_r(top5, POS8)
    # lower bound: the unseen ranks 6..8 count as misses -> (1 + 1 + 3/4 + 4/5) / 8
    assert map_at_r(top5, POS8, strict=False) == pytest.approx((1 + 1 + 3 / 4 + 4 / 5) / 8)


def test_empty_positive_list_crashes_theirs_and_ours_gives_nan():
    with pytest.raises(UnboundLocalError):
        quiet(eccv_metrics.compute_eccv_metrics, {1: [10, 11]}, {1: []})
    assert np.isnan(map_at_r_batch([[10, 11]], [[]])[0])


def test_coco_1k_fold_without_listed_items_crashes_theirs_and_ours_counts_a_miss():
    with pytest.raises(IndexError):
        quiet(eccv_metrics.compute_coco1k_r_at_k, {1: [5, 6, 7]}, {1: [10]}, {10, 11})
    ours = coco_1k_recall_at_k(
        i2t_ranked={100: [10, 11]},
        t2i_ranked={10: [7, 8], 11: [100]},  # caption 10's top-2 holds no image of its fold
        caption_ids_in_order=[10, 11],
        caption_to_image={10: 100, 11: 100},
        k=1,
        n_folds=1,
    )
    assert ours == {"i2t": 1.0, "t2i": 0.5}


def test_their_silent_deviations_short_list_and_repeated_ids():
    five_hits = [10, 11, 12, 13, 14]
    assert quiet(eccv_metrics.compute_rprecision, {1: five_hits}, {1: POS8}) == 1.0
    assert r_precision(five_hits, POS8, strict=False) == pytest.approx(5 / 8)
    repeated = [10] * 8
    assert quiet(eccv_metrics.compute_eccv_metrics, {1: repeated}, {1: POS8})["eccv_map_at_r"] == 1.0
    with pytest.raises(ValueError, match="more than once"):
        map_at_r(repeated, POS8)
