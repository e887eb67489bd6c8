"""The published-results loader: every paper loads, and malformed files fail naming file and line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from itmbench.papers.published import (
    COLUMNS,
    KEY,
    PAPERS,
    PublishedResultsError,
    load_published,
    published_results_path,
    published_value,
    published_wide,
    read_published_csv,
)

HEADER = ",".join(COLUMNS)


def test_papers_lists_the_five_sugarcrepe_and_aro() -> None:
    assert PAPERS == ("bison", "mcic", "eccv", "bivlc", "cxc", "sugarcrepe", "aro")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_paper_loads_validated(paper: str) -> None:
    frame = load_published(paper)
    assert tuple(frame.columns) == COLUMNS
    assert frame["value"].dtype == "float64"
    assert frame["decimals"].dtype == "int64"
    for column in ("table", "block", "row", "column", "note"):
        assert all(isinstance(x, str) for x in frame[column]), column
    assert not frame.duplicated(list(KEY)).any()
    assert (frame["decimals"] >= 0).all()
    # sugarcrepe: one column of BiVLC's tables; aro: the abstract's one number (its tables were not retrievable)
    assert len(frame) > {"sugarcrepe": 10, "aro": 0}.get(paper, 50)


@pytest.mark.parametrize("paper", PAPERS)
def test_values_are_already_at_printed_precision(paper: str) -> None:
    frame = load_published(paper)
    rounded = [round(v, d) for v, d in zip(frame["value"], frame["decimals"], strict=True)]
    assert frame["value"].tolist() == pytest.approx(rounded, abs=1e-12)


@pytest.mark.parametrize("paper", PAPERS)
def test_file_lives_in_its_paper_folder(paper: str) -> None:
    path = published_results_path(paper)
    assert path.name == "published_results.csv"
    assert path.parent.name == paper
    assert (path.parent / "__init__.py").is_file()


def test_load_returns_a_copy() -> None:
    first = load_published("bivlc")
    first.loc[:, "value"] = -1.0
    assert (load_published("bivlc")["value"] >= 0).all()


def test_published_value_lookup() -> None:
    assert published_value("bivlc", "Section 5.3", "GPT-4V", "SugarCrepe", block="SugarCrepe state of the art") == 92.19
    assert published_value("mcic", "Table 3", "Vec2seq+FFNN", "Test") == 59.0
    assert published_value("eccv", "Table 4", "BLIP", "mAP@R", block="ECCV Caption") == 40.52


def test_published_value_missing_cell_names_what_exists() -> None:
    with pytest.raises(KeyError, match="columns"):
        published_value("mcic", "Table 3", "FFNN", "Validation")
    with pytest.raises(KeyError, match="transcribed tables"):
        published_value("mcic", "Table 99", "FFNN", "Dev")
    with pytest.raises(KeyError, match="unknown paper"):
        published_value("winoground", "Table 1", "CLIP", "Group")


def test_published_wide_keeps_printed_order() -> None:
    wide = published_wide("bivlc", "Table 4", block="Swap")
    assert list(wide.columns) == ["I2T", "T2I", "Group"]
    assert wide.index[0] == "Random" and wide.index[-1] == "VQAScore-XXL"
    assert wide.loc["CLIP_TROHN-Img", "Group"] == 27.86
    with pytest.raises(KeyError):
        published_wide("bivlc", "Table 4", block="Negate")


def test_published_wide_restores_column_order_around_missing_cells() -> None:
    taus = published_wide("eccv", "Table A.1", "(a) Kendall's τ")  # diagonal printed '-'
    assert list(taus.columns) == list(taus.index) == ["PVSE", "VSRN", "PCME", "ViLT", "CLIP"]
    table5 = published_wide("eccv", "Table 5")
    assert list(table5.columns) == list(table5.index)
    correlations = published_wide("cxc", "Table 5")  # first rows have only STS
    assert list(correlations.columns) == ["STS", "STS ±", "SIS", "SIS ±", "SITS", "SITS ±"]


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "published_results.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reader_accepts_a_minimal_file(tmp_path: Path) -> None:
    frame = read_published_csv(_write(tmp_path, HEADER, "Table 1,,A,acc,50.00,2,", "Table 1,,B,acc,7,0,a note"))
    assert isinstance(frame, pd.DataFrame)
    assert frame["value"].tolist() == [50.0, 7.0]
    assert frame["decimals"].tolist() == [2, 0]


@pytest.mark.parametrize(
    ("lines", "pattern"),
    [
        (("table,block,row,column,value,decimals",), r":1: header"),
        ((HEADER, "Table 1,,A,acc,50.00,2,", "Table 1,,A,acc,51.00,2,"), r":3: duplicate key .* first on line 2"),
        ((HEADER, "Table 1,,A,acc,fifty,2,"), r":2: value 'fifty' is not a number"),
        ((HEADER, "Table 1,,A,acc,50.00,1,"), r":2: decimals 1 disagrees with value '50.00'"),
        ((HEADER, "Table 1,,A,acc,50.00,-2,"), r":2: decimals '-2'"),
        ((HEADER, "Table 1,,A,acc,50.00"), r":2: 5 fields"),
        ((HEADER, "Table 1,,,acc,50.00,2,"), r":2: empty 'row'"),
        ((HEADER, "Table 1,,A ,acc,50.00,2,"), r":2: row 'A ' has surrounding whitespace"),
        ((HEADER, "Table 1,,A,acc,nan,0,"), r":2: value 'nan' is not finite"),
        ((HEADER,), r"no data lines"),
    ],
)
def test_reader_errors_name_file_and_line(tmp_path: Path, lines: tuple[str, ...], pattern: str) -> None:
    path = _write(tmp_path, *lines)
    with pytest.raises(PublishedResultsError, match=pattern) as caught:
        read_published_csv(path)
    assert str(path) in str(caught.value)
