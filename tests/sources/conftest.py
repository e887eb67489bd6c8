"""Fixtures of the loader tests: released tables read once per session from the mirror."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from itmbench.sources.released import load_released


@pytest.fixture(scope="session")
def released(mirror_dir: Path) -> Callable[[str], Any]:
    """load(key): a released file read by its declared loader after md5 verification, cached."""
    cache: dict[str, Any] = {}

    def load(key: str) -> Any:
        if key not in cache:
            cache[key] = load_released(key, mirror_dir)
        return cache[key]

    return load


@pytest.fixture()
def write(tmp_path: Path) -> Callable[[str, str | bytes], Path]:
    """write(name, content): a small file in the test's temp folder."""

    def make(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return make
