"""Snakemake's benchmark file of a job whose command ran in the warm worker (itmbench.worker): the command's figures.

Snakemake measures a job (`benchmark:`, snakemake/benchmark.py) by sampling, with psutil, the process tree of
the shell it started for it: every 0.5 s for the first 15 s, then every 30 s, each process's CPU seconds and
the tree's summed memory. A command the worker runs is not in that tree: it runs in a child forked from the
worker, and the job's own processes are the shell and the thin client that waits for it. Left alone, the file
of such a job records the client's CPU (a tenth of a second) and memory (tens of MB), not the job's work.

The worker knows the command's exact figures when it reaps its child (`os.wait4`'s rusage: user and system
seconds, peak resident memory, blocks read and written). Before it answers the client, it appends them to
`usage/<pid>.jsonl` in its socket's folder, where <pid> is the job's shell (the client's ancestor whose parent
is the Snakemake process, found from the client's process id, SO_PEERCRED) and each line carries that shell's
start time (so a line left by a process whose id was reused is never taken). In the Snakemake process,
`install` wraps `snakemake.benchmark.benchmarked`, which measures a job's shell: when the shell has exited, the
wrapper takes its lines and adds them to the record Snakemake then writes. `s` stays Snakemake's (the job's
wall time: the client waits for the command), `cpu_time` is the sampled CPU of the shell and client plus the
command's exact CPU (and `mean_load` with it), `max_rss` the sampled peak of the shell and client plus the
command's peak (an upper bound: the two peaks need not coincide), `io_in`/`io_out` the sum of both;
`max_vms`, `max_uss` and `max_pss`, which rusage does not give, are written `-` (unknown) rather than the
client's. A job that ran in its own process (no worker, or declined) has no lines and keeps Snakemake's figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct

USAGE_DIR = "usage"
_MB = 1024 * 1024
_BLOCK = 512  # ru_inblock and ru_oublock count 512-byte blocks (Linux's read_bytes and write_bytes / 512)


def _stat(pid: int) -> tuple[int, int] | None:
    """Process `pid`'s parent and start time (clock ticks after boot), from /proc; None when there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # after the command name, which may hold spaces
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19])  # the 4th and 22nd fields of proc(5)


def peer_pid(conn: socket.socket) -> int | None:
    """The process id of the client at the other end of a Unix socket (Linux's SO_PEERCRED)."""
    try:
        pid, _uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    except (OSError, AttributeError):
        return None
    return pid or None


def job_shell(pid: int | None, snakemake_pid: int) -> tuple[int, int] | None:
    """The process Snakemake started for the job that process `pid` belongs to (pid itself or the ancestor whose
    parent is `snakemake_pid`) and its start time; None when pid does not descend from snakemake_pid."""
    seen = 0
    while pid and pid > 1 and seen < 64:
        stat = _stat(pid)
        if stat is None:
            return None
        if stat[0] == snakemake_pid:
            return pid, stat[1]
        pid, seen = stat[0], seen + 1
    return None


def record(folder: str, shell: tuple[int, int], usage) -> None:
    """In the worker, before it answers the client: add a reaped command's rusage to its job shell's lines."""
    line = {
        "start": shell[1],
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "maxrss_mb": usage.ru_maxrss / 1024,
        "read_mb": usage.ru_inblock * _BLOCK / _MB,
        "write_mb": usage.ru_oublock * _BLOCK / _MB,
    }
    path = os.path.join(folder, USAGE_DIR)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, f"{shell[0]}.jsonl"), "a") as f:  # one short line: one write
        f.write(json.dumps(line) + "\n")


def take(folder: str, pid: int, start: int) -> list[dict]:
    """The lines of job shell `pid` started at `start` (removed: the id may be reused by a later job)."""
    path = os.path.join(folder, USAGE_DIR, f"{pid}.jsonl")
    try:
        with open(path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        os.unlink(path)
    except OSError:
        return []
    return [line for line in lines if line["start"] == start]


def fold(bench_record, lines: list[dict]) -> None:
    """Add the commands' figures to Snakemake's BenchmarkRecord of their job (see the module's docstring)."""
    if not lines:
        return
    sampled = bool(bench_record.data_collected)  # False: the shell was gone before Snakemake's first sample
    cpu = sum(line["cpu_s"] for line in lines)
    bench_record.cpu_time = (bench_record.cpu_time if sampled else 0) + cpu
    bench_record.cpu_usage = (bench_record.cpu_usage if sampled else 0) + 100 * cpu  # percent x seconds
    bench_record.max_rss = ((bench_record.max_rss or 0) if sampled else 0) + max(line["maxrss_mb"] for line in lines)
    for attr, key in (("io_in", "read_mb"), ("io_out", "write_mb")):
        own = getattr(bench_record, attr) if sampled else 0
        setattr(bench_record, attr, (own or 0) + sum(line[key] for line in lines))
    bench_record.max_vms = bench_record.max_uss = bench_record.max_pss = None
    bench_record.data_collected = True


def install(folder: str) -> bool:
    """In the Snakemake process whose worker's socket is in `folder`: make the benchmark record of each job
    shell include the figures of the commands the worker ran for it. False when this Snakemake has no
    `snakemake.benchmark.benchmarked` to wrap (its files then keep the client's figures)."""
    try:
        import snakemake.benchmark as bench
    except ImportError:
        return False
    original = getattr(bench, "benchmarked", None)
    if original is None:
        return False
    original = getattr(original, "itmbench_original", original)  # installed once, whatever the number of calls

    @contextlib.contextmanager
    def benchmarked(pid=None, benchmark_record=None, interval=bench.BENCHMARK_INTERVAL):
        stat = _stat(int(pid)) if pid else None  # the shell is not reaped before the body returns
        result = None
        try:
            with original(pid, benchmark_record, interval) as result:
                yield result
        finally:
            if stat is not None:
                lines = take(folder, int(pid), stat[1])  # taken even from a failed job: never left behind
                if result is not None:
                    fold(result, lines)

    benchmarked.itmbench_original = original
    bench.benchmarked = benchmarked
    return True
