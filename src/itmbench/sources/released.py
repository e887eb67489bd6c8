"""The declaration of every released file (released.yaml): URL, md5, record count, benchmark and loader.

A mirror stores the file of URL `scheme://host/path` at `<mirror>/host/path`, so the same
declaration serves the internet, an air-gapped mirror folder and the DVC data registry; a URL whose path
does not name its file (Google Drive's `uc?id=...`) declares its `path` there, `<host>/<folders>/<file>`.

Every loader checks what it read against the declaration: `check_released(path)` verifies the md5
of a file that lies at a declared place (`<folder>/<host>/<url path>`, the layout of a mirror and of
data/raw), cached per (path, size, mtime) so repeated reads cost one hash; `check_count(path, n,
unit)` refuses a file with no records, and one whose record count differs from its declared
`records`. `count_records` is the counter that wrote those declarations
(benchmarks/declare_record_counts.py).

A registry overlay (a file in released.yaml's format, e.g. the one `itmbench export-release` writes
beside the world's COCO-format release) re-declares some files at their canonical places with other
md5s and counts: `use_registry(path)` (the CLI's `--registry`) makes every check of this process
read the overlay's declarations for its keys and the packaged ones for the others.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from itmbench.papers.registry import PAPERS

# What a declaration's `benchmark` may name: a registered paper, or coco for COCO's own files (a view of the registry).
BENCHMARKS = (*PAPERS, "coco")
_MD5 = re.compile(r"^[0-9a-f]{32}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_KEY = re.compile(r"^[a-z0-9][a-z0-9_]*$")
_FIELDS = {
    "key",
    "url",
    "md5",
    "records",
    "in_mirror",
    "benchmark",
    "loader",
    "args",
    "license",
    "note",
    "sha256",
    "size_bytes",
    "path",
}


class ChecksumMismatchError(ValueError):
    """A file's md5 differs from its declaration."""

    def __init__(self, path: str | os.PathLike, expected: str, actual: str) -> None:
        self.path = str(path)
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"{self.path}: md5 checksum mismatch: expected {expected}, actual {actual} "
            "(the file is corrupt, truncated or a different version; fetch it again)"
        )


class RecordCountError(ValueError):
    """A file holds no records, or another number of records than its declaration (or the benchmark) says."""

    def __init__(self, path: str | os.PathLike, n: int, unit: str, expected: int | None, source: str | None) -> None:
        self.path = str(path)
        self.n = n
        self.expected = expected
        if expected is None:
            message = f"{self.path}: no {unit}; expected at least one"
        else:
            message = f"{self.path}: {n:,} {unit}; expected {expected:,}"
        if source:
            message += f" ({source})"
        super().__init__(message)


@dataclass(frozen=True)
class ReleasedFile:
    """One released file: where it lives, its checksum, its benchmark and the loader that reads it."""

    key: str
    url: str
    md5: str | None
    in_mirror: bool
    benchmark: str
    loader: str | None
    args: Mapping[str, Any] = field(default_factory=dict)
    license: str | None = None
    note: str | None = None
    sha256: str | None = None
    size_bytes: int | None = None
    records: int | None = None
    path: str | None = None  # its place in a mirror where the URL's path does not name the file (a query's id)

    @property
    def mirror_path(self) -> PurePosixPath:
        """Relative path of the file inside a mirror folder: <host>/<url path>, or its declared `path`."""
        if self.path is not None:
            return PurePosixPath(self.path)
        parts = urlsplit(self.url)
        return PurePosixPath(parts.netloc) / parts.path.lstrip("/")

    @property
    def filename(self) -> str:
        """The last component of the URL path."""
        return self.mirror_path.name


