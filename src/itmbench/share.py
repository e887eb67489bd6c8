"""Sharing expensive outputs through DVC, so that a colleague's plain `dvc pull` gives a checkout where
`snakemake -n` has nothing to do.

`itmbench share` tracks the output trees (`data/<source>`, `results/<source>`, `reports`, and the
fetched released files) with `dvc add` — the `.dvc` files beside them (`data/world.dvc`, ...)
go to git while the trees stay git-ignored — records every shared file's modification time and md5
(DVC's own, from the `.dir` listing `dvc add` wrote) in `dvc/mtimes.json`, and pushes to the DVC remote.

Why the times: `dvc pull` writes files in no particular order, so an input can come out newer
than its outputs, and Snakemake reruns a job whose input is newer than its output unless it has
a recorded checksum of that input (it keeps none for large files, and a fresh clone has no
`.snakemake/` metadata at all). Restoring the producer's times restores the order Snakemake checks.

Who restores them: the workflow itself, when it parses (`restore_mtimes` from workflow/rules/common.smk),
for every listed file whose content has the recorded md5 — never for a file that differs, so a file
changed after the pull still reruns its dependants. Only files whose time differs from the record are
hashed, and once every listed file was present, a marker (`.dvc/tmp/itmbench-mtimes`, the manifest's own
hash) makes later parses skip the manifest until a new one is pulled. `itmbench pull` is `dvc pull`, a check
of every pulled file against its md5 (a corrupt remote object is removed from the checkout and the cache,
and named), and the same restore.

The manifest comes from someone else: each entry must name a file inside the checkout (no absolute
path, no `..`, no symlink out of it), with an integer time and an md5; anything else is refused by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from itmbench.errors import InputError, reading
from itmbench.io import write_text

MANIFEST = Path("dvc") / "mtimes.json"
MARKER = Path(".dvc") / "tmp" / "itmbench-mtimes"
_MD5 = re.compile(r"[0-9a-f]{32}")


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


def file_md5(path: Path) -> str:
    """The md5 of a file's bytes, as DVC 3 records it."""
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _cache_object(root: Path, md5: str) -> Path:
    return root / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]


def dvc_md5s(tracked: Path, root: Path) -> dict[str, str]:
    """{relative path: md5} of the files `dvc add` recorded for a tracked path (from its .dvc file and, for a
    folder, the `.dir` listing in the local cache); empty when the listing is not in the default cache."""
    with reading(root / dvc_file_for(tracked)):
        outs = yaml.safe_load((root / dvc_file_for(tracked)).read_text(encoding="utf-8"))["outs"]
    md5 = outs[0]["md5"]
    if not md5.endswith(".dir"):
        return {str(tracked): md5}
    listing = _cache_object(root, md5)
    if not listing.is_file():
        return {}
    return {str(tracked / e["relpath"]): e["md5"] for e in json.loads(listing.read_text(encoding="utf-8"))}


def record_mtimes(
    paths: Sequence[Path], root: Path = Path("."), manifest: Path = MANIFEST, md5s: dict[str, str] | None = None
) -> int:
    """Write {relative path: {"md5", "mtime_ns"}} of every file under `paths` to the manifest (md5s from `md5s`
    where known, else hashed); mark the checkout as current; return the count."""
    md5s = md5s or {}
    entries = {}
    for f in _files(paths, root):
        entries[str(f)] = {"md5": md5s.get(str(f)) or file_md5(root / f), "mtime_ns": (root / f).stat().st_mtime_ns}
    text = json.dumps(entries, indent=0, sort_keys=True) + "\n"
    write_text(root / manifest, text)
    _write_marker(root, text.encode())
    return len(entries)


def _write_marker(root: Path, manifest_bytes: bytes) -> None:
    if (root / ".dvc").is_dir():
        (root / MARKER).parent.mkdir(parents=True, exist_ok=True)
        write_text(root / MARKER, hashlib.sha256(manifest_bytes).hexdigest() + "\n")


def _inside(root: Path, rel: str, where: str) -> Path:
    """The file an entry names, refused unless it lies inside the checkout (symlinks resolved)."""
    p = Path(rel)
    if not rel or p.is_absolute() or ".." in p.parts or rel != p.as_posix():
        raise InputError(f"{where}: expected a relative path inside the project, got {rel!r}")
    top = root.resolve()
    full = (root / p).resolve()
    if full != top and top not in full.parents:
        raise InputError(f"{where}: {rel!r} leads outside the project (to {full})")
    return root / p


def load_manifest(root: Path = Path("."), manifest: Path = MANIFEST) -> tuple[bytes, dict[str, tuple[str, int]]]:
    """The manifest's bytes and {relative path: (md5, mtime_ns)}, every entry checked (see the module doc)."""
    path = root / manifest
    with reading(path):
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: line {err.lineno}: malformed JSON ({err.msg})") from err
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object {{path: {{md5, mtime_ns}}}}, got a {type(data).__name__}")
    out = {}
    for rel, entry in data.items():
        where = f"{path}: entry {rel!r}"
        _inside(root, rel, where)
        if not isinstance(entry, dict) or set(entry) != {"md5", "mtime_ns"}:
            raise InputError(f'{where}: expected {{"md5": ..., "mtime_ns": ...}} (share again), got {entry!r}')
        md5, ns = entry["md5"], entry["mtime_ns"]
        if not isinstance(md5, str) or not _MD5.fullmatch(md5):
            raise InputError(f"{where}: expected an md5 of 32 lowercase hex digits, got {md5!r}")
        if isinstance(ns, bool) or not isinstance(ns, int) or not 0 <= ns < 2**63:
            raise InputError(f"{where}: expected a non-negative integer mtime in ns, got {ns!r}")
        out[rel] = (md5, ns)
    return raw, out


