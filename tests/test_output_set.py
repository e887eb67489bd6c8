"""A command's outputs together or not at all (`itmbench.io.output_set`), and no temp left behind.

Failure inside a set leaves the previous outputs byte for byte and no temp; outputs are renamed in the
order written; a kill's leftovers (dead pid, or a reused pid) are removed by the next write of the same
output, a live process's and another host's are not; a journal of renames cut short by a kill is
completed by the next set on those outputs; SIGTERM removes the temps and exits 128 + 15, and waits
for a set's renames to finish when it lands among them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from itmbench import io
from itmbench.io import (
    HOST,
    TEMP_MARK,
    atomic_path,
    output_set,
    remove_leftovers,
    removing_temps_on_signals,
    staged,
    temp_dir_beside,
    write_json,
    write_text,
)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _contents(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


def test_outputs_appear_together_in_the_order_written(tmp_path: Path, monkeypatch) -> None:
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(io.os, "replace", lambda a, b: (renamed.append(Path(b).name), real_replace(a, b)))
    with output_set(files=[tmp_path / "scores.txt", tmp_path / "metrics.json"]):
        write_text(tmp_path / "scores.txt", "new scores\n")
        assert not (tmp_path / "scores.txt").exists()  # not before the whole set succeeded
        assert staged(tmp_path / "scores.txt").read_text() == "new scores\n"  # read back: the new bytes
        write_json(tmp_path / "metrics.json", {"a": 1})
    assert renamed == ["scores.txt", "metrics.json"]  # the completion marker last
    assert _contents(tmp_path) == {"metrics.json": '{\n  "a": 1\n}\n', "scores.txt": "new scores\n"}
    assert staged(tmp_path / "scores.txt") == tmp_path / "scores.txt"  # outside a set: the path itself


def test_a_failure_inside_the_set_keeps_every_previous_output_and_leaves_no_temp(tmp_path: Path) -> None:
    for name in ("t.csv", "t.md", "t.tex"):
        write_text(tmp_path / name, f"old {name}\n")
    before = _contents(tmp_path)
    with pytest.raises(RuntimeError, match="writer died"), output_set(folders=[tmp_path]):
        write_text(tmp_path / "t.csv", "new\n")
        write_text(tmp_path / "t.md", "new\n")
        raise RuntimeError("writer died")
    assert _contents(tmp_path) == before
    assert _names(tmp_path) == ["t.csv", "t.md", "t.tex"]


def test_a_failed_set_leaves_no_folder_it_created(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(RuntimeError), output_set(folders=[out]):
        (out / "made_by_the_writer").mkdir(parents=True)
        write_text(out / "tables" / "bivlc" / "t.csv", "new\n")
        raise RuntimeError("writer died")
    assert _names(tmp_path) == []


def test_a_declared_output_not_written_moves_nothing(tmp_path: Path) -> None:
    write_text(tmp_path / "a.txt", "old\n")
    with pytest.raises(RuntimeError, match=r"b\.txt'\] were not written; nothing was moved"):
        with output_set(files=[tmp_path / "a.txt", tmp_path / "b.txt"]):
            write_text(tmp_path / "a.txt", "new\n")
    assert _contents(tmp_path) == {"a.txt": "old\n"}


def test_writes_the_set_does_not_declare_land_at_once(tmp_path: Path) -> None:
    """A training run's resume state, written inside the command's set, must survive a kill of the command."""
    with pytest.raises(RuntimeError), output_set(folders=[tmp_path / "out"]):
        write_text(tmp_path / ".resume.txt", "epoch 3\n")
        write_text(tmp_path / "out" / "model.txt", "weights\n")
        raise RuntimeError("killed")
    assert _names(tmp_path) == [".resume.txt"]  # the set's folder is gone, the resume state is there


def test_a_set_inside_a_set_joins_it(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), output_set(files=[tmp_path / "a.txt"]):
        write_text(tmp_path / "a.txt", "a\n")
        with output_set(files=[tmp_path / "b.txt"]):
            write_text(tmp_path / "b.txt", "b\n")
        assert not (tmp_path / "b.txt").exists()
        raise RuntimeError("the outer block fails")
    assert _names(tmp_path) == []


def _fake_temp(folder: Path, output: str, pid: int, host: str = HOST, age_s: float = 0.0) -> Path:
    path = folder / f".{output}{TEMP_MARK}{host}-{pid}-abcd1234.json"
    path.write_text("half")
    if age_s:
        old = time.time() - age_s
        os.utime(path, (old, old))
    return path


def test_leftovers_of_dead_processes_are_removed_by_the_next_write_and_no_others(tmp_path: Path) -> None:
    dead = _fake_temp(tmp_path, "m.json", _dead_pid())
    reused = _fake_temp(tmp_path, "m.json", os.getpid(), age_s=3600)  # older than this process: a reused pid
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) as live_proc:
        try:
            live = _fake_temp(tmp_path, "m.json", live_proc.pid)
            elsewhere = _fake_temp(tmp_path, "m.json", _dead_pid(), host="othernode")
            other_output = _fake_temp(tmp_path, "n.json", _dead_pid())
            write_json(tmp_path / "m.json", {})
            assert not dead.exists() and not reused.exists()
            assert live.exists() and elsewhere.exists() and other_output.exists()
            assert remove_leftovers(tmp_path / "n.json") == [other_output]
        finally:
            live_proc.kill()


def test_a_killed_fetch_temp_folder_is_removed_by_the_next_one(tmp_path: Path) -> None:
    left = tmp_path / f".f.zip{TEMP_MARK}{HOST}-{_dead_pid()}-abcd1234"
    left.mkdir()
    (left / "f.zip").write_bytes(b"part")
    with temp_dir_beside(tmp_path / "f.zip") as tmp:
        assert tmp.name.startswith(f".f.zip{TEMP_MARK}{HOST}-{os.getpid()}-")
        assert not left.exists()
    assert _names(tmp_path) == []


def _journal(folder: Path, pid: int, renames: list[list[str]] | None, text: str | None = None) -> Path:
    path = folder / f".itmbench-commit-{HOST}-{pid}-abcd1234"
    path.write_text(text if text is not None else json.dumps({"host": HOST, "pid": pid, "renames": renames}))
    return path


def test_renames_cut_short_by_a_kill_are_completed_by_the_next_set(tmp_path: Path) -> None:
    """The killed process had renamed a.txt and not b.txt: the next set on them moves b.txt's temp into place."""
    pid = _dead_pid()
    write_text(tmp_path / "a.txt", "new a\n")
    write_text(tmp_path / "b.txt", "old b\n")
    tmp_b = _fake_temp(tmp_path, "b.txt", pid)
    tmp_b.write_text("new b\n")
    journal = _journal(tmp_path, pid, [[f".a.txt{TEMP_MARK}gone", "a.txt"], [tmp_b.name, "b.txt"]])
    with pytest.raises(RuntimeError), output_set(files=[tmp_path / "a.txt", tmp_path / "b.txt"]):
        assert _contents(tmp_path) == {"a.txt": "new a\n", "b.txt": "new b\n"}  # completed on entering
        raise RuntimeError("this run fails: the killed run's complete set stays")
    assert _contents(tmp_path) == {"a.txt": "new a\n", "b.txt": "new b\n"}
    assert not journal.exists()


