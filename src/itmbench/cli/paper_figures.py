"""`itmbench cxc-figure-data`, `cxc-encoder-sts`, `cxc-figure`, `cxc-table1`, `mcic-lambda-search`,
`eccv-appendix-e`, `eccv-annotator-ranks`, `eccv-positives-per-query`, `eccv-table2`,
`eccv-annotator-similarity`, `eccv-answer-shares`, `eccv-figure`, `bivlc-figure4-data`, `bivlc-figure4`: the
papers' figures and tables computed from their rated pairs and the models' scores rather than from metrics.

Computing and drawing are separate commands (and rules): `cxc-figure-data` and `cxc-encoder-sts` write the
numbers of CxC's Figures 3-5 (tables, CSV/Markdown/LaTeX, and Figure 5's sampled pairs), `cxc-figure`
draws a figure from them, so restyling a figure never recomputes it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import (
    add_bootstrap_options,
    add_confidence,
    json_arg,
    name_value,
    positive_int,
)

log = logging.getLogger("itmbench")

SOURCES = ("released", "world", "coco")  # whose numbers a figure shows: the released files, or a run's source
SOURCE_LABELS = {"released": "released files", "world": "world", "coco": "coco source"}
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
    from itmbench.io import output_set
    from itmbench.papers.cxc import canonical
    from itmbench.papers.cxc import released as cxc_released
    from itmbench.papers.cxc import statistics as cxc_statistics
    from itmbench.report.tables import write_table

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
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_table(table, Path(args.out_csv).with_suffix(""), title, row_header=row_header, decimals=0)
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
    from itmbench.io import output_set
    from itmbench.papers.cxc import canonical, encoders
    from itmbench.papers.published import load_published, published_wide
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

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
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_table(long, Path(args.out_csv).with_suffix(""), title, row_header="pair", decimals=2)
    log.info("cxc table1: %d rows -> %s", long["row"].nunique(), args.out_csv)


def cmd_mcic_lambda_search(args: argparse.Namespace) -> None:
    """MCIC's OPTIMIZE-SCORE: the wmgs-rank of each lambda of the grid and the chosen one, from the world's build."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.mcic import canonical
    from itmbench.papers.mcic.tables import LAMBDA_SEARCH_TITLE, lambda_search_long
    from itmbench.report.tables import write_table

    path = Path(args.bench) / "lambda_search.parquet"
    if not path.exists():
        raise InputError(f"{path}: missing; expected the lambda search of an MCIC benchmark built in the world")
    search = canonical.read(args.bench)["lambda_search"]
    if int(search["chosen"].sum()) != 1:
        raise InputError(f"{path}: {int(search['chosen'].sum())} rows marked chosen; expected exactly one")
    long = lambda_search_long(search, args.confidence)
    title = f"{LAMBDA_SEARCH_TITLE}; wmgs-rank interval: {100 * args.confidence:g}% normal over captions"
    with output_set(folders=[Path(args.out_csv).parent]):  # .csv, .md, .tex together or not at all
        write_table(long, Path(args.out_csv).with_suffix(""), title, row_header="lambda", decimals=2)
    chosen = float(search.loc[search["chosen"], "lambda"].iloc[0])
    log.info("mcic lambda search: %d grid points, chosen lambda %g -> %s", len(search), chosen, args.out_csv)


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
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
    sp = add("mcic-lambda-search", cmd_mcic_lambda_search, "MCIC's OPTIMIZE-SCORE: wmgs-rank per lambda, as a table")
    sp.add_argument("--bench", required=True, help="the world's MCIC benchmark folder (data/world/mcic)")
    add_confidence(sp, "interval level of the wmgs-rank")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
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
    add_eccv_commands(add)
    add_bivlc_commands(add)


