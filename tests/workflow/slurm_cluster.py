"""A SLURM cluster on loopback for the tests: munge, MariaDB, slurmdbd, slurmctld and one slurmd.

Debian's packages (`.ci/install_slurm.sh`); every daemon runs as a child of the test session with
its configuration, state, sockets and logs in one temporary folder, listens on 127.0.0.1 only,
and is stopped (by its own pid) when the session ends. Client commands (sbatch, sacct, scontrol)
find the cluster through SLURM_CONF, which `LoopbackCluster.env()` sets.

The node `n1` is in two partitions, `cpu` and `gpu`; it declares GRES `gpu` with `File=` pointing
at placeholder files: Debian's Slurm 22.05 drops a file-less GPU GRES ("Removing file-less GPU")
and the node goes INVAL. No cgroups: `proctrack/linuxproc` and `task/none`.

Time limits: slurmctld looks for jobs past their limit every 30 s (fixed in Slurm 22.05, not a
setting), with no grace (`OverTimeLimit=0`), and kills a job `KillWait=5` s after its SIGTERM; so a
job asking for one minute ends between 60 and 95 s after it started. A job requeued after a node
failure waits `cred_expire` (10 s here, 120 s by default) before it may start again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("munged", "mariadbd", "slurmdbd", "slurmctld", "slurmd")
SBIN = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")


def which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in SBIN:
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None


def missing_binaries() -> list[str]:
    """The daemons and clients this cluster needs that this machine lacks."""
    need = [*DAEMONS, "mariadb-install-db", "sbatch", "srun", "sacct", "scontrol", "sacctmgr"]
    return [name for name in need if which(name) is None]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackCluster:
    """Start with `start()`, stop with `stop()`; `root` holds everything it writes."""

    def __init__(self, cpus: int = 2, real_memory_mb: int = 16000, gpus: int = 2):
        self.root = Path(tempfile.mkdtemp(prefix="itm-slurm-"))
        self.root.chmod(0o755)  # munge's socket must be reachable by every user
        self.cpus, self.real_memory_mb, self.gpus = cpus, real_memory_mb, gpus
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports = {k: free_port() for k in ("db", "dbd", "ctld", "slurmd")}
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge.sock"

    # -- environment ---------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """The environment of a client of this cluster (and, through sbatch --export=ALL, of its jobs).

        snakemake-executor-plugin-slurm-jobstep 0.6.1 removes every SLURM_* variable but the job's
        identity from the `srun` it runs inside each job, SLURM_CONF included, so that srun looks for
        /etc/slurm/slurm.conf; a cluster configured elsewhere needs the `srun` shim on PATH that puts
        SLURM_CONF back.
        """
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = f"{self.root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def run(self, *cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        res = subprocess.run(list(cmd), env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and res.returncode != 0:
            raise RuntimeError(f"{cmd}: {res.returncode}\n{res.stdout}\n{res.stderr}\n{self.logs()}")
        return res

    def logs(self, tail: int = 1500) -> str:
        out = []
        for log in sorted(self.root.glob("*.log")):
            out.append(f"--- {log.name} ---\n{log.read_text(errors='replace')[-tail:]}")
        return "\n".join(out)

    # -- configuration -------------------------------------------------------------------------
    def _write_configs(self) -> None:
        r = self.root
        for d in ("state", "spool", "db", "gpus", "bin"):
            (r / d).mkdir()
        srun = r / "bin" / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {which("srun")} "$@"\n')
        srun.chmod(0o755)
        gpu_files = []
        for i in range(self.gpus):
            f = r / "gpus" / f"gpu{i}"
            f.touch()
            gpu_files.append(str(f))
        auth = f"AuthInfo=socket={self.munge_socket}"
        # cred_expire: a requeued job (node failure) waits this long before it may start again (default 120 s)
        (r / "slurm.conf").write_text(
            f"""ClusterName=itmtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={self.ports["ctld"]}
