"""Fetching released files through DVC: from a mirror folder, a loopback HTTP mirror, and failing cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from itmbench.sources.fetch import fetch_released, key_of_raw_path, raw_path, source_url
from itmbench.sources.released import ChecksumMismatchError, file_md5, released_file


def test_source_url_maps_to_the_mirror_layout(tmp_path):
    rf = released_file("mcic_dev")
    assert source_url(rf, None) == rf.url
    assert source_url(rf, "http://127.0.0.1:9/m/") == "http://127.0.0.1:9/m/" + str(rf.mirror_path)
    assert source_url(rf, tmp_path) == str(tmp_path.resolve() / rf.mirror_path)
    assert key_of_raw_path(str(raw_path("mcic_dev"))) == "mcic_dev"


def test_fetch_from_a_mirror_folder(mirror_dir, tmp_path):
    out = tmp_path / "dev.txt"
    assert fetch_released("mcic_dev", out, mirror_dir) == released_file("mcic_dev").md5
    assert file_md5(out) == released_file("mcic_dev").md5


def test_fetch_over_loopback_http(http_mirror, tmp_path):
    out = tmp_path / "raw" / "ids.npy"
    assert fetch_released("eccv_coco_test_ids", out, http_mirror) == released_file("eccv_coco_test_ids").md5


def _fake_mirror(root: Path, key: str, payload: bytes) -> Path:
    path = root / released_file(key).mirror_path
    path.parent.mkdir(parents=True)
    path.write_bytes(payload)
    return root


def test_checksum_mismatch_leaves_nothing_half_written(tmp_path):
    mirror = _fake_mirror(tmp_path / "mirror", "mcic_dev", b"answer_0=truncated\n")
    out = tmp_path / "out" / "mc_mscoco_dev.txt"
    out.parent.mkdir()
    out.write_text("previous good copy")
    with pytest.raises(ChecksumMismatchError, match="expected b572d08678f7d898c29475492f7334c0"):
        fetch_released("mcic_dev", out, mirror)
    assert out.read_text() == "previous good copy"
    assert sorted(p.name for p in out.parent.iterdir()) == ["mc_mscoco_dev.txt"]


def test_missing_file_names_the_key_and_url(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="'mcic_test'.*mc_mscoco_test.txt"):
        fetch_released("mcic_test", tmp_path / "x.txt", tmp_path / "empty")
    assert not (tmp_path / "x.txt").exists()


def test_unknown_key_is_named(tmp_path):
    with pytest.raises(KeyError, match="no_such_file"):
        fetch_released("no_such_file", tmp_path / "x", tmp_path)
