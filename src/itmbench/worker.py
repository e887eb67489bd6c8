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
when the worker cannot be reached, or when the worker declines: a different Python or itmbench, an
environment that differs in a variable the interpreter or the preloaded libraries read before the fork
(`matters`: the thread counts of a multi-threaded job, PYTHONPATH, LD_*, CUDA_*, ...; a shell's prompt or
conda's bookkeeping never declines, the child gets the job's whole environment), or a worker that is no
longer safe to fork (`fork_hazard`: a second thread, CUDA initialised).

If the job is killed (Snakemake cancelling it), the client's end of the socket closes and the worker
sends SIGTERM to the child, which removes its temps as a fresh process would; if the worker dies, its
children are killed with it (PR_SET_PDEATHSIG). The worker stops when Snakemake stops it, or by itself
when its parent process is gone, and removes its socket's folder. `ITMBENCH_WORKER=0` turns it off;
`ITMBENCH_WORKER=1` starts one even for a run of a few jobs. Snakemake's benchmark file of a job run here
records the command's CPU and memory, which the worker measures (itmbench.worker_benchmark).
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
from collections.abc import Iterator
from pathlib import Path

SOCKET_VAR = "ITMBENCH_WORKER_SOCKET"
SWITCH_VAR = "ITMBENCH_WORKER"  # "0": never start one; "1": start one even for a run of a few jobs
# Which differences between a job's environment and the worker's decline the job. The child gets the job's
# whole environment (os.environ is replaced before its command runs), so a variable only matters when
# something in the worker read it before the fork: the interpreter at start-up and the preloaded libraries
# when they were imported (numpy's OpenBLAS its thread count, torch CUDA's and its own settings, matplotlib its
# backend and config folder, glibc its tunables, Python its locale). Those are named here, by name or by
# prefix; every other variable passes (the shell's prompt, the terminal, conda's and ssh's bookkeeping, ...).
MATTERS_PREFIXES = (
    "PYTHON",  # PYTHONPATH, PYTHONHASHSEED, PYTHONDONTWRITEBYTECODE, ...: read by the interpreter at start-up
    "LD_",  # LD_LIBRARY_PATH, LD_PRELOAD: the shared libraries loaded
    "OMP_",  # OpenMP (torch's intra-op threads, OMP_PROC_BIND, ...)
    "KMP_",  # Intel's OpenMP
    "GOMP_",  # GNU OpenMP
    "OPENBLAS_",  # OPENBLAS_NUM_THREADS, OPENBLAS_CORETYPE, ...
    "GOTO_",
    "MKL_",
    "VECLIB_",
    "NUMEXPR_",
    "NPY_",  # numpy's NPY_DISABLE_CPU_FEATURES and the like
    "NUMPY_",
    "CUDA_",  # CUDA_VISIBLE_DEVICES, ...
    "CUBLAS_",
    "CUDNN_",
    "NVIDIA_",
    "TORCH",  # TORCH_*, TORCHINDUCTOR_*, TORCH_HOME
    "PYTORCH_",
    "HF_",  # huggingface_hub reads its folders and switches when imported
    "HUGGINGFACE_",
    "TRANSFORMERS_",
    "MPL",  # MPLBACKEND, MPLCONFIGDIR
    "ARROW_",
    "JE_",  # pyarrow's jemalloc (JE_ARROW_MALLOC_CONF)
    "MALLOC_",  # glibc's allocator
    "GLIBC_",  # GLIBC_TUNABLES
    "LC_",  # the locale Python set at start-up (default file encoding)
)
MATTERS_NAMES = frozenset({"LANG", "LANGUAGE", "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TZ"})
MATTERS_SUFFIXES = ("_NUM_THREADS",)  # any library's thread count
# Never a reason, even where a prefix above would match: the worker's own socket and Snakemake's per-job
# temporary directory (the child clears tempfile's cached folder; nothing preloaded keeps it).
PER_JOB_VARS = frozenset({SOCKET_VAR, "TMPDIR", "TMP", "TEMP", "TEMPDIR"})
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
FOLDER_PREFIX = "itmbench-worker-"  # start()'s folder for the socket, in the temp folder


def identity() -> dict[str, str]:
    """The interpreter and itmbench a command would run with: the worker's must be the job's."""
    import itmbench

    return {"prefix": sys.prefix, "package": str(Path(itmbench.__file__).resolve().parent)}


def matters(name: str) -> bool:
    """Whether a difference in environment variable `name` declines a job (see MATTERS_PREFIXES)."""
    if name in PER_JOB_VARS:
        return False
    return name in MATTERS_NAMES or name.startswith(MATTERS_PREFIXES) or name.endswith(MATTERS_SUFFIXES)


