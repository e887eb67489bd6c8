"""A warm process that runs the `itmbench` commands of one local Snakemake run: torch is imported once.

Most of what a world job costs is Python's start-up, not its work: importing torch and open_clip takes
about 5 s of CPU in every process that trains, embeds or scores pairs, and tearing them down at exit
about one more; pandas and pyarrow cost most of a second in each of the other jobs. The worker imports
them once. Each command it is given runs in a child forked from it, so it starts with them loaded but is
otherwise the process a fresh `itmbench` would be: it runs `itmbench.cli.main` on the job's arguments,
in the job's working directory and environment, on the job's standard streams (its log file), and its
exit status and signals are the job's.

How a command gets there: the Snakefile starts the worker before the first job of a local run
(`workflow/rules/worker.smk`) and puts its socket in `ITMBENCH_WORKER_SOCKET`; the `itmbench` entry
point finds the variable, passes the command and its three standard file descriptors over the socket,
and exits with the child's status. It runs the command itself, as before, when there is no worker,
when the worker cannot be reached, or when the worker declines: a different Python or itmbench, or an
environment that differs in anything the preloaded libraries read when they are imported (the thread
counts of a multi-threaded job, PYTHONPATH, a conda environment), since a fork would not see it.

If the job is killed (Snakemake cancelling it), the client's end of the socket closes and the worker
sends SIGTERM to the child, which removes its temps as a fresh process would. The worker stops when
Snakemake stops it, or by itself when its parent process is gone. `ITMBENCH_WORKER=0` turns it off.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

SOCKET_VAR = "ITMBENCH_WORKER_SOCKET"
SWITCH_VAR = "ITMBENCH_WORKER"  # "0": never start one
# What a job's environment may differ in from the worker's: the shell's own variables and Snakemake's
# per-job temporary directory, which the child sets before anything reads it. The threads variables are
# not here: numpy's OpenBLAS reads them when it loads, which in a child has already happened.
PER_JOB_VARS = frozenset({"_", "PWD", "OLDPWD", "SHLVL", "TMPDIR", "TMP", "TEMP", "TEMPDIR"})
# The threads variables Snakemake sets for a job's `threads`: the worker's are those of a one-thread job.
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "GOTO_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
# Loaded once, before the first command: what the commands import (the heavy ones by name; the itmbench
# modules so that a command only runs its own code).
PRELOAD = (
    "numpy",
    "pandas",
    "pyarrow.parquet",
    "scipy.stats",
    "torch",
    "open_clip",
    "matplotlib.pyplot",
    "itmbench.cli",  # and its stage modules: serve's `warm` (the CLI builds its parser)
)
_HEADER_MAX = 1 << 20


def identity() -> dict[str, str]:
    """The interpreter and itmbench a command would run with: the worker's must be the job's."""
    import itmbench

    return {"prefix": sys.prefix, "package": str(Path(itmbench.__file__).resolve().parent)}


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The environment the worker starts with: the run's, with the threads of a one-thread job."""
    env = {k: v for k, v in base.items() if k not in PER_JOB_VARS and k != SOCKET_VAR}
    env.update(dict.fromkeys(THREAD_VARS, "1"))
    return env


def decline_reason(own: dict[str, str], mine: dict[str, str], request: dict) -> str | None:
    """Why a request must run in a fresh process instead of in the worker whose environment is `own` and whose
    identity() is `mine` (None: the worker can run it)."""
    for key in ("prefix", "package"):
        if request.get(key) != mine[key]:
            return f"{key} {request.get(key)!r} is not the worker's {mine[key]!r}"
    env = request["env"]
    for key in sorted((set(own) | set(env)) - PER_JOB_VARS - {SOCKET_VAR}):
        if own.get(key) != env.get(key):
            return f"environment variable {key} differs from the worker's"
    return None


# ----------------------------------------------------------------------------------------------
# Client: the `itmbench` entry point