def test_a_journal_cut_short_is_dropped_and_a_live_process_journal_kept(tmp_path: Path) -> None:
    write_text(tmp_path / "a.txt", "old a\n")
    cut = _journal(tmp_path, _dead_pid(), None, text='{"host": "h", "renames": [[".a.txt')
    tmp_a = _fake_temp(tmp_path, "a.txt", os.getppid())
    live = _journal(tmp_path, os.getppid(), [[tmp_a.name, "a.txt"]])
    with output_set(files=[tmp_path / "a.txt"]):
        write_text(tmp_path / "a.txt", "new a\n")
    assert not cut.exists() and live.exists() and tmp_a.exists()
    assert (tmp_path / "a.txt").read_text() == "new a\n"


def test_sigterm_removes_the_temps_and_exits_143(tmp_path: Path) -> None:
    write_text(tmp_path / "a.txt", "old\n")
    with pytest.raises(SystemExit) as stopped, removing_temps_on_signals():
        with output_set(files=[tmp_path / "a.txt", tmp_path / "b.txt"]):
            write_text(tmp_path / "a.txt", "new\n")
            with atomic_path(tmp_path / "b.txt") as tmp:
                tmp.write_text("half")
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # the handler runs first
    assert stopped.value.code == 128 + signal.SIGTERM
    assert _names(tmp_path) == ["a.txt"] and (tmp_path / "a.txt").read_text() == "old\n"
    assert signal.getsignal(signal.SIGTERM) is not io._on_signal  # the previous handler is back


def test_sigterm_among_the_renames_waits_for_them(tmp_path: Path, monkeypatch) -> None:
    real_replace = os.replace
    calls = []

    def replace(a, b):
        calls.append(b)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # twice: it stops once
        real_replace(a, b)

    monkeypatch.setattr(io.os, "replace", replace)
    with pytest.raises(SystemExit) as stopped, removing_temps_on_signals():
        with output_set(folders=[tmp_path]):
            for name in ("t.csv", "t.md", "t.tex"):
                write_text(tmp_path / name, f"new {name}\n")
    assert stopped.value.code == 128 + signal.SIGTERM
    assert _contents(tmp_path) == {n: f"new {n}\n" for n in ("t.csv", "t.md", "t.tex")}  # the whole new set
    with output_set(files=[tmp_path / "later.txt"]):  # no signal left over for the next set
        write_text(tmp_path / "later.txt", "later\n")
    assert (tmp_path / "later.txt").read_text() == "later\n"


def test_released_paper_tables_writes_none_of_its_files_when_a_released_file_is_corrupt(mirror_dir, tmp_path):
    """It used to stop at the md5 mismatch of a file its claims read with 14 of its 16 files written."""
    from itmbench.cli import main
    from itmbench.sources.fetch import PAPER_TABLE_KEYS, raw_path

    raw = tmp_path / "raw"
    for key in PAPER_TABLE_KEYS:
        link = raw_path(key, raw)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(raw_path(key, mirror_dir))
    corrupt = raw_path("mcic_test", raw)
    data = corrupt.read_bytes()
    corrupt.unlink()
    corrupt.write_bytes(data + b"x\n")
    assert main(["released-paper-tables", "--raw", str(raw), "--out-dir", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
