"""Outputs written atomically, and a command's outputs together or not at all.

Every output goes to a temp file beside it (same folder, so same filesystem) and is renamed onto its
name only when complete. Inside an `output_set`, the outputs it declares are not renamed as each is
written: they wait, complete and fsynced, until the whole block has succeeded, and are then renamed
into place in the order they were written (a command writes the file that marks its completion
last). If the block fails, every temp of the set and every folder it created are removed, and the
previous outputs stay as they were.

A set of renames is not atomic: a SIGKILL (or a crash) inside that last loop would leave some outputs
new and some old. So before the loop the set writes a journal of its renames beside its first output,
`.itmbench-commit-<host>-<pid>-<random>` (JSON, with no suffix a reader's `*.json` would match); the
next run that declares those outputs finds the journal of a dead process and completes its renames
(every temp it lists was complete before the journal was written), so the mix becomes the killed
run's complete set before anything else happens. SIGTERM and SIGINT cannot land inside the loop:
`cli.main` installs `removing_temps_on_signals`, which defers a signal until the loop is done, and
otherwise removes the live temps and exits 128 + the signal's number.

Temp names are recognisable: `.<name>.itmbench-tmp-<host>-<pid>-<random><suffix>`. A temp left by
a SIGKILLed process is removed by the next write of the same output: one written on this host by a
process that no longer runs, or by an earlier process with a reused pid (the temp is older than
the running process). Temps of live processes, and of other hosts (whose pids say nothing here),
are left alone.

Test hook: `ITMBENCH_TEST_SLOW_WRITE=<seconds>` sleeps that long after each output of a set is
written and between the renames of its last loop, so the kill test (tests/test_kill.py) can land
signals inside them. Nothing else reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

TEMP_MARK = ".itmbench-tmp-"
JOURNAL_PREFIX = ".itmbench-commit-"
SLOW_WRITE_ENV = "ITMBENCH_TEST_SLOW_WRITE"
HOST = re.sub(r"[^A-Za-z0-9]", "_", socket.gethostname())[:32] or "host"  # no '-': names parse unambiguously
_JOURNAL_NAME = re.compile(rf"^{re.escape(JOURNAL_PREFIX)}(?P<host>[A-Za-z0-9_]+)-(?P<pid>\d+)-[A-Za-z0-9_]+$")
_STALE_SLACK_S = 2.0  # a process's start time from /proc is known to about a second

# Reentrant: the SIGTERM handler (remove_live_temps) runs in the main thread between two bytecodes, possibly while
# that thread holds the lock in _register; a plain Lock would deadlock the handler there.
_live_lock = threading.RLock()
_live: set[Path] = set()  # temps of this process not yet renamed or removed (removed on SIGTERM/SIGINT)
_scanned: dict[Path, dict[str, list[Path]]] = {}  # folder -> output name -> temps found there (once per process)
_committing = 0  # > 0 while a set's renames run: a SIGTERM/SIGINT waits for them
_pending_signals: list[int] = []
_removing = False  # True while the signal handler removes the temps


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _test_pause() -> None:
    """The kill test's hook (ITMBENCH_TEST_SLOW_WRITE seconds); a no-op otherwise."""
    delay = os.environ.get(SLOW_WRITE_ENV)
    if delay:
        time.sleep(float(delay))


# ----------------------------------------------------------------------------------------------
# Temp names, the registry of live temps, leftovers of dead processes


def _temp_prefix(path: Path) -> str:
    return f".{path.name}{TEMP_MARK}{HOST}-{os.getpid()}-"


def _register(tmp: Path) -> None:
    with _live_lock:
        _live.add(tmp)


def _unregister(tmp: Path) -> None:
    with _live_lock:
        _live.discard(tmp)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_live_temps() -> int:
    """Remove every temp this process holds (files and folders); return how many there were."""
    with _live_lock:
        temps = list(_live)
    for tmp in temps:  # each forgotten once removed: an interrupted loop leaves the rest for the next call
        with contextlib.suppress(OSError):
            _remove(tmp)
        _unregister(tmp)
    return len(temps)


def _boot_time() -> float | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return None


