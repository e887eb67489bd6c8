"""`itmbench cxc-figure-data`, `cxc-encoder-sts`, `cxc-figure`, `cxc-table1`: CxC's figures and Table 1 computed
from its rated pairs and the models' scores rather than from metrics.

Computing and drawing are separate commands (and rules): `cxc-figure-data` and `cxc-encoder-sts` write the
numbers of CxC's Figures 3-5 (tables, CSV/Markdown/LaTeX, and Figure 5's sampled pairs), `cxc-figure`
draws a figure from them, so restyling a figure never recomputes it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import FIGURE_SOURCE_LABELS as SOURCE_LABELS
from itmbench.cli._args import FIGURE_SOURCES as SOURCES
from itmbench.cli._args import (
    add_confidence,
    json_arg,
    name_value,
    positive_int,
)

log = logging.getLogger("itmbench")

DATA_FIGURE_TITLES = {
    "figure3": "rated pairs per mean-rating bin, per split, task and sampling",
    "figure4": "items by their number of positive partners, per split, task and item",
    "appendix_figure2": "rated pairs per bin of their raters' sample standard deviation, per split, task and sampling",
}


def cxc_section(values: dict) -> dict:
    """`report.cxc` given as --config, its defaults filled, checked against the params schema."""
    from itmbench.params import validated_section

    return validated_section("report.cxc", values, "report.cxc params (--config)")


def cmd_cxc_figure_data(args: argparse.Namespace) -> None:
    """The numbers of CxC's Figure 3 or 4 from the released rating files or a benchmark's tables, or of the
    appendix's Figure 2 from a world benchmark's per-rater ratings, as a table."""
    from itmbench.errors import InputError
    from itmbench.papers.cxc import canonical
    from itmbench.papers.cxc import released as cxc_released
    from itmbench.papers.cxc import statistics as cxc_statistics
    from itmbench.report.tables import write_table_set

    config = cxc_section(args.config)
    if (args.raw is None) == (args.bench is None):
        raise InputError("give one of --raw (the released files) and --bench (a CxC benchmark folder)")
    if args.raw is not None and args.figure == "appendix_figure2":
        raise InputError(
            "--figure appendix_figure2 needs each rater's rating, which the released files do not hold (one mean "
            "per pair): give --bench, a world CxC benchmark folder"
        )
    if args.raw is not None:
        from itmbench.sources.fetch import STATISTICS_KEYS
        from itmbench.sources.released import check_released_files

        check_released_files(STATISTICS_KEYS["cxc"], args.raw)  # every input present with its md5
        raw = cxc_statistics.read_released_ratings(args.raw)
        thresholds = cxc_released.CxcThresholds()
        ratings = raw  # Fig. 3 counts every released row: each is one rated annotation (267,095 in all)
        pairs = {key: cxc_released.pairs_from_raw(table, key[0], thresholds) for key, table in raw.items()}
        source = "released"
    else:
        ratings, thresholds = cxc_statistics.bench_ratings(canonical.read(args.bench))
        pairs = ratings
        source = args.source
    if args.figure == "figure3":
        table = cxc_statistics.figure3_table(ratings, config["rating_bin_width"])
        row_header = "split, task, sampling"
    elif args.figure == "appendix_figure2":
        try:
            table = cxc_statistics.appendix_figure2_table(ratings, config["std_bin_width"])
        except ValueError as err:
            raise InputError(f"{args.bench}: {err}") from err
        row_header = "split, task, sampling"
    else:
        table = cxc_statistics.figure4_table(pairs, thresholds)
        row_header = "split, task, item"
    printed = args.figure.replace("appendix_", "Appendix ").replace("figure", "Figure ")
    title = f"Crisscrossed Captions {printed} ({SOURCE_LABELS[source]}): "
    title += DATA_FIGURE_TITLES[args.figure]
    write_table_set(table, args.out_csv, title, row_header=row_header, decimals=0)
    log.info("cxc %s (%s): %d cells -> %s", args.figure, source, len(table), args.out_csv)


def cmd_cxc_encoder_sts(args: argparse.Namespace) -> None:
    """CxC Figure 5's numbers: an encoder's cosine against STS on sampled pairs, and the line of best fit."""
    import pandas as pd

    from itmbench.io import output_set, write_text
    from itmbench.papers.cxc import encoders
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

    config = cxc_section(args.config)
    model = config["encoders"]["BoW"]
    scores = read_parquet_checked(args.scores, ("part", "task"), f"the CxC scores of {model} (score-benchmark)")
    points = encoders.figure5_points(encoders.sts_scores(scores, args.scores), config["bow_sample"], config["seed"])
    label = f"BoW ← {model}"
    fit = encoders.figure5_table(points, label, args.n_boot, config["seed"], args.confidence)
    title = (
        f"Crisscrossed Captions Figure 5 ({SOURCE_LABELS[args.source]}): {label} cosine against STS on "
        f"{len(points)} rated caption pairs, the least-squares line and the correlations "
        f"({100 * args.confidence:g}% bootstrap intervals)"
    )
    with output_set(files=[args.out_points], folders=[Path(args.out_csv).parent]):
        write_text(args.out_points, pd.DataFrame(points).to_csv(index=False, lineterminator="\n"))
        write_table(fit, Path(args.out_csv).with_suffix(""), title, row_header="encoder", decimals=3)
    log.info("cxc figure5: %s", fit.set_index("column")["value"].round(3).to_dict())


def cmd_cxc_figure(args: argparse.Namespace) -> None:
    """Draw one of CxC's Figures 3-5 from its computed files (PNG and PDF, byte-deterministic)."""
    from itmbench.io import output_set
    from itmbench.papers.cxc.figures import write_data_figure

    config = cxc_section(args.config)
    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_data_figure(
            args.figure, args.data, out, SOURCE_LABELS[args.source], config["split"], args.points, args.dpi
        )
    log.info("cxc %s: %s", args.figure, [str(p) for p in paths])


