"""A benchmark's model table: the CSV exact, Markdown and LaTeX with each column at one precision."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.papers.registry import BENCHMARKS
from itmbench.report.tables import to_wide, write_table


def _long() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "row": ["coca", "coca", "clip", "clip"],
            "column": ["group", "t2i/cxc/MedR", "group", "t2i/cxc/MedR"],
            "value": [13.559322, 142.5, 20.338983, 4.0],
            "lo": [7.034175, 130.0, 12.036272, 3.0],
            "hi": [24.539661, 160.0, 32.268012, 5.0],
        }
    )


def test_each_column_prints_at_one_precision() -> None:
    wide = to_wide(_long(), 2, {"t2i/cxc/MedR": 0})
    assert wide.loc["coca", "group"] == "13.56 (7.03–24.54)" and wide.loc["clip", "group"] == "20.34 (12.04–32.27)"
    assert wide.loc["coca", "t2i/cxc/MedR"] == "142 (130–160)" and wide.loc["clip", "t2i/cxc/MedR"] == "4 (3–5)"
    assert to_wide(_long(), 1).loc["coca", "t2i/cxc/MedR"] == "142.5 (130.0–160.0)"  # no override: the default


def test_a_benchmark_table_is_rounded_in_markdown_and_latex_and_exact_in_the_csv(tmp_path: Path) -> None:
    long = _long()
    entry = BENCHMARKS["cxc"]
    paths = write_table(
        long, tmp_path / "t", "T", decimals=entry.decimals, column_decimals=entry.column_precision(long["column"])
    )
    md, tex = paths[1].read_text(encoding="utf-8"), paths[2].read_text(encoding="utf-8")
    assert "| coca | 13.6 (7.0–24.5) | 142 (130–160) |" in md
    assert "coca & 13.6 (7.0--24.5) & 142 (130--160)" in tex
    csv = pd.read_csv(paths[0])
    assert np.allclose(csv["value"], long["value"]) and csv["value"].iloc[0] == 13.559322
