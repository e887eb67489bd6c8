"""Kill a command at random points: its outputs are the previous complete set or the complete new set.

Two real multi-output commands run in a subprocess, `python -m itmbench.cli`: `table-benchmark` (CSV,
Markdown and LaTeX) and `score-benchmark --name retrieval --metrics` (per-query ranks and their
metrics). Each starts from
the previous run's complete set (other inputs) and is sent SIGTERM or SIGKILL (alternately) at seeded
random points, drawn in turn in each phase of a run (start-up, writes, renames: found by the command's temps and
journal), with `ITMBENCH_TEST_SLOW_WRITE` (the test hook of `itmbench.io`) stretching each output's write and
the pauses between the final renames. After every point:

- the outputs are byte for byte the previous set or the new set (an uninterrupted run's), never a mix;
  the one exception is a SIGKILL among the final renames, which leaves the set's journal: completing its
  renames (what the next run does first) must give the new set;
- after SIGTERM no temp file or journal remains, and the exit status is 0 (done), 128 + 15, or death by
  the signal (landed before the handler was installed, while Python was starting);
- after SIGKILL, a rerun of the same command leaves no temp and writes the complete new set.

Two further points are not random: a SIGKILL and a SIGTERM sent as soon as the first output is renamed,
i.e. among the renames.

Then the kills of a real run around the commands: Snakemake finds the profile that reruns incomplete jobs, a
SIGTERM during METEOR, a SIGKILLed warm worker and a SIGKILLed process that started one, and a second SIGTERM
while the first one's handler removes the temps.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from test_worker import wait_for
from unit_world import unit_world

from itmbench.io import JOURNAL_PREFIX, SLOW_WRITE_ENV, TEMP_MARK, complete_interrupted_commits

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
POINTS = 10  # random kill points per command
PAUSE_S = 0.25  # ITMBENCH_TEST_SLOW_WRITE: after each output's write and between the final renames
SCORE = {"ks": [1, 5], "n_boot": 20, "seed": 0, "confidence": 0.95}


def _env(slow: bool) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    env.pop(SLOW_WRITE_ENV, None)
    if slow:
        env[SLOW_WRITE_ENV] = str(PAUSE_S)
    return env


def _start(argv: list[str], slow: bool) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "itmbench.cli", *argv],
        env=_env(slow),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run(argv: list[str], slow: bool = False) -> float:
    t0 = time.monotonic()
    proc = _start(argv, slow)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    return time.monotonic() - t0


def _outputs(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}


def _debris(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_MARK in p.name or p.name.startswith(JOURNAL_PREFIX))


class Command:
    """One command's previous and new argv (their outputs in a folder given by `out`) and their output sets."""

    def __init__(self, name: str, argv, root: Path) -> None:
        self.name, self.argv, self.root = name, argv, root
        for which in ("previous", "new"):
            _run(argv(which, root / which))
        self.previous, self.new = _outputs(root / "previous"), _outputs(root / "new")
        assert self.previous.keys() == self.new.keys() and len(self.new) >= 2
        assert all(self.previous[k] != self.new[k] for k in self.new)  # every file tells the sets apart

    def fresh(self, k: int) -> Path:
        """A folder holding the previous complete set."""
        out = self.root / f"kill{k}"
        shutil.copytree(self.root / "previous", out)
        return out

    def classify(self, out: Path) -> str:
        got = _outputs(out)
        if got == self.previous:
            return "previous"
        if got == self.new:
            return "new"
        journals = [p for p in out.iterdir() if p.name.startswith(JOURNAL_PREFIX)]
        assert journals, f"{self.name} in {out}: a mix of the previous and the new outputs without a journal"
        repaired = out.with_name(out.name + "-repaired")
        shutil.copytree(out, repaired)  # complete the renames in a copy (the rerun does it for real)
        complete_interrupted_commits(repaired)
        assert _outputs(repaired) == self.new, f"{self.name}: the journal's renames do not give the new set"
        return "renames completed from the journal"

    def after(self, sig: int, proc: subprocess.Popen, out: Path) -> None:
        _, err = proc.communicate(timeout=120)
        if sig == signal.SIGTERM:
            assert proc.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM), err[-2000:]
            assert _debris(out) == [], f"{self.name}: SIGTERM left {_debris(out)}"
        else:
            _run(self.argv("new", out))  # the next run of the same command
            assert _debris(out) == [], f"{self.name}: the rerun after SIGKILL left {_debris(out)}"
            assert _outputs(out) == self.new


