"""`itmbench fetch`, `released-statistics`, `released-paper-tables`, `build-coco-benchmark`, `export-release`:
released files (and the world written as them)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import add_registry_option, json_arg
from itmbench.papers.registry import PAPERS

# sources.release_format.IMAGE_FORMATS (not imported: building the parser imports neither numpy nor pandas)
IMAGE_FORMATS = ("png", "jpeg")

log = logging.getLogger("itmbench")


def cmd_fetch(args: argparse.Namespace) -> None:
    """Fetch one declared released file through DVC (URL or mirror), md5-checked, atomically."""
    from itmbench.sources.fetch import fetch_released

    md5 = fetch_released(args.key, args.out, args.mirror or None)
    log.info("fetched %s -> %s (md5 %s)", args.key, args.out, md5)


def cmd_released_statistics(args: argparse.Namespace) -> None:
    """One paper's dataset statistics from the released files, beside the published numbers."""
    from itmbench.io import output_set
    from itmbench.papers.statistics import statistics_from_mirror
    from itmbench.report.tables import write_comparison_table
    from itmbench.sources.fetch import STATISTICS_KEYS
    from itmbench.sources.released import check_released_files

    check_released_files(STATISTICS_KEYS[args.paper], args.raw)  # every input present with its md5
    df = statistics_from_mirror(args.paper, args.raw)
    title = f"{args.paper}: dataset statistics regenerated from the released files vs published"
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_comparison_table(df, Path(args.out_csv).with_suffix(""), title)
    log.info("%s statistics: %s", args.paper, df["status"].value_counts().to_dict())


def cmd_released_paper_tables(args: argparse.Namespace) -> None:
    """The paper tables, figure and claims that follow from released files, beside the published values: each
    paper's own (its package's `released_tables`, the registry's `released_outputs`), then the claims."""
    import pandas as pd

    from itmbench.io import output_set
    from itmbench.papers.claims import claims_table, published_results, released_results, write_claims_table
    from itmbench.sources.fetch import PAPER_TABLE_KEYS
    from itmbench.sources.released import check_released_files

    check_released_files(PAPER_TABLE_KEYS, args.raw)  # every input present with its md5 before any output
    out = Path(args.out_dir)
    with output_set(folders=[out]):  # its tables, figure and claims together, or none when anything fails
        for paper in PAPERS.values():
            if paper.released_outputs:
                paper.part("released_tables").write(args.raw, out)
        published, released = claims_table(published_results()), claims_table(released_results(args.raw))
        claims = pd.concat([published, released], ignore_index=True)
        title = "Claims on the published and the released numbers"
        write_claims_table(claims, out / "tables" / "claims" / "claims", title)


def cmd_build_coco_benchmark(args: argparse.Namespace) -> None:
    """Build one benchmark of the coco source from its released files and the COCO items."""
    from itmbench.io import output_set
    from itmbench.sources.coco_registry import build_coco_benchmark

    with output_set(folders=[args.out]):  # the tables and the added items together or not at all
        released = build_coco_benchmark(args.name, args.raw, args.items, args.config, args.out)
    log.info("coco %s: %s; %s", args.name, {k: len(v) for k, v in released.tables.items()}, released.log)


def cmd_export_release(args: argparse.Namespace) -> None:
    """The world as a COCO-format release: every released file the coco source reads, with its md5 list and overlay."""
    from itmbench.sources.export import export_release, read_world_benchmarks
    from itmbench.sources.release_format import Release, WorldIds
    from itmbench.world.generate import read_world

    world = read_world(Path(args.world) / "items")
    benchmarks = read_world_benchmarks(args.world)
    release = Release(WorldIds.of(world.image_table), world.images, args.image_format)
    summary = export_release(world.image_table, world.caption_table, benchmarks, release, args.out)
    log.info("export-release: %d files, %d bytes, records %s", summary["files"], summary["bytes"], summary["records"])


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("fetch", cmd_fetch, "fetch a released file through DVC, md5-checked")
    sp.add_argument("--key", required=True, help="key in src/itmbench/sources/released.yaml")
    sp.add_argument("--out", required=True)
    sp.add_argument("--mirror", default=None, help="mirror folder or base URL (<host>/<path> layout)")
    add_registry_option(sp)
    sp = add("released-statistics", cmd_released_statistics, "dataset statistics from the released files")
    sp.add_argument("--paper", required=True, choices=[n for n, p in PAPERS.items() if p.has_statistics])
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--out-csv", required=True)
    add_registry_option(sp)
    sp = add("released-paper-tables", cmd_released_paper_tables, "paper tables and figures from released files")
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--out-dir", required=True)
    add_registry_option(sp)
    sp = add("build-coco-benchmark", cmd_build_coco_benchmark, "a benchmark of the coco source from its released files")
    sp.add_argument("--name", required=True, help="a benchmark of the coco source (its registry entry's coco_files)")
    sp.add_argument("--raw", required=True, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--items", required=True, help="the COCO items folder (itmbench coco-items)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `coco_benchmarks.<name>` as JSON")
    sp.add_argument("--out", required=True)
    add_registry_option(sp)
    sp = add("export-release", cmd_export_release, "the world written as the released files (a COCO-format mirror)")
    sp.add_argument("--world", required=True, help="the world's data folder (data/world: items/ and each benchmark's)")
    sp.add_argument("--out", required=True, help="the release: <host>/<url path> per file, mirror.md5, released.yaml")
    sp.add_argument("--image-format", choices=IMAGE_FORMATS, default="png", help="png (lossless) or jpeg (COCO's)")
