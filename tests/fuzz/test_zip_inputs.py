"""A COCO zip someone else produced (issue 34): a member that is not an image, a zip cut short, and a
Karpathy zip cut short are each refused in one line naming the zip (and the member), exit 2 from the CLI."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coco"))

from coco_fixtures import make_tiny_coco  # noqa: E402

from itmbench.cli import main  # noqa: E402
from itmbench.errors import EXIT_INPUT  # noqa: E402

MEMBER = "val2014/COCO_val2014_000000000042.jpg"


def _argv(raw: dict[str, Path], out: Path) -> list[str]:
    options = {"--karpathy": [raw["karpathy"]], "--captions": [raw["captions"]], "--out": [out]}
    options["--images"] = [f"{split}={raw[split]}" for split in ("train2014", "val2014")]
    return ["coco-items", *(str(x) for option, values in options.items() for x in (option, *values))]


def _rewrite(archive: Path, replace: dict[str, bytes]) -> None:
    with zipfile.ZipFile(archive) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    with zipfile.ZipFile(archive, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, replace.get(name, data))


def _refused(capsys, rc: int, *named: str) -> str:
    err = capsys.readouterr().err
    assert rc == EXIT_INPUT, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("itmbench coco-items: error: "), err
    for name in named:
        assert name in lines[0], lines[0]
    return lines[0]


def test_a_member_that_is_not_an_image_is_refused_naming_zip_and_member(tmp_path, capsys):
    raw = make_tiny_coco(tmp_path / "raw")
    _rewrite(raw["val2014"], {MEMBER: b"<html>not found</html>"})
    line = _refused(capsys, main(_argv(raw, tmp_path / "items")), str(raw["val2014"]), MEMBER, "not an image")
    assert "image 42" in line
    assert not (tmp_path / "items").exists()


@pytest.mark.parametrize("which", ["val2014", "karpathy"])
def test_a_truncated_zip_is_refused_naming_it(which, tmp_path, capsys):
    raw = make_tiny_coco(tmp_path / "raw")
    data = raw[which].read_bytes()
    raw[which].write_bytes(data[: len(data) // 2])
    line = _refused(capsys, main(_argv(raw, tmp_path / "items")), str(raw[which]))
    assert "zip" in line
