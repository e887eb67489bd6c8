"""Time the default run as a newcomer runs it: the README's first command, in a fresh clone, from a shell with a venv.

Each run of a revision starts from nothing: a fresh `git clone` of this repository checked out at the revision,
then, in bash with a venv activated (`source VENV/bin/activate`), the README's first command in its two halves,
timed apart: `python -m pip install -e ".[workflow]"` (the install) and `snakemake --cores all` (the run). The
venv is made once per revision with `python -m venv` and reused by its runs (each run's install points it at its
own clone). With --system-site-packages the venv sees this machine's installed packages instead of downloading
them (faster here; the printout says so), with what pip would have put into a plain venv: a `snakemake` script
of its own, and JUPYTER_PATH naming the machine's Jupyter data (nbconvert's templates). A failed run's folder is
kept, and named. The shell's environment is this process's without its own venv or PYTHONPATH;
ITMBENCH_WORKER, if set, passes (ITMBENCH_WORKER=0: the worker off).

Prints, per revision and over --runs repetitions (revisions interleaved within each repetition, so that the
machine's drifting speed hits both alike), the median CPU seconds (user + system of the whole process tree) and
wall seconds of the run and of the install, the peak resident memory of the largest process, the number of jobs,
how many commands ran in the warm worker and how many it declined, with the reasons counted (`logs/worker.jsonl`),
and per rule the median job seconds and CPU seconds from Snakemake's benchmark files (which include a worker
command's CPU: itmbench.worker_benchmark). With two revisions it also sets apart the CPU of the later one's jobs
whose outputs the first one's DAG lacks (work added since), for a like-for-like ratio.

Usage: python benchmarks/time_default_run.py [--rev OLD --rev NEW] [--runs 3] [--configfile X.yaml]
       [--system-site-packages] [--keep DIR] [--json FILE] [--md FILE] [--note TEXT]
       python benchmarks/time_default_run.py --from-json [LABEL=]FILE [--from-json ...] [--md FILE]   (runs nothing)
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
INSTALL = 'python -m pip install -e ".[workflow]"'  # the README's first command, its two halves
RUN = "snakemake --cores {cores}"


def resolve(rev: str) -> str:
    """The commit `rev` (a commit, branch or tag of this repository) names."""
    res = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if res.returncode != 0:
        raise SystemExit(f"time_default_run: {rev!r} is no commit of {REPO}")
    return res.stdout.strip()


def fresh_clone(commit: str, dest: Path) -> None:
    """`git clone` of this repository at `commit` (fetched by id when no branch or tag of the clone has it)."""
    git = lambda *args: subprocess.run(["git", *args], check=True, capture_output=True)  # noqa: E731
    git("clone", "--quiet", "--no-checkout", str(REPO), str(dest))
    if subprocess.run(["git", "-C", str(dest), "cat-file", "-e", commit], capture_output=True).returncode != 0:
        git("-C", str(dest), "fetch", "--quiet", str(REPO), commit)
    git("-C", str(dest), "checkout", "--quiet", "--detach", commit)


def make_venv(dest: Path, system_site_packages: bool) -> Path:
    """`python -m venv dest` with this machine's base interpreter (and its packages visible, if asked: then a
    `snakemake` script of the venv's own, as pip installs one into a plain venv)."""
    flags = ["--system-site-packages"] if system_site_packages else []
    subprocess.run([sys._base_executable, "-m", "venv", *flags, str(dest)], check=True)
    if system_site_packages and not (dest / "bin/snakemake").exists():
        script = dest / "bin/snakemake"
        script.write_text(f"#!{dest / 'bin/python'}\nimport sys\nfrom snakemake.cli import main\nsys.exit(main())\n")
        script.chmod(0o755)
    return dest


def user_env(system_site_packages: bool = False) -> dict[str, str]:
    """A newcomer's shell: this process's environment without its own venv, PYTHONPATH or worker socket. For a
    venv that sees the machine's packages, JUPYTER_PATH names their Jupyter data (nbconvert's templates, the
    kernel), which pip would have installed under a plain venv's share/jupyter."""
    env = dict(os.environ)
    if system_site_packages:
        env["JUPYTER_PATH"] = os.pathsep.join(
            filter(None, [f"{sys.base_prefix}/share/jupyter", env.get("JUPYTER_PATH")])
        )
    own = env.pop("VIRTUAL_ENV", None)
    for key in ("VIRTUAL_ENV_PROMPT", "PYTHONPATH", "PYTHONHOME", "ITMBENCH_WORKER_SOCKET", "PYTEST_CURRENT_TEST"):
        env.pop(key, None)
    if own:
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != f"{own}/bin")
    return env