def _parse_entry(entry: Any, index: int, source: str) -> ReleasedFile:
    """Validate one YAML entry and turn it into a ReleasedFile, naming the entry on error."""
    where = f"{source}: files[{index}]"
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {entry!r}")
    key = entry.get("key")
    where = f"{where} (key {key!r})"
    unknown = set(entry) - _FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown fields {sorted(unknown)}; expected a subset of {sorted(_FIELDS)}")
    for name in ("key", "url", "benchmark", "in_mirror"):
        if name not in entry:
            raise ValueError(f"{where}: missing field {name!r}")
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(f"{where}: key must be lower-case letters, digits and underscores")
    url = entry["url"]
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise ValueError(f"{where}: url must be an http(s) URL, got {url!r}")
    path = entry.get("path")
    if urlsplit(url).query and path is None:
        raise ValueError(f"{where}: a URL with a query needs a path (its place in a mirror: <host>/<folders>/<file>)")
    if path is not None and (
        not isinstance(path, str) or path.startswith("/") or ".." in PurePosixPath(path).parts or "/" not in path
    ):
        raise ValueError(f"{where}: path must be a relative <host>/<folders>/<file> path, got {path!r}")
    md5 = entry.get("md5")
    if md5 is not None and (not isinstance(md5, str) or not _MD5.match(md5)):
        raise ValueError(f"{where}: md5 must be 32 lower-case hex digits or null, got {md5!r}")
    in_mirror = entry["in_mirror"]
    if not isinstance(in_mirror, bool):
        raise ValueError(f"{where}: in_mirror must be true or false, got {in_mirror!r}")
    if in_mirror and md5 is None:
        raise ValueError(f"{where}: a mirrored file must declare its md5")
    if not in_mirror and md5 is None and not entry.get("note"):
        raise ValueError(f"{where}: a file without md5 needs a note saying why")
    if entry["benchmark"] not in BENCHMARKS:
        raise ValueError(f"{where}: benchmark must be one of {BENCHMARKS}, got {entry['benchmark']!r}")
    loader = entry.get("loader")
    if loader is not None and (not isinstance(loader, str) or loader.count(":") != 1):
        raise ValueError(f"{where}: loader must be 'module:function' or null, got {loader!r}")
    args = entry.get("args") or {}
    if not isinstance(args, Mapping):
        raise ValueError(f"{where}: args must be a mapping, got {args!r}")
    sha256 = entry.get("sha256")
    if sha256 is not None and (not isinstance(sha256, str) or not _SHA256.match(sha256)):
        raise ValueError(f"{where}: sha256 must be 64 lower-case hex digits, got {sha256!r}")
    size = entry.get("size_bytes")
    if size is not None and (not isinstance(size, int) or size <= 0):
        raise ValueError(f"{where}: size_bytes must be a positive integer, got {size!r}")
    records = entry.get("records")
    if records is not None and (isinstance(records, bool) or not isinstance(records, int) or records <= 0):
        raise ValueError(f"{where}: records must be a positive integer, got {records!r}")
    return ReleasedFile(
        key=key,
        url=url,
        md5=md5,
        in_mirror=in_mirror,
        benchmark=entry["benchmark"],
        loader=loader,
        args=dict(args),
        license=entry.get("license"),
        note=entry.get("note"),
        sha256=sha256,
        size_bytes=size,
        path=path,
        records=records,
    )


def parse_registry(text: str, source: str = "released.yaml") -> dict[str, ReleasedFile]:
    """Parse the YAML text of a registry into {key: ReleasedFile}; every key and URL appears once."""
    from itmbench.params import load_yaml_text  # refuses a repeated key, naming both lines

    document = load_yaml_text(text, source)
    if not isinstance(document, Mapping) or not isinstance(document.get("files"), list):
        raise ValueError(f"{source}: expected a mapping with a list 'files'")
    registry: dict[str, ReleasedFile] = {}
    urls: dict[str, str] = {}
    for index, entry in enumerate(document["files"]):
        released = _parse_entry(entry, index, source)
        if released.key in registry:
            raise ValueError(f"{source}: files[{index}]: key {released.key!r} is declared twice")
        if released.url in urls:
            raise ValueError(
                f"{source}: files[{index}]: url {released.url} is already declared as {urls[released.url]!r}"
            )
        registry[released.key] = released
        urls[released.url] = released.key
    return registry


@cache
def _packaged_registry() -> dict[str, ReleasedFile]:
    """The registry shipped with the package (parsed once)."""
    text = resources.files("itmbench.sources").joinpath("released.yaml").read_text(encoding="utf-8")
    return parse_registry(text, "itmbench/sources/released.yaml")


_ACTIVE: dict[str, ReleasedFile] | None = None  # the packaged registry with an overlay's entries (use_registry)
# Fields an overlay must declare as the packaged registry does: a file stays where it is and is read as it is.
_SAME_FIELDS = ("url", "path", "benchmark", "loader", "args")


def _registry() -> dict[str, ReleasedFile]:
    """The declarations every check reads: the packaged registry, or it with the active overlay's entries."""
    return _packaged_registry() if _ACTIVE is None else _ACTIVE


