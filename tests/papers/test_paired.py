"""Paired tests of model pairs from per-instance score files: BiVLC's outcomes, the records, the table, the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from itmbench.cli import main
from itmbench.metrics.accuracy import bivlc_scores
from itmbench.metrics.paired import compare_paired
from itmbench.papers.bivlc.score import instance_outcomes
from itmbench.papers.claims import load_world_results
from itmbench.papers.paired import direction, paired_records, read_paired, write_paired_table


def bivlc_scores_frame(seed: int, n: int = 120, skill: float = 0.0) -> pd.DataFrame:
    """A hand-made BiVLC scores file (the score rule's columns that outcomes read), ids shuffled."""
    rng = np.random.default_rng(seed)
    ids = np.random.default_rng(99).permutation(n)  # the same instances in another order than the ids
    s = rng.normal(size=(n, 4))
    s[:, 0] += skill  # s(C0, I0) higher: the positive pair wins more often
    s[:, 3] += skill  # s(C1, I1)
    frame = pd.DataFrame(
        {
            "bivlc_id": ids,
            "in_bivlc": True,
            "s_c0_i0": s[:, 0],
            "s_c0_i1": s[:, 1],
            "s_c1_i0": s[:, 2],
            "s_c1_i1": s[:, 3],
        }
    )
    outside = frame.iloc[:5].assign(bivlc_id=-1, in_bivlc=False)  # SugarCrepe rows outside BiVLC are left out
    return pd.concat([frame, outside], ignore_index=True)


def test_bivlc_outcomes_per_instance_sorted_by_id() -> None:
    frame = bivlc_scores_frame(0)
    out = instance_outcomes(frame)
    assert list(out.index) == list(range(120)) and list(out.columns) == ["i2t", "t2i", "group"]
    b = frame[frame["in_bivlc"]]
    per = bivlc_scores(b["s_c0_i0"], b["s_c0_i1"], b["s_c1_i0"], b["s_c1_i1"])
    by_id = pd.Series(per.t2i, index=b["bivlc_id"]).sort_index()
    assert (out["t2i"].to_numpy() == by_id.to_numpy()).all()
    with pytest.raises(ValueError, match="appears twice"):
        instance_outcomes(pd.concat([frame, frame.iloc[:1]]))


def test_records_pair_the_same_instances_and_refuse_others() -> None:
    a, b = instance_outcomes(bivlc_scores_frame(1, skill=1.5)), instance_outcomes(bivlc_scores_frame(2))
    records = paired_records("bivlc", {"a": a, "b": b}, [("a", "b")], ["t2i", "group"], n_boot=200, seed=0)
    assert list(records["metric"]) == ["t2i", "group"]
    t2i = records.iloc[0]
    ra, rb = a["t2i"].to_numpy(), b["t2i"].to_numpy()
    assert (t2i.a_only, t2i.b_only) == (int((ra & ~rb).sum()), int((~ra & rb).sum()))
    assert t2i.p_mcnemar == pytest.approx(binomtest(int(t2i.a_only), int(t2i.a_only + t2i.b_only), 0.5).pvalue)
    assert t2i.difference == pytest.approx(100 * (ra.mean() - rb.mean()))
    assert t2i.direction == "A above B"  # a's positives score 1.5 sd higher
    with pytest.raises(ValueError, match="not the same ones"):
        paired_records("bivlc", {"a": a, "b": b.iloc[:-1]}, [("a", "b")], ["t2i"])
    with pytest.raises(ValueError, match="no per-instance scores of model 'c'"):
        paired_records("bivlc", {"a": a}, [("a", "c")], ["t2i"])


def test_direction_needs_both_tests() -> None:
    a = np.array([1] * 30 + [0] * 10 + [1] * 60, dtype=bool)
    b = np.array([0] * 30 + [1] * 10 + [1] * 60, dtype=bool)
    assert direction(compare_paired(a, b, 200, 0)) == "A above B"
    assert direction(compare_paired(b, a, 200, 0)) == "A below B"
    assert direction(compare_paired(a, a, 200, 0)) == "no significant difference"


def test_the_table_and_the_claims_read_it_back(tmp_path: Path) -> None:
    a, b = instance_outcomes(bivlc_scores_frame(1, skill=1.5)), instance_outcomes(bivlc_scores_frame(2))
    records = paired_records("bivlc", {"a": a, "b": b}, [("a", "b")], ["i2t", "t2i", "group"], n_boot=100)
    paths = write_paired_table(records, tmp_path / "paired", "BiVLC: paired tests")
    assert [p.suffix for p in paths] == [".csv", ".md", ".tex"]
    md = paths[1].read_text()
    assert "| a vs b: T2I |" in md and "A above B" in md and "McNemar p (exact)" in md
    back = read_paired([paths[0]])
    assert set(back) == {"bivlc/a/b/i2t", "bivlc/a/b/t2i", "bivlc/a/b/group"}
    assert back["bivlc/a/b/t2i"]["a_only"] == records.iloc[1]["a_only"]
    metrics = tmp_path / "metrics" / "bivlc"
    metrics.mkdir(parents=True)
    (metrics / "a.json").write_text('{"metrics": {}}')
    results = load_world_results(tmp_path / "metrics", paired_files=[paths[0]])
    assert results.paired_test("bivlc", "a", "b", "t2i")["n"] == 120


def test_the_cli_writes_the_table(tmp_path: Path) -> None:
    for name, seed, skill in (("trohn", 1, 1.5), ("coco", 2, 0.0)):
        bivlc_scores_frame(seed, skill=skill).to_parquet(tmp_path / f"{name}.parquet")
    out = tmp_path / "out" / "paired.csv"
    argv = ["paired-tests", "--name", "bivlc", "--scores", f"trohn={tmp_path / 'trohn.parquet'}"]
    argv += ["--scores", f"coco={tmp_path / 'coco.parquet'}", "--pair", "trohn=coco", "--config", '{"n_boot": 50}']
    assert main([*argv, "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table["metric"]) == ["i2t", "t2i", "group"] and set(table["n_boot"]) == {50}
    assert out.with_suffix(".md").is_file() and out.with_suffix(".tex").is_file()
    again = tmp_path / "again.csv"
    assert main([*argv, "--out-csv", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # seeded: byte-identical
    assert main([*argv[:-2], "--pair", "trohn=nosuch", "--config", "{}", "--out-csv", str(again)]) == 2


def test_accuracy_benchmarks_give_outcomes_per_instance_sorted() -> None:
    from itmbench.papers.bison.score import instance_outcomes as bison_outcomes
    from itmbench.papers.mcic.score import instance_outcomes as mcic_outcomes
    from itmbench.papers.sugarcrepe.score import instance_outcomes as sugarcrepe_outcomes

    bison = pd.DataFrame({"bison_id": [3, 1, 2], "correct": [True, False, True]})
    assert list(bison_outcomes(bison)["bison"]) == [False, True, True]
    with pytest.raises(ValueError, match="bison_id appears twice"):
        bison_outcomes(pd.concat([bison, bison.iloc[:1]]))
    mcic = pd.DataFrame(
        {"split": ["dev", "test", "test"], "example_id": ["9_0", "2_1", "1_0"], "correct": [True, False, True]}
    )
    out = mcic_outcomes(mcic)  # the dev split is left out: the paper compares models on test
    assert list(out.index) == ["1_0", "2_1"] and list(out["accuracy_test"]) == [True, False]
    sugarcrepe = pd.DataFrame({"id": [5, 4], "s_pos": [0.1, 0.9], "s_neg": [0.2, 0.1]})
    assert list(sugarcrepe_outcomes(sugarcrepe)["pooled"]) == [True, False]


def test_a_pair_read_the_other_way_is_the_pair_computed_the_other_way() -> None:
    from itmbench.papers.paired import mirrored, pair_test

    a, b = instance_outcomes(bivlc_scores_frame(1, skill=1.5)), instance_outcomes(bivlc_scores_frame(2))
    ab = paired_records("bivlc", {"a": a, "b": b}, [("a", "b")], ["t2i"], n_boot=300, seed=4).iloc[0].to_dict()
    ba = paired_records("bivlc", {"a": a, "b": b}, [("b", "a")], ["t2i"], n_boot=300, seed=4).iloc[0].to_dict()
    flipped = mirrored(ab)
    for key in ("model_a", "model_b", "a_only", "b_only", "accuracy_a", "accuracy_b", "direction"):
        assert flipped[key] == ba[key], key
    for key in ("difference", "lo", "hi", "p_mcnemar"):
        assert flipped[key] == pytest.approx(ba[key], abs=1e-9), key
    index = {"bivlc/a/b/t2i": ab}
    assert pair_test(index, "bivlc", "a", "b", "t2i") == ab
    assert pair_test(index, "bivlc", "b", "a", "t2i")["lo"] == pytest.approx(ba["lo"])
    assert pair_test(index, "bivlc", "a", "c", "t2i") is None


def test_the_cli_pairs_bison_items(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for name, p in (("good", 0.9), ("poor", 0.6)):
        pd.DataFrame({"bison_id": np.arange(200), "correct": rng.random(200) < p}).to_parquet(
            tmp_path / f"{name}.parquet"
        )
    out = tmp_path / "paired.csv"
    argv = ["paired-tests", "--name", "bison", "--scores", f"good={tmp_path / 'good.parquet'}"]
    argv += ["--scores", f"poor={tmp_path / 'poor.parquet'}", "--pair", "good=poor", "--config", '{"n_boot": 100}']
    assert main([*argv, "--out-csv", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table["metric"]) == ["bison"] and table["direction"].iloc[0] == "A above B"
    assert main(["paired-tests", "--name", "eccv", *argv[3:], "--out-csv", str(out)]) == 2  # no outcomes to pair
