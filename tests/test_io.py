"""Atomic writes: all or nothing, and the file mode any new file would get."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from itmbench.io import atomic_path, write_text


@pytest.fixture
def umask():
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_outputs_get_the_mode_the_umask_gives_a_new_file(tmp_path: Path, umask, mask: int, mode: int) -> None:
    umask(mask)
    write_text(tmp_path / "a.json", "{}\n")
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == mode  # not mkstemp's 0600
    with atomic_path(tmp_path / "b.parquet") as tmp:  # a writer that truncates the temp file keeps its mode
        with open(tmp, "wb") as f:
            f.write(b"x")
    assert stat.S_IMODE((tmp_path / "b.parquet").stat().st_mode) == mode


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    write_text(out, "old\n")
    with pytest.raises(RuntimeError), atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer died")
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_read_parquet_checked_names_the_file_and_what_is_missing(tmp_path):
    import pandas as pd

    from itmbench.io import write_parquet
    from itmbench.reading import read_parquet_checked

    path = tmp_path / "t.parquet"
    with pytest.raises(FileNotFoundError, match=r"t\.parquet: missing; expected a folder built by the x rule"):
        read_parquet_checked(path, ["a"], "a folder built by the x rule")
    write_parquet(path, pd.DataFrame({"a": [1], "b": [2]}))
    assert list(read_parquet_checked(path, ("a", "b"), "unused").columns) == ["a", "b"]
    with pytest.raises(ValueError, match=r"t\.parquet: missing columns \['c'\]; expected \['a', 'c'\]"):
        read_parquet_checked(path, ("a", "c"), "unused")


def test_read_json_refuses_a_repeated_key_naming_both_lines(tmp_path: Path) -> None:
    from itmbench.reading import read_json

    path = tmp_path / "r.json"
    path.write_text('{"1": {"a": 1},\n "2": {"a": 2, "a": 3},\n "1": {}}', encoding="utf-8")
    with pytest.raises(ValueError) as info:
        read_json(path)
    where = "line 2 column 16: key 'a' appears twice in one object (first at line 2 column 8)"
    assert str(info.value) == f"{path}: {where}; expected unique keys"


def test_read_json_nan_bom_and_bytes(tmp_path: Path) -> None:
    from itmbench.reading import read_json, read_text

    path = tmp_path / "n.json"
    path.write_bytes(b'\xef\xbb\xbf{"x": [1, NaN]}')
    assert read_json(path)["x"][0] == 1  # the BOM is dropped; NaN allowed by default (the project's own outputs)
    with pytest.raises(ValueError, match=r"n\.json: line 1 column 11: NaN is not a JSON number"):
        read_json(path, allow_nan=False)
    path.write_bytes(b'{"x": "caf\xe9"}')
    with pytest.raises(ValueError, match=r"n\.json: byte 10 \(line 1\): not UTF-8 text \(invalid continuation byte"):
        read_text(path)
    with pytest.raises(IsADirectoryError, match=f"{tmp_path}: is a folder; expected a file"):
        read_json(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"absent\.json: file not found"):
        read_json(tmp_path / "absent.json")
