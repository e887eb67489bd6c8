"""Sharing expensive outputs through DVC, so a colleague's `itmbench pull` gives a checkout where
`snakemake -n` has nothing to do.

`itmbench share` tracks the output trees (`data/<source>`, `results/<source>`, `reports`, and the
fetched released files) with `dvc add` — the `.dvc` files beside them (`data/world.dvc`, ...)
go to git while the trees stay git-ignored — records every shared file's modification time in
`dvc/mtimes.json`, and pushes to the DVC remote. `itmbench pull` runs `dvc pull` and puts
those modification times back.

Why the times: `dvc pull` writes files in no particular order, so an input can come out newer
than its outputs, and Snakemake reruns a job whose input is newer than its output unless it has
a recorded checksum of that input (it keeps none for large files, and a fresh clone has no
`.snakemake/` metadata at all). Restoring the producer's times restores the order Snakemake
checks. DVC has verified the content by then (its cache is content-addressed by md5).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from itmbench.errors import reading
from itmbench.io import write_text

MANIFEST = Path("dvc") / "mtimes.json"


def shared_paths(source: str, root: Path = Path(".")) -> list[Path]:
    """The output trees worth sharing for a source, those that exist under root."""
    candidates = [
        Path("data") / source,
        Path("results") / source,
        Path("reports"),
        Path("data") / "raw",
        Path("results") / "released",
    ]
    return [p for p in candidates if (root / p).exists()]


def dvc_file_for(path: Path) -> Path:
    """Where DVC writes the .dvc file of a shared tree: beside it (data/world -> data/world.dvc)."""
    return path.with_name(path.name + ".dvc")


def _files(paths: Iterable[Path], root: Path) -> list[Path]:
    out = []
    for p in paths:
        full = root / p
        if full.is_file():
            out.append(p)
        else:
            out += [f.relative_to(root) for f in sorted(full.rglob("*")) if f.is_file()]
    return out


def record_mtimes(paths: Sequence[Path], root: Path = Path("."), manifest: Path = MANIFEST) -> int:
    """Write {relative path: mtime_ns} of every file under `paths` to the manifest; return the count."""
    times = {str(f): (root / f).stat().st_mtime_ns for f in _files(paths, root)}
    write_text(root / manifest, json.dumps(times, indent=0, sort_keys=True) + "\n")
    return len(times)


def restore_mtimes(root: Path = Path("."), manifest: Path = MANIFEST) -> tuple[int, int]:
    """Set every listed file that exists back to its recorded mtime; return (restored, missing)."""
    path = root / manifest
    if not path.exists():
        raise FileNotFoundError(f"{path}: no mtime manifest (was the work shared with `itmbench share`?)")
    try:
        with reading(path):
            times = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno}: malformed JSON ({err.msg})") from err
    restored = missing = 0
    for rel, ns in sorted(times.items()):
        f = root / rel
        if not isinstance(ns, int):
            raise ValueError(f"{path}: entry {rel!r}: expected an integer mtime in ns, got {ns!r}")
        if f.is_file():
            os.utime(f, ns=(ns, ns))
            restored += 1
        else:
            missing += 1
    return restored, missing


def _dvc(*args: str, root: Path) -> None:
    res = subprocess.run(["dvc", *args], cwd=root, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"`dvc {' '.join(args)}` failed in {root}:\n{res.stderr.strip()[-2000:]}")


def share(source: str, root: Path = Path("."), push: bool = True, remote: str | None = None) -> list[Path]:
    """Track the shared trees with DVC, record their mtimes, push; return the .dvc files (for git)."""
    paths = shared_paths(source, root)
    if not paths:
        raise FileNotFoundError(f"{root}: nothing to share for source {source!r} (run the workflow first)")
    (root / "dvc").mkdir(exist_ok=True)
    dvc_files = []
    for p in paths:
        _dvc("add", "--quiet", str(p), root=root)
        dvc_files.append(dvc_file_for(p))
    # git checks the workflow files out with new times; the notebooks are inputs of the reports
    record_mtimes(paths + [p for p in (Path("workflow"),) if (root / p).exists()], root)
    if push:
        _dvc("push", "--quiet", *(["--remote", remote] if remote else []), root=root)
    return dvc_files


def pull(root: Path = Path("."), remote: str | None = None) -> tuple[int, int]:
    """`dvc pull`, then the producer's modification times back; return (restored, missing)."""
    _dvc("pull", "--quiet", *(["--remote", remote] if remote else []), root=root)
    return restore_mtimes(root)
