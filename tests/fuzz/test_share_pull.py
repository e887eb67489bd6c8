"""A pulled checkout as hostile input: `dvc/mtimes.json` comes from someone else's commit and the remote's objects
from someone else's push. Nothing the manifest names may reach outside the project, a malformed manifest is one
clean error naming it, a corrupt remote object never stays in the checkout, and a broken remote is one line with
DVC's own reason. Also: after a plain `dvc pull`, the workflow's restore puts back exactly the times of the files
whose content matches (small DVC projects made here; the tiny world's end to end is in tests/workflow)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from itmbench.cli import main
from itmbench.errors import EXIT_INPUT, InputError
from itmbench.share import MANIFEST, file_md5, restore_mtimes, share

pytestmark = pytest.mark.skipif(shutil.which("dvc") is None or shutil.which("git") is None, reason="needs dvc, git")

OLD = 1_600_000_000_000_000_000  # 2020-09-13, in ns


def _run(cwd: Path, *cmd: str) -> str:
    res = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, (cmd, res.stdout[-2000:], res.stderr[-2000:])
    return res.stdout


def _manifest(root: Path, entries) -> None:
    (root / "dvc").mkdir(exist_ok=True)
    (root / MANIFEST).write_text(json.dumps(entries))


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "victim.txt"
    v.write_text("not yours")
    os.utime(v, ns=(OLD + 5, OLD + 5))
    return v


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink_out", "dotdot_inside"])
def test_a_manifest_entry_outside_the_project_is_refused_and_touches_nothing(tmp_path, victim, kind):
    root = tmp_path / "project"
    (root / "data").mkdir(parents=True)
    (root / "data/a.txt").write_text("a")
    entry = {"md5": file_md5(victim), "mtime_ns": OLD}
    name = {"dotdot": "../victim.txt", "absolute": str(victim), "dotdot_inside": "data/../../victim.txt"}.get(kind)
    if kind == "symlink_out":
        (root / "data/link").symlink_to(tmp_path)
        name = "data/link/victim.txt"
    _manifest(root, {"data/a.txt": {"md5": file_md5(root / "data/a.txt"), "mtime_ns": OLD}, name: entry})
    with pytest.raises(InputError) as err:
        restore_mtimes(root)
    assert str(root / MANIFEST) in str(err.value) and repr(name) in str(err.value)
    assert victim.stat().st_mtime_ns == OLD + 5
    assert (root / "data/a.txt").stat().st_mtime_ns != OLD  # refused before any file is touched


@pytest.mark.parametrize(
    "text,expected",
    [
        ("[]", "expected an object"),
        ('["data/a.txt", 1]', "expected an object"),
        ('{"data/a.txt": 5}', "share again"),
        ('{"data/a.txt": {"md5": "x", "mtime_ns": 5}}', "md5 of 32"),
        ('{"data/a.txt": {"md5": "' + "0" * 32 + '", "mtime_ns": -1}}', "non-negative integer"),
        ('{"data/a.txt": {"md5": "' + "0" * 32 + '", "mtime_ns": true}}', "non-negative integer"),
        ('{"data/a.txt": ', "malformed JSON"),
        ('{"": {"md5": "' + "0" * 32 + '", "mtime_ns": 5}}', "relative path inside"),
    ],
)
def test_a_malformed_manifest_is_one_input_error_naming_it(tmp_path, text, expected, capsys):
    (tmp_path / "dvc").mkdir()
    (tmp_path / MANIFEST).write_text(text)
    with pytest.raises(InputError, match=expected) as err:
        restore_mtimes(tmp_path)
    assert str(tmp_path / MANIFEST) in str(err.value) and "\n" not in str(err.value)


def _shared_project(tmp_path: Path, remote: Path) -> Path:
    lab_a = tmp_path / "lab_a"
    (lab_a / "data/world").mkdir(parents=True)
    _run(lab_a, "git", "init", "-q")
    _run(lab_a, "dvc", "init", "-q")
    _run(lab_a, "dvc", "remote", "add", "-d", "store", str(remote))
    for i, name in enumerate(["items.csv", "sub/captions.txt", "images.npy"]):
        f = lab_a / "data/world" / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(f"{name} {i}\n".encode() * (100 + i))
        os.utime(f, ns=(OLD + i, OLD + i))
    share("world", lab_a)
    _run(lab_a, "git", "add", "-A")
    _run(lab_a, "git", "-c", "user.email=a@lab.invalid", "-c", "user.name=a", "commit", "-qm", "share")
    return lab_a


def test_plain_dvc_pull_then_restore_puts_back_the_times_of_matching_files_only(tmp_path):
    lab_a = _shared_project(tmp_path, tmp_path / "store")
    lab_b = tmp_path / "lab_b"
    _run(tmp_path, "git", "clone", "-q", str(lab_a), str(lab_b))
    _run(lab_b, "dvc", "pull")
    world = lab_b / "data/world"
    assert all(f.stat().st_mtime_ns > OLD + 10 for f in world.rglob("*") if f.is_file())
    (world / "images.npy").write_bytes(b"changed after the pull")
    assert restore_mtimes(lab_b) == (2, 0)
    assert (world / "items.csv").stat().st_mtime_ns == OLD
    assert (world / "sub/captions.txt").stat().st_mtime_ns == OLD + 1
    assert (world / "images.npy").stat().st_mtime_ns > OLD + 10  # differs: keeps its new time, dependants rerun
    # done once per manifest: a later change is left alone even when it restores the bytes
    before = (world / "items.csv").read_bytes()
    (world / "items.csv").write_bytes(before)
    assert restore_mtimes(lab_b) == (0, 0)
    assert (world / "items.csv").stat().st_mtime_ns > OLD + 10


def test_a_flipped_byte_in_a_remote_object_never_stays_in_the_checkout(tmp_path, capsys):
    store = tmp_path / "store"
    lab_a = _shared_project(tmp_path, store)
    md5 = file_md5(lab_a / "data/world/items.csv")
    obj = store / "files/md5" / md5[:2] / md5[2:]
    data = bytearray(obj.read_bytes())
    data[len(data) // 2] ^= 0x01
    obj.write_bytes(bytes(data))
    lab_b = tmp_path / "lab_b"
    _run(tmp_path, "git", "clone", "-q", str(lab_a), str(lab_b))
    rc = main(["pull", "--root", str(lab_b)])
    err = capsys.readouterr().err
    assert rc == EXIT_INPUT, err
    assert "Traceback" not in err and "data/world/items.csv" in err and "md5" in err
    assert not (lab_b / "data/world/items.csv").exists()
    assert not (lab_b / ".dvc/cache/files/md5" / md5[:2] / md5[2:]).exists()
    assert (lab_b / "data/world/images.npy").exists()  # the good files stay


def test_an_unreachable_remote_is_one_line_naming_it_with_dvcs_reason(tmp_path, capsys):
    lab_a = _shared_project(tmp_path, tmp_path / "store")
    lab_b = tmp_path / "lab_b"
    _run(tmp_path, "git", "clone", "-q", str(lab_a), str(lab_b))
    _run(lab_b, "dvc", "remote", "add", "gone", "ssh://127.0.0.1:1/nowhere")
    rc = main(["pull", "--root", str(lab_b), "--remote", "gone"])
    err = capsys.readouterr().err
    assert rc == EXIT_INPUT, err
    lines = [line for line in err.splitlines() if ": error:" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "remote 'gone' (ssh://127.0.0.1:1/nowhere)" in lines[0] and "ERROR" in lines[0], lines[0]
    # nothing local is lost: lab A's own checkout and cache are intact after a failed push to a missing remote
    _run(lab_a, "dvc", "remote", "add", "gone", "ssh://127.0.0.1:1/nowhere")
    before = {p: p.read_bytes() for p in (lab_a / "data/world").rglob("*") if p.is_file()}
    rc = main(["share", "--root", str(lab_a), "--remote", "gone"])
    assert rc == EXIT_INPUT
    assert "remote 'gone'" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in (lab_a / "data/world").rglob("*") if p.is_file()} == before


def test_a_link_the_checkout_tracks_is_not_missing_so_the_restore_is_done_once(tmp_path):
    # the tiny run's workflow/envs/itmbench.yaml is a git-tracked link: counted missing, it kept the marker from
    # being written, and every later parse put back the time of a file rewritten with its own bytes
    (tmp_path / ".dvc").mkdir()  # a DVC checkout: where the marker lives
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("a")
    (tmp_path / "env.yaml").write_text("env")
    (tmp_path / "link.yaml").symlink_to("env.yaml")
    _manifest(
        tmp_path,
        {
            "data/a.txt": {"md5": file_md5(data / "a.txt"), "mtime_ns": OLD},
            "link.yaml": {"md5": file_md5(tmp_path / "env.yaml"), "mtime_ns": OLD},
        },
    )
    assert restore_mtimes(tmp_path) == (1, 0)
    assert (data / "a.txt").stat().st_mtime_ns == OLD
    (data / "a.txt").write_text("a")  # rewritten after the restore, with the same bytes: its dependants rerun
    assert restore_mtimes(tmp_path) == (0, 0)
    assert (data / "a.txt").stat().st_mtime_ns > OLD
