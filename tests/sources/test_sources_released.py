"""The declaration of the released files: registry, resolve, md5 verification, loaders."""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd
import pytest

from itmbench.sources.released import (
    ChecksumMismatchError,
    ReleasedFile,
    file_md5,
    load_registry,
    parse_registry,
    released_file,
    resolve,
    verify_md5,
)

REGISTRY = load_registry()
MIRRORED = sorted(key for key, entry in REGISTRY.items() if entry.in_mirror)


def read_mirror_md5(mirror_dir: Path) -> dict[str, str]:
    """{relative path: md5} of the mirror's checksum list, or skip when it is absent."""
    listing = mirror_dir.parent / "mirror.md5"
    if not listing.is_file():
        pytest.skip(f"no mirror.md5 beside {mirror_dir}")
    out = {}
    for line in listing.read_text().splitlines():
        md5, path = line.split(maxsplit=1)
        out[path.removeprefix("./")] = md5
    return out


def test_registry_types_and_fields() -> None:
    assert len(MIRRORED) == 51  # every line of mirror.md5
    assert len(REGISTRY) == 60
    for key, entry in REGISTRY.items():
        assert isinstance(entry, ReleasedFile)
        assert entry.key == key
        assert entry.url.startswith(("https://", "http://"))
        assert entry.benchmark in {"bison", "mcic", "eccv", "bivlc", "cxc", "coco"}
        if entry.in_mirror:
            assert entry.md5 is not None and len(entry.md5) == 32
            assert entry.url.startswith("https://raw.githubusercontent.com/")
        else:
            assert entry.md5 is None and entry.note


def test_files_the_papers_need_but_the_mirror_lacks_are_declared() -> None:
    expected = {
        "bison_annotations": "binary-image-selection/main/annotations/bison_annotations.cocoval2014.json",
        "mcic_train": "mcic-coco/master/data/mc_mscoco_train.txt",
        "coco_val2014_images": "images.cocodataset.org/zips/val2014.zip",
        "coco_captions_trainval2014": "images.cocodataset.org/annotations/annotations_trainval2014.zip",
        "karpathy_splits": "deepimagesent/caption_datasets.zip",
    }
    for key, url_end in expected.items():
        entry = released_file(key)
        assert entry.url.endswith(url_end)
        assert entry.md5 is None
        assert not entry.in_mirror
        assert entry.note
    assert released_file("mcic_train").sha256 == "78e67340782ccc3ec9f85183d39e79b9e1cef6b5d932d238a45529fb0d38b1ec"


def test_every_loader_resolves_and_accepts_its_args() -> None:
    for entry in REGISTRY.values():
        if entry.loader is None:
            assert entry.benchmark == "coco"
            continue
        function = entry.load_function()
        inspect.signature(function).bind(Path("x"), **entry.args)


def test_resolve_maps_url_to_mirror_path(tmp_path: Path) -> None:
    path = resolve("cxc_sis_val", tmp_path)
    assert (
        path
        == tmp_path / "raw.githubusercontent.com/google-research-datasets/Crisscrossed-Captions/master/data/sis_val.csv"
    )
    assert resolve("coco_val2014_images", tmp_path) == tmp_path / "images.cocodataset.org/zips/val2014.zip"
    with pytest.raises(FileNotFoundError, match="bison_annotations.*not mirrored"):
        resolve("bison_annotations", tmp_path, must_exist=True)
    with pytest.raises(KeyError, match="unknown released file 'nope'"):
        resolve("nope", tmp_path)


def test_verify_md5_names_file_expected_and_actual(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_bytes(b"a,b\n1,2\n")
    actual = file_md5(path)
    assert verify_md5(path, actual) == actual
    assert verify_md5(path, actual.upper()) == actual
    wrong = "0" * 32
    with pytest.raises(ChecksumMismatchError) as info:
        verify_md5(path, wrong)
    message = str(info.value)
    assert str(path) in message and f"expected {wrong}" in message and f"actual {actual}" in message
    assert isinstance(info.value, ValueError)
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        verify_md5(tmp_path / "missing.csv", wrong)


def test_registry_validation_errors() -> None:
    good = (
        "files:\n  - {key: a, url: 'https://raw.githubusercontent.com/x/y/main/a.csv', "
        "md5: 0123456789abcdef0123456789abcdef, in_mirror: true, benchmark: cxc, loader: 'cxc:read_cxc_csv'}\n"
    )
    assert list(parse_registry(good)) == ["a"]
    with pytest.raises(ValueError, match="key 'a' is declared twice"):
        parse_registry(good + good.replace("files:\n", ""))
    with pytest.raises(ValueError, match=r"files\[0\] \(key 'a'\): md5 must be 32"):
        parse_registry(good.replace("0123456789abcdef0123456789abcdef", "xyz"))
    with pytest.raises(ValueError, match="a mirrored file must declare its md5"):
        parse_registry(good.replace("md5: 0123456789abcdef0123456789abcdef", "md5: null"))
    with pytest.raises(ValueError, match="needs a note"):
        parse_registry(
            good.replace("md5: 0123456789abcdef0123456789abcdef, in_mirror: true", "md5: null, in_mirror: false")
        )
    with pytest.raises(ValueError, match="benchmark must be one of"):
        parse_registry(good.replace("benchmark: cxc", "benchmark: flickr"))
    with pytest.raises(ValueError, match="unknown fields"):
        parse_registry(good.replace("benchmark: cxc", "benchmark: cxc, sha1: abc"))


def test_mirror_md5_list_matches_registry(mirror_dir: Path) -> None:
    listed = read_mirror_md5(mirror_dir)
    declared = {str(entry.mirror_path): entry.md5 for entry in REGISTRY.values() if entry.in_mirror}
    assert declared == listed


@pytest.mark.parametrize("key", MIRRORED)
def test_mirrored_file_verifies_and_loads(key: str, mirror_dir: Path, released) -> None:
    entry = released_file(key)
    path = resolve(key, mirror_dir, must_exist=True)
    assert verify_md5(path, entry.md5) == entry.md5
    table = released(key)
    assert len(table) > 0
    if isinstance(table, pd.DataFrame):
        assert not table.columns.duplicated().any()


def test_corrupt_mirror_copy_is_refused(mirror_dir: Path, tmp_path: Path) -> None:
    source = resolve("mcic_dev", mirror_dir, must_exist=True)
    copy = resolve("mcic_dev", tmp_path)
    copy.parent.mkdir(parents=True)
    copy.write_bytes(source.read_bytes()[:-10])
    from itmbench.sources.released import load_released

    with pytest.raises(ChecksumMismatchError, match="mc_mscoco_dev.txt: md5 checksum mismatch: expected b572d08"):
        load_released("mcic_dev", tmp_path)
