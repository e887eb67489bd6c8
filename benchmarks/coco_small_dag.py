"""The complete small COCO DAG, timed: every rule of `source: coco` on the tests' tiny world's release.

The same run as tests/workflow/test_coco_small_dag.py, as a measurement rather than a test:
1. `--prepare DIR`: a work directory with the workflow, the tiny world's seven COCO benchmarks
   built by the world's rules (tests/workflow/workflow_helpers.py TINY), exported in COCO's
   released formats (`itmbench export-release`), and the small models (`itmbench make-small-models --world`).
   A work directory that already holds `release/` (one made elsewhere, that travelled to a GPU
   machine) keeps it; the small models are made where they are missing.
2. `--run DIR`: the documented command on it (workflow/config/coco-small.yaml over params.yaml, the
   release as mirror and registry) with `--workflow-profile workflow/profiles/gpu`. With `--hub-archs`
   each open_clip model of the small overlay is built instead from params.yaml's own open_clip
   config for it (ViT-B-32, ViT-B-16, ViT-L-14; the fine-tunes start from ViT-B-32) with random
   weights (`pretrained: null`), at the config's image size (224 px), and each model job with
   params.yaml's threads (`coco.threads: null`, every core): the real architectures' cost with
   nothing downloaded. The LLM and SDXL stay the small models.
Prints, and writes as Markdown to `--out`: the device (torch's name of the card, or the CPU), the
jobs run, the run's wall time and its processes' CPU time, and the seconds Snakemake's benchmark
files record per rule (summed over the rule's jobs; `s` is wall, `cpu_time` CPU).

With `--stages DIR`: only what each TROHN stage of the finished run in DIR produced (kept negatives per
subtype, images per drawn caption, the fine-tunes' training pairs), as docs/coco.md shows it.

Usage: python benchmarks/coco_small_dag.py --prepare /tmp/small
       python benchmarks/coco_small_dag.py --run /tmp/small --hub-archs --out small_dag.md
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "workflow"))
sys.path.insert(0, str(REPO / "benchmarks"))

from time_default_run import job_seconds  # noqa: E402
from workflow_helpers import copy_workflow, snakemake, stage_counts  # noqa: E402

from itmbench.io import write_text  # noqa: E402
from itmbench.metrics.captioning import java_available  # noqa: E402

SMALL = "workflow/config/coco-small.yaml"


def prepare(work: Path) -> None:
    """The workflow, the tiny world's COCO benchmarks exported as a release, and the small models, in `work`."""
    from itmbench.cli import main as itmbench
    from itmbench.sources.coco_registry import COCO_BENCHMARKS

    work.mkdir(parents=True, exist_ok=True)
    if not (work / "Snakefile").exists():
        copy_workflow(work)
    if not (work / "release").is_dir():  # a release made elsewhere (one that travelled) is used as it is
        res = snakemake(work, *[f"data/world/{name}/items.parquet" for name in COCO_BENCHMARKS])
        if res.returncode != 0:
            raise SystemExit(f"building the tiny world's benchmarks failed:\n{res.stderr[-3000:]}")
        if itmbench(["export-release", "--world", str(work / "data" / "world"), "--out", str(work / "release")]):
            raise SystemExit("itmbench export-release failed")
    if not (work / "data" / "small_models").is_dir():  # the LLM and SDXL trained on the tiny world's train split
        world = work / "data" / "world" / "items"
        if itmbench(["make-small-models", "--out", str(work / "data" / "small_models"), "--world", str(world)]):
            raise SystemExit("itmbench make-small-models failed")


def hub_archs() -> dict:
    """The small overlay's open_clip models, each from params.yaml's open_clip config for it, random weights."""
    small = yaml.safe_load((REPO / SMALL).read_text())["coco"]["models"]
    real = yaml.safe_load((REPO / "params.yaml").read_text())["coco"]["models"]
    models = {}
    for name, spec in small.items():
        if spec.get("family") == "open_clip" and real.get(name, {}).get("family") == "open_clip":
            own = {key: real[name][key] for key in ("arch", "quick_gelu") if key in real[name]}
            models[name] = {**spec, **own, "pretrained": None}
    return {"coco": {"models": models, "threads": None}}  # and params.yaml's threads: every core, as a real run