def _process_start(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch), where /proc tells; else None."""
    boot = _boot_time()
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    if boot is None:
        return None
    fields = stat_line[stat_line.rindex(")") + 2 :].split()
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime in clock ticks since boot


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def is_leftover(path: Path, host: str, pid: int) -> bool:
    """Whether temp `path` (written by `pid` on `host`) is debris: its process is gone."""
    if host != HOST:
        return False  # another machine's (a cluster's shared filesystem): its pid means nothing here
    with _live_lock:
        if path in _live:
            return False
    if pid != os.getpid() and not _pid_alive(pid):
        return True
    started = _process_start(pid)
    try:
        mtime = path.lstat().st_mtime
    except FileNotFoundError:
        return False
    return started is not None and mtime < started - _STALE_SLACK_S  # the pid was reused since


def _parse_temp(name: str, output: str) -> tuple[str, int] | None:
    """(host, pid) of a temp name of output `output`, or None when it is not one."""
    prefix = f".{output}{TEMP_MARK}"
    if not name.startswith(prefix):
        return None
    host, _, rest = name[len(prefix) :].partition("-")
    pid, sep, _ = rest.partition("-")
    if not (host and sep and pid.isdigit()):
        return None
    return host, int(pid)


def _temps_in(folder: Path) -> dict[str, list[Path]]:
    """The temps in `folder` by the output they belong to, listed once per command (`cli.main` and each new
    output set start afresh), so a folder of thousands of outputs is not listed again for each."""
    found = _scanned.get(folder)
    if found is None:
        found = {}
        with contextlib.suppress(OSError):
            with os.scandir(folder) as entries:
                for entry in entries:
                    head, mark, _ = entry.name.partition(TEMP_MARK)
                    if mark and head.startswith("."):
                        found.setdefault(head[1:], []).append(folder / entry.name)
        _scanned[folder] = found
    return found


def remove_leftovers(path: str | os.PathLike) -> list[Path]:
    """Remove the temps of output `path` that dead processes left (a SIGKILL's debris); return them."""
    path = Path(path)
    removed = []
    for tmp in _temps_in(path.parent).pop(path.name, []):
        parsed = _parse_temp(tmp.name, path.name)
        if parsed is not None and is_leftover(tmp, *parsed):
            with contextlib.suppress(OSError):
                _remove(tmp)
                removed.append(tmp)
    return removed


def _fsync(path: Path, directory: bool = False) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # a filesystem without fsync on folders
        pass
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------------------------
# Output sets


class OutputSet:
    """The outputs of one command: declared files and folders (everything written under a folder), written
    to temps and renamed into place together when the block succeeds. Use it through `output_set`."""

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.folders: list[Path] = []
        self._staged: dict[Path, Path] = {}  # output -> its complete temp, in the order written
        self._made: list[Path] = []  # folders its writes created (removed again, if empty, when the set fails)

    def declare(self, files: Iterable[str | os.PathLike], folders: Iterable[str | os.PathLike]) -> None:
        """Add outputs to the set, first completing any commit a killed process left on them."""
        new_files = [Path(f).resolve() for f in files]
        new_folders = [Path(d).resolve() for d in folders]
        self.files += new_files
        self.folders += new_folders
        for folder in dict.fromkeys([*(f.parent for f in new_files), *new_folders]):
            self._made += reversed([d for d in (folder, *folder.parents) if not d.exists()])
        for folder in dict.fromkeys([*(f.parent for f in new_files), *new_folders]):
            complete_interrupted_commits(folder)

    def covers(self, path: Path) -> bool:
        """Whether `path` is one of the set's outputs (a declared file, or under a declared folder)."""
        path = path.resolve()
        return path in self.files or any(d == path or d in path.parents for d in self.folders)

    def stage(self, path: Path, tmp: Path) -> None:
        """Keep complete temp `tmp` (fsynced) for output `path` until the set commits."""
        _fsync(tmp)
        path = path.resolve()
        earlier = self._staged.pop(path, None)  # written twice: the last one counts
        if earlier is not None:
            _remove(earlier)
            _unregister(earlier)
        self._staged[path] = tmp
        _test_pause()

    def staged(self, path: str | os.PathLike) -> Path | None:
        """The temp holding output `path`'s new bytes, if it has been written in this set."""
        return self._staged.get(Path(path).resolve())

    def make_folder(self, folder: Path) -> None:
        """Create `folder` for an output, remembering the folders created (a failed set leaves none)."""
        missing = [d for d in (folder, *folder.parents) if not d.exists()]
        folder.mkdir(parents=True, exist_ok=True)
        self._made += reversed(missing)

    def discard(self) -> None:
        """Remove every temp of the set, and the folders it created; the outputs keep their previous contents."""
        for tmp in self._staged.values():
            with contextlib.suppress(OSError):
                _remove(tmp)
            _unregister(tmp)
        self._staged.clear()
        for folder in reversed(self._made):  # deepest first; a folder holding any file stays
            if folder.is_dir():
                for sub, _, _ in os.walk(folder, topdown=False):  # with the empty folders a writer made in it
                    with contextlib.suppress(OSError):
                        os.rmdir(sub)
        self._made.clear()

    def _home(self) -> Path:
        return self.folders[0] if self.folders else self.files[0].parent

    def _write_journal(self, items: list[tuple[Path, Path]]) -> Path:
        home = self._home()
        self.make_folder(home)
        renames = [[os.path.relpath(tmp, home), os.path.relpath(out, home)] for out, tmp in items]
        fd, name = tempfile.mkstemp(prefix=f"{JOURNAL_PREFIX}{HOST}-{os.getpid()}-", dir=home)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"host": HOST, "pid": os.getpid(), "renames": renames}, fh)
            fh.flush()
            os.fsync(fh.fileno())
        return Path(name)

    def commit(self) -> None:
        """Rename every staged temp onto its output, in the order written; a journal covers a kill meanwhile."""
        missing = [str(f) for f in self.files if f not in self._staged]
        if missing:
            self.discard()
            raise RuntimeError(f"outputs {missing} were not written; nothing was moved into place (a bug)")
        items = list(self._staged.items())
        with _signals_deferred():
            journal = self._write_journal(items) if len(items) > 1 else None
            done: list[Path] = []
            for k, (out, tmp) in enumerate(items):
                if k:
                    _test_pause()
                try:
                    os.replace(tmp, out)
                except OSError as err:
                    self.discard()
                    if journal is not None:
                        journal.unlink(missing_ok=True)
                    raise RuntimeError(
                        f"{out}: could not be moved into place ({err}); already replaced: {[str(p) for p in done]}"
                    ) from err
                _unregister(tmp)
                self._staged.pop(out)
                done.append(out)
            for folder in dict.fromkeys(out.parent for out, _ in items):
                _fsync(folder, directory=True)
            if journal is not None:
                journal.unlink()
            self._made.clear()  # committed: the folders it made hold its outputs