def in_venv(venv: Path, command: str, cwd: Path, log: Path, system_site_packages: bool) -> dict:
    """`bash -c 'source VENV/bin/activate && COMMAND'` in `cwd`, its output to `log`: wall and CPU seconds of
    its whole process tree, and the largest process's peak memory (a lower bound over the calls)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "w") as out:
        res = subprocess.run(
            ["bash", "-c", f"source {shlex.quote(str(venv))}/bin/activate && {command}"],
            cwd=cwd,
            env=user_env(system_site_packages),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(
            f"`{command}` failed in {cwd} (status {res.returncode}; the folder is kept, its output in {log}):\n"
            f"{log.read_text()[-3000:]}"
        )
    user, sys_ = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    # ru_maxrss of RUSAGE_CHILDREN is the largest single descendant, never reset: a lower bound per call
    return {"wall_s": wall, "user_s": user, "sys_s": sys_, "cpu_s": user + sys_, "peak_rss_mb": after.ru_maxrss / 1024}


def rule_figures(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per rule: number of jobs, summed job seconds and summed CPU seconds (Snakemake's benchmark files)."""
    out: dict[str, dict[str, float]] = {}
    for tsv in sorted((run_dir / "benchmarks/rules").rglob("*.tsv")):
        rule = tsv.relative_to(run_dir / "benchmarks/rules").parts[0]
        seconds, cpu = job_seconds(tsv)
        fig = out.setdefault(rule, {"jobs": 0, "s": 0.0, "cpu_s": 0.0})
        fig["jobs"] += 1
        fig["s"] += seconds
        fig["cpu_s"] += cpu
    return out


def job_seconds(tsv: Path) -> tuple[float, float]:
    """A job's Snakemake benchmark file: its wall seconds (`s`) and CPU seconds (`cpu_time`; 0 where NA)."""
    row = pd.read_csv(tsv, sep="\t").iloc[0]
    cpu = pd.to_numeric(row.get("cpu_time"), errors="coerce")  # NA: a job gone before Snakemake's first sample
    return float(row["s"]), 0.0 if pd.isna(cpu) else float(cpu)


def worker_figures(run_dir: Path) -> dict[str, dict[str, float]]:
    """Per `itmbench` command the worker ran (logs/worker.jsonl, where the revision has a worker): jobs, wall
    seconds and CPU seconds, exact (the worker's wait4 of each child; the same figures are in those jobs'
    benchmark files, with their clients')."""
    out: dict[str, dict[str, float]] = {}
    for entry in worker_log(run_dir):
        command = entry["argv"][0] if "status" in entry else "(declined)"
        fig = out.setdefault(command, {"jobs": 0, "s": 0.0, "cpu_s": 0.0})
        fig["jobs"] += 1
        fig["s"] += entry.get("wall_s", 0.0)
        fig["cpu_s"] += entry["cpu_s"]
    return out


def worker_log(run_dir: Path) -> list[dict]:
    """The lines of the worker's log (none where the revision has no worker), each with its CPU seconds."""
    log = run_dir / "logs/worker.jsonl"
    entries = [json.loads(line) for line in (log.read_text().splitlines() if log.exists() else [])]
    return [{**e, "cpu_s": e.get("user_s", 0.0) + e.get("sys_s", 0.0)} for e in entries]


def worker_counts(run_dir: Path) -> tuple[int, int, dict[str, int]]:
    """How many commands the worker ran and how many it declined (logs/worker.jsonl), and each reason's count."""
    entries = worker_log(run_dir)
    reasons = collections.Counter(e["declined"] for e in entries if "declined" in e)
    return sum("status" in e for e in entries), sum(reasons.values()), dict(reasons)