def load_registry(path: str | os.PathLike | None = None) -> dict[str, ReleasedFile]:
    """Load the registry: the active one (the packaged released.yaml, or it with an overlay), or the file at `path`."""
    if path is None:
        return dict(_registry())
    return parse_registry(Path(path).read_text(encoding="utf-8"), str(path))


def overlay_registry(path: str | os.PathLike) -> dict[str, ReleasedFile]:
    """The packaged registry with the entries of the overlay at `path` (released.yaml's format) in place of its own.

    Every overlay key must be a packaged key with the same url, benchmark, loader and args (an overlay
    re-declares a file's md5, record count and notes; it cannot move a file or read it another way).
    """
    from itmbench.errors import InputError, reading

    with reading(path):
        overlay = parse_registry(Path(path).read_text(encoding="utf-8"), str(path))
    packaged = _packaged_registry()
    for index, (key, entry) in enumerate(overlay.items()):
        if key not in packaged:
            raise InputError(
                f"{path}: files[{index}] (key {key!r}): not a key of itmbench/sources/released.yaml; "
                "expected an overlay of declared files"
            )
        for name in _SAME_FIELDS:
            if getattr(entry, name) != getattr(packaged[key], name):
                raise InputError(
                    f"{path}: files[{index}] (key {key!r}): {name} {getattr(entry, name)!r}; expected "
                    f"{getattr(packaged[key], name)!r} as itmbench/sources/released.yaml declares it"
                )
    return {key: overlay.get(key, entry) for key, entry in packaged.items()}


def use_registry(path: str | os.PathLike | None) -> None:
    """Make the overlay at `path` the declarations of this process (None: the packaged registry again)."""
    global _ACTIVE
    _ACTIVE = None if path is None else overlay_registry(path)
    _by_filename.cache_clear()
    _MD5_CACHE.clear()


@contextmanager
def registry_overlay(path: str | os.PathLike | None) -> Iterator[dict[str, ReleasedFile]]:
    """`use_registry(path)` for the block, the previous declarations restored after it."""
    global _ACTIVE
    previous = _ACTIVE
    use_registry(path)
    try:
        yield dict(_registry())
    finally:
        _ACTIVE = previous
        _by_filename.cache_clear()
        _MD5_CACHE.clear()


def registry_text(entries: Iterable[ReleasedFile], header: str = "") -> str:
    """The YAML text of a registry (released.yaml's format) holding `entries`, fields in released.yaml's order."""
    import yaml

    order = ("key", "url", "path", "md5", "records", "in_mirror", "benchmark", "loader", "args", "license", "note")
    files = []
    for entry in entries:
        record = {name: getattr(entry, name) for name in order}
        record["args"] = dict(record["args"]) or None
        record |= {"sha256": entry.sha256, "size_bytes": entry.size_bytes}
        files.append({k: v for k, v in record.items() if v is not None or k in ("md5", "loader")})
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    return comment + yaml.safe_dump({"files": files}, sort_keys=False, allow_unicode=True, width=120)


def released_file(key: str) -> ReleasedFile:
    """The declaration of one released file, by key (an active overlay's, where it declares the key)."""
    registry = _registry()
    if key not in registry:
        raise KeyError(f"unknown released file {key!r}; known keys: {', '.join(sorted(registry))}")
    return registry[key]


def resolve(key: str | ReleasedFile, mirror: str | os.PathLike, must_exist: bool = False) -> Path:
    """Path of a released file inside a mirror folder (<mirror>/<host>/<url path>)."""
    released = released_file(key) if isinstance(key, str) else key
    path = Path(mirror).joinpath(*released.mirror_path.parts)
    if must_exist and not path.is_file():
        hint = "" if released.in_mirror else f" (not mirrored: {released.note or 'fetch it from ' + released.url})"
        raise FileNotFoundError(f"released file {released.key!r} not found at {path}{hint}")
    return path


def file_md5(path: str | os.PathLike, chunk_size: int = 1 << 20) -> str:
    """md5 hex digest of a file, read in chunks."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_md5(path: str | os.PathLike, expected: str | None) -> str:
    """Check a file's md5 against `expected`; return it, or raise ChecksumMismatchError naming both."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: file not found (cannot verify md5 {expected})")
    actual = file_md5(path)
    if expected is not None and actual != expected.lower():
        raise ChecksumMismatchError(path, expected, actual)
    return actual


@cache
def _by_filename() -> dict[str, list[ReleasedFile]]:
    """Declared files grouped by file name (the last component of their URL)."""
    index: dict[str, list[ReleasedFile]] = {}
    for released in _registry().values():
        index.setdefault(released.filename, []).append(released)
    return index