_active: ContextVar[OutputSet | None] = ContextVar("itmbench_output_set", default=None)


@contextlib.contextmanager
def output_set(
    files: Iterable[str | os.PathLike] = (), folders: Iterable[str | os.PathLike] = ()
) -> Iterator[OutputSet]:
    """Make the outputs written in the block (the declared files, and anything under the declared folders)
    appear together when it succeeds, or not at all; a set inside another joins it.

    Writes through `atomic_path` and the `write_*` helpers to paths the set does not declare (a training
    run's resume state, say) are renamed at once, as outside a set. Every declared file must be written.
    """
    outer = _active.get()
    if outer is not None:
        outer.declare(files, folders)
        yield outer
        return
    _scanned.clear()  # a new command: list its folders' temps afresh
    outputs = OutputSet()
    outputs.declare(files, folders)
    if not (outputs.files or outputs.folders):
        raise ValueError("output_set: expected at least one output file or folder")
    token = _active.set(outputs)
    try:
        yield outputs
    except BaseException:
        _active.reset(token)
        outputs.discard()
        raise
    _active.reset(token)
    try:
        outputs.commit()
    except BaseException:
        outputs.discard()  # what was not renamed yet
        raise


def staged(path: str | os.PathLike) -> Path:
    """Where output `path`'s bytes are now: its temp when the current set wrote it, else `path` itself
    (a command that reads back an output it wrote reads the new bytes, not the previous run's)."""
    outputs = _active.get()
    tmp = outputs.staged(path) if outputs is not None else None
    return tmp if tmp is not None else Path(path)