def cmd_eccv_appendix_e(args: argparse.Namespace) -> None:
    """ECCV Table E.1 and Figure E.2's numbers: the benchmark rebuilt with each subset of its annotators, scored."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import bias, canonical
    from itmbench.papers.published import load_published
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

    tables = canonical.read(args.bench)
    if "annotations" not in tables:
        raise InputError(f"{args.bench}: no annotations table; expected an ECCV benchmark built in the world")
    scores = {
        model: read_parquet_checked(path, ("direction", "query_id", "ranked_ids"), f"the ECCV scores of {model}")
        for model, path in args.scores
    }
    if len(scores) < 1:
        raise InputError("eccv-appendix-e: no --scores MODEL=PATH given; expected the evaluated models' ECCV scores")
    names = list(args.annotators) or list(dict.fromkeys(tables["annotations"]["annotator"].astype(str)))
    try:
        cells, by_size = bias.annotator_bias_analysis(
            tables["annotations"], tables["queries"], scores, names, args.n_boot, args.seed, args.confidence
        )
    except (ValueError, KeyError) as err:
        raise InputError(f"{args.bench}: {err}") from err
    level = f"{100 * args.confidence:g}% bootstrap intervals over queries"
    e1 = Path(args.out_table)
    e2 = Path(args.out_bias)
    with output_set(files=[p.with_suffix(x) for p in (e1, e2) for x in (".csv", ".md", ".tex")]):
        write_table(
            bias.table_e1_long(cells, names, load_published("eccv")),
            e1.with_suffix(""),
            f"ECCV Caption Table E.1 ({args.source}): graded R@1 and R-Precision of each model (rows) on the "
            f"crowd-verified positives proposed by one annotator or by all (columns), x100, {level}; the printed "
            "Table E.1 (the paper's five models) below",
            row_header="model",
        )
        write_table(
            bias.figure_e2_long(by_size),
            e2.with_suffix(""),
            f"ECCV Caption Figure E.2 ({args.source}): bias B, self-bias and non-self-bias (Eq. E.5, points) per "
            f"number of annotators |Θ|, each the mean over every subset of that size, {level}",
            row_header="bias",
            decimals=2,
        )
    log.info("eccv appendix E: %d cells, %d bias rows", len(cells), len(by_size))


def cmd_eccv_annotator_ranks(args: argparse.Namespace) -> None:
    """ECCV Figure E.3's numbers (each image-text model's rank by COCO R@1 and by ECCV mAP@R, annotators marked)
    and, with --out-ranks, Figure 5's (every model's rank under each metric)."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import bias
    from itmbench.papers.eccv.tables import eccv_table5_models, model_ranks_long
    from itmbench.papers.world_cells import read_world_metrics
    from itmbench.report.tables import write_table

    metrics = read_world_metrics(args.metrics)
    models = eccv_table5_models(metrics, args.kinds)
    docs = metrics.get("eccv", {})
    if len(models) < 2:
        raise InputError(
            f"eccv-annotator-ranks: {len(models)} image-text models with ECCV metrics; expected two or more"
        )
    r1_name = "coco_1k_r1" if all("coco_1k_r1" in docs[m]["metrics"] for m in models) else "original_r1"
    r1_label = "COCO 1K R@1" if r1_name == "coco_1k_r1" else "COCO 5K R@1"
    values = {
        m: {"r1": docs[m]["metrics"][r1_name]["value"], "map_at_r": docs[m]["metrics"]["eccv_map_at_r"]["value"]}
        for m in models
    }
    out = Path(args.out_csv)
    ranks = Path(args.out_ranks) if args.out_ranks else None
    files = [p.with_suffix(x) for p in (out, ranks) if p is not None for x in (".csv", ".md", ".tex")]
    with output_set(files=files):
        if ranks is not None:
            write_table(
                model_ranks_long(metrics, args.kinds),
                ranks.with_suffix(""),
                f"ECCV Caption Figure 5 ({args.source}): each image-text model's rank (1 = best) under each metric",
                row_header="model",
                decimals=0,
            )
        write_table(
            bias.annotator_ranks(values, args.annotators, r1_label),
            out.with_suffix(""),
            f"ECCV Caption Figure E.3 ({args.source}): each image-text model's {r1_label} and ECCV mAP@R and its rank "
            f"by each (1 = best); the annotators: {', '.join(args.annotators)}",
            row_header="model",
            decimals=2,
        )