def worker_env(base: dict[str, str]) -> dict[str, str]:
    """The environment the worker starts with: the run's, with the threads of a one-thread job."""
    env = {k: v for k, v in base.items() if k not in PER_JOB_VARS}
    env.update(dict.fromkeys(THREAD_VARS, "1"))
    return env


def decline_reason(own: dict[str, str], mine: dict[str, str], request: dict) -> str | None:
    """Why a request must run in a fresh process instead of in the worker whose environment is `own` and whose
    identity() is `mine` (None: the worker can run it)."""
    for key in ("prefix", "package"):
        if request.get(key) != mine[key]:
            return f"{key} {request.get(key)!r} is not the worker's {mine[key]!r}"
    env = request["env"]
    for key in sorted(k for k in set(own) | set(env) if matters(k)):
        if own.get(key) != env.get(key):
            return f"environment variable {key} differs from the worker's"
    return None


def fork_hazard() -> str | None:
    """Why this process must not fork a command now (None: it may): a second thread (its locks could be held
    at the fork, and the child would not have it), or CUDA initialised (a forked child cannot use it)."""
    try:
        threads = len(os.listdir("/proc/self/task"))
    except OSError:  # no /proc: Python's own count, which misses threads that native libraries started
        import threading

        threads = threading.active_count()
    if threads > 1:
        return f"the worker has {threads} threads, a fork needs one"
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_initialized():
        return "CUDA is initialised in the worker, a forked child cannot use it"
    return None


# ----------------------------------------------------------------------------------------------
# Client: the `itmbench` entry point


UNIX_PATH_MAX = 107  # bytes of a socket's path that bind and connect take (sun_path's 108, less its NUL)


@contextlib.contextmanager
def unix_address(path: str) -> Iterator[str]:
    """The address to bind or connect a socket at `path`: the path itself, or where it is longer than a socket
    address may be (a deep $TMPDIR: a test's, a cluster job's), the same file named through an open handle on
    its folder (`/proc/self/fd/<n>/<name>`, Linux), so the worker comes up wherever the job's temp folder is."""
    if len(os.fsencode(path)) <= UNIX_PATH_MAX or not os.path.isdir("/proc/self/fd"):
        yield path
        return
    folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{os.path.basename(path)}"
    finally:
        os.close(folder)


def forward(argv: list[str]) -> int | None:
    """Run `itmbench argv` in the worker named by $ITMBENCH_WORKER_SOCKET and return its exit status, or
    None when there is no worker to run it (the caller runs the command itself)."""
    path = os.environ.get(SOCKET_VAR)
    if not path or os.environ.get(SWITCH_VAR) == "0":
        return None
    header = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), **identity()}).encode()
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with unix_address(path) as address:
            conn.connect(address)
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


def _die_with(server: int) -> None:
    """In the forked child: be killed (SIGKILL) when the worker dies, so that a command of a worker that was
    killed never finishes outputs of a job that Snakemake has already marked failed (Linux's
    PR_SET_PDEATHSIG; elsewhere the worker's own SIGTERM on shutdown is all there is)."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        return
    if os.getppid() != server:  # the worker died before the prctl: no signal will come
        os._exit(128 + signal.SIGKILL)


def _run_child(request: dict, fds: list[int], run) -> int:
    """In the forked child: become the job's process and run its command; returns its exit status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])  # the job's whole environment, as its own process would have it
    tempfile.tempdir = None  # the job's TMPDIR, not a folder the worker may have looked up
    sys.argv = ["itmbench", *request["argv"]]
    import logging

    logging.root.handlers.clear()  # as in a fresh process: main() configures logging for the command
    try:
        return run(request["argv"])
    except SystemExit as err:  # argparse's usage errors
        return err.code if isinstance(err.code, int) else (0 if err.code is None else 1)


_FORWARDED = {signal.SIGTERM, signal.SIGINT}  # the signals a job's command gets as a fresh process would