def dag_jobs(run_dir: Path, venv: Path, override: str, system_site_packages: bool) -> dict[str, list[str]]:
    """The finished run's jobs (`snakemake --summary`): each job's key (rule and log, or its first output) and
    its outputs, to tell which jobs one revision's DAG has that another's lacks."""
    command = f"source {shlex.quote(str(venv))}/bin/activate && snakemake --cores 1 --summary{override}"
    env = user_env(system_site_packages)
    res = subprocess.run(["bash", "-c", command], cwd=run_dir, capture_output=True, text=True, env=env)
    jobs: dict[str, list[str]] = {}
    if res.returncode != 0:  # the timing stands without it
        print(f"snakemake --summary failed in {run_dir}:\n{res.stderr[-2000:]}", file=sys.stderr)
        return jobs
    for line in res.stdout.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) < 4:
            continue
        output, rule, logs = fields[0], fields[2], fields[3]
        key = f"{rule} {logs}" if logs and logs != "-" else f"{rule} {output}"
        jobs.setdefault(key, []).append(output)
    return jobs


def added_jobs_cpu(base: dict, run: dict) -> tuple[int, int, float]:
    """The jobs of `run` with no output in `base`'s DAG (work a later revision added): how many, how many of
    them the worker ran (an argv naming one of their outputs), and those commands' CPU seconds."""
    base_outputs = {o for outs in base["dag_jobs"].values() for o in outs}
    added = [outs for outs in run["dag_jobs"].values() if not base_outputs.intersection(outs)]
    outputs = {o.rstrip("/") for outs in added for o in outs}
    matched, cpu = set(), 0.0
    for record in run["worker_records"]:
        tokens = {t.rstrip("/") for a in record["argv"] for t in a.replace("=", " ").replace(",", " ").split()}
        hits = tokens & outputs
        if hits:
            matched.update(i for i, outs in enumerate(added) if hits.intersection(o.rstrip("/") for o in outs))
            cpu += record["cpu_s"]
    return len(added), len(matched), cpu


def one_run(
    commit: str,
    folder: Path,
    venv: Path,
    configfile: str | None,
    cores: str,
    keep: Path | None = None,
    system_site_packages: bool = False,
) -> dict:
    """One run from nothing: a fresh clone of `commit` in `folder` (replacing the last run's), the install, then
    the run, in bash with `venv` activated."""
    clone = folder / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    fresh_clone(commit, clone)
    override = ""
    if configfile:
        shutil.copy(configfile, clone / "override.yaml")
        override = " --configfile override.yaml"
    install = in_venv(venv, INSTALL, clone, folder / "install.log", system_site_packages)
    run = in_venv(venv, RUN.format(cores=cores) + override, clone, folder / "run.log", system_site_packages)
    if keep is not None:  # the run's tables, metrics and reports, to read what it computed
        shutil.rmtree(keep, ignore_errors=True)
        for part in ("results/world/tables", "results/world/metrics", "reports"):
            shutil.copytree(clone / part, keep / part)
    rules = rule_figures(clone)
    ran, declined, reasons = worker_counts(clone)
    return {
        **run,
        "install": install,
        "dag_jobs": dag_jobs(clone, venv, override, system_site_packages),
        "worker_records": [
            {"argv": e["argv"], "cpu_s": e["cpu_s"]} for e in worker_log(clone) if "status" in e
        ],  # the commands it ran
        "jobs": int(sum(f["jobs"] for f in rules.values())),
        "in_worker": ran,
        "declined": declined,
        "declined_reasons": reasons,
        "per_rule": rules,
        "per_worker_command": worker_figures(clone),
    }


def summary(label: str, runs: list[dict]) -> list[str]:
    med = lambda key, rs=runs: statistics.median(r[key] for r in rs)  # noqa: E731
    installs = [r["install"] for r in runs]
    reasons = collections.Counter()
    for r in runs:
        reasons.update(r["declined_reasons"])
    lines = [
        f"{label}: {len(runs)} run(s), median CPU {med('cpu_s'):.0f} s "
        f"(user {med('user_s'):.0f} + sys {med('sys_s'):.0f}), wall {med('wall_s'):.0f} s "
        f"(min {min(r['wall_s'] for r in runs):.0f}, max {max(r['wall_s'] for r in runs):.0f}), "
        f"peak process RSS {med('peak_rss_mb'):.0f} MB, {runs[0]['jobs']} benchmarked jobs; "
        f"install apart: CPU {med('cpu_s', installs):.0f} s, wall {med('wall_s', installs):.0f} s",
        f"  warm worker (median per run): {med('in_worker'):.0f} commands ran in it, {med('declined'):.0f} declined",
    ]
    lines += [f"    declined {n}x over the runs: {reason}" for reason, n in reasons.most_common()]
    return lines