def cmd_eccv_positives_per_query(args: argparse.Namespace) -> None:
    """ECCV Figure 3(a)'s numbers: queries by their number of positives under each set of positives, from a
    benchmark's tables (--bench) or the released association files (--raw; the queries are the eccv files' keys)."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import canonical
    from itmbench.papers.eccv.tables import positives_per_query_long
    from itmbench.report.tables import write_table

    if (args.raw is None) == (args.bench is None):
        raise InputError("give one of --raw (the released files) and --bench (an ECCV benchmark folder)")
    if args.raw is not None:  # every file read (md5 and key count checked) before any output is written
        tables, label, where = canonical.read_released(args.raw), SOURCE_LABELS["released"], args.raw
    else:
        tables, label, where = canonical.read(args.bench), args.source, args.bench
    try:
        long = positives_per_query_long(tables)
    except ValueError as err:
        raise InputError(f"{where}: {err}") from err
    out = Path(args.out_csv)
    with output_set(files=[out.with_suffix(x) for x in (".csv", ".md", ".tex")]):
        write_table(
            long,
            out.with_suffix(""),
            f"ECCV Caption Figure 3(a) ({label}): ECCV queries (cells) by their number of positives "
            "(rows) under each set of positives and direction (columns)",
            row_header="positives",
            decimals=0,
        )


def cmd_eccv_table2(args: argparse.Namespace) -> None:
    """ECCV Table 2 as section 3.3 defines it: the COCO, CxC and PM positives measured by the human-verified pairs."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import canonical, table2
    from itmbench.papers.eccv.config import EccvConfig
    from itmbench.papers.published import load_published
    from itmbench.params import make_config
    from itmbench.report.tables import write_table

    cfg = make_config(EccvConfig, args.config)
    try:
        per_query = table2.table2_per_query(canonical.read(args.bench), cfg.positive_answers, cfg.pm_zeta)
    except ValueError as err:
        raise InputError(f"{args.bench}: {err}") from err
    cells = table2.table2_cells(per_query, args.n_boot, args.seed, args.confidence)
    out = Path(args.out_csv)
    title = table2.table2_title(args.source, cfg.top_k, cfg.positive_answers, args.confidence)
    with output_set(files=[out.with_suffix(x) for x in (".csv", ".md", ".tex")]):
        write_table(table2.table2_long(cells, load_published("eccv")), out.with_suffix(""), title, "dataset", 1)
    log.info("eccv table 2: %s", cells.set_index(["label", "direction", "measure"])["value"].round(2).to_dict())


def cmd_eccv_annotator_similarity(args: argparse.Namespace) -> None:
    """ECCV Table A.1: Kendall's tau-b between the annotators' top-K lists and the average rank of one's top-1 in
    another's list, over every query of the split, from the annotators' embedding caches (numpy, no model run)."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import annotators, canonical
    from itmbench.papers.published import load_published
    from itmbench.params import validated_section
    from itmbench.report.tables import write_table
    from itmbench.scoring.embed import EmbeddingCache

    config = validated_section("report.eccv", args.config, "report.eccv params (--config)")
    if len(args.embeddings) < 2:
        raise InputError(
            f"eccv-annotator-similarity: {len(args.embeddings)} --embeddings MODEL=PATH given; expected two or "
            "more annotators' embedding caches"
        )
    items = canonical.read(args.bench)["items"]
    caches = {model: EmbeddingCache(path) for model, path in args.embeddings}
    cells = {}
    for d_index, direction in enumerate(annotators.SIMILARITY_DIRECTIONS):
        try:
            tops, n_gallery = annotators.annotator_top_lists(caches, items, direction, config["similarity_top_k"])
            cells[direction] = annotators.similarity_of_lists(
                tops, n_gallery, args.n_boot, args.seed, args.confidence, d_index
            )
        except (ValueError, KeyError) as err:
            raise InputError(f"{args.bench}: {err}") from err
    out = Path(args.out_csv)
    k = config["similarity_top_k"]
    with output_set(files=[out.with_suffix(x) for x in (".csv", ".md", ".tex")]):
        write_table(
            annotators.table_a1_long(cells, load_published("eccv")),
            out.with_suffix(""),
            f"ECCV Caption Table A.1 ({args.source}): similarity of the annotators' top-{k} lists over every query of "
            f"the split, (a) Kendall's tau-b over the union of two lists (an item a list lacks ranks {k + 1}), (b) the "
            f"rank of the row annotator's top-1 in the column annotator's list ({k + 1} if absent); means over the "
            f"queries, {100 * args.confidence:g}% bootstrap intervals over queries; the printed Table A.1 "
            "(the paper's five annotators, text-to-image) below",
            row_header="annotator",
            decimals=3,
        )
    log.info("eccv table A.1: %s", {d: len(c) for d, c in cells.items()})


def cmd_eccv_answer_shares(args: argparse.Namespace) -> None:
    """ECCV Table B.2: each annotator's proposals by rank, the share of each simulated worker answer."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv import annotators, canonical
    from itmbench.papers.published import load_published
    from itmbench.report.tables import write_table

    tables = canonical.read(args.bench)
    if "annotations" not in tables:
        raise InputError(f"{args.bench}: no annotations table; expected an ECCV benchmark built in the world")
    names = list(args.annotators) or list(dict.fromkeys(tables["annotations"]["annotator"].astype(str)))
    try:
        cells = annotators.answer_shares(tables["annotations"], names, args.n_boot, args.seed, args.confidence)
    except ValueError as err:
        raise InputError(f"{args.bench / 'annotations.parquet'}: {err}") from err
    out = Path(args.out_csv)
    with output_set(files=[out.with_suffix(x) for x in (".csv", ".md", ".tex")]):
        write_table(
            annotators.table_b2_long(cells, load_published("eccv")),
            out.with_suffix(""),
            f"ECCV Caption Table B.2 ({args.source}): the share (%) of each simulated worker answer among the pairs "
            "each annotator proposed at each rank, and over all its proposals (Avg.), both directions pooled, "
            f"{100 * args.confidence:g}% bootstrap intervals over queries; the printed Table B.2 (the paper's five "
            "annotators; Yes, Weak yes, Weak no, No as the world's answers) below",
            row_header="annotator: rank",
            decimals=1,
        )
    log.info("eccv table B.2: %d cells", len(cells))


