"""Fetch released files through DVC (`dvc get-url`), from their URL or a mirror, checksummed.

A mirror is a folder or a base URL holding each file at `<host>/<url path>` (the layout of
`../shared/mirror`), for air-gapped clusters and CI. The download lands in a temp file beside
the output (`itmbench.io.temp_dir_beside`); only a file whose md5 matches its declaration is renamed
into place, so a mismatch or a missing file leaves nothing half-written and keeps whatever was there
before, and a killed fetch's temp folder is removed by the next fetch of the same file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from itmbench.io import temp_dir_beside
from itmbench.papers.registry import PAPERS
from itmbench.sources.released import ChecksumMismatchError, ReleasedFile, file_md5, load_registry, released_file

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")

# Views of the registry: the released files each paper's dataset statistics are regenerated from, and those
# the paper tables, figures and claims on the released source read (each key once).
STATISTICS_KEYS: dict[str, tuple[str, ...]] = {n: p.statistics_keys for n, p in PAPERS.items() if p.statistics_keys}
PAPER_TABLE_KEYS: tuple[str, ...] = tuple(dict.fromkeys(k for p in PAPERS.values() for k in p.table_keys))


def source_url(rf: ReleasedFile, mirror: str | os.PathLike | None) -> str:
    """Where to fetch a file from: its canonical URL, or its place under a mirror folder or base URL."""
    if not mirror:
        return rf.url
    mirror = str(mirror)
    if _URL.match(mirror):
        return mirror.rstrip("/") + "/" + str(rf.mirror_path)
    return str(Path(mirror).resolve() / rf.mirror_path)


def raw_path(key: str, raw_dir: str | os.PathLike = "data/raw") -> Path:
    """Where a fetched file lives in the project: data/raw/<host>/<url path> (a mirror's layout)."""
    return Path(raw_dir) / released_file(key).mirror_path


def key_of_raw_path(path: str, raw_dir: str = "data/raw") -> str:
    """The registry key of a data/raw path (the inverse of raw_path)."""
    rel = os.path.relpath(path, raw_dir)
    for rf in load_registry().values():
        if str(rf.mirror_path) == rel:
            return rf.key
    raise KeyError(f"{path}: no released file is declared at this path in released.yaml")


def fetch_released(key: str, out: str | os.PathLike, mirror: str | os.PathLike | None = None) -> str:
    """Download one declared file with DVC, verify its md5, and move it atomically onto `out`."""
    from dvc.exceptions import URLMissingError
    from dvc.repo.get_url import get_url

    rf = released_file(key)
    url = source_url(rf, mirror)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with temp_dir_beside(out) as tmp:  # .<name>.itmbench-tmp-<host>-<pid>-...: a killed fetch's is removed next time
        tmp_file = tmp / out.name
        try:
            get_url(url, out=str(tmp_file))
        except URLMissingError as err:
            raise FileNotFoundError(f"released file {key!r}: nothing at {url} (check the mirror setting)") from err
        if not tmp_file.is_file():
            raise FileNotFoundError(f"released file {key!r}: fetching {url} produced no file")
        actual = file_md5(tmp_file)
        if rf.md5 is not None and actual != rf.md5:
            raise ChecksumMismatchError(f"{url} (for {out})", rf.md5, actual)
        os.replace(tmp_file, out)
    return actual