def registered_file(path: str | os.PathLike) -> ReleasedFile | None:
    """The declaration of the file at `path` if it lies at a declared place (<folder>/<host>/<url path>), else None."""
    parts = Path(os.path.abspath(path)).parts
    for released in _by_filename().get(Path(path).name, ()):
        tail = released.mirror_path.parts
        if parts[-len(tail) :] == tail:
            return released
    return None


_MD5_CACHE: dict[tuple[str, int, int], str] = {}


def check_released(path: str | os.PathLike, key: str | None = None) -> ReleasedFile | None:
    """Verify the md5 of a declared file (by `key`, else by its place); return its declaration, or None if undeclared.

    The md5 is cached per (absolute path, size, mtime), so a process that reads a file again pays once.
    """
    released = released_file(key) if key is not None else registered_file(path)
    if released is None or released.md5 is None:
        return released
    absolute = os.path.abspath(path)
    try:
        stat = os.stat(absolute)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: file not found (released file {released.key!r})") from None
    if not os.path.isfile(absolute):
        raise IsADirectoryError(f"{path}: is not a file (released file {released.key!r})")
    cache_key = (absolute, stat.st_size, stat.st_mtime_ns)
    actual = _MD5_CACHE.get(cache_key) or file_md5(absolute)
    if actual != released.md5:
        raise ChecksumMismatchError(path, released.md5, actual)
    _MD5_CACHE[cache_key] = actual
    return released


def check_count(path: str | os.PathLike, n: int, unit: str, key: str | None = None) -> None:
    """Refuse a file with no records, or (declared files) with another count than released.yaml's `records`."""
    released = released_file(key) if key is not None else registered_file(path)
    expected = released.records if released is not None else None
    source = f"sources/released.yaml: {released.key}" if expected is not None else None
    if n == 0 or (expected is not None and n != expected):
        raise RecordCountError(path, n, unit, expected, source)


def declared_records(loader: str, **args: Any) -> tuple[int, str] | None:
    """(records, key) declared for the files read by `loader` with these args (all must agree), or None."""
    found = [
        rf
        for rf in _registry().values()
        if rf.loader == loader and rf.records is not None and all(rf.args.get(k) == v for k, v in args.items())
    ]
    if not found:
        return None
    counts = {rf.records for rf in found}
    if len(counts) != 1:
        raise ValueError(f"released.yaml: the files of {loader} {args} declare different counts {sorted(counts)}")
    return found[0].records, found[0].key


def count_records(path: str | os.PathLike) -> tuple[int, str]:
    """(number of records, unit) of a released file, counted from its bytes alone (the declared `records`).

    CSV: data rows after the header (blank lines skipped); text: non-blank lines; JSON: items of a
    list (or of the "data" list of an object holding one), or the keys of an object whose value is a
    record (an object or a list: a summary number such as GPT-4V's "accuracy" is not one); npy: the
    array's length; parquet: the table's rows.
    """
    import csv
    import io

    import numpy as np

    from itmbench.reading import read_bytes, read_json, read_text

    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        rows = [r for r in csv.reader(io.StringIO(read_text(path), newline=""), strict=True) if r]
        return len(rows) - 1, "rows"
    if suffix == ".txt":
        return sum(1 for line in read_text(path).split("\n") if line.strip()), "lines"
    if suffix == ".json":
        document = read_json(path, allow_nan=False)
        if isinstance(document, list):
            return len(document), "items"
        if isinstance(document.get("data"), list):  # {"info": ..., "data": [records]} (BISON's annotations)
            return len(document["data"]), "items"
        return sum(1 for v in document.values() if isinstance(v, (dict, list))), "keys"
    if suffix == ".npy":
        return len(np.load(io.BytesIO(read_bytes(path)), allow_pickle=False)), "entries"
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        from itmbench.errors import reading

        with reading(path):
            return pq.ParquetFile(path).metadata.num_rows, "rows"
    raise ValueError(f"{path}: no record counter for {suffix!r} files")


def check_released_files(keys: Iterable[str], folder: str | os.PathLike) -> list[Path]:
    """Check that every declared file of `keys` is in `folder` (mirror layout) with its md5; return their paths.

    Commands that write several outputs call it before writing any, so a bad input leaves none.
    """
    paths = [resolve(key, folder, must_exist=True) for key in keys]
    for key, path in zip(keys, paths, strict=True):
        check_released(path, key)
    return paths
