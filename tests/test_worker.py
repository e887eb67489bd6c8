"""The warm worker (itmbench.worker): a command it runs is the command a fresh `itmbench` process runs (its
outputs byte for byte, its exit status, its stderr), a request it must not run in a fork is run by the client
itself, a killed job kills its command, and a worker whose parent is gone stops by itself."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from itmbench import worker

ITMBENCH = shutil.which("itmbench")
pytestmark = pytest.mark.skipif(ITMBENCH is None, reason="the itmbench entry point is not installed (pip install -e .)")

WORLD = {"n_train": 40, "n_val": 10, "n_test": 10, "seed": 3}


def wait_for(predicate, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(scope="module")
def shared_worker(tmp_path_factory):
    """One worker for the module's tests (its imports cost seconds), started as the Snakefile starts one: the
    run's environment with the one-thread job variables."""
    folder = tmp_path_factory.mktemp("worker")
    sock, log = folder / "w.sock", folder / "worker.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "itmbench.cli.serve_worker", str(sock), str(os.getpid()), str(log)],
        env=BASE_ENV,
        stdin=subprocess.DEVNULL,
    )
    assert wait_for(sock.exists, 30), "the worker did not create its socket"
    yield sock, log, proc
    proc.terminate()
    proc.wait(timeout=30)
    assert not sock.exists(), "the stopped worker left its socket behind"


class WorkerLog:
    """The lines the worker writes from now on (the worker is shared by the module's tests)."""

    def __init__(self, path: Path) -> None:
        self.path, self.start = path, len(_lines(path))

    def records(self) -> list[dict]:
        return [json.loads(line) for line in _lines(self.path)[self.start :]]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


@pytest.fixture
def running_worker(shared_worker):
    sock, log, proc = shared_worker
    return sock, WorkerLog(log), proc


