"""CxC's claims on hand-made results: where each holds, where it does not, where it cannot be decided."""

from __future__ import annotations

from typing import Any

import pandas as pd

from itmbench.papers.claims import ClaimConfig, Results, claim, evaluate, explain
from itmbench.papers.paired import GALLERY_COLUMNS

TASKS = ("i2t", "t2i", "t2t", "i2i")


def verdict(claim_id: str, res: Results, config: ClaimConfig = ClaimConfig()):
    return evaluate(claim("cxc", claim_id), res, config)


def results(paired: pd.DataFrame | None = None, docs: dict[str, Any] | None = None) -> Results:
    tables = {} if paired is None else {"cxc/paired": paired}
    return Results("hand-made", {"cxc": docs or {}}, {}, {}, {}, tables)


def row(a: str, b: str, task: str, diff: float, half: float = 0.5) -> dict[str, Any]:
    return {
        "benchmark": "cxc", "model_a": a, "model_b": b, "metric": f"{task}/cxc/R@1", "n": 500, "value_a": 40 + diff,
        "value_b": 40.0, "difference": diff, "lo": diff - half, "hi": diff + half, "confidence": 0.95,
        "n_boot": 100, "seed": 0, "direction": "",
    }  # fmt: skip


def paired(gains: dict[tuple[str, str], float]) -> pd.DataFrame:
    """Each pair's A - B on every task (the same gain on each)."""
    return pd.DataFrame([row(a, b, t, d) for (a, b), d in gains.items() for t in TASKS], columns=GALLERY_COLUMNS)


def test_multitask_claims() -> None:
    gains = paired({("de_t2t_i2t", "de_i2t"): 2.0})
    for claim_id in ("multitask_boosts_intermodal", "multitask_far_outperforms_t2t"):
        v = verdict(claim_id, results(gains))
        assert v.holds is True and all(e["A - B"]["lo"] == 1.5 for k, e in v.evidence.items() if k != "test")
        assert verdict(claim_id, results(paired({("de_t2t_i2t", "de_i2t"): 0.3}))).holds is False  # 0 inside
        # the table read the other way round: B - A
        assert verdict(claim_id, results(paired({("de_i2t", "de_t2t_i2t"): -2.0}))).holds is True
        v = verdict(claim_id, results())
        assert v.holds is None and "report.cxc_paired" in v.reason
        v = verdict(claim_id, results(paired({("de_i2t", "de_i2t_small_batch"): 1.0})))
        assert v.holds is None and "no de_t2t_i2t vs de_i2t" in v.reason
    v = verdict("multitask_boosts_intermodal", results(gains))
    assert set(v.evidence) == {"de_t2t_i2t vs de_i2t: i2t/cxc/R@1", "de_t2t_i2t vs de_i2t: t2i/cxc/R@1", "test"}
    # the point estimate alone without significance
    small = paired({("de_t2t_i2t", "de_i2t"): 0.3})
    assert verdict("multitask_boosts_intermodal", results(small), ClaimConfig(significant_differences=False)).holds


def test_small_batch_reduces_recall_on_every_task() -> None:
    v = verdict("small_batch_reduces_recall", results(paired({("de_i2t", "de_i2t_small_batch"): 1.0})))
    assert v.holds is True and len([k for k in v.evidence if k != "test"]) == 4
    mixed = paired({("de_i2t", "de_i2t_small_batch"): 1.0})
    mixed.loc[mixed["metric"] == "t2t/cxc/R@1", ["value_a", "difference", "lo", "hi"]] = [39.0, -1.0, -1.5, -0.5]
    assert verdict("small_batch_reduces_recall", results(mixed)).holds is False
    shown = explain(
        "cxc", "small_batch_reduces_recall", False, verdict("small_batch_reduces_recall", results(mixed)).evidence
    )
    assert shown.sentence.startswith("3 of 4 comparisons fit the claim")
    assert ("de_i2t vs de_i2t_small_batch: t2t/cxc/R@1", "39.0", "40.0", "-1.0 (-1.5–-0.5)", "no") in shown.rows


def test_resnet_performs_worst() -> None:
    worst = {("de_i2t", "de_i2t_resnet"): 3.0, ("de_i2t_small_batch", "de_i2t_resnet"): 2.0}
    worst[("de_i2t_scratch", "de_i2t_resnet")] = 1.0
    v = verdict("resnet_performs_worst", results(paired(worst)))
    assert v.holds is True and len([k for k in v.evidence if k != "test"]) == 9  # 3 recipes x i2t, t2i, i2i
    assert "de_i2t_resnet vs de_i2t_scratch: i2i/cxc/R@1" in v.evidence
    better = {**worst, ("de_i2t_scratch", "de_i2t_resnet"): -1.0}
    assert verdict("resnet_performs_worst", results(paired(better))).holds is False
    missing = {k: v for k, v in worst.items() if k[0] != "de_i2t_scratch"}
    assert verdict("resnet_performs_worst", results(paired(missing))).holds is None


def entry(value: float, lo: float, hi: float) -> dict[str, float]:
    return {"value": value, "lo": lo, "hi": hi, "n": 100}


def test_intramodal_below_i2t_by_intervals() -> None:
    def doc(i2t, t2t, i2i):
        return {"metrics": {f"{t}/cxc/R@1": entry(*v) for t, v in zip(("i2t", "t2t", "i2i"), (i2t, t2t, i2i))}}

    apart = {"a": doc((55, 53, 57), (42, 40, 44), (38, 36, 40))}
    v = verdict("intramodal_below_i2t", results(docs=apart))
    assert v.holds is True and v.evidence["test"] == "intervals do not overlap"
    close = {"a": doc((55, 50, 60), (52, 48, 56), (38, 36, 40))}  # t2t below on the point estimates only
    assert verdict("intramodal_below_i2t", results(docs=close)).holds is False
    assert verdict("intramodal_below_i2t", results(docs=close), ClaimConfig(significant_differences=False)).holds


def test_de_i2t_sts_below_bow() -> None:
    def sts(diff: float) -> pd.DataFrame:
        r = row("de_i2t", "bow", "sts", diff) | {"metric": "sts/spearman"}
        return pd.DataFrame([r], columns=GALLERY_COLUMNS)

    v = verdict("de_i2t_sts_below_bow", results(sts(-4.0)))
    assert v.holds is True and v.evidence["de_i2t vs bow: sts/spearman"]["A - B"]["hi"] == -3.5
    assert verdict("de_i2t_sts_below_bow", results(sts(8.0))).holds is False
    assert verdict("de_i2t_sts_below_bow", results(sts(-0.2))).holds is False  # 0 inside the interval
    v = verdict("de_i2t_sts_below_bow", results(paired({("de_i2t", "de_i2t_small_batch"): 1.0})))
    assert v.holds is None and "no de_i2t vs bow on sts/spearman" in v.reason