def _table(tmp: Path) -> Command:
    metrics = {}
    for which, shift in (("previous", 0.0), ("new", 1.5)):
        paths = []
        for model in ("clip", "chance"):
            path = tmp / "inputs" / which / f"{model}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            value = 60.0 + shift if model == "clip" else 50.0 - shift
            cells = {m: {"value": value + d, "lo": value + d - 2, "hi": value + d + 2} for d, m in enumerate("abc")}
            path.write_text(json.dumps({"model": model, "metrics": cells}))
            paths.append(str(path))
        metrics[which] = paths

    def argv(which: str, out: Path) -> list[str]:
        return [
            "table-benchmark",
            *metrics[which],
            "--name",
            "bison",
            "--out-csv",
            str(out / "bench.csv"),
            "--title",
            "A benchmark",
        ]

    return Command("table-benchmark", argv, tmp / "table")


def _score(tmp: Path) -> Command:
    from itmbench.papers.retrieval import build, canonical
    from itmbench.papers.retrieval.config import RetrievalConfig
    from itmbench.params import make_config
    from itmbench.scoring.embed import write_embeddings
    from itmbench.world.generate import generate_world

    cfg = unit_world(n_train=20, n_val=5, n_test=30)
    world = generate_world(cfg)
    canonical.write(build.build(world, make_config(RetrievalConfig, split="test"), world_cfg=cfg), tmp / "retrieval")
    rng = np.random.default_rng(0)
    images, captions = world.image_table["image_id"].to_numpy(), world.caption_table["caption_id"].to_numpy()
    for which in ("previous", "new"):
        emb = {"image_ids": images, "caption_ids": captions}
        for kind, ids in (("image", images), ("caption", captions)):
            x = rng.normal(size=(len(ids), 8)).astype(np.float32)
            emb[f"{kind}_emb"] = x / np.linalg.norm(x, axis=1, keepdims=True)
        write_embeddings(tmp / f"{which}.npz", emb)

    def argv(which: str, out: Path) -> list[str]:
        return [
            *("score-benchmark", "--name", "retrieval", "--bench", str(tmp / "retrieval")),
            *("--embeddings", str(tmp / f"{which}.npz")),
            *("--out", str(out / "ranks.parquet"), "--metrics", str(out / "metrics.json")),
            *("--model", "m", "--config", json.dumps(SCORE)),
        ]

    return Command("score-benchmark", argv, tmp / "score")


def _phases(command: Command) -> tuple[float, float, float]:
    """One uninterrupted run with the slow hook: seconds from the start to its first temp (start-up and
    computing), from there to its journal (the writes), from there to its exit (the renames)."""
    out = command.fresh(-1)
    t0 = time.monotonic()
    proc = _start(command.argv("new", out), slow=True)
    first_temp = journal = None
    while proc.poll() is None:
        now = time.monotonic() - t0
        names = [p.name for p in out.iterdir()]
        if first_temp is None and any(TEMP_MARK in n for n in names):
            first_temp = now
        if journal is None and any(n.startswith(JOURNAL_PREFIX) for n in names):
            journal = now
        time.sleep(0.005)
    end = time.monotonic() - t0
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert _outputs(out) == command.new  # the hook changes no byte
    assert first_temp is not None and journal is not None, f"{command.name}: no temp or journal seen in {end:.1f} s"
    return first_temp, journal - first_temp, end - journal


def _wait_for_debris(out: Path, proc: subprocess.Popen, journal: bool) -> None:
    """Until the command's first temp (or its journal) is in `out`, or the command has ended."""
    while proc.poll() is None:
        names = [p.name for p in out.iterdir()]
        if any(n.startswith(JOURNAL_PREFIX) if journal else TEMP_MARK in n for n in names):
            return
        time.sleep(0.002)


PHASES = ("start-up", "writes", "renames")


