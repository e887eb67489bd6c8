"""Inputs read with checks: a file that is missing, a folder, not UTF-8, a JSON with a key twice or a bare
NaN where none is allowed, a parquet page whose checksum fails, a torch checkpoint with a damaged member, or a
table without its declared columns is an error naming the file (and the offset, line, key or column), never a
smaller or silently different value. The write side, atomic and in sets, is `itmbench.io`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

UTF8_BOM = b"\xef\xbb\xbf"


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a file; a missing file or a folder is an OSError whose message names the path."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; expected a file")
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    return path.read_bytes()


def decode_utf8(data: bytes, path: str | os.PathLike) -> str:
    """UTF-8 bytes as text, a leading byte-order mark dropped; a bad byte is an error naming file, offset and line."""
    skip = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        line = data.count(b"\n", 0, offset) + 1
        bad = data[offset : skip + err.end]
        raise ValueError(f"{path}: byte {offset} (line {line}): not UTF-8 text ({err.reason}: {bad!r})") from None


def read_text(path: str | os.PathLike) -> str:
    """Read a UTF-8 text file (a BOM is accepted and dropped), naming the file and byte offset of a bad byte."""
    return decode_utf8(read_bytes(path), path)


class _DuplicateKey(Exception):
    """Raised by the object hook: a JSON object holds a key twice."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: a dict of the pairs, refusing a key that appears twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


class _NonFinite(Exception):
    """Raised by parse_constant: NaN or Infinity where finite numbers are expected."""


def _refuse_constant(name: str) -> Any:
    """parse_constant: NaN and Infinity are not JSON numbers."""
    raise _NonFinite(name)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _duplicate_offsets(text: str) -> tuple[int, int] | None:
    """Offsets of the two occurrences of the first repeated key (a pure-Python parse: the error path only)."""
    from json import decoder, scanner

    class Found(Exception):
        pass

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, *rest):
        start = s_and_end[1]

        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            try:
                return _unique_keys(pairs)
            except _DuplicateKey as dup:
                raise Found(start, dup.args[0]) from None

        return decoder.JSONObject(s_and_end, strict, scan_once, object_hook, hook, memo, *rest)

    parser = json.JSONDecoder()
    parser.parse_object = parse_object
    parser.scan_once = scanner.py_make_scanner(parser)
    try:
        parser.decode(text)
    except Found as found:
        start, key = found.args
        hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text[start:])]
        return (start + hits[0], start + hits[1]) if len(hits) > 1 else (start, start)
    return None


def parse_json(text: str, path: str | os.PathLike, allow_nan: bool = True, first_line: int = 1) -> Any:
    """Parse JSON text of `path` strictly: a key repeated in one object, or (allow_nan=False) NaN/Infinity, is an error.

    Every error names the file and, where the parser gives it, the line (counted from `first_line`,
    for one record of a JSON-lines file).
    """

    def at(offset: int) -> str:
        line, column = _line_column(text, offset)
        return f"line {line + first_line - 1} column {column}"

    constant = None if allow_nan else _refuse_constant
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=constant)
    except _DuplicateKey as dup:
        offsets = _duplicate_offsets(text)
        where = f"{at(offsets[1])}: " if offsets is not None else ""
        first = f" (first at {at(offsets[0])})" if offsets is not None else ""
        raise ValueError(
            f"{path}: {where}key {dup.args[0]!r} appears twice in one object{first}; expected unique keys"
        ) from None
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: {at(err.pos)}: malformed JSON ({err.msg})") from err
    except _NonFinite as bad:
        hit = re.search(r"(?<![\w\"])-?(?:NaN|Infinity)(?![\w\"])", text)
        where = f"{at(hit.start())}: " if hit else ""
        raise ValueError(f"{path}: {where}{bad.args[0]} is not a JSON number; expected finite numbers") from None


def read_json(path: str | os.PathLike, allow_nan: bool = True) -> Any:
    """Read a UTF-8 JSON file strictly (`parse_json`): a repeated key is an error; a leading BOM is accepted."""
    return parse_json(read_text(path), path, allow_nan)


def read_parquet_file(path: str | os.PathLike, columns: Sequence[str] | None = None) -> Any:
    """Read a parquet file into pandas; a folder, a missing file or unreadable bytes is an error naming the path.

    Every parquet read in itmbench comes here. The CRC-32 of each page that has one is verified (every page
    `write_parquet` writes has one): a page whose bytes changed is refused. A file without page checksums
    (another tool's, or itmbench's before they were written) is read unverified: see docs/outputs.md
    "Damaged files"."""
    import pandas as pd

    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; expected a parquet file")
    if not path.exists():
        raise FileNotFoundError(f"{path}: file not found")
    try:
        return pd.read_parquet(
            path, columns=None if columns is None else list(columns), page_checksum_verification=True
        )
    except (ValueError, OSError) as err:  # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
        raise ValueError(f"{path}: not a readable parquet file ({err})") from None


def verify_zip(path: str | os.PathLike) -> None:
    """Check the CRC-32 of every member of a zip file (a torch checkpoint, an .npz), naming the file and the
    first member whose bytes changed; a file that is not a zip (an old pickle checkpoint) has none to check."""
    import zipfile

    if not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as err:
        raise ValueError(f"{path}: not a readable zip archive ({err}); expected a complete file") from None
    if bad is not None:
        raise ValueError(f"{path}: member {bad!r} fails its CRC-32 check (bytes changed); expected the bytes written")


def load_torch(path: str | os.PathLike, weights_only: bool = True) -> Any:
    """torch.load on the CPU after `verify_zip`: torch's own reader does not check the CRCs, so a checkpoint
    with bytes changed in place would load as other weights."""
    import torch

    verify_zip(path)
    return torch.load(path, map_location="cpu", weights_only=weights_only)


def read_parquet_checked(path: str | os.PathLike, columns: Sequence[str], expected: str) -> Any:
    """Read a parquet table, naming the file and what it should be when it is absent, and the missing columns."""

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; expected {expected}")
    frame = read_parquet_file(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; expected {list(columns)}")
    return frame