def report_lines(runs: dict[str, list[dict]]) -> list[str]:
    """What main prints after the runs: per revision, the comparison of two, per rule, per worker command."""
    lines: list[str] = []

    def out(text: str = "") -> None:
        lines.extend(text.split("\n"))

    for rev, rs in runs.items():
        lines += summary(rev, rs)
    labels = list(runs)
    if len(labels) == 2:
        a, b = (statistics.median(r["cpu_s"] for r in runs[k]) for k in labels)
        wa, wb = (statistics.median(r["wall_s"] for r in runs[k]) for k in labels)
        out(f"\n{labels[1]} / {labels[0]}: CPU {b / a:.2f}x, wall {wb / wa:.2f}x")
        # work the later revision's DAG added: its CPU (from the worker's log) set apart, for a like-for-like ratio
        added = [added_jobs_cpu(runs[labels[0]][0], r) for r in runs[labels[1]]]
        added_cpu = statistics.median(x[2] for x in added)
        same = statistics.median(r["cpu_s"] - x[2] for r, x in zip(runs[labels[1]], added))
        out(
            f"{labels[1]}: {added[0][0]} jobs whose outputs {labels[0]}'s DAG lacks ({added[0][1]} of them run in the "
            f"worker), {added_cpu:.0f} s of CPU in the worker (median); without them {same:.0f} s: "
            f"{same / a:.2f}x {labels[0]}'s CPU (Snakemake's and the clients' share of those jobs still counted)"
        )
    rules = sorted({rule for rs in runs.values() for r in rs for rule in r["per_rule"]})
    out("\nper rule (summed over its jobs), median: jobs, job seconds, CPU seconds")
    out(f"  {'rule':<28}" + "".join(f"{label[:24]:>26}" for label in labels))
    for rule in rules:
        cells = []
        for label in labels:
            figs = [r["per_rule"].get(rule, {"jobs": 0, "s": 0.0, "cpu_s": 0.0}) for r in runs[label]]
            med_s = statistics.median(f["s"] for f in figs)
            med_cpu = statistics.median(f["cpu_s"] for f in figs)
            cells.append(f"{figs[0]['jobs']:>4} {med_s:9.1f} {med_cpu:9.1f}  ")
        out(f"  {rule:<28}" + "".join(f"{c:>26}" for c in cells))
    for label in labels:
        commands = sorted({c for r in runs[label] for c in r["per_worker_command"]})
        if not commands:
            continue
        out(f"\n{label}: per command run in the worker (logs/worker.jsonl), median: jobs, wall seconds, CPU seconds")
        for command in commands:
            figs = [r["per_worker_command"].get(command, {"jobs": 0, "s": 0.0, "cpu_s": 0.0}) for r in runs[label]]
            out(
                f"  {command:<34}{figs[0]['jobs']:>5} {statistics.median(f['s'] for f in figs):9.1f} "
                f"{statistics.median(f['cpu_s'] for f in figs):9.1f}"
            )
    return lines


def finish(runs: dict[str, list[dict]], md: str | None, header: str, note: str | None = None) -> int:
    """Print the figures of `runs`; with `md`, also write them there as Markdown (the header, then the figures
    as printed, each run's line included)."""
    lines = report_lines(runs)
    print()
    print("\n".join(lines))
    if md:
        per_run = [
            f"run {i + 1} {rev}: CPU {r['cpu_s']:.0f} s (user {r['user_s']:.0f} + sys {r['sys_s']:.0f}), wall "
            f"{r['wall_s']:.0f} s, peak process RSS {r['peak_rss_mb']:.0f} MB; {r['in_worker']} commands in the "
            f"worker, {r['declined']} declined"
            for rev, rs in runs.items()
            for i, r in enumerate(rs)
        ]
        title = "**The default run as a newcomer runs it** (`benchmarks/time_default_run.py`)"
        text = "\n".join(
            [title, "", header, *([note, ""] if note else [""]), "```text", *per_run, "", *lines, "```", ""]
        )
        Path(md).parent.mkdir(parents=True, exist_ok=True)
        Path(md).write_text(text)
    return 0