def rule_seconds(work: Path, log: str) -> dict[str, dict[str, float]]:
    """Per rule: jobs, and the sums of the `s` (wall) and `cpu_time` columns of its Snakemake benchmark files
    (each job's file, named in the run's log under its `rule NAME:` line)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"jobs": 0, "s": 0.0, "cpu_time": 0.0})
    for job in re.split(r"\n(?=(?:local)?rule \w+:\n)", log):
        rule = re.match(r"(?:local)?rule (\w+):\n", job)
        bench = re.search(r"^\s+benchmark: (\S+)$", job, flags=re.M)
        if not (rule and bench and (work / bench.group(1)).is_file()):
            continue
        seconds, cpu = job_seconds(work / bench.group(1))
        f = out[rule.group(1)]
        f["jobs"] += 1
        f["s"] += seconds
        f["cpu_time"] += cpu
    return dict(out)


def device_name() -> str:
    import torch

    if torch.cuda.is_available():
        return f"{torch.cuda.get_device_name(0)} (torch {torch.__version__}, CUDA {torch.version.cuda})"
    return f"CPU only: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (torch {torch.__version__})"


def log_figures(log: str) -> dict:
    """From a Snakemake log: the jobs done and planned (its last 'N of M steps' line) and the wall seconds between
    its first and last timestamps."""
    steps = re.findall(r"(\d+) of (\d+) steps \(\d+%\) done", log)
    stamps = re.findall(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$", log, flags=re.M)
    seconds = [time.mktime(time.strptime(" ".join(t.split()), "%a %b %d %H:%M:%S %Y")) for t in stamps]
    return {
        "jobs": int(steps[-1][0]) if steps else 0,
        "planned": int(steps[-1][1]) if steps else 0,
        "wall": (max(seconds) - min(seconds)) if seconds else 0.0,
    }


def run(work: Path, archs: bool, cores: str, limit: float | None) -> dict:
    """The small COCO DAG in `work`; stopped (its whole process group) after `limit` seconds, when given: the
    figures of what ran are reported either way."""
    from itmbench.sources.export import OVERLAY

    overlay = {"source": "coco", "mirror": str(work / "release"), "registry": str(work / "release" / OVERLAY)}
    (work / "release.yaml").write_text(yaml.safe_dump(overlay))
    files = [SMALL, "release.yaml"]
    if archs:
        (work / "archs.yaml").write_text(yaml.safe_dump(hub_archs()))
        files.append("archs.yaml")
    if not java_available():  # METEOR runs pycocoevalcap's jar: without Java, the other caption metrics
        metrics = yaml.safe_load((REPO / "params.yaml").read_text())["bison_caption_metrics"]["metrics"]
        kept = {"bison_caption_metrics": {"metrics": [m for m in metrics if m != "meteor"]}}
        (work / "nojava.yaml").write_text(yaml.safe_dump(kept))
        files.append("nojava.yaml")
    cmd = [sys.executable, "-m", "snakemake", "--cores", cores, "--workflow-profile", "workflow/profiles/gpu"]
    cmd += ["--configfile", *files]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(work / "run.log", "w") as out:
        proc = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            status = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            status = proc.wait()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = (work / "run.log").read_text()
    figures = log_figures(log)
    if status != 0 and figures["jobs"] < figures["planned"] and not (limit and wall >= limit):
        raise SystemExit(f"the small COCO DAG failed (log: {work / 'run.log'}):\n{log[-4000:]}")
    return {
        **figures,
        "wall": wall,
        "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "rules": rule_seconds(work, log),
    }


def report(figures: dict, archs: bool, top: int, device: str, java: bool) -> str:
    models = hub_archs()["coco"]["models"] if archs else yaml.safe_load((REPO / SMALL).read_text())["coco"]["models"]
    done = figures["jobs"] == figures["planned"]
    cpu = f"; CPU of its processes {figures['cpu']:.0f} s" if figures.get("cpu") is not None else ""
    lines = [
        "# The complete small COCO DAG, timed (benchmarks/coco_small_dag.py)",
        "",
        f"- device: {device}",
        "- open_clip models: "
        + ", ".join(f"{m} = {s['arch']}" for m, s in models.items() if "arch" in s)
        + (" (random weights)" if archs else ""),
        f"- jobs: {figures['jobs']} of {figures['planned']}"
        + ("" if done else " (stopped before the end: the rules below are those that ran)")
        + f"; wall {figures['wall']:.0f} s{cpu}",
        *([] if java else ["- no Java on this machine: BISON's METEOR (pycocoevalcap's jar) was not computed"]),
        "",
        "| rule | jobs | wall s (sum) | CPU s (sum) |",
        "| --- | ---: | ---: | ---: |",
    ]
    rules = sorted(figures["rules"].items(), key=lambda kv: -kv[1]["s"])
    for rule, f in rules[:top]:
        lines.append(f"| `{rule}` | {f['jobs']} | {f['s']:.1f} | {f['cpu_time']:.1f} |")
    rest = rules[top:]
    if rest:
        lines.append(
            f"| {len(rest)} other rules | {sum(f['jobs'] for _, f in rest)} | {sum(f['s'] for _, f in rest):.1f} "
            f"| {sum(f['cpu_time'] for _, f in rest):.1f} |"
        )
    return "\n".join(lines) + "\n"


def stages_report(work: Path) -> str:
    """What each TROHN stage of a finished small COCO run produced (docs/coco.md's table of stage counts)."""
    counts = stage_counts(work / "results" / "coco")
    generations, kept = counts["generations"], counts["kept"]
    lines = [
        "**What each TROHN stage of the small COCO DAG produced (the tests' tiny world, coco-small.yaml)**",
        "",
        "| stage | count |",
        "|---|---|",
        f"| TROHN-Text: LLM generations (captions x subtypes) | {sum(generations.values())} |",
    ]
    for subset in generations:
        lines.append(
            f"| TROHN-Text: kept by the template filter, {subset} | {kept.get(subset, 0)} of {generations[subset]} |"
        )
    per_caption = sorted(set(counts["images_per_caption"].values()))
    lines += [
        f"| TROHN-Text: kept, all subtypes | {sum(kept.values())} |",
        f"| TROHN-Img: negative captions drawn, in {counts['image_shards']} shards "
        f"| {len(counts['images_per_caption'])} |",
        f"| TROHN-Img: images per drawn caption | {', '.join(map(str, per_caption))} |",
    ]
    histories = counts["histories"]
    negatives = histories["clip_trohn_text"].get("negatives", {})
    lines += [
        f"| fine-tune clip_coco: training pairs | {histories['clip_coco']['samples']} |",
        "| fine-tune clip_trohn_text: training pairs, hard-negative captions "
        f"| {histories['clip_trohn_text']['samples']}, {sum(negatives.values())} |",
        f"| fine-tune clip_trohn_img: generated training pairs | {histories['clip_trohn_img']['samples']} |",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prepare", type=Path, help="make this work directory (the tiny world's release, the small models)")
    p.add_argument("--run", type=Path, help="run the small COCO DAG in this prepared work directory")
    p.add_argument("--limit", type=float, help="stop the run after this many seconds (what ran is still reported)")
    p.add_argument("--summarize", type=Path, help="only report a run made elsewhere: its work directory (benchmarks/)")
    p.add_argument("--log", type=Path, help="with --summarize: that run's Snakemake log")
    p.add_argument("--device", help="with --summarize: the machine it ran on, as its run's report named it")
    p.add_argument("--no-java", action="store_true", help="with --summarize: it ran without METEOR")
    p.add_argument("--hub-archs", action="store_true", help="params.yaml's open_clip configs, random weights")
    p.add_argument("--cores", default="all")
    p.add_argument("--top", type=int, default=12, help="rules listed one by one")
    p.add_argument("--out", type=Path, help="write the Markdown report here")
    p.add_argument("--stages", type=Path, help="only report what each TROHN stage of a finished run produced")
    args = p.parse_args(argv)
    if args.stages:
        text = stages_report(args.stages)
        print(text)
        if args.out:
            write_text(args.out, text)
        return 0
    if not (args.prepare or args.run or args.summarize):
        p.error("give --prepare DIR, --run DIR (or both), or --summarize DIR --log LOG --device NAME")
    if args.prepare:
        prepare(args.prepare)
    text = None
    if args.run:
        if not (args.run / "release").is_dir():
            raise SystemExit(f"{args.run}: not a prepared work directory (no release/): run --prepare first")
        figures = run(args.run, args.hub_archs, args.cores, args.limit)
        text = report(figures, args.hub_archs, args.top, device_name(), java_available())
    elif args.summarize:
        if not (args.log and args.device):
            p.error("--summarize needs --log and --device")
        log = args.log.read_text(encoding="utf-8")
        figures = {**log_figures(log), "cpu": None, "rules": rule_seconds(args.summarize, log)}
        text = report(figures, args.hub_archs, args.top, args.device, not args.no_java)
    if text is not None:
        print(text)
        if args.out:
            write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