def cmd_cxc_table1(args: argparse.Namespace) -> None:
    """CxC Table 1: the printed caption pairs and, beneath each, the world's pair nearest its STS with the
    world encoders' cosines."""
    import pandas as pd

    from itmbench.errors import InputError
    from itmbench.papers.cxc import canonical, encoders
    from itmbench.papers.published import load_published, published_wide
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table_set

    config = cxc_section(args.config)
    given = dict(args.scores)
    chosen = {}
    for printed, model in config["encoders"].items():
        if model not in given:
            raise InputError(f"--scores has no file of {model!r}, the world's {printed}; give --scores {model}=PATH")
        path = given[model]
        scores = read_parquet_checked(path, ("part", "task"), f"the CxC scores of {model} (score-benchmark)")
        chosen[printed] = (model, encoders.sts_scores(scores, path))
    tables = canonical.read(args.bench)
    split = canonical._config_value(tables, "score_split")
    sts = tables["sts"][tables["sts"]["split"] == split]
    captions = read_parquet_checked(args.captions, ("caption_id", "text"), "the source's captions (items)")
    texts = dict(zip(pd.to_numeric(captions["caption_id"]).astype("int64"), captions["text"].astype(str)))
    printed = load_published("cxc")
    printed = printed[printed["table"] == "Table 1"]
    decimals = printed.groupby("column")["decimals"].max().astype(int).to_dict()
    long = encoders.table1_long(published_wide("cxc", "Table 1"), chosen, sts, texts, args.confidence, decimals)
    names = ", ".join(f"{printed} ← {model}" for printed, (model, _) in chosen.items())
    title = (
        f"Crisscrossed Captions Table 1: the printed caption pairs, and beneath each the "
        f"{SOURCE_LABELS[args.source]}'s rated pair (split {split}) nearest its STS, with the cosines of {names}; "
        f"STS interval: {100 * args.confidence:g}% Student t over the pair's raters"
    )
    write_table_set(long, args.out_csv, title, row_header="pair", decimals=2)
    log.info("cxc table1: %d rows -> %s", long["row"].nunique(), args.out_csv)


def add_commands(add, sub) -> None:
    """Register this paper's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("cxc-figure-data", cmd_cxc_figure_data, "the numbers of CxC's Figure 3, 4 or appendix 2, as a table")
    sp.add_argument("--figure", required=True, choices=sorted(DATA_FIGURE_TITLES))
    sp.add_argument("--raw", default=None, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--bench", default=None, help="a CxC benchmark folder (data/<source>/cxc)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `report.cxc` (or some keys) as JSON")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("cxc-encoder-sts", cmd_cxc_encoder_sts, "CxC Figure 5's sampled pairs and line of best fit")
    sp.add_argument("--scores", required=True, help="CxC scores of the model standing for BoW (score-benchmark)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --scores (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `report.cxc` (or some keys) as JSON")
    sp.add_argument("--n-boot", type=positive_int, default=1000, help="bootstrap resamples of the fit")
    add_confidence(sp)
    sp.add_argument("--out-points", required=True, help="CSV of the sampled pairs the figure draws")
    sp.add_argument("--out-csv", required=True, help="the fit table's CSV; .md and .tex are written beside it")
    sp = add("cxc-figure", cmd_cxc_figure, "draw CxC's Figure 3, 4 or 5 from its computed files")
    sp.add_argument("--figure", required=True, choices=("figure3", "figure4", "figure5", "appendix_figure2"))
    sp.add_argument("--data", required=True, help="the figure's table (cxc-figure-data, cxc-encoder-sts)")
    sp.add_argument("--points", default=None, help="Figure 5's sampled pairs (cxc-encoder-sts --out-points)")
    sp.add_argument("--source", required=True, choices=SOURCES, help="whose numbers the figure shows (its title)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `report.cxc` (or some keys) as JSON")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")
    sp = add("cxc-table1", cmd_cxc_table1, "CxC Table 1: printed caption pairs beside the world's")
    sp.add_argument("--bench", required=True, help="the world's CxC benchmark folder (data/world/cxc)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (data/world/items)")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: a model's CxC scores"
    )
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `report.cxc` (or some keys) as JSON")
    add_confidence(sp, "interval level of the STS ratings")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