SlurmdPort={self.ports["slurmd"]}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
{auth},cred_expire=10
StateSaveLocation={r / "state"}
SlurmdSpoolDir={r / "spool"}
SlurmctldPidFile={r / "slurmctld.pid"}
SlurmdPidFile={r / "slurmd.pid"}
SlurmctldLogFile={r / "slurmctld.log"}
SlurmdLogFile={r / "slurmd.log"}
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SlurmdParameters=config_overrides
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={self.ports["dbd"]}
AccountingStoragePass={self.munge_socket}
AccountingStorageTRES=gres/gpu
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
JobCompType=jobcomp/none
MinJobAge=300
KillWait=5
InactiveLimit=0
OverTimeLimit=0
MessageTimeout=20
NodeName=n1 NodeAddr=127.0.0.1 NodeHostname=localhost CPUs={self.cpus} RealMemory={self.real_memory_mb} \
Gres=gpu:{self.gpus} State=UNKNOWN
PartitionName=cpu Nodes=n1 Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=n1 MaxTime=INFINITE State=UP
"""
        )
        (r / "gres.conf").write_text(
            "".join(f"NodeName=n1 Name=gpu File={f}\n" for f in gpu_files),
        )
        dbd = r / "slurmdbd.conf"
        dbd.write_text(
            f"""AuthType=auth/munge
{auth}
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={self.ports["dbd"]}
SlurmUser=root
PidFile={r / "slurmdbd.pid"}
LogFile={r / "slurmdbd.log"}
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={self.ports["db"]}
StorageUser=root
StorageLoc=slurm_acct_db
"""
        )
        dbd.chmod(0o600)

    # -- daemons -------------------------------------------------------------------------------
    def _spawn(self, name: str, *cmd: str) -> None:
        log = open(self.root / f"{name}.out.log", "w")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(
            list(cmd), env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def _wait(self, what: str, ok, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}) while waiting for {what}\n{self.logs()}")
            if ok():
                return
            time.sleep(0.5)
        raise RuntimeError(f"timed out waiting for {what}\n{self.logs()}")

    def start(self) -> LoopbackCluster:
        r = self.root
        self._write_configs()
        # munge: a fresh key, its own socket
        key = r / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self._spawn(
            "munged",
            which("munged"),
            "--foreground",
            "--force",
            f"--key-file={key}",
            f"--socket={self.munge_socket}",
            f"--pid-file={r / 'munged.pid'}",
            f"--log-file={r / 'munged.log'}",
            f"--seed-file={r / 'munge.seed'}",
        )
        self._wait("munge", self.munge_socket.exists)
        # MariaDB for slurmdbd, TCP on loopback only
        subprocess.run(
            [
                which("mariadb-install-db"),
                f"--datadir={r / 'db'}",
                "--user=root",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            check=True,
            capture_output=True,
        )
        self._spawn(
            "mariadbd",
            which("mariadbd"),
            "--no-defaults",
            f"--datadir={r / 'db'}",
            "--user=root",
            "--bind-address=127.0.0.1",
            f"--port={self.ports['db']}",
            f"--socket={r / 'mysql.sock'}",
            f"--pid-file={r / 'mariadb.pid'}",
            f"--log-error={r / 'mariadb.log'}",
            "--innodb-buffer-pool-size=64M",
            "--skip-name-resolve",
        )
        self._wait("mariadb", lambda: _port_open(self.ports["db"]))
        self._spawn("slurmdbd", which("slurmdbd"), "-D")  # reads slurmdbd.conf beside SLURM_CONF
        self._wait("slurmdbd", lambda: _port_open(self.ports["dbd"]))
        self._spawn("slurmctld", which("slurmctld"), "-D", "-i", "-f", str(self.conf))
        self._wait("slurmctld", lambda: self.run("scontrol", "ping", check=False).returncode == 0)
        self._spawn("slurmd", which("slurmd"), "-D", "-N", "n1", "-f", str(self.conf))
        idle = lambda: "idle" in self.run("sinfo", "-h", "-n", "n1", "-o", "%T", check=False).stdout  # noqa: E731
        self._wait("node n1 idle", idle)
        return self

    def stop(self) -> None:
        """Cancel every job, stop the daemons, end what is left of the jobs (their slurmstepd outlive slurmd)."""
        if self.procs.get("slurmctld") is not None and self.procs["slurmctld"].poll() is None:
            jobs = self.run("squeue", "-h", "-o", "%A", check=False).stdout.split()
            if jobs:
                self.run("scancel", *jobs, check=False)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and self.run("squeue", "-h", check=False).stdout.strip():
                    time.sleep(1)
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p is None or p.poll() is not None:
                continue
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for pid in self.leftover_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)

    def leftover_pids(self) -> list[int]:
        """Processes of this cluster still alive: job steps and their children (they carry its SLURM_CONF)."""
        mark = f"SLURM_CONF={self.conf}".encode()
        pids = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) == os.getpid():
                continue
            try:
                environ = (proc / "environ").read_bytes().split(b"\0")
                status = (proc / "status").read_text()
            except OSError:
                continue
            if mark in environ and "State:\tZ" not in status:
                pids.append(int(proc.name))
        return pids

    # -- queries -------------------------------------------------------------------------------
    def sacct(self, *fields: str, extra: tuple[str, ...] = ()) -> list[dict[str, str]]:
        """Every allocation (not its steps) sacct recorded, as dicts of `fields`."""
        res = self.run("sacct", "-a", "-X", "-n", "-P", "--starttime=2000-01-01", "-o", ",".join(fields), *extra)
        return [dict(zip(fields, line.split("|"))) for line in res.stdout.splitlines() if line.strip()]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0
