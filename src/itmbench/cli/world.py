"""`itmbench world`, `build-benchmark`, `audit-benchmark`, `world-calibration`: the world and its benchmarks."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import (
    add_registry_option,
    json_arg,
    name_value,
)
from itmbench.errors import InputError
from itmbench.papers.registry import BENCHMARKS
from itmbench.params import make_config

log = logging.getLogger("itmbench")

SPLITS = ("train", "val", "test")  # the world's splits


def cmd_world(args: argparse.Namespace) -> None:
    """Generate the world's items."""
    from itmbench.io import output_set
    from itmbench.world.generate import WorldConfig, generate_world, write_world

    cfg = make_config(WorldConfig, args.config)
    world = generate_world(cfg)
    with output_set(folders=[args.out]):  # the folder's files together or not at all
        write_world(world, args.out)
    log.info("world: %d images, %d captions -> %s", len(world.image_table), len(world.caption_table), args.out)


def cmd_build_benchmark(args: argparse.Namespace) -> None:
    """Build one world benchmark by its paper's procedure (canonical tables + construction stages)."""
    from itmbench.io import output_set
    from itmbench.papers.registry import benchmark
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    world_cfg = make_config(WorldConfig, args.world)
    entry.config(args.config, world_cfg)  # the params are checked before any file is read
    annotators = dict(args.annotator_embeddings)
    if annotators and not entry.takes_annotator_embeddings:
        raise InputError(f"build-benchmark --annotator-embeddings: benchmark {args.name!r} takes no annotators")
    for name, path in annotators.items():
        if not Path(path).is_file():
            raise InputError(f"{path}: no such embeddings file (annotator {name!r}); expected an `itmbench embed` npz")
    inputs = dict(args.input)
    unknown = sorted(set(inputs) - set(entry.inputs))
    if unknown:
        raise InputError(f"build-benchmark --input: benchmark {args.name!r} takes {list(entry.inputs)}, not {unknown}")
    inputs = {name: read_json_input(path, name) for name, path in inputs.items()}
    deps = {name: benchmark(name).part("canonical").read(path) for name, path in args.dep}
    tables = entry.build(read_world(args.items), args.config, world_cfg, deps, annotators, inputs)
    with output_set(folders=[args.out]):  # the folder's tables (and added items) together or not at all
        entry.part("canonical").write(tables, args.out)
    log.info("%s: %s", args.name, {k: len(v) for k, v in tables.items()})


def read_json_input(path: str, name: str) -> dict:
    """A build's JSON input (an object), or InputError naming the file."""
    import json

    try:
        value = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: cannot read the build input {name!r} ({e}); expected a JSON object") from e
    if not isinstance(value, dict):
        raise InputError(f"{path}: the build input {name!r} is a {type(value).__name__}; expected a JSON object")
    return value


def cmd_audit_benchmark(args: argparse.Namespace) -> None:
    """The audit table of one world benchmark against the complete truth."""
    from itmbench.papers.registry import benchmark
    from itmbench.report.tables import write_table_set
    from itmbench.world.generate import WorldConfig, read_world

    entry = benchmark(args.name)
    world_cfg = make_config(WorldConfig, args.world)
    entry.config(args.config, world_cfg)  # the params are checked before any file is read
    tables = entry.part("canonical").read(args.bench)
    audit = entry.audit(read_world(args.items), tables, args.config, world_cfg)
    title = f"{args.name} in the world: audit against the complete truth (95% intervals)"
    write_table_set(audit, args.out_csv, title, row_header="audit", decimals=2)


def cmd_world_calibration(args: argparse.Namespace) -> None:
    """The world's statistics beside COCO's (released files under --raw where present, else as printed)."""
    from itmbench.papers.registry import benchmark
    from itmbench.report.tables import write_table_set
    from itmbench.world.calibration import calibration
    from itmbench.world.generate import WorldConfig, read_world

    cfg = make_config(WorldConfig, args.world)
    benches = {name: benchmark(name).part("canonical").read(path) for name, path in args.bench}
    table = calibration(read_world(args.items), cfg.relation_margin, cfg.max_objects, benches, args.raw)
    title = "The world calibrated to COCO: each statistic, its COCO value and source, the world's (95% interval)"
    write_table_set(table, args.out_csv, title, row_header="statistic", decimals=2)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("world", cmd_world, "generate the world's items")
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `world` section as JSON")
    sp.add_argument("--out", required=True)
    sp = add("build-benchmark", cmd_build_benchmark, "build a world benchmark by its paper's procedure")
    sp.add_argument("--name", required=True, choices=sorted(BENCHMARKS))
    sp.add_argument("--items", required=True)
    sp.add_argument("--world", type=json_arg, required=True)
    sp.add_argument("--config", type=json_arg, required=True, help="the benchmark's params.yaml section as JSON")
    sp.add_argument(
        "--dep",
        action="append",
        type=name_value("DIR", BENCHMARKS),
        default=[],
        help="NAME=DIR of a benchmark this one builds on",
    )
    sp.add_argument(
        "--annotator-embeddings",
        action="append",
        type=name_value("NPZ"),
        default=[],
        help="MODEL=NPZ: a model's embeddings file, whose model proposes candidates (a build with machine annotators)",
    )
    sp.add_argument(
        "--input",
        action="append",
        type=name_value("JSON"),
        default=[],
        help="NAME=JSON: a file a rule before the build wrote (its registry entry's inputs, e.g. pv_choice)",
    )
    sp.add_argument("--out", required=True)
    sp = add("audit-benchmark", cmd_audit_benchmark, "audit a world benchmark against the truth")
    sp.add_argument("--name", required=True, choices=sorted(BENCHMARKS))
    sp.add_argument("--items", required=True)
    sp.add_argument("--bench", required=True)
    sp.add_argument("--world", type=json_arg, required=True)
    sp.add_argument("--config", type=json_arg, required=True)
    sp.add_argument("--out-csv", required=True)
    sp = add("world-calibration", cmd_world_calibration, "the world's statistics beside COCO's")
    sp.add_argument("--items", required=True)
    sp.add_argument("--world", type=json_arg, required=True, help="params.yaml `world` section as JSON")
    sp.add_argument(
        "--bench", action="append", type=name_value("DIR", BENCHMARKS), default=[], help="NAME=DIR of a built benchmark"
    )
    sp.add_argument("--raw", default=None, help="folder of the released files (a mirror's layout); absent: as printed")
    sp.add_argument("--out-csv", required=True)
    add_registry_option(sp)