def read_runs(items: list[str]) -> dict[str, list[dict]]:
    """The runs of each `[LABEL=]FILE` (a --json file), in order; LABEL names the one revision's runs a file holds
    (two runs of one commit, the worker on and off, need two names)."""
    runs: dict[str, list[dict]] = {}
    for item in items:
        label, _, path = item.rpartition("=")
        loaded = json.loads(Path(path).read_text())
        if label:
            if len(loaded) != 1:
                raise SystemExit(f"time_default_run: {path}: LABEL= names one revision's runs; it has {len(loaded)}")
            loaded = {label: next(iter(loaded.values()))}
        if set(loaded) & set(runs):
            raise SystemExit(
                f"time_default_run: {path}: {sorted(set(loaded) & set(runs))} already read from an earlier file: "
                "name each file's runs with LABEL=FILE"
            )
        runs.update(loaded)
    return runs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rev", action="append", default=[], help="a git revision to time (repeat to compare, interleaved)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--configfile", default=None, help="params override (e.g. a smaller world)")
    p.add_argument("--cores", default="all")
    p.add_argument(
        "--system-site-packages",
        action="store_true",
        help="make each venv with the machine's installed packages visible (no download; not a newcomer's venv)",
    )
    p.add_argument("--json", default=None, help="also write the figures here")
    p.add_argument("--md", default=None, help="also write the printed figures as Markdown (for docs/ snippets)")
    p.add_argument("--note", default=None, help="a line for --md on the conditions (e.g. other work on the machine)")
    p.add_argument(
        "--from-json",
        action="append",
        default=[],
        metavar="[LABEL=]FILE",
        help="run nothing: print (and --md) the figures of an earlier run's --json; repeat to compare two, the first "
        "the baseline, each file's runs named LABEL where given (e.g. 'worker off=off.json' 'worker on=on.json')",
    )
    p.add_argument(
        "--keep", type=Path, default=None, help="copy each revision's last tables, metrics and reports to DIR/<rev>"
    )
    args = p.parse_args(argv)
    if args.from_json:
        runs = read_runs(args.from_json)
        names = ", ".join(Path(item.rpartition("=")[2]).name for item in args.from_json)
        if len(args.from_json) == 1:
            header = f"figures read back from a run's --json file ({names})"
        else:
            header = f"figures read back from runs' --json files ({names})"
        return finish(runs, args.md, header, args.note)
    if args.configfile:
        args.configfile = str(Path(args.configfile).resolve())
    revs = args.rev or ["HEAD"]
    if (
        not args.rev
        and subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout.strip()
    ):
        print("note: the working tree has uncommitted changes; a fresh clone of HEAD does not", flush=True)
    commits = {rev: resolve(rev) for rev in revs}
    venv_kind = (
        "python -m venv --system-site-packages (this machine's packages, and JUPYTER_PATH their Jupyter data)"
        if args.system_site_packages
        else ("python -m venv (packages installed by pip)")
    )
    header = (
        f"each run: git clone, then bash -c 'source VENV/bin/activate && {INSTALL}' (install) and "
        f"'... && {RUN.format(cores=args.cores)}{' --configfile override.yaml' if args.configfile else ''}' "
        f"(run); venv: {venv_kind}, one per revision; ITMBENCH_WORKER="
        f"{os.environ.get('ITMBENCH_WORKER', '(unset)')}"
        + (f"; override.yaml: a copy of {args.configfile}" if args.configfile else "")
    )
    print(header, flush=True)
    tmp = tempfile.mkdtemp(prefix="itmbench-revs-")  # removed when every run succeeded, kept to read otherwise
    folders = {rev: Path(tmp) / f"rev{i}" for i, rev in enumerate(revs)}
    venvs = {}
    for rev, folder in folders.items():
        folder.mkdir()
        venvs[rev] = make_venv(folder / "venv", args.system_site_packages)
    runs: dict[str, list[dict]] = {rev: [] for rev in revs}
    for i in range(args.runs):
        for rev in revs:
            keep = args.keep / rev.replace("/", "_") if args.keep else None
            r = one_run(
                commits[rev], folders[rev], venvs[rev], args.configfile, args.cores, keep, args.system_site_packages
            )
            runs[rev].append(r)
            print(
                f"run {i + 1}/{args.runs} {rev} ({commits[rev][:10]}): CPU {r['cpu_s']:.0f} s, wall "
                f"{r['wall_s']:.0f} s, peak process RSS {r['peak_rss_mb']:.0f} MB; {r['in_worker']} commands "
                f"in the worker, {r['declined']} declined; install CPU {r['install']['cpu_s']:.0f} s, wall "
                f"{r['install']['wall_s']:.0f} s",
                flush=True,
            )
    shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    return finish(runs, args.md, header, args.note)


if __name__ == "__main__":
    sys.exit(main())
