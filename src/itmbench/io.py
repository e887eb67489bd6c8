"""Atomic writes: every output goes to a temp file in the same folder, then is renamed."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or path.suffix or ".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.is_file():  # mkstemp makes it 0600; the output gets the mode any new file would (umask)
            os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write text atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write bytes atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def _json_default(obj: Any) -> Any:
    """numpy scalars and arrays as plain JSON values."""
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Write JSON atomically, keys sorted and indented, so equal objects give equal bytes."""
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, allow_nan=True, default=_json_default) + "\n")


def write_parquet(path: str | os.PathLike, df: Any) -> None:
    """Write a pandas DataFrame as parquet atomically (no index, deterministic bytes)."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)


def read_json(path: str | os.PathLike) -> Any:
    """Read JSON, naming the file in the error when it is malformed."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno} column {err.colno}: malformed JSON ({err.msg})") from err


def read_parquet_checked(path: str | os.PathLike, columns: Sequence[str], expected: str) -> Any:
    """Read a parquet table, naming the file and what it should be when it is absent, and the missing columns."""
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing; expected {expected}")
    frame = pd.read_parquet(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; expected {list(columns)}")
    return frame
