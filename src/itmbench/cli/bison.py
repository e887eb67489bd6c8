"""`itmbench bison-table2`, `bison-figure-data`, `bison-figure`: BISON's Table 2 and the numbers and drawings of
its Figures 6 and 14, from its benchmark tables, the source's captions and the models' embedding caches.

Computing and drawing are separate commands (and rules): `bison-figure-data` writes a figure's numbers as a
table (CSV/Markdown/LaTeX), `bison-figure` draws it, so restyling a figure never recomputes it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import json_arg, name_value, open_fraction, positive_int

log = logging.getLogger("itmbench")

SOURCE_LABELS = {"world": "world", "coco": "coco source"}
GROUPS = {"split": "all captions of the split", "bison": "BISON queries"}


def _bison_section(values: dict) -> dict:
    """Some keys of params.yaml `bison` (split, seed) as --config, defaults filled, checked by the schema."""
    from itmbench.params import validated_section

    return validated_section("bison", values, "bison params (--config)")


def _inputs(args: argparse.Namespace, section: dict):
    from itmbench.io import read_parquet_checked
    from itmbench.papers.bison import canonical, queries

    tables = canonical.read(args.bench)
    captions = read_parquet_checked(args.captions, queries.CAPTION_COLUMNS, "the source's captions (items)")
    return tables["annotations"], queries.split_captions(captions, section["split"], str(args.captions))


def cmd_bison_table2(args: argparse.Namespace) -> None:
    """BISON Table 2: the split's and BISON's examples, images and unique captions beside the printed ones."""
    from itmbench.io import output_set
    from itmbench.papers.bison import queries
    from itmbench.papers.published import published_wide
    from itmbench.report.tables import write_table

    section = _bison_section(args.config)
    annotations, captions = _inputs(args, section)
    labels = {"split": f"{args.source} {section['split']} split", "bison": f"{args.source} BISON"}
    long = queries.table2_long(annotations, captions, published_wide("bison", "Table 2"), labels, args.confidence)
    title = (
        f"BISON Table 2 ({SOURCE_LABELS[args.source]}): key statistics of its BISON beside its {section['split']} "
        "split, and the printed columns (Flickr-30K and COCO val are the paper's references). Examples: captions "
        "of the split, triples of BISON; unique captions by text; images: with a caption, or a candidate of a "
        f"triple. The share of images has a {100 * args.confidence:g}% Wilson interval"
    )
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_table(long, Path(args.out_csv).with_suffix(""), title, row_header="statistic", decimals=1)
    log.info("bison table2: %s", long.set_index(["row", "column"])["value"].to_dict())


def cmd_bison_figure_data(args: argparse.Namespace) -> None:
    """The numbers of BISON's Figure 6 (query length, part of speech) or 14 (query choice), as a table."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.bison import queries
    from itmbench.report.tables import write_table
    from itmbench.scoring.embed import EmbeddingCache

    section = _bison_section(args.config)
    annotations, captions = _inputs(args, section)
    level = f"{100 * args.confidence:g}%"
    if args.figure == "figure6":
        if args.embeddings:
            raise InputError("bison-figure-data --figure figure6 reads no embeddings; drop --embeddings")
        long = queries.figure6_long(annotations, captions, GROUPS, args.confidence)
        title = (
            f"BISON Figure 6 ({SOURCE_LABELS[args.source]}): share (%) of the {section['split']} split's captions "
            "and of the BISON queries per length in words and per part of speech (Universal tags read from the "
            "world grammar's lexicon: no NLTK tagger is installed), the mean length and how often the query is "
            f"a longest caption of its positive image; {level} Wilson intervals (means: Student t)"
        )
        row_header = "bin"
    else:
        if not args.embeddings:
            raise InputError("bison-figure-data --figure figure14 needs --embeddings MODEL=PATH for each model")
        caches = {model: EmbeddingCache(path) for model, path in args.embeddings}
        choices = queries.query_choices(annotations, captions, section["seed"])
        long = queries.figure14_long(annotations, choices, caches, dict(args.rows), args.confidence)
        title = (
            f"BISON Figure 14 ({SOURCE_LABELS[args.source]}): BISON accuracy (%) of each model with embeddings "
            "when the query is the BISON query, a random caption of the positive image (seeded per bison_id) or "
            f"its longest (most words; ties: smallest caption id); a tie is wrong; {level} Wilson intervals"
        )
        row_header = "model"
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_table(long, Path(args.out_csv).with_suffix(""), title, row_header=row_header, decimals=2)
    log.info("bison %s: %d cells -> %s", args.figure, len(long), args.out_csv)


def cmd_bison_figure(args: argparse.Namespace) -> None:
    """Draw BISON's Figure 6 or 14 from its computed table (PNG and PDF)."""
    from itmbench.io import output_set
    from itmbench.papers.bison.figures import write_data_figure

    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_data_figure(args.figure, args.data, out, SOURCE_LABELS[args.source], args.dpi)
    log.info("bison %s: %s", args.figure, [str(p) for p in paths])


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--bench", required=True, help="a BISON benchmark folder (data/<source>/bison)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (data/<source>/items)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split, seed) as JSON")
    sp.add_argument("--confidence", type=open_fraction, default=0.95, help="interval level")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("bison-table2", cmd_bison_table2, "BISON Table 2: its key statistics beside the printed ones")
    _common(sp)
    sp = add("bison-figure-data", cmd_bison_figure_data, "the numbers of BISON's Figure 6 or 14, as a table")
    sp.add_argument("--figure", required=True, choices=("figure6", "figure14"))
    _common(sp)
    sp.add_argument(
        "--embeddings", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: a model's cache"
    )
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp = add("bison-figure", cmd_bison_figure, "draw BISON's Figure 6 or 14 from its computed table")
    sp.add_argument("--figure", required=True, choices=("figure6", "figure14"))
    sp.add_argument("--data", required=True, help="the figure's table (bison-figure-data)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")