BASE_ENV = worker.worker_env({k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"})


def job_env(sock: Path | None, **extra: str) -> dict[str, str]:
    """A one-thread job's environment, as Snakemake sets it, with or without the worker (pytest's variable of
    the current test, which changes between the worker's start and the job's, left out of both)."""
    env = dict(BASE_ENV)
    if sock is not None:
        env[worker.SOCKET_VAR] = str(sock)
    env.update(extra)
    return env


def run_itmbench(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """`itmbench ARGS > log 2>&1` as a rule's shell runs it; returns the status and the log."""
    log = cwd / "job.log"
    with open(log, "w") as f:
        status = subprocess.run([ITMBENCH, *args], cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    return status, log.read_text()


def records(log: WorkerLog) -> list[dict]:
    return log.records()


def test_a_command_the_worker_runs_writes_the_bytes_a_fresh_process_writes(running_worker, tmp_path):
    sock, log, _ = running_worker
    outs = {}
    for name, env in (("worker", job_env(sock)), ("fresh", job_env(None))):
        cwd = tmp_path / name
        cwd.mkdir()
        status, text = run_itmbench(["world", "--config", json.dumps(WORLD), "--out", "items"], cwd, env)
        assert status == 0, text
        outs[name] = {p.relative_to(cwd / "items"): p.read_bytes() for p in sorted((cwd / "items").rglob("*"))}
    assert outs["worker"] == outs["fresh"] and outs["worker"]
    (done,) = records(log)
    assert done["argv"][0] == "world" and done["status"] == 0 and done["user_s"] > 0


def test_a_failing_command_has_the_fresh_process_status_and_error_line(running_worker, tmp_path):
    sock, log, _ = running_worker
    args = ["world", "--config", '{"n_test": -1}', "--out", "items"]
    fresh = run_itmbench(args, tmp_path, job_env(None))
    warm = run_itmbench(args, tmp_path, job_env(sock))
    assert fresh[0] == warm[0] == 2
    assert warm[1].splitlines()[-1] == fresh[1].splitlines()[-1]
    assert warm[1].splitlines()[-1].startswith("itmbench world: error:") and "n_test" in warm[1]
    usage = run_itmbench(["world", "--no-such-option"], tmp_path, job_env(sock))  # argparse: SystemExit(2)
    assert usage[0] == 2 and "arguments are required: --config, --out" in usage[1]
    assert [r["status"] for r in records(log)] == [2, 2]


def test_a_job_whose_environment_a_fork_would_not_see_runs_in_its_own_process(running_worker, tmp_path):
    sock, log, _ = running_worker
    status, text = run_itmbench(
        ["world", "--config", json.dumps(WORLD), "--out", "items"], tmp_path, job_env(sock, OMP_NUM_THREADS="2")
    )
    assert status == 0, text and (tmp_path / "items").is_dir()
    (declined,) = records(log)
    assert declined["declined"] == "environment variable OMP_NUM_THREADS differs from the worker's"
    # the per-job temporary directory is one the child sets: not a reason to decline
    status, text = run_itmbench(["world", "--help"], tmp_path, job_env(sock, TMPDIR=str(tmp_path)))
    assert status == 0 and records(log)[-1]["status"] == 0


def test_the_client_of_a_command_the_worker_runs_loads_no_stage_and_no_library(running_worker, tmp_path):
    """What every job pays besides its command: the entry point imports the CLI package and the worker's client,
    not the stage modules, numpy or pandas (the worker has them)."""
    sock, log, _ = running_worker
    client = (
        "import sys, itmbench.cli\n"
        "sys.argv = ['itmbench', 'world', '--help']\n"
        "status = itmbench.cli.main()\n"
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] in ('itmbench', 'numpy', 'pandas', 'torch')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", client], cwd=tmp_path, env=job_env(sock), capture_output=True, text=True, check=True
    )
    assert out.stdout.splitlines()[-1] == "0 ['itmbench', 'itmbench.cli', 'itmbench.worker']", out.stdout
    assert [r["argv"] for r in records(log)] == [["world", "--help"]]


def test_the_worker_loads_every_module_and_the_params_schema_before_its_first_command(tmp_path):
    """What a child would otherwise import and parse again (most jobs validate their params against the schema,
    a YAML file PyYAML parses in pure Python): after `warm`, every itmbench module is loaded and the schema is
    parsed, so a forked child finds them."""
    probe = (
        "import json, pkgutil, sys, itmbench\n"
        "from itmbench.cli.serve_worker import warm\n"
        "from itmbench import params\n"
        "warm()\n"
        "names = [m.name for m in pkgutil.walk_packages(itmbench.__path__, 'itmbench.')]\n"
        "print(json.dumps({'modules': len(names), 'missing': [n for n in names if n not in sys.modules],\n"
        "    'schema': params._schema.cache_info().currsize,\n"
        "    'validator': params._validator_class.cache_info().currsize}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=BASE_ENV, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert loaded["modules"] > 100
    assert loaded["missing"] == ["itmbench.cli.__main__"]  # the entry point's script runs a command when imported
    assert loaded["schema"] == loaded["validator"] == 1


def test_no_worker_to_reach_means_the_command_runs_here(tmp_path):
    status, text = run_itmbench(
        ["world", "--config", json.dumps(WORLD), "--out", "items"], tmp_path, job_env(tmp_path / "no-such.sock")
    )
    assert status == 0, text and (tmp_path / "items").is_dir()


def test_killing_the_job_kills_its_command(running_worker, tmp_path):
    sock, log, server = running_worker
    fifo = tmp_path / "claims.csv"
    os.mkfifo(fifo)  # the command blocks opening it: a command still running when its job is killed
    (tmp_path / "r.html").write_text("<html></html>")
    args = ["index", "r.html", "--out", "index.html", "--claims", str(fifo)]
    with open(tmp_path / "job.log", "w") as f:
        client = subprocess.Popen([ITMBENCH, *args], cwd=tmp_path, env=job_env(sock), stdout=f, stderr=f)
    assert wait_for(lambda: _has_child(server.pid), 30), "the command did not start in the worker"
    client.send_signal(signal.SIGTERM)
    client.wait(timeout=30)
    assert wait_for(lambda: records(log), 30), "the worker did not record the killed command"
    assert records(log)[-1]["status"] == 128 + signal.SIGTERM
    assert not (tmp_path / "index.html").exists()


def test_a_job_killed_the_moment_its_command_is_forked_still_kills_the_command(tmp_path):
    """The child is born with the worker's signal handlers: a SIGTERM that reaches it before it has a fresh
    process's (here sent by the worker right after the fork, while the child waits) must kill it once it has
    them, not stop the child's copy of the worker's loop and let the command run on (the race behind a CI
    failure of the test above)."""
    sock, log = tmp_path / "w.sock", tmp_path / "worker.jsonl"
    early_kill = (
        "import os, signal, sys, time\n"
        "fork = os.fork\n"
        "def killed_at_birth():\n"
        "    pid = fork()\n"
        "    if pid == 0:\n"
        "        time.sleep(0.5)  # the child still has the worker's handlers when the signal comes\n"
        "    else:\n"
        "        os.kill(pid, signal.SIGTERM)\n"
        "    return pid\n"
        "os.fork = killed_at_birth\n"
        "sys.argv = ['serve_worker', *sys.argv[1:]]\n"
        "import runpy\n"
        "runpy.run_module('itmbench.cli.serve_worker', run_name='__main__')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", early_kill, str(sock), str(os.getpid()), str(log)],
        env=BASE_ENV,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert wait_for(sock.exists, 60), "the worker did not create its socket"
        status, text = run_itmbench(["world", "--config", json.dumps(WORLD), "--out", "items"], tmp_path, job_env(sock))
        assert status == 128 + signal.SIGTERM, text
        assert [json.loads(line)["status"] for line in _lines(log)] == [128 + signal.SIGTERM]
        assert not (tmp_path / "items").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _has_child(pid: int) -> bool:
    """Whether process `pid` (the worker) has a child right now (the forked command)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):  # no pgrep needed: field 4 of /proc/<pid>/stat is the parent
        with contextlib.suppress(OSError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                return True
    return False


def test_a_worker_whose_parent_is_gone_stops_and_removes_its_socket(tmp_path):
    sock = tmp_path / "w.sock"
    starter = (
        "import os, subprocess, sys; from itmbench import worker; "
        f"subprocess.Popen([sys.executable, '-m', 'itmbench.cli.serve_worker', {str(sock)!r}, str(os.getpid())], "
        "env=worker.worker_env(dict(os.environ)), stdin=subprocess.DEVNULL)"
    )
    subprocess.run([sys.executable, "-c", starter], check=True)  # exits at once: the worker is orphaned
    assert wait_for(sock.exists, 30)
    assert wait_for(lambda: not sock.exists(), 60), "the orphaned worker is still serving"


def test_a_socket_deeper_than_a_socket_address_may_be_still_binds_and_connects(tmp_path):
    """A socket path past sun_path's 108 bytes (a deep $TMPDIR: pytest-xdist's, a cluster job's) is bound and
    reached through a handle on its folder: the file is at the path, and a client connects to it."""
    import socket

    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    path = str(deep / "socket")
    assert len(path) > worker.UNIX_PATH_MAX
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as plain, pytest.raises(OSError, match="too long"):
        plain.bind(path)  # what the worker did before: it never came up in such a folder
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        with worker.unix_address(path) as address:
            server.bind(address)
        server.listen(1)
        assert Path(path).is_socket()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            with worker.unix_address(path) as address:
                client.connect(address)
            conn, _ = server.accept()
            with conn:
                client.sendall(b"ping")
                assert conn.recv(4) == b"ping"
    with worker.unix_address(str(tmp_path / "s")) as address:
        assert address == str(tmp_path / "s")  # a short path is itself


def test_a_run_of_a_few_jobs_or_with_the_switch_off_starts_no_worker(tmp_path, monkeypatch):
    monkeypatch.delenv(worker.SOCKET_VAR, raising=False)
    assert worker.start(log_dir=str(tmp_path), jobs=worker.MIN_JOBS - 1) is False
    monkeypatch.setenv(worker.SWITCH_VAR, "0")
    assert worker.start(log_dir=str(tmp_path), jobs=1000) is False
    assert worker.SOCKET_VAR not in os.environ and not (tmp_path / "worker.log").exists()


def test_a_request_the_worker_cannot_read_is_declined_not_run(running_worker):
    sock, log, _ = running_worker
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(sock))
        conn.sendall((1 << 40).to_bytes(8, "big"))  # a header larger than any request
        assert json.loads(conn.makefile().readline()) == {"declined": "bad request"}
    (declined,) = records(log)
    assert declined["declined"].startswith("bad request") and "argv" not in declined


def test_only_what_the_preloaded_libraries_read_declines_a_job():
    """The allow/deny design: a difference in what the interpreter or a preloaded library read before the fork
    declines a job; the shell's, the terminal's, conda's, a venv's and ssh's variables never do (the child gets
    the job's whole environment)."""
    own = {"PS1": "$ ", "OMP_NUM_THREADS": "1", "PATH": "/usr/bin", "LANG": "C.UTF-8"}
    mine = {"prefix": "/p", "package": "/k"}

    def reason(name: str) -> str | None:
        return worker.decline_reason(own, mine, {**mine, "env": {**own, name: "other"}})

    passing = ["PS1", "VIRTUAL_ENV_PROMPT", "VIRTUAL_ENV", "CONDA_PROMPT_MODIFIER", "CONDA_PREFIX", "CONDA_SHLVL"]
    passing += ["CONDA_DEFAULT_ENV", "TERM", "LS_COLORS", "SSH_CONNECTION", "SSH_AUTH_SOCK", "PATH", "SHLVL", "_"]
    passing += ["PWD", "OLDPWD", "TMPDIR", worker.SOCKET_VAR, "SNAKEMAKE_PROFILE", "DISPLAY", "USER"]
    assert {name: reason(name) for name in passing} == dict.fromkeys(passing)
    declining = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "MKL_NUM_THREADS", "LD_PRELOAD"]
    declining += ["LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHASHSEED", "CUDA_VISIBLE_DEVICES", "TORCH_HOME", "HF_HOME"]
    declining += ["MPLBACKEND", "RAYON_NUM_THREADS", "LANG", "LC_ALL", "GLIBC_TUNABLES", "JE_ARROW_MALLOC_CONF"]
    assert {name: reason(name) for name in declining} == {
        name: f"environment variable {name} differs from the worker's" for name in declining
    }


def test_a_worker_with_a_second_thread_forks_nothing():
    """Before each fork the worker checks that it is one thread (a lock another thread holds would stay held in
    the child): a second thread is a reason to decline. The worker itself is one thread after its preload (the
    commands of the tests above ran in it)."""
    probe = (
        "import threading\n"
        "from itmbench import worker\n"
        "print(worker.fork_hazard())\n"
        "stop = threading.Event()\n"
        "t = threading.Thread(target=stop.wait)\n"
        "t.start()\n"
        "print(worker.fork_hazard())\n"
        "stop.set()\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=BASE_ENV, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["None", "the worker has 2 threads, a fork needs one"]


REPO = Path(__file__).resolve().parents[1]
CONDA_SHELL = (  # what `conda activate base` leaves in a shell
    "export CONDA_PREFIX=/opt/conda CONDA_DEFAULT_ENV=base CONDA_SHLVL=1 CONDA_EXE=/opt/conda/bin/conda "
    "CONDA_PYTHON_EXE=/opt/conda/bin/python CONDA_PROMPT_MODIFIER='(base) ' PS1='(base) \\u@\\h:\\w\\$ '"
)


def _user_venv(folder: Path) -> Path:
    """A venv as a user makes and fills it (`python3 -m venv`, then pip install -e .): here with the system's
    packages and this checkout's source on its path, and its own `itmbench` script."""
    subprocess.run(
        [sys._base_executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)], check=True
    )
    (next((folder / "lib").glob("python*/site-packages")) / "itmbench-src.pth").write_text(f"{REPO / 'src'}\n")
    script = folder / "bin/itmbench"
    script.write_text(f"#!{folder / 'bin/python'}\nimport sys\nfrom itmbench.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("shell", ["venv", "conda"])
def test_a_run_from_a_users_shell_runs_every_job_in_the_worker(shell, tmp_path):
    """Snakemake started the way users start it, from a shell with a venv activated (`source venv/bin/activate`
    exports PS1 and VIRTUAL_ENV_PROMPT) or with conda's variables set: every job runs in the worker."""
    sys.path.insert(0, str(REPO / "tests/workflow"))
    from workflow_helpers import copy_workflow

    work = tmp_path / "work"
    work.mkdir()
    copy_workflow(work)
    setup = f"source {_user_venv(tmp_path / 'venv')}/bin/activate" if shell == "venv" else CONDA_SHELL
    # world, MCIC's OPTIMIZE-PV search and the 6 benchmark builds that need no trained model: fewer jobs than a worker
    # starts for by itself, hence ITMBENCH_WORKER=1
    benchmarks = ("sugarcrepe", "cxc", "retrieval", "mcic", "bivlc", "bison")
    targets = " ".join(f"data/world/{b}/items.parquet" for b in benchmarks)
    command = f"{setup} && python -m snakemake --cores 2 --configfile tiny.yaml -- {targets}"
    env = {k: v for k, v in os.environ.items() if k not in (worker.SOCKET_VAR, "PYTEST_CURRENT_TEST")}
    env |= {worker.SWITCH_VAR: "1", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    res = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stderr[-3000:]
    commands = [json.loads(line) for line in (work / "logs/worker.jsonl").read_text().splitlines()]
    assert [c for c in commands if "declined" in c] == []
    assert sorted(c["argv"][0] for c in commands) == ["build-benchmark"] * 6 + ["mcic-optimize-pv", "world"]
    assert all(c["status"] == 0 for c in commands)


def test_the_workers_interpreter_is_the_python_of_the_itmbench_on_path_and_never_a_shell(tmp_path, monkeypatch):
    """`job_python` reads the `#!` line of the `itmbench` on PATH: a console script's Python is taken; a shell
    wrapper's `#!/bin/sh` is not (the worker would start as `/bin/sh -m itmbench.cli.serve_worker` and fail,
    as it did on a GPU machine whose `itmbench` was such a wrapper), nor is a missing or non-executable one."""
    job_python = worker.job_python
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    script = bin_dir / "itmbench"

    def wrapper(first_line: str) -> None:
        script.write_text(f"{first_line}\nexec something\n")
        script.chmod(0o755)

    python = tmp_path / "venv" / "bin" / "python3.11"
    python.parent.mkdir(parents=True)
    python.write_text("")
    python.chmod(0o755)
    wrapper(f"#!{python}")
    assert job_python() == str(python)
    wrapper("#!/bin/sh")
    assert job_python() == sys.executable
    wrapper("#!/usr/bin/env python3")  # a space: not one executable path
    assert job_python() == sys.executable
    python.chmod(0o644)
    wrapper(f"#!{python}")
    assert job_python() == sys.executable
    script.unlink()
    assert job_python() == sys.executable