@pytest.mark.parametrize("make", [_table, _score], ids=["table-benchmark", "score-benchmark"])
def test_a_killed_command_leaves_the_previous_or_the_new_complete_set(make, tmp_path: Path) -> None:
    """The points are drawn per phase, in turn (start-up, writes, renames), each at a seeded random time within
    its phase as an uninterrupted run measured it: a phase is found by the command's files (its first temp, its
    journal), not by the clock alone, so a command whose start-up is most of its run still has points in its
    writes and renames, however fast or loaded the machine."""
    command = make(tmp_path)
    spans = _phases(command)
    rng = np.random.default_rng(18)
    outcomes: Counter[tuple[str, str, str]] = Counter()
    for k in range(POINTS):
        phase = k % len(PHASES)
        sig = (signal.SIGTERM, signal.SIGKILL)[k % 2]
        out = command.fresh(k)
        proc = _start(command.argv("new", out), slow=True)
        if phase:
            _wait_for_debris(out, proc, journal=phase == 2)
        time.sleep(rng.uniform(0.0, spans[phase]))
        proc.send_signal(sig)
        proc.wait(timeout=120)
        left = " (temps left for the rerun)" if sig == signal.SIGKILL and _debris(out) else ""
        outcomes[PHASES[phase], sig.name, command.classify(out) + left] += 1
        command.after(sig, proc, out)
    spans_text = ", ".join(f"{name} {s:.2f} s" for name, s in zip(PHASES, spans))
    print(f"\n{command.name}: {POINTS} points ({spans_text}): {dict(sorted(outcomes.items()))}")
    assert sum(outcomes.values()) == POINTS
    # a kill in the start-up leaves the previous set; one in the renames, the new set (or the journal to complete it)
    assert all(what.startswith("previous") for (phase, _, what) in outcomes if phase == "start-up")
    assert not any(what.startswith("previous") for (phase, _, what) in outcomes if phase == "renames")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_kill_among_the_final_renames(sig: signal.Signals, tmp_path: Path) -> None:
    """Sent as soon as the first of three renames is done (the journal written, a pause before the next):
    SIGKILL leaves a mix that the journal completes and the rerun cleans up; SIGTERM waits for the renames."""
    command = _table(tmp_path)
    out = command.fresh(0)
    proc = _start(command.argv("new", out), slow=True)
    deadline = time.monotonic() + 60
    while not (_debris(out) and any(command.new.get(k) == v for k, v in _outputs(out).items())):
        assert proc.poll() is None and time.monotonic() < deadline, "the command ended before its renames"
        time.sleep(0.005)
    proc.send_signal(sig)
    proc.wait(timeout=120)
    outcome = command.classify(out)
    if sig == signal.SIGKILL:
        assert outcome == "renames completed from the journal"
    else:
        assert outcome == "new" and proc.returncode == 128 + signal.SIGTERM
    command.after(sig, proc, out)


# ----------------------------------------------------------------------------------------------
# Kills around the worker, METEOR, the profile and the signal handler itself


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (field 4 of /proc/<pid>/stat), zombies left out."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_profile_snakemake_reads_by_itself_reruns_incomplete_jobs() -> None:
    """Snakemake loads a workflow profile by itself only from `profiles/default` beside the Snakefile (or in the
    working directory): the one with `rerun-incomplete` must be there, so that a rerun after a kill needs no flag."""
    import yaml

    assert yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())["rerun-incomplete"] is True
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--list-rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Using workflow specific profile profiles/default " in res.stdout + res.stderr