class Worker:
    def __init__(self, path: str, log_path: str | None, parent: int, run) -> None:
        self.path = path
        self.run = run
        self.parent = parent
        self.env = dict(os.environ)
        self.identity = identity()
        # per running command: the client's connection, the argv, its start, and its job's shell (worker_benchmark)
        self.children: dict[int, tuple[socket.socket, list[str], float, tuple[int, int] | None]] = {}
        # one line per command of this run (the last run that had a worker)
        self.log = open(log_path, "w", buffering=1) if log_path else None  # noqa: SIM115 - the worker's life
        self.stopping = False
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with unix_address(path) as address:
            self.listener.bind(address)  # clients may connect now: they wait in the backlog while we preload
        self.listener.listen(128)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)

    def preload(self, warm=None) -> None:
        # pyarrow's jemalloc starts a background thread when it loads (even when mimalloc is its default pool):
        # without it the worker stays one thread, which fork_hazard checks before each fork. Set here, after
        # the environment the jobs are compared with was taken; a job's child has the job's own.
        os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")
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
        reason = decline_reason(self.env, self.identity, request) or fork_hazard()
        if reason is not None:
            for fd in fds:
                os.close(fd)
            self.record({"argv": request.get("argv"), "declined": reason})
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"declined": reason}).encode() + b"\n")
            conn.close()
            return
        from itmbench import worker_benchmark

        shell = worker_benchmark.job_shell(worker_benchmark.peer_pid(conn), self.parent)  # while the client lives
        sys.stdout.flush()
        sys.stderr.flush()
        server = os.getpid()
        # A child is born with the worker's handlers, under which a SIGTERM (its job killed at once) would only
        # stop the child's copy of the loop and the command would run on: the signals wait, blocked, until the
        # child has a fresh process's handlers (in the worker they are blocked for the fork alone).
        signal.pthread_sigmask(signal.SIG_BLOCK, _FORWARDED)
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _FORWARDED)
            raise
        if pid == 0:
            status = 3
            try:
                _die_with(server)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, as in a fresh process
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _FORWARDED)  # a SIGTERM that came meanwhile kills it now
                for closing in (self.listener, conn, *(c[0] for c in self.children.values())):
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
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _FORWARDED)
        for fd in fds:
            os.close(fd)
        self.children[pid] = (conn, request["argv"], time.monotonic(), shell)
        self.sel.register(conn, selectors.EVENT_READ, pid)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn, argv, t0, shell = self.children.pop(pid)
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
            if shell is not None:  # for the job's benchmark file, before the client (and so the job) ends
                from itmbench import worker_benchmark

                with contextlib.suppress(OSError):
                    worker_benchmark.record(os.path.dirname(self.path), shell, usage)
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
        folder = os.path.dirname(self.path)
        if os.path.basename(folder).startswith(FOLDER_PREFIX):  # start()'s folder: gone even if Snakemake was killed
            shutil.rmtree(os.path.join(folder, "usage"), ignore_errors=True)  # worker_benchmark's lines
            with contextlib.suppress(OSError):
                os.rmdir(folder)


# A worker costs its imports once, about what a torch job's start-up costs or a dozen light jobs' (measured
# in docs/performance.md): a run of fewer jobs starts none.
MIN_JOBS = 10


def job_python() -> str:
    """The interpreter of the `itmbench` the jobs will run (the first one on PATH, by its `#!` line): that of an
    activated venv even when Snakemake itself comes from elsewhere (a venv made with --system-site-packages
    installs no `snakemake` script of its own); this process's own where there is no such script, or where its
    `#!` line names no Python (a shell wrapper, `#!/bin/sh`, which cannot run `-m itmbench.cli.serve_worker`)."""
    script = shutil.which("itmbench")
    if script is not None:
        with contextlib.suppress(OSError), open(script, "rb") as f:
            first = f.readline(4096).decode(errors="replace").strip()
            interpreter = first[2:].strip()
            if (
                first.startswith("#!")
                and " " not in interpreter
                and os.path.basename(interpreter).startswith("python")
                and os.access(interpreter, os.X_OK)
            ):
                return interpreter
    return sys.executable


def start(log_dir: str = "logs", jobs: int = MIN_JOBS, python: str | None = None, timeout: float = 30.0) -> bool:
    """Start a worker for this process's jobs (the Snakefile's `onstart`): its socket goes into this
    process's $ITMBENCH_WORKER_SOCKET, which the jobs inherit, and it is stopped when this process exits.
    It runs `python` (default: job_python()). Its messages go to `log_dir`/worker.log and one line per command to
    `log_dir`/worker.jsonl. Returns
    False, and the jobs start their own Python as before, when $ITMBENCH_WORKER is 0, when the run has fewer
    than MIN_JOBS `jobs` (unless $ITMBENCH_WORKER is 1), or when the worker did not come up."""
    switch = os.environ.get(SWITCH_VAR)
    if switch == "0" or (jobs < MIN_JOBS and switch != "1"):
        return False
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
    path = os.path.join(folder, "socket")
    os.makedirs(log_dir, exist_ok=True)
    python = python or job_python()
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
    from itmbench import worker_benchmark

    worker_benchmark.install(folder)  # the benchmark files of the jobs it runs record their commands' figures
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