def cmd_eccv_figure(args: argparse.Namespace) -> None:
    """Draw ECCV's Figure 3(a), 5, E.2 or E.3 from its computed table (PNG and PDF, byte-deterministic)."""
    from itmbench.io import output_set
    from itmbench.papers.eccv.figures import write_appendix_figure

    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_appendix_figure(args.figure, args.data, out, SOURCE_LABELS[args.source], args.dpi)
    log.info("eccv %s: %s", args.figure, [str(p) for p in paths])


def add_eccv_commands(add) -> None:
    """ECCV's appendix commands (A.2, B.3, E) and Figure 3(a)."""
    from itmbench.cli.report import model_kinds

    sp = add("eccv-appendix-e", cmd_eccv_appendix_e, "ECCV Table E.1 and Figure E.2's numbers (annotator subsets)")
    sp.add_argument("--bench", required=True, help="the world's ECCV benchmark folder (data/world/eccv)")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: a model's ECCV scores"
    )
    sp.add_argument(
        "--annotator", dest="annotators", action="append", default=[], help="an annotator's name (repeat, in order)"
    )
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    add_bootstrap_options(sp)
    sp.add_argument("--out-table", required=True, help="Table E.1's CSV; .md and .tex are written beside it")
    sp.add_argument("--out-bias", required=True, help="Figure E.2's table CSV; .md and .tex are written beside it")
    sp = add("eccv-annotator-ranks", cmd_eccv_annotator_ranks, "ECCV Figure E.3's numbers (model ranks)")
    sp.add_argument("metrics", nargs="+", help="the ECCV metrics JSONs (results/<source>/metrics/eccv/<model>.json)")
    sp.add_argument("--kinds", type=model_kinds, default={}, help='{"model": "contrastive|chance|...", ...}')
    sp.add_argument("--annotator", dest="annotators", action="append", default=[], help="an annotator model (repeat)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of the metrics (titles)")
    sp.add_argument("--out-csv", required=True, help="Figure E.3's table CSV; .md and .tex are written beside it")
    sp.add_argument("--out-ranks", default=None, help="Figure 5's table CSV (the models' ranks under each metric)")
    sp = add("eccv-positives-per-query", cmd_eccv_positives_per_query, "ECCV Figure 3(a)'s numbers")
    sp.add_argument("--bench", default=None, help="an ECCV benchmark folder (data/<source>/eccv)")
    sp.add_argument("--raw", default=None, help="folder of fetched files in the mirror layout (data/raw)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("eccv-table2", cmd_eccv_table2, "ECCV Table 2: COCO, CxC and PM positives by the human-verified pairs")
    sp.add_argument("--bench", required=True, help="the world's ECCV benchmark folder (data/world/eccv)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `eccv` (or some keys) as JSON")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    add_bootstrap_options(sp)
    sp.add_argument("--out-csv", required=True, help="Table 2's CSV; .md and .tex are written beside it")
    sp = add("eccv-annotator-similarity", cmd_eccv_annotator_similarity, "ECCV Table A.1 (annotator similarity)")
    sp.add_argument("--bench", required=True, type=Path, help="the world's ECCV benchmark folder (data/world/eccv)")
    sp.add_argument(
        "--embeddings",
        type=name_value("PATH"),
        action="append",
        default=[],
        help="MODEL=PATH: an annotator's embedding cache (results/world/embeddings/<model>/items.npz; repeat)",
    )
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `report.eccv` (or some keys) as JSON")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    add_bootstrap_options(sp)
    sp.add_argument("--out-csv", required=True, help="Table A.1's CSV; .md and .tex are written beside it")
    sp = add("eccv-answer-shares", cmd_eccv_answer_shares, "ECCV Table B.2 (answers per annotator and rank)")
    sp.add_argument("--bench", required=True, type=Path, help="the world's ECCV benchmark folder (data/world/eccv)")
    sp.add_argument(
        "--annotator", dest="annotators", action="append", default=[], help="an annotator's name (repeat, in order)"
    )
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --bench (titles)")
    add_bootstrap_options(sp)
    sp.add_argument("--out-csv", required=True, help="Table B.2's CSV; .md and .tex are written beside it")
    sp = add("eccv-figure", cmd_eccv_figure, "draw ECCV's Figure 3(a), 5, E.2 or E.3 from its computed table")
    sp.add_argument("--figure", required=True, choices=("figure3", "figure5", "figureE2", "figureE3"))
    sp.add_argument("--data", required=True, help="the figure's table (eccv-appendix-e, eccv-annotator-ranks)")
    sp.add_argument("--source", required=True, choices=SOURCES, help="whose numbers the figure shows (its title)")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")


def cmd_bivlc_figure4_data(args: argparse.Namespace) -> None:
    """BiVLC Figure 4's numbers: per model, the distribution of the positive caption's and image's margins."""
    from itmbench.cli._args import score_section
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.bivlc.margins import MARGINS, SCORE_COLUMNS, figure4_long
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

    config = validated_section("report.bivlc_figure4", args.config, "report.bivlc_figure4 params (--config)")
    score = score_section(args.score)
    if not args.scores:
        raise InputError("bivlc-figure4-data needs --scores MODEL=PATH for each model")
    scores = {m: read_parquet_checked(p, SCORE_COLUMNS, f"the BiVLC scores of {m}") for m, p in args.scores}
    long = figure4_long(scores, dict(args.rows), config["bins"], score["n_boot"], score["seed"], score["confidence"])
    level = f"{100 * score['confidence']:g}%"
    title = (
        f"BiVLC Figure 4 ({SOURCE_LABELS[args.source]}): per model and BiVLC instance, the margins "
        + "; ".join(f"{name}: {label}" for name, (label, _, _) in MARGINS.items())
        + f". Mean and median with {level} percentile bootstrap intervals ({score['n_boot']} resamples, seed "
        f"{score['seed']}); share > 0 and the share of instances per histogram bin ({config['bins']} equal bins "
        f"over the margin's range pooled over the models; edges in the CSV's bin_lo and bin_hi) with {level} "
        "Wilson intervals"
    )
    out = Path(args.out_csv)
    with output_set(folders=[out.parent]):  # .csv, .md, .tex together or not at all
        write_table(long, out.with_suffix(""), title, row_header="statistic", decimals=3)
    summary = long[long["statistic"] != "bin"].set_index(["column", "statistic"])["value"].round(4).to_dict()
    log.info("bivlc figure4: %s", summary)


def cmd_bivlc_figure4(args: argparse.Namespace) -> None:
    """Draw BiVLC Figure 4 from its computed table (PNG and PDF, byte-deterministic)."""
    from itmbench.io import output_set
    from itmbench.papers.bivlc.figures import write_figure4

    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_figure4(args.data, out, SOURCE_LABELS[args.source], args.dpi)
    log.info("bivlc figure4: %s", [str(p) for p in paths])


def add_bivlc_commands(add) -> None:
    """BiVLC's Figure 4 commands."""
    sp = add("bivlc-figure4-data", cmd_bivlc_figure4_data, "BiVLC Figure 4's numbers: the positive pair's margins")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: its BiVLC scores"
    )
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="the source of --scores (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml report.bivlc_figure4 as JSON")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (n_boot, seed, confidence) as JSON")
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("bivlc-figure4", cmd_bivlc_figure4, "draw BiVLC Figure 4 from its computed table")
    sp.add_argument("--data", required=True, help="the figure's table (bivlc-figure4-data)")
    sp.add_argument("--source", choices=SOURCES[1:], default="world", help="whose numbers the figure shows")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")