def test_a_sigterm_during_meteor_ends_the_command_and_its_java(tmp_path: Path) -> None:
    """pycocoevalcap's Meteor holds a lock while it scores, and its `__del__` takes it: a SIGTERM that lands
    inside the scoring used to leave the process waiting on it forever."""
    if shutil.which("java") is None:
        pytest.skip("no `java` on PATH: METEOR (pycocoevalcap's meteor-1.5.jar) cannot run here")
    script = (
        "from itmbench.io import removing_temps_on_signals\n"
        "from itmbench.metrics.captioning import _meteor_scores\n"
        "n = 20000\n"
        "gts = {i: [f'a man riding a red bicycle number {i} down the street'] * 5 for i in range(n)}\n"
        "res = {i: [f'a person on a bike {i} in a road'] for i in range(n)}\n"
        "with removing_temps_on_signals():\n"
        "    _meteor_scores(gts, res)\n"
        "print('finished before the signal')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], env=_env(False), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert wait_for(lambda: _children(proc.pid), 120), "java did not start"
        (java,) = _children(proc.pid)
        time.sleep(3)  # inside compute_score: the lock is held
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert "finished before the signal" not in out, "the scoring ended before the signal: give it more entries"
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert wait_for(lambda: not _alive(java), 30), "METEOR's java outlived the command"


def test_a_killed_worker_takes_its_running_commands_with_it(tmp_path: Path) -> None:
    """A command the warm worker runs dies with the worker (SIGKILL included): it must never finish the outputs of
    a job that Snakemake, seeing the worker gone, has already marked failed."""
    from itmbench import worker

    sock = tmp_path / "w.sock"
    env = worker.worker_env(_env(False))
    server = subprocess.Popen(
        [sys.executable, "-m", "itmbench.cli.serve_worker", str(sock), str(os.getpid())], env=env, cwd=tmp_path
    )
    client = None
    try:
        assert wait_for(sock.exists, 120), "the worker did not create its socket"
        fifo = tmp_path / "claims.csv"
        os.mkfifo(fifo)  # the command blocks opening it: a command still running when the worker is killed
        (tmp_path / "r.html").write_text("<html></html>")
        job_env = {**env, worker.SOCKET_VAR: str(sock)}
        client = subprocess.Popen(
            [sys.executable, "-m", "itmbench.cli", "index", "r.html", "--out", "index.html", "--claims", str(fifo)],
            cwd=tmp_path,
            env=job_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_for(lambda: _children(server.pid), 180), "the command did not start in the worker"
        (child,) = _children(server.pid)
        server.kill()
        server.wait()
        assert wait_for(lambda: not _alive(child), 10), "the worker's command outlived it"
        assert client.wait(timeout=30) == 3  # the client reports the worker's death as a crash of the command
    finally:
        server.kill()
        if client is not None:
            client.kill()
    assert not (tmp_path / "index.html").exists()


def test_a_killed_snakemake_leaves_no_worker_folder(tmp_path: Path) -> None:
    """The worker's socket folder (`itmbench-worker-*` in the temp folder) goes with the worker, also when the
    process that started it (Snakemake) was killed and ran no exit handler."""
    from itmbench import worker

    starter = (
        "import os, signal, sys\n"
        "from itmbench import worker\n"
        f"assert worker.start(log_dir={str(tmp_path / 'logs')!r}, jobs=100, timeout=120)\n"
        "print(os.environ[worker.SOCKET_VAR], flush=True)\n"
        "signal.pause()\n"
    )
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**_env(False), "TMPDIR": str(temp)}
    env.pop(worker.SWITCH_VAR, None)
    proc = subprocess.Popen([sys.executable, "-c", starter], env=env, stdout=subprocess.PIPE, text=True)
    try:
        sock = Path(proc.stdout.readline().strip())
        assert sock.parent.parent == temp and sock.parent.name.startswith(worker.FOLDER_PREFIX)
        proc.kill()
        proc.wait()
        assert wait_for(lambda: not list(temp.glob(f"{worker.FOLDER_PREFIX}*")), 180), "the worker's folder is left"
    finally:
        proc.kill()


def test_a_second_sigterm_while_the_temps_are_removed_leaves_none(tmp_path: Path) -> None:
    """SIGTERM twice in a row (a worker's child gets one from its killed job and one from the worker stopping): the
    second lands while the first handler removes the temps; it must not cut the removal short. And a SIGTERM
    while the temp list's lock is held (a temp being registered) must not deadlock the handler."""
    script = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from itmbench import io\n"
        f"folder = Path({str(tmp_path)!r})\n"
        "temps = [folder / f'out{i}.csv{io.TEMP_MARK}x' for i in range(20)]\n"
        "remove = io._remove\n"
        "def remove_and_signal(path):\n"
        "    if path == temps[3] or path == sorted(io._live)[0]:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    remove(path)\n"
        "io._remove = remove_and_signal\n"
        "with io.removing_temps_on_signals():\n"
        "    for t in temps:\n"
        "        t.write_text('x')\n"
        "        io._register(t)\n"
        "    if sys.argv[1] == 'lock':\n"
        "        with io._live_lock:\n"
        "            os.kill(os.getpid(), signal.SIGTERM)\n"
        "            sum(range(1000))\n"
        "    else:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "    signal.pause()\n"
    )
    for case in ("twice", "lock"):
        res = subprocess.run(
            [sys.executable, "-c", script, case], env=_env(False), capture_output=True, text=True, timeout=60
        )
        assert res.returncode == 128 + signal.SIGTERM, (case, res.stderr[-2000:])
        assert not list(tmp_path.iterdir()), (case, sorted(p.name for p in tmp_path.iterdir()))