def forward(argv: list[str]) -> int | None:
    """Run `itmbench argv` in the worker named by $ITMBENCH_WORKER_SOCKET and return its exit status, or
    None when there is no worker to run it (the caller runs the command itself)."""
    path = os.environ.get(SOCKET_VAR)
    if not path or os.environ.get(SWITCH_VAR) == "0":
        return None
    header = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), **identity()}).encode()
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
    except OSError:
        return None
    with conn:
        try:
            conn.sendall(len(header).to_bytes(8, "big"))
            sent = socket.send_fds(conn, [header], [0, 1, 2])
            conn.sendall(header[sent:])
        except OSError:  # the worker went away before it had the whole request: it runs nothing
            return None
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = conn.recv(4096)
            if not chunk:  # the worker died with the command: report it as a crash of the command
                print("itmbench: the worker process ended before the command did", file=sys.stderr)
                return 3
            reply += chunk
    answer = json.loads(reply)
    return None if "declined" in answer else int(answer["status"])


# ----------------------------------------------------------------------------------------------
# Server


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    conn.settimeout(10.0)
    size_bytes = b""
    while len(size_bytes) < 8:
        chunk = conn.recv(8 - len(size_bytes))
        if not chunk:
            raise ConnectionError("client closed before its request")
        size_bytes += chunk
    size = int.from_bytes(size_bytes, "big")
    if size > _HEADER_MAX:
        raise ConnectionError(f"request of {size} bytes")
    data, fds, _flags, _addr = socket.recv_fds(conn, size, 3)
    try:
        while len(data) < size:
            chunk = conn.recv(size - len(data))
            if not chunk:
                raise ConnectionError("client closed during its request")
            data += chunk
        if len(fds) != 3:
            raise ConnectionError(f"{len(fds)} file descriptors instead of the 3 standard streams")
        conn.settimeout(None)
        return json.loads(data), fds
    except (OSError, ValueError):
        for fd in fds:
            os.close(fd)
        raise


