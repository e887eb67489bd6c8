"""BiVLC Figure 4 in the world (the positive pair's margins): the numbers against a naive reference on a hand-built
frame, the commands writing the table and a byte-deterministic figure, and their refusals."""

from __future__ import annotations

import statistics

import numpy as np
import pandas as pd
import pytest

from itmbench.cli import main
from itmbench.errors import EXIT_INPUT, InputError
from itmbench.metrics.intervals import wilson_interval
from itmbench.papers.bivlc.margins import FIGURE4_COLUMNS, figure4_long, instance_margins


def _scores(rows: list[tuple[int, bool, float, float, float]]) -> pd.DataFrame:
    """A per-instance score frame as score_dual writes it: (bivlc_id, in_bivlc, s_c0_i0, s_c0_i1, s_c1_i0)."""
    ids, member, s00, s01, s10 = zip(*rows)
    return pd.DataFrame(
        {
            "sugarcrepe_id": np.arange(len(rows)),
            "bivlc_id": np.array(ids, dtype=np.int64),
            "in_bivlc": np.array(member),
            "s_c0_i0": s00,
            "s_c0_i1": s01,
            "s_c1_i0": s10,
            "s_c1_i1": np.zeros(len(rows)),
        }
    )


# model a: caption+ margins 0.5, -0.2, 0.1, 0.3 (bivlc 4, 1, 2, 3); the row not in BiVLC is left out
A = _scores(
    [
        (4, True, 0.9, 0.4, 0.8),
        (1, True, 0.1, 0.3, 0.2),
        (9, False, 5.0, 0.0, 0.0),
        (2, True, 0.5, 0.4, 0.6),
        (3, True, 0.6, 0.3, 0.1),
    ]
)
B = _scores([(1, True, 0.2, 0.2, 0.0), (2, True, 0.0, 0.7, 0.1), (3, True, 0.9, 0.1, 0.4)])


def _naive(frame: pd.DataFrame, positive: str, other: str) -> list[float]:
    """The margins by a loop over rows, in bivlc_id order."""
    kept = sorted((int(r["bivlc_id"]), r[positive] - r[other]) for _, r in frame.iterrows() if r["in_bivlc"])
    return [m for _, m in kept]


def test_margins_are_the_positive_pairs_score_minus_the_other_per_bivlc_instance():
    got = instance_margins(A)
    assert got["bivlc_id"].tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(got["caption+"], _naive(A, "s_c0_i0", "s_c0_i1"))
    np.testing.assert_allclose(got["image+"], _naive(A, "s_c0_i0", "s_c1_i0"))
    np.testing.assert_allclose(got["caption+"], [-0.2, 0.1, 0.3, 0.5])


def test_figure4_numbers_match_a_naive_reference():
    long = figure4_long({"a": A, "b": B}, {"a": "Model A"}, bins=4, n_boot=200, seed=0)
    assert list(long.columns) == list(FIGURE4_COLUMNS)
    for margin, other in (("caption+", "s_c0_i1"), ("image+", "s_c1_i0")):
        pooled = _naive(A, "s_c0_i0", other) + _naive(B, "s_c0_i0", other)
        lo, hi = min(pooled), max(pooled)
        width = (hi - lo) / 4
        for model, frame in (("a", A), ("b", B)):
            values = _naive(frame, "s_c0_i0", other)
            part = long[(long["model"] == model) & (long["margin"] == margin)].set_index("row")
            assert part["value"]["mean"] == pytest.approx(sum(values) / len(values))
            assert part["value"]["median"] == pytest.approx(statistics.median(values))
            k = sum(v > 0 for v in values)
            assert part["value"]["share > 0 (%)"] == pytest.approx(100 * k / len(values))
            w_lo, w_hi = wilson_interval(k, len(values))
            assert (part["lo"]["share > 0 (%)"], part["hi"]["share > 0 (%)"]) == pytest.approx((100 * w_lo, 100 * w_hi))
            counts = [0] * 4
            for v in values:  # the last bin holds the pooled maximum
                counts[min(int((v - lo) / width + 1e-9), 3)] += 1
            bins = part[part["statistic"] == "bin"]
            assert bins["value"].tolist() == pytest.approx([100 * c / len(values) for c in counts])
            assert bins["bin_lo"].iloc[0] == pytest.approx(lo) and bins["bin_hi"].iloc[-1] == pytest.approx(hi)
            assert (part["n"] == len(values)).all()
            mean = part.loc["mean"]
            assert mean["lo"] <= mean["value"] <= mean["hi"]
    assert set(long.loc[long["model"] == "a", "column"]) == {"Model A: caption+", "Model A: image+"}
    assert set(long.loc[long["model"] == "b", "column"]) == {"b: caption+", "b: image+"}


