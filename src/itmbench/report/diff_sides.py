"""The two sides `itmbench diff-results` compares (itmbench.report.diff): a results tree or a git revision.

- a folder `results/<source>` (it has `tables/` or `metrics/`), a `results` folder, or a checkout root (it has
  `results/`): every `results/<source>` in it;
- otherwise a git revision of the repository at `repo` (`HEAD~1`, a branch, a commit): its files are read
  through DVC where the repository uses DVC (a shared `results/world` is DVC-tracked, read from the DVC cache or
  the default remote) and with git otherwise.
A side holds the bytes of each `tables/**/*.csv` and `metrics/**/*.json` per source; `align` pairs two sides'
files (narrowing to one source where a side is a single source tree).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath


def _wanted(rel: str) -> bool:
    """A table or metrics file below a source folder: tables/**/*.csv, metrics/**/*.json."""
    parts = PurePosixPath(rel).parts
    return len(parts) >= 2 and (
        (parts[0] == "tables" and rel.endswith(".csv")) or (parts[0] == "metrics" and rel.endswith(".json"))
    )


@dataclass
class Side:
    """One side of a comparison: its files by `<source>/<path below the source>`, each read on demand."""

    label: str
    files: dict[str, Callable[[], bytes]] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # how errors name each file
    single: str | None = None  # the source, when the side is one source tree

    @property
    def sources(self) -> list[str]:
        return sorted({k.split("/", 1)[0] for k in self.files})


def _is_source_dir(path: Path) -> bool:
    return (path / "tables").is_dir() or (path / "metrics").is_dir()


def _add_dir(side: Side, source: str, root: Path) -> None:
    top = root.resolve()
    for sub in ("tables", "metrics"):
        for f in sorted((root / sub).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if f.is_file() and _wanted(rel):
                if not f.resolve().is_relative_to(top):  # a colleague's tree must not make us read (and print) others
                    raise ValueError(
                        f"{f}: a link to {f.resolve()}, outside the results tree {top}; expected a file in it"
                    )
                key = f"{source}/{rel}"
                side.files[key] = f.read_bytes
                side.where[key] = str(f)


def directory_side(path: Path, label: str) -> Side:
    """A results tree on disk: a source folder, a results folder or a checkout root."""
    side = Side(label)
    if _is_source_dir(path):
        side.single = path.resolve().name
        _add_dir(side, side.single, path)
        return side
    results = path / "results" if (path / "results").is_dir() else path
    sources = sorted(d for d in results.iterdir() if d.is_dir() and _is_source_dir(d))
    if not sources:
        raise ValueError(
            f"{label}: a folder without results: expected results/<source> (with tables/ or metrics/), "
            "a results folder, or a checkout root with results/"
        )
    for d in sources:
        _add_dir(side, d.name, d)
    return side


def _git(repo: Path, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, check=False)


def _commit(rev: str, repo: Path) -> str | None:
    res = _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    return res.stdout.decode().strip() if res.returncode == 0 else None


def _git_blobs(repo: Path, commit: str, paths: list[str]) -> dict[str, bytes]:
    """The contents of files at a commit, read in one `git cat-file --batch`."""
    res = _git(repo, "cat-file", "--batch", data="".join(f"{commit}:{p}\n" for p in paths).encode())
    if res.returncode != 0:
        raise ValueError(f"git cat-file at {commit}: {res.stderr.decode().strip()}")
    out, pos, blobs = res.stdout, 0, {}
    for p in paths:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise ValueError(f"{commit}:{p}: not a file at that commit")
        size = int(header[2])
        blobs[p] = out[end + 1 : end + 1 + size]
        pos = end + 2 + size
    return blobs


def _uses_dvc(top: Path) -> bool:
    if not (top / ".dvc").is_dir():
        return False
    try:
        import dvc.api  # noqa: F401
    except ImportError:
        return False
    return True


def revision_side(rev: str, repo: Path, label: str) -> Side:
    """The results/<source> trees at a git revision (through DVC where the repository uses it)."""
    commit = _commit(rev, repo)
    if commit is None:
        raise ValueError(
            f"{label}: neither a results tree (no such folder) nor a revision of the git repository at {repo}"
        )
    top = Path(_git(repo, "rev-parse", "--show-toplevel").stdout.decode().strip())
    uses_dvc = _uses_dvc(top)
    if uses_dvc:
        from dvc.api import DVCFileSystem

        fs = DVCFileSystem(str(top), rev=commit)
        listed = sorted(p.lstrip("/") for p in fs.find("results")) if fs.isdir("results") else []
    else:
        res = _git(top, "ls-tree", "-r", "-z", "--name-only", commit, "--", "results")
        listed = sorted(p for p in res.stdout.decode().split("\0") if p)
    wanted = {}
    for p in listed:
        parts = PurePosixPath(p).parts
        if len(parts) >= 4 and parts[0] == "results" and _wanted("/".join(parts[2:])):
            wanted["/".join(parts[1:])] = p
    if not wanted:
        raise ValueError(
            f"{label}: revision {rev} has no results/<source>/tables or metrics in git"
            + (" or DVC (commit the .dvc files that `itmbench share` writes)" if uses_dvc else "")
        )
    blobs: dict[str, bytes] = {}

    def reader(path: str) -> Callable[[], bytes]:
        def read_dvc() -> bytes:
            try:
                return fs.read_bytes(path)
            except FileNotFoundError as err:
                raise FileNotFoundError(
                    f"{rev}:{path}: DVC has no copy of it in the cache or the default remote ({err}); "
                    "fetch that revision's results first (`dvc fetch --all-commits`)"
                ) from None

        def read_git() -> bytes:
            if not blobs:  # every wanted file in one git cat-file
                blobs.update(_git_blobs(top, commit, sorted(wanted.values())))
            return blobs[path]

        return read_dvc if uses_dvc else read_git

    side = Side(label)
    for key, p in sorted(wanted.items()):
        side.files[key] = reader(p)
        side.where[key] = f"{rev}:{p}"
    return side


def resolve(spec: str, repo: str | Path = ".") -> Side:
    """A side from what the user typed: an existing folder, else a git revision of `repo`."""
    path = Path(spec)
    if path.is_dir():
        return directory_side(path, spec)
    if path.exists():
        raise ValueError(f"{spec}: a file; expected a results tree (a folder) or a git revision")
    return revision_side(spec, Path(repo), spec)


def align(old: Side, new: Side) -> tuple[dict[str, str], dict[str, str]]:
    """{shown path: file key} of each side: both narrowed to one source when either is a single source."""

    def narrowed(side: Side, source: str) -> dict[str, str]:
        if source not in side.sources:
            raise ValueError(f"{side.label}: has no results/{source} (it has {side.sources or 'none'})")
        return {k.split("/", 1)[1]: k for k in side.files if k.split("/", 1)[0] == source}

    if old.single and new.single:
        return narrowed(old, old.single), narrowed(new, new.single)
    source = old.single or new.single
    if source:
        return narrowed(old, source), narrowed(new, source)
    return {k: k for k in old.files}, {k: k for k in new.files}