def _run_child(request: dict, fds: list[int], run) -> int:
    """In the forked child: become the job's process and run its command; returns its exit status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["itmbench", *request["argv"]]
    import logging

    logging.root.handlers.clear()  # as in a fresh process: main() configures logging for the command
    try:
        return run(request["argv"])
    except SystemExit as err:  # argparse's usage errors
        return err.code if isinstance(err.code, int) else (0 if err.code is None else 1)


class Worker:
    def __init__(self, path: str, log_path: str | None, parent: int, run) -> None:
        self.path = path
        self.run = run
        self.parent = parent
        self.env = dict(os.environ)
        self.identity = identity()
        self.children: dict[int, tuple[socket.socket, list[str], float]] = {}
        # one line per command of this run (the last run that had a worker)
        self.log = open(log_path, "w", buffering=1) if log_path else None  # noqa: SIM115 - the worker's life
        self.stopping = False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)  # clients may connect now: they wait in the backlog while we preload
        self.listener.listen(128)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)

    def preload(self, warm=None) -> None:
        for name in PRELOAD:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
        if warm is not None:
            warm()

    def record(self, entry: dict) -> None:
        if self.log is not None:
            self.log.write(json.dumps(entry) + "\n")

    def serve(self) -> None:
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        sel = selectors.DefaultSelector()
        sel.register(self.listener, selectors.EVENT_READ, "accept")
        sel.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.sel = sel
        while not self.stopping:
            for key, _ in sel.select(timeout=1.0):
                if key.data == "accept":
                    self._accept()
                elif key.data == "wake":
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                else:  # a client's end: readable means it has gone (its job was killed)
                    pid = key.data
                    if pid in self.children:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGTERM)
                        sel.unregister(key.fileobj)
            self._reap()
            if os.getppid() != self.parent:  # the process that started us (Snakemake) is gone without stopping us
                self.stopping = True
        self._shutdown()

    def _stop(self, *_args) -> None:
        self.stopping = True

    def _accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = _read_request(conn)
        except (OSError, ValueError) as err:  # the client runs the command itself, if it is still there
            self.record({"declined": f"bad request: {err}"})
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"declined": "bad request"}).encode() + b"\n")
            conn.close()
            return
        reason = decline_reason(self.env, self.identity, request)
        if reason is not None:
            for fd in fds:
                os.close(fd)
            self.record({"argv": request.get("argv"), "declined": reason})
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"declined": reason}).encode() + b"\n")
            conn.close()
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            status = 3
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, as in a fresh process
                for closing in (self.listener, conn, *(c for c, _, _ in self.children.values())):
                    closing.close()
                os.close(self.wake_r)
                os.close(self.wake_w)
                status = _run_child(request, fds, self.run)
            except BaseException:  # noqa: BLE001 - the child must never return into the server's loop
                traceback.print_exc()
            finally:
                with contextlib.suppress(BaseException):
                    atexit._run_exitfuncs()  # what a normal exit runs; the modules' teardown is skipped
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(status if isinstance(status, int) and 0 <= status < 256 else 1)
        for fd in fds:
            os.close(fd)
        self.children[pid] = (conn, request["argv"], time.monotonic())
        self.sel.register(conn, selectors.EVENT_READ, pid)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn, argv, t0 = self.children.pop(pid)
            code = os.waitstatus_to_exitcode(status)
            code = 128 - code if code < 0 else code  # killed by a signal: the shell's 128 + signum
            self.record(
                {
                    "argv": argv,
                    "status": code,
                    "wall_s": round(time.monotonic() - t0, 3),
                    "user_s": round(usage.ru_utime, 3),
                    "sys_s": round(usage.ru_stime, 3),
                    "maxrss_mb": round(usage.ru_maxrss / 1024, 1),
                }
            )
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(conn)
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"status": code}).encode() + b"\n")
            conn.close()

    def _shutdown(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while self.children and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.05)
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)


# A worker costs its imports once, about what a torch job's start-up costs or a dozen light jobs' (measured
# in docs/performance.md): a run of fewer jobs starts none.
MIN_JOBS = 10


def start(log_dir: str = "logs", jobs: int = MIN_JOBS, python: str = sys.executable, timeout: float = 30.0) -> bool:
    """Start a worker for this process's jobs (the Snakefile's `onstart`): its socket goes into this
    process's $ITMBENCH_WORKER_SOCKET, which the jobs inherit, and it is stopped when this process exits.
    Its messages go to `log_dir`/worker.log and one line per command to `log_dir`/worker.jsonl. Returns
    False, and the jobs start their own Python as before, when $ITMBENCH_WORKER is 0, when the run has fewer
    than MIN_JOBS `jobs`, or when the worker did not come up."""
    if os.environ.get(SWITCH_VAR) == "0" or jobs < MIN_JOBS:
        return False
    folder = tempfile.mkdtemp(prefix="itmbench-worker-")
    path = os.path.join(folder, "socket")
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "worker.log"), "w") as messages:
        proc = subprocess.Popen(
            [python, "-m", "itmbench.cli.serve_worker", path, str(os.getpid()), os.path.join(log_dir, "worker.jsonl")],
            env=worker_env(dict(os.environ)),
            stdin=subprocess.DEVNULL,
            stdout=messages,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    atexit.register(_stop_worker, proc, folder)
    if not os.path.exists(path):
        return False
    os.environ[SOCKET_VAR] = path
    return True


def _stop_worker(proc: subprocess.Popen, folder: str) -> None:
    os.environ.pop(SOCKET_VAR, None)
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    shutil.rmtree(folder, ignore_errors=True)


def serve(path: str, log_path: str | None, parent: int, run, warm=None) -> None:
    """Listen on `path`, preload (then call `warm()`, which loads what the commands import), and run each
    command as `run(argv)` (`itmbench.cli.main`: its exit status) in a forked child, until stopped or until
    process `parent` is gone."""
    worker = Worker(path, log_path, parent, run)
    print(f"itmbench worker {os.getpid()}: serving {path}", flush=True)
    worker.preload(warm)
    worker.serve()
