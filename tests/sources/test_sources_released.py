"""The declaration of the released files: registry, resolve, md5 verification, loaders."""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd
import pytest
import yaml

from itmbench.sources.loading import loader_of
from itmbench.sources.released import (
    ChecksumMismatchError,
    RecordCountError,
    ReleasedFile,
    check_count,
    check_released,
    count_records,
    file_md5,
    load_registry,
    parse_registry,
    registered_file,
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
    assert len(REGISTRY) == 63
    for key, entry in REGISTRY.items():
        assert isinstance(entry, ReleasedFile)
        assert entry.key == key
        assert entry.url.startswith(("https://", "http://"))
        assert entry.benchmark in {"bison", "mcic", "eccv", "bivlc", "cxc", "aro", "coco"}
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
        if entry.loader is None:  # COCO's own files, or images read from their zip by a benchmark's build
            assert entry.benchmark == "coco" or entry.filename.endswith(".zip")
            continue
        function = loader_of(entry)
        inspect.signature(function).bind(Path("x"), **entry.args)


def test_a_url_that_does_not_name_its_file_declares_its_place() -> None:
    entry = released_file("aro_vg_relation")
    assert entry.url.startswith("https://drive.google.com/uc?") and entry.filename == "visual_genome_relation.json"
    assert str(entry.mirror_path) == "drive.google.com/aro/visual_genome_relation.json"
    base = {"key": "x", "md5": None, "in_mirror": False, "benchmark": "aro", "note": "n"}
    with pytest.raises(ValueError, match=r"key 'x'\): a URL with a query needs a path"):
        parse_registry(yaml.safe_dump({"files": [{**base, "url": "https://drive.google.com/uc?id=1"}]}), "r.yaml")
    for bad in ("/abs/x.json", "drive.google.com/../x.json", "x.json"):
        with pytest.raises(ValueError, match="path must be a relative <host>/<folders>/<file> path"):
            parse_registry(yaml.safe_dump({"files": [{**base, "url": "https://h/u?id=1", "path": bad}]}), "r.yaml")


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
    from itmbench.sources.loading import load_released

    with pytest.raises(ChecksumMismatchError, match="mc_mscoco_dev.txt: md5 checksum mismatch: expected b572d08"):
        load_released("mcic_dev", tmp_path)


# --- what every loader checks: md5 and record count of a file at a declared place ----------------


@pytest.mark.parametrize("key", MIRRORED)
def test_declared_record_counts_are_the_files(key: str, mirror_dir: Path) -> None:
    """released.yaml's `records` are counted from the files (benchmarks/declare_record_counts.py), never typed."""
    assert count_records(resolve(key, mirror_dir, must_exist=True))[0] == released_file(key).records


def test_every_mirrored_file_declares_its_count_and_no_other_does() -> None:
    assert {key for key, entry in REGISTRY.items() if entry.records is not None} == set(MIRRORED)
    with pytest.raises(ValueError, match="records must be a positive integer"):
        parse_registry(
            "files:\n  - {key: a, url: 'https://x.org/a.csv', md5: 0123456789abcdef0123456789abcdef, "
            "records: 0, in_mirror: true, benchmark: cxc, loader: 'cxc:read_cxc_csv'}\n"
        )


def test_count_records_of_each_kind(write) -> None:
    assert count_records(write("a.csv", 'x,y\n1,"two\nlines"\n\n3,4\n')) == (2, "rows")
    assert count_records(write("a.txt", "one\n\ntwo\r\n")) == (2, "lines")
    assert count_records(write("a.json", '{"0": {}, "1": [], "accuracy": 0.5}')) == (2, "keys")
    assert count_records(write("b.json", "[1, 2, 3]")) == (3, "items")
    assert count_records(write("c.json", '{"info": {}, "data": [{}, {}]}')) == (2, "items")


def test_a_file_at_a_declared_place_is_checked_by_its_loader(mirror_dir: Path, tmp_path: Path) -> None:
    """A copy in the mirror layout with one byte changed parses, but its loader refuses it by md5."""
    from itmbench.papers.mcic.released import read_mcic_txt

    source = resolve("mcic_dev", mirror_dir, must_exist=True)
    copy = resolve("mcic_dev", tmp_path)
    copy.parent.mkdir(parents=True)
    data = source.read_bytes()
    copy.write_bytes(data.replace(b"a ", b"A ", 1))
    assert registered_file(copy) == released_file("mcic_dev")
    with pytest.raises(ChecksumMismatchError, match="mc_mscoco_dev.txt: md5 checksum mismatch"):
        read_mcic_txt(copy)
    (tmp_path / "elsewhere.txt").write_bytes(data.replace(b"a ", b"A ", 1))
    assert registered_file(tmp_path / "elsewhere.txt") is None
    assert len(read_mcic_txt(tmp_path / "elsewhere.txt", "dev")) == released_file("mcic_dev").records


def test_md5_is_computed_once_per_path_size_and_mtime(mirror_dir: Path, monkeypatch) -> None:
    import itmbench.sources.released as released_module

    path = resolve("mcic_test", mirror_dir, must_exist=True)
    calls = []
    monkeypatch.setattr(released_module, "_MD5_CACHE", {})
    monkeypatch.setattr(released_module, "file_md5", lambda p: calls.append(p) or file_md5(p))
    for _ in range(3):
        assert check_released(path) == released_file("mcic_test")
    assert len(calls) == 1


def test_count_errors_name_file_count_and_declaration(tmp_path: Path) -> None:
    copy = resolve("bivlc_results_vit_b_32", tmp_path)
    with pytest.raises(RecordCountError) as info:
        check_count(copy, 1469, "rows")
    expected = f"{released_file('bivlc_results_vit_b_32').records:,}"
    assert str(info.value) == f"{copy}: 1,469 rows; expected {expected} (sources/released.yaml: bivlc_results_vit_b_32)"
    with pytest.raises(RecordCountError, match=r"x\.csv: no rows; expected at least one"):
        check_count(tmp_path / "x.csv", 0, "rows")
    check_count(tmp_path / "x.csv", 5, "rows")  # an undeclared file: any count but 0


def test_multi_output_commands_check_every_input_before_writing(mirror_dir: Path, tmp_path: Path) -> None:
    """released-paper-tables refuses a corrupt input before writing any of its outputs."""
    from itmbench.cli import main
    from itmbench.sources.fetch import PAPER_TABLE_KEYS

    raw = tmp_path / "raw"
    for key in PAPER_TABLE_KEYS:
        target = resolve(key, raw)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(resolve(key, mirror_dir, must_exist=True))
    last = resolve(PAPER_TABLE_KEYS[-1], raw)
    data = last.read_bytes()
    last.unlink()
    last.write_bytes(data[: len(data) // 2])
    out = tmp_path / "out"
    assert main(["released-paper-tables", "--raw", str(raw), "--out-dir", str(out)]) != 0
    assert not out.exists()