def test_bad_scores_are_refused_naming_what_was_expected():
    with pytest.raises(InputError, match="appears twice"):
        instance_margins(_scores([(1, True, 0.1, 0.2, 0.3), (1, True, 0.1, 0.2, 0.3)]), "x.parquet")
    with pytest.raises(InputError, match=r"x.parquet: no columns \['s_c1_i0'\]"):
        instance_margins(A.drop(columns="s_c1_i0"), "x.parquet")
    with pytest.raises(InputError, match="bivlc_id 2: s_c0_i0 or s_c0_i1 is not finite"):
        instance_margins(_scores([(1, True, 0.1, 0.2, 0.3), (2, True, 0.1, np.nan, 0.3)]), "x.parquet")
    with pytest.raises(InputError, match="no BiVLC instance"):
        figure4_long({"a": _scores([(1, False, 0.1, 0.2, 0.3)])}, {})


def test_the_commands_write_the_table_and_a_deterministic_figure(tmp_path):
    for name, frame in (("a", A), ("b", B)):
        frame.to_parquet(tmp_path / f"{name}.parquet")
    argv = ["bivlc-figure4-data", "--scores", f"b={tmp_path / 'b.parquet'}", "--scores", f"a={tmp_path / 'a.parquet'}"]
    argv += ["--config", '{"bins": 5}', "--score", '{"n_boot": 50}', "--rows", '{"a": "Model A"}']
    assert main([*argv, "--out-csv", str(tmp_path / "t/figure4.csv")]) == 0
    table = pd.read_csv(tmp_path / "t/figure4.csv")
    assert list(dict.fromkeys(table["model"])) == ["b", "a"]  # the order given
    assert len(table[table["statistic"] == "bin"]) == 2 * 2 * 5
    md = (tmp_path / "t/figure4.md").read_text()
    assert "| share > 0 (%) |" in md and "Model A: caption+" in md
    assert (tmp_path / "t/figure4.tex").stat().st_size > 0
    pngs = []
    for out in ("f1", "f2"):
        png = tmp_path / out / "figure4.png"
        assert main(["bivlc-figure4", "--data", str(tmp_path / "t/figure4.csv"), "--out-png", str(png)]) == 0
        assert png.read_bytes()[:4] == b"\x89PNG" and png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
        pngs.append((png.read_bytes(), png.with_suffix(".pdf").read_bytes()))
    assert pngs[0] == pngs[1]


def test_the_commands_refuse_bad_input(tmp_path, capsys):
    A.drop(columns="s_c0_i1").to_parquet(tmp_path / "a.parquet")
    rc = main(["bivlc-figure4-data", "--scores", f"a={tmp_path / 'a.parquet'}", "--out-csv", str(tmp_path / "t.csv")])
    assert rc == EXIT_INPUT and "s_c0_i1" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()
    pd.DataFrame({"row": ["mean"], "column": ["x"], "value": [1.0]}).to_csv(tmp_path / "d.csv", index=False)
    rc = main(["bivlc-figure4", "--data", str(tmp_path / "d.csv"), "--out-png", str(tmp_path / "f.png")])
    assert rc == EXIT_INPUT and "bin_lo" in capsys.readouterr().err
    assert not (tmp_path / "f.png").exists()
