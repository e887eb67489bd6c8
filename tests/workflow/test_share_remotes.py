"""Sharing through real remotes, end to end: the tiny run shared on one clone through an SSH remote (Debian's
OpenSSH server on loopback, a host key and a client key made here, `dvc-ssh`) and an S3 remote (moto's server on
loopback, `dvc-s3`), pulled with a plain `dvc pull` on a fresh clone, and `snakemake -n` has nothing to do.
Each test starts and stops its own server; they skip, saying why, where sshd or a package is absent (.ci/run
installs them). The commands are those of docs/dvc.md."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from workflow_helpers import REPO, snakemake

SSHD = shutil.which("sshd") or next((p for p in ("/usr/sbin/sshd",) if os.path.exists(p)), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int, proc: subprocess.Popen, what: str) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within 30 s")


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _run(cwd: Path, *cmd: str, env: dict | None = None) -> str:
    res = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, env=env)
    assert res.returncode == 0, (cmd, res.stdout[-2000:], res.stderr[-3000:])
    return res.stdout


@pytest.fixture
def sshd(tmp_path: Path) -> Iterator[dict]:
    """An OpenSSH server on 127.0.0.1 on a free port, its own config and host key, a client key made here,
    and a HOME whose known_hosts holds the host key (nothing of the user's ~/.ssh is read)."""
    if SSHD is None:
        pytest.skip("OpenSSH server (sshd) not installed: apt-get install -y openssh-server (.ci/run does)")
    if importlib.util.find_spec("dvc_ssh") is None:
        pytest.skip("dvc-ssh not installed: pip install -e '.[test]'")
    d = tmp_path / "sshd"
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    d.mkdir()
    for key in ("host_key", "client_key"):
        _run(d, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key))
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    port = _free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nPidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPubkeyAuthentication yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n"
        "Subsystem sftp internal-sftp\n"
    )
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)  # the privilege separation folder Debian's sshd wants
    host_pub = (d / "host_key.pub").read_text().split()
    (home / ".ssh/known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(port, proc, "sshd")
        yield {"port": port, "key": d / "client_key", "home": home}
    finally:
        _stop(proc)


@pytest.fixture
def s3_server(tmp_path: Path) -> Iterator[dict]:
    """moto's S3-compatible server on 127.0.0.1 on a free port, with a bucket `itmbench`."""
    for module, package in (("dvc_s3", "dvc-s3"), ("moto.server", "moto[server]"), ("flask", "moto[server]")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{package} not installed: pip install -e '.[test]'")
    import boto3

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(port, proc, "moto server")
        url = f"http://127.0.0.1:{port}"
        keys = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
        boto3.client("s3", endpoint_url=url, region_name="us-east-1", **keys).create_bucket(Bucket="itmbench")
        yield {"url": url}
    finally:
        _stop(proc)


def _share_then_plain_pull(lab_a: Path, tmp_path: Path, configure: list[list[str]], env: dict) -> None:
    """docs/dvc.md's commands: configure the remote, `itmbench share`, commit; clone, configure, `dvc pull`,
    `snakemake -n` has nothing to do."""
    for name in (".gitignore", "dvc.yaml", "data/.gitignore", "results/.gitignore"):
        shutil.copy(REPO / name, lab_a / name)
    _run(lab_a, "git", "init", "-q")
    _run(lab_a, "dvc", "init", "-q")
    for cmd in configure:
        _run(lab_a, *cmd, env=env)
    _run(lab_a, sys.executable, "-m", "itmbench.cli", "share", env=env)
    _run(lab_a, "git", "add", "-A")
    _run(lab_a, "git", "-c", "user.email=a@lab.invalid", "-c", "user.name=a", "commit", "-qm", "share")
    lab_b = tmp_path / "lab_b"
    _run(tmp_path, "git", "clone", "-q", str(lab_a), str(lab_b))
    for cmd in configure:
        if "--local" in cmd:  # credentials stay out of git: each clone sets its own
            _run(lab_b, *cmd, env=env)
    _run(lab_b, "dvc", "pull", env=env)
    table = "results/world/tables/retrieval/retrieval.csv"
    assert (lab_b / table).read_bytes() == (lab_a / table).read_bytes()
    res = snakemake(lab_b, "-n")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Nothing to be done" in res.stdout + res.stderr, (res.stdout + res.stderr)[-3000:]


@pytest.mark.slow
def test_share_and_plain_pull_through_an_ssh_remote(tiny_world_run_copy, tmp_path, sshd):
    user = os.environ.get("USER") or __import__("getpass").getuser()
    env = {**os.environ, "HOME": str(sshd["home"])}
    url = f"ssh://127.0.0.1:{sshd['port']}{tmp_path / 'ssh_store'}"
    configure = [
        ["dvc", "remote", "add", "-d", "lab", url],
        ["dvc", "remote", "modify", "lab", "verify", "true"],
        ["dvc", "remote", "modify", "--local", "lab", "user", user],
        ["dvc", "remote", "modify", "--local", "lab", "keyfile", str(sshd["key"])],
    ]
    _share_then_plain_pull(tiny_world_run_copy, tmp_path, configure, env)
    assert any((tmp_path / "ssh_store/files/md5").rglob("*.dir"))  # the objects went through sshd


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("ITMBENCH_S3_TEST") != "1",
    reason="moto's server stalled under `dvc push` of the tiny run (CI emulation, 2026-11-27: push hung for over "
    "8 minutes, the server's sockets in CLOSE-WAIT); passed on a small project only. ITMBENCH_S3_TEST=1 runs it",
)
def test_share_and_plain_pull_through_an_s3_remote(tiny_world_run_copy, tmp_path, s3_server):
    env = {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
    configure = [
        ["dvc", "remote", "add", "-d", "lab", "s3://itmbench/store"],
        ["dvc", "remote", "modify", "lab", "endpointurl", s3_server["url"]],
        ["dvc", "remote", "modify", "lab", "verify", "true"],
        ["dvc", "remote", "modify", "--local", "lab", "access_key_id", "testing"],
        ["dvc", "remote", "modify", "--local", "lab", "secret_access_key", "testing"],
    ]
    _share_then_plain_pull(tiny_world_run_copy, tmp_path, configure, env)
