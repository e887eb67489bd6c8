"""`itmbench eccv-appendix-e`, `eccv-annotator-ranks`, `eccv-positives-per-query`, `eccv-table2`,
`eccv-annotator-similarity`, `eccv-answer-shares`, `eccv-figure`, `eccv-rank-tau`: ECCV Caption's figures and
tables computed from its annotations and the models' scores rather than from metrics.

`eccv-rank-tau` gives ECCV's ranking correlations (Table 5's Kendall tau-b) and their differences, with
bootstrap intervals over queries (`itmbench.papers.eccv.rank_tau`), from the per-query score files of
`itmbench score-benchmark`, as `itmbench gallery-paired` does; the claims read its CSV
(results/<source>/tables/eccv/rank_tau.csv).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import FIGURE_SOURCE_LABELS as SOURCE_LABELS
from itmbench.cli._args import FIGURE_SOURCES as SOURCES
from itmbench.cli._args import (
    add_bootstrap_options,
    json_arg,
    name_value,
    positive_int,
    score_section,
)
from itmbench.cli.gallery_paired import query_values, read_scores

log = logging.getLogger("itmbench")


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


def cmd_eccv_rank_tau(args: argparse.Namespace) -> None:
    """ECCV's Kendall tau-b between metric rankings and their differences, with bootstrap intervals over queries."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.papers.eccv.rank_tau import rank_tau_table, write_rank_tau

    config = score_section(args.config)
    values = query_values("eccv", read_scores(dict(args.scores)))
    try:
        table = rank_tau_table(values, n_boot=config["n_boot"], seed=config["seed"], confidence=config["confidence"])
    except ValueError as exc:
        raise InputError(f"--scores: {exc}") from exc
    prefix = Path(args.out_csv).with_suffix("")
    title = "ECCV Caption: Kendall tau-b between metric rankings, bootstrap intervals over queries"
    with output_set(files=[prefix.with_suffix(s) for s in (".csv", ".md", ".tex")]):  # together or not at all
        write_rank_tau(table, prefix, title)
    log.info("eccv: %d ranking correlations -> %s", len(table), args.out_csv)


def add_commands(add, sub) -> None:
    """Register this paper's subcommands: its appendix's (A.2, B.3, E), Figure 3(a) and Table 5's ranking
    correlations (`add(name, func, help)` returns the subparser)."""
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
    sp = add("eccv-rank-tau", cmd_eccv_rank_tau, "ECCV's ranking correlations with bootstrap intervals over queries")
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", required=True, help="MODEL=PATH: per-query scores"
    )
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out-csv", required=True)