def _read_journal(path: Path) -> list[tuple[Path, Path]] | None:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return [(path.parent / tmp, path.parent / out) for tmp, out in doc["renames"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # cut short: the process died writing it, before any rename


def complete_interrupted_commits(folder: str | os.PathLike) -> list[Path]:
    """Finish the renames of every set whose process died inside its last loop (its journal is in `folder`);
    return the outputs moved into place. A journal that was never completed means no rename had begun:
    it is removed, and the temps it would have listed are a dead process's leftovers."""
    folder = Path(folder)
    moved: list[Path] = []
    journals: list[Path] = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:  # no folder yet: nothing to complete
        journals = [folder / e.name for e in entries if _JOURNAL_NAME.match(e.name)]
    for journal in sorted(journals):
        m = _JOURNAL_NAME.match(journal.name)
        if not is_leftover(journal, m["host"], int(m["pid"])):
            continue
        for tmp, out in _read_journal(journal) or []:
            try:
                os.replace(tmp, out)
            except OSError:  # renamed before the kill (or its folder is gone): nothing to do
                continue
            moved.append(out)
        journal.unlink(missing_ok=True)
    return moved


# ----------------------------------------------------------------------------------------------
# Signals


def _on_signal(signum: int, frame: Any) -> None:
    """SIGTERM/SIGINT: remove this process's temps and exit 128 + signum (after a set's renames, if inside). A
    second signal while the temps are being removed (a worker's child gets one from its killed job and one from
    the worker stopping) waits for the removal instead of cutting it short."""
    global _removing
    if _committing or _removing:
        if _committing:
            _pending_signals.append(signum)
        return
    _removing = True
    try:
        n = remove_live_temps()
    finally:
        _removing = False
    with contextlib.suppress(OSError):
        os.write(2, f"itmbench: stopped by {signal.Signals(signum).name}; removed {n} temp files\n".encode())
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """A SIGTERM/SIGINT that lands in the block is handled when it ends (as during a set's renames)."""
    global _committing
    _committing += 1
    try:
        yield
    finally:
        _committing -= 1
        if not _committing and _pending_signals:
            signum = _pending_signals[0]
            _pending_signals.clear()
            _on_signal(signum, None)


@contextlib.contextmanager
def removing_temps_on_signals(signals: Sequence[int] = (signal.SIGTERM, signal.SIGINT)) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGINT remove the live temps and exit 128 + signum (main thread only)."""
    _scanned.clear()  # a new command: list its folders' temps afresh
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _on_signal) for s in signals}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


# ----------------------------------------------------------------------------------------------
# Writers


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temp path beside `path`; rename it onto `path` only if the block succeeds (inside an
    `output_set` that declares `path`: when the whole set succeeds). Leftovers of `path` from dead
    processes are removed first."""
    path = Path(path)
    outputs = _active.get()
    if outputs is not None and outputs.covers(path):
        outputs.make_folder(path.parent)
    else:
        outputs = None
        path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path)
    with _signals_deferred():  # a SIGTERM between the temp's creation and its registration would leave it
        fd, name = tempfile.mkstemp(prefix=_temp_prefix(path), suffix=suffix or path.suffix or ".tmp", dir=path.parent)
        os.close(fd)
        tmp: Path | None = Path(name)
        _register(tmp)
    try:
        yield tmp
        if tmp.is_file():  # mkstemp makes it 0600; the output gets the mode any new file would (umask)
            os.chmod(tmp, 0o666 & ~_umask())
        if outputs is not None:
            outputs.stage(path, tmp)
        else:
            os.replace(tmp, path)
            _unregister(tmp)
        tmp = None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                _remove(tmp)
            _unregister(tmp)


@contextlib.contextmanager
def temp_dir_beside(path: str | os.PathLike) -> Iterator[Path]:
    """A temp folder beside output `path` (named like its temp files), removed after the block; leftovers
    of `path` from dead processes are removed first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(path)
    with _signals_deferred():
        tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(path), dir=path.parent))
        _register(tmp)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        _unregister(tmp)


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
    """Write a pandas DataFrame as parquet atomically (no index, deterministic bytes), each page with its
    CRC-32 (`read_parquet_file` verifies them, so a page damaged in place is refused, not read)."""
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False, write_page_checksum=True)


def write_parquet_folder(out_dir: str | os.PathLike, tables: Any, last: str = "items") -> None:
    """Write each table of {name: DataFrame} as <out_dir>/<name>.parquet, in name order, `last` after the
    others (its file marks the folder complete)."""
    out = Path(out_dir)
    for name in sorted(tables):
        if name != last:
            write_parquet(out / f"{name}.parquet", tables[name])
    write_parquet(out / f"{last}.parquet", tables[last])