def restore_mtimes(root: Path = Path("."), manifest: Path = MANIFEST, pulled: bool = False) -> tuple[int, int]:
    """Set every listed file whose content has its recorded md5 back to its recorded mtime; return
    (restored, missing). A file that differs keeps its time; right after `dvc pull` (`pulled`) it is a corrupt
    object: removed from the checkout and the cache, and refused by name. No-op when the marker says this
    manifest was already restored here."""
    path = root / manifest
    if not path.exists():
        raise FileNotFoundError(f"{path}: no mtime manifest (was the work shared with `itmbench share`?)")
    marker = root / MARKER
    if not pulled and marker.is_file():  # checked when the marker was written: only the hash is compared
        if marker.read_text(encoding="utf-8").strip() == hashlib.sha256(path.read_bytes()).hexdigest():
            return 0, 0
    raw, entries = load_manifest(root, manifest)
    restored = missing = 0
    corrupt = []
    for rel, (md5, ns) in sorted(entries.items()):
        f = _inside(root, rel, f"{path}: entry {rel!r}")
        if f.is_symlink():  # a link the checkout has (a git-tracked one): present, its own time is not restored
            continue
        if not f.is_file():
            missing += 1
            continue
        if f.stat().st_mtime_ns != ns:
            if file_md5(f) != md5:
                if pulled:
                    corrupt.append(rel)
                    f.unlink()
                    _cache_object(root, md5).unlink(missing_ok=True)
                continue
            os.utime(f, ns=(ns, ns), follow_symlinks=False)
        restored += 1
    if corrupt:
        raise InputError(
            f"{root}: {len(corrupt)} pulled file(s) do not have the md5 recorded in {manifest} "
            f"(a corrupt remote object, or pointers changed since `itmbench share`), removed: {', '.join(corrupt[:5])}"
        )
    if missing == 0:
        _write_marker(root, raw)
    return restored, missing


def _remote_named(root: Path, remote: str | None) -> str:
    """`remote 'name' (url)` for a message: the given remote, else the default one."""

    def out(*args: str) -> str:
        res = subprocess.run(["dvc", *args], cwd=root, capture_output=True, text=True)
        return res.stdout.strip() if res.returncode == 0 else ""

    name = remote or out("remote", "default")
    urls = dict(line.split(None, 1) for line in out("remote", "list").splitlines() if len(line.split(None, 1)) == 2)
    return f"remote {name!r} ({urls[name].strip()})" if name in urls else f"remote {name or '(none configured)'!r}"


def dvc_error(text: str) -> str:
    """DVC's own reason, on one line: its ERROR lines and what follows them, without the help links."""
    lines = text.strip().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("ERROR")), max(len(lines) - 3, 0))
    kept = [line.strip() for line in lines[start:] if line.strip() and not line.strip().startswith("<https://")]
    return " ".join(kept)[:600] or "no message"


def _dvc(*args: str, root: Path, remote: str | None = None, uses_remote: bool = False) -> None:
    res = subprocess.run(["dvc", *args], cwd=root, capture_output=True, text=True)
    if res.returncode != 0:
        via = f" through {_remote_named(root, remote)}" if uses_remote else ""
        reason = dvc_error(res.stderr + "\n" + res.stdout if not res.stderr.strip() else res.stderr)
        raise InputError(f"`dvc {' '.join(args)}` failed in {root}{via}: {reason}")


def share(source: str, root: Path = Path("."), push: bool = True, remote: str | None = None) -> list[Path]:
    """Track the shared trees with DVC, record their mtimes and md5s, push; return the .dvc files (for git)."""
    paths = shared_paths(source, root)
    if not paths:
        raise FileNotFoundError(f"{root}: nothing to share for source {source!r} (run the workflow first)")
    (root / "dvc").mkdir(exist_ok=True)
    dvc_files, md5s = [], {}
    for p in paths:
        _dvc("add", str(p), root=root)
        dvc_files.append(dvc_file_for(p))
        md5s.update(dvc_md5s(p, root))
    # git checks the workflow files out with new times; the notebooks are inputs of the reports
    record_mtimes(paths + [p for p in (Path("workflow"),) if (root / p).exists()], root, md5s=md5s)
    if push:
        _dvc("push", *(["--remote", remote] if remote else []), root=root, remote=remote, uses_remote=True)
    return dvc_files


def pull(root: Path = Path("."), remote: str | None = None) -> tuple[int, int]:
    """`dvc pull`, every pulled file checked against its md5, the producer's modification times back; return
    (restored, missing). The workflow restores the times itself on a plain `dvc pull`; this also verifies."""
    _dvc("pull", *(["--remote", remote] if remote else []), root=root, remote=remote, uses_remote=True)
    return restore_mtimes(root, pulled=True)
