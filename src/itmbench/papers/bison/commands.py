"""`itmbench bison-table2`, `bison-perturbation-scores`, `bison-figure-data`, `bison-figure8-data`,
`bison-figure4-data`, `bison-figure`: BISON's Table 2 and the numbers and drawings of its Figures 4, 6, 8, 9 and 14,
from its benchmark tables, the source's captions, the models' embedding caches, (Figure 9) each model's scores of
the perturbed queries, (Figure 8) each captioner's generated captions and BISON scores and (Figure 4) the generated
captions, their scores (written by `bison-figure8-data`) and the world's scenes.

Computing and drawing are separate commands (and rules): `bison-figure-data` writes a figure's numbers as a
table (CSV/Markdown/LaTeX), `bison-figure` draws it, so restyling a figure never recomputes it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from itmbench.cli._args import add_confidence, json_arg, name_value, positive_int, score_section, set_threads
from itmbench.metrics.captioning import METRICS as CAPTION_METRICS

log = logging.getLogger("itmbench")

SOURCE_LABELS = {"world": "world", "coco": "coco source"}
# the titles' note where bison_caption_metrics lists tuple_f1 (itmbench.metrics.tuple_f1)
ANALOGUE_NOTE = (
    "; in its place Tuple F1, the world's SPICE analogue and not SPICE: F1 of the caption's object, attribute "
    "and relation tuples, read by the world's own parser, against the union of its references' (a caption the "
    "grammar cannot read scores 0)"
)
GROUPS = {"split": "all captions of the split", "bison": "BISON queries"}


def _bison_section(values: dict) -> dict:
    """Some keys of params.yaml `bison` (split, seed) as --config, defaults filled, checked by the schema."""
    from itmbench.params import validated_section

    return validated_section("bison", values, "bison params (--config)")


def _inputs(args: argparse.Namespace, section: dict):
    from itmbench.papers.bison import canonical, queries
    from itmbench.reading import read_parquet_checked

    tables = canonical.read(args.bench)
    captions = read_parquet_checked(args.captions, queries.CAPTION_COLUMNS, "the source's captions (items)")
    return tables["annotations"], queries.split_captions(captions, section["split"], str(args.captions))


def cmd_bison_table2(args: argparse.Namespace) -> None:
    """BISON Table 2: the split's and BISON's examples, images and unique captions beside the printed ones."""
    from itmbench.papers.bison import queries
    from itmbench.papers.published import published_wide
    from itmbench.report.tables import write_table_set

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
    write_table_set(long, args.out_csv, title, row_header="statistic", decimals=1)
    log.info("bison table2: %s", long.set_index(["row", "column"])["value"].to_dict())


def cmd_bison_figure_data(args: argparse.Namespace) -> None:
    """The numbers of BISON's Figure 6 (query length, part of speech) or 14 (query choice), as a table."""
    from itmbench.errors import InputError
    from itmbench.papers.bison import queries
    from itmbench.report.tables import write_table_set
    from itmbench.scoring.embed import EmbeddingCache

    section = _bison_section(args.config)
    level = f"{100 * args.confidence:g}%"
    if args.figure == "figure9":
        _figure9_data(args, section, level)
        return
    if args.scores:
        raise InputError(f"bison-figure-data --figure {args.figure} reads no perturbation scores; drop --scores")
    annotations, captions = _inputs(args, section)
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
    write_table_set(long, args.out_csv, title, row_header=row_header, decimals=2)
    log.info("bison %s: %d cells -> %s", args.figure, len(long), args.out_csv)


def _figure9_data(args: argparse.Namespace, section: dict, level: str) -> None:
    """Figure 9's table from each model's perturbation scores (`bison-perturbation-scores`)."""
    from itmbench.errors import InputError
    from itmbench.papers.bison import queries
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table_set

    if not args.scores or args.embeddings:
        raise InputError("bison-figure-data --figure figure9 reads --scores MODEL=PATH for each model, no --embeddings")
    columns = (*queries.PERTURBED_COLUMNS, "changed", "correct")
    scores = {m: read_parquet_checked(p, columns, f"the BISON perturbation scores of {m}") for m, p in args.scores}
    annotations, captions = _inputs(args, section)
    expected = queries.perturbed_queries(annotations, captions, section["seed"])
    for (model, path), frame in zip(args.scores, scores.values()):
        got = frame[list(queries.PERTURBED_COLUMNS)].reset_index(drop=True)
        if not got.astype(str).equals(expected.astype(str)):
            raise InputError(
                f"{path}: the perturbed queries of {model} are not those of {args.bench} with seed {section['seed']}; "
                "expected bison-perturbation-scores of this benchmark and config"
            )
    long = queries.figure9_long(scores, dict(args.rows), args.confidence)
    title = (
        f"BISON Figure 9 ({SOURCE_LABELS[args.source]}): share (%) of each model's BISON predictions that change "
        "when the query is negated, a relation phrase or generic noun is replaced by a synonym, a shape noun by its "
        "hypernym, or the words are permuted (seeded per bison_id) or reversed; among the instances whose query the "
        f"perturbation alters; a tie picks neither image; {level} Wilson intervals"
    )
    write_table_set(long, args.out_csv, title, row_header="model", decimals=2)
    log.info("bison figure9: %d cells -> %s", len(long), args.out_csv)


def _model_scorer(scorer, store):
    """s(texts[k], images[k]) of a model: a captioner's mean token log-likelihood, a dual encoder's dot product of
    its unit embeddings (each distinct image and text encoded once)."""
    import numpy as np

    from itmbench.errors import InputError

    if hasattr(scorer, "log_likelihoods"):
        return lambda texts, image_ids: scorer.log_likelihoods(store.image_batch(image_ids), texts)
    kinds = getattr(scorer, "item_kinds", ("image", "caption"))
    if not (hasattr(scorer, "encode_texts") and {"image", "caption"} <= set(kinds)):
        raise InputError(f"{type(scorer).__name__}: neither a captioner nor an image-text dual encoder")

    encoded: dict[str, np.ndarray] = {}  # the last call's texts and their embeddings: a second call with the same
    # texts (the true, then the false image of each query) reuses them, computed in the same batches

    def score(texts, image_ids):
        uniq_img, img_row = np.unique(np.asarray(image_ids, np.int64), return_inverse=True)
        uniq_txt, txt_row = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
        img = np.concatenate(
            [
                scorer.encode_images(store.image_batch(uniq_img[s : s + 256])).cpu().numpy()
                for s in range(0, len(uniq_img), 256)
            ]
        )
        if "texts" not in encoded or not np.array_equal(encoded["texts"], uniq_txt):
            encoded["texts"] = uniq_txt
            encoded["emb"] = np.concatenate(
                [scorer.encode_texts(list(uniq_txt[s : s + 256])).cpu().numpy() for s in range(0, len(uniq_txt), 256)]
            )
        txt = encoded["emb"]
        return (img[img_row].astype(np.float64) * txt[txt_row].astype(np.float64)).sum(axis=1)

    return score


def cmd_bison_perturbation_scores(args: argparse.Namespace) -> None:
    """Figure 9's scores of one model: each BISON query and its automatic perturbations against both images."""
    from itmbench.errors import InputError
    from itmbench.io import write_parquet
    from itmbench.models.capabilities import capability
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.papers.bison import queries
    from itmbench.scoring.embed import ItemStore

    set_threads(args.threads)
    section = _bison_section(args.config)
    spec = model_spec(args.model, args.spec)
    if capability(spec.family).needs_upstream:
        raise InputError(f"models.{args.model}: family {spec.family!r} scores an upstream model's features of known "
                         "captions; a perturbed query has none")  # fmt: skip
    annotations, captions = _inputs(args, section)
    perturbed = queries.perturbed_queries(annotations, captions, section["seed"])
    scorer = build_encoder(spec, pick_device(args.device), args.checkpoint)
    store = ItemStore(args.items, image_size=getattr(scorer, "image_size", 224))
    scores = queries.perturbation_scores(annotations, perturbed, _model_scorer(scorer, store))
    write_parquet(args.out, scores)
    changed = scores[scores["altered"]].groupby("perturbation")["changed"].mean().round(4).to_dict()
    log.info("bison perturbations of %s: share of altered queries whose prediction changes %s", args.model, changed)


def cmd_bison_generate_captions(args: argparse.Namespace) -> None:
    """Table 4's captions: one greedy caption by a captioner for each image of the split BISON is built on."""
    import pandas as pd

    from itmbench.errors import InputError
    from itmbench.io import write_parquet
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.papers.bison import queries
    from itmbench.reading import read_parquet_checked
    from itmbench.scoring.embed import ItemStore

    set_threads(args.threads)
    section = _bison_section(args.config)
    spec = model_spec(args.model, args.spec)
    captions = read_parquet_checked(args.captions, queries.CAPTION_COLUMNS, "the source's captions (items)")
    split = queries.split_captions(captions, section["split"], str(args.captions))
    scorer = build_encoder(spec, pick_device(args.device), args.checkpoint)
    if not hasattr(scorer, "greedy_captions"):
        raise InputError(f"models.{args.model}: family {spec.family!r} generates no captions; expected a captioner")
    image_ids = sorted(int(i) for i in split["image_id"].unique())
    store = ItemStore(args.items, image_size=getattr(scorer, "image_size", 224))
    generated = scorer.greedy_captions(store.image_batch(image_ids))
    write_parquet(args.out, pd.DataFrame({"image_id": pd.Series(image_ids, dtype="int64"), "caption": generated}))
    log.info("%s: %d captions, e.g. %r", args.model, len(generated), generated[:3])


def cmd_bison_table4(args: argparse.Namespace) -> None:
    """BISON Table 4: each world captioner's captioning metrics and BISON accuracy beside the printed systems."""
    import json

    from itmbench.errors import reading
    from itmbench.metrics.captioning import NOT_POSSIBLE
    from itmbench.papers.bison import captioning
    from itmbench.papers.published import published_wide
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table_set

    section, metrics, score, generated, bison, split = _captioner_inputs(args, "bison")
    given = None
    if args.caption_scores:  # Figure 8's per-image scores: the metrics' Java and CIDEr-D are not run twice
        given = read_parquet_checked(
            args.caption_scores, ("model", "image_id"), "the captioners' per-image caption scores (--caption-scores)"
        )
    cells, docs = {}, {}
    for model, (path, frame) in generated.items():
        cells[model] = captioning.metric_cells(
            frame, split, metrics, score["n_boot"], score["seed"], score["confidence"], str(path),
            per_image=None if given is None else given[given["model"] == model],
            per_image_source=f"{args.caption_scores} (model {model})",
        )  # fmt: skip
        with reading(bison[model]):
            docs[model] = json.loads(open(bison[model], encoding="utf-8").read())
    published = {
        b: published_wide("bison", "Table 4", b) for b in ("Cross-entropy loss", "Self-critical sequence loss", "")
    }
    long = captioning.table4_long(cells, docs, published, dict(args.rows))
    title = (
        f"BISON Table 4 ({SOURCE_LABELS[args.source]}): the printed captioning systems (COCO validation; Human on "
        "the COCO test set) and beneath them each world captioner: one greedy caption per image of the "
        f"{section['split']} split scored by pycocoevalcap against the image's captions (BLEU-4: corpus; CIDEr-D: "
        "mean over images, IDF over the split; METEOR: mean over images), x100, "
        f"{100 * score['confidence']:g}% bootstrap intervals over images; BISON: its accuracy (Wilson). "
        f"SPICE: not possible here ({NOT_POSSIBLE['spice']})" + (ANALOGUE_NOTE if "tuple_f1" in metrics else "")
    )
    write_table_set(long, args.out_csv, title, row_header="system", decimals=2)
    log.info("bison table4: %s", {m: {k: round(v[0], 2) for k, v in c.items()} for m, c in cells.items()})


def cmd_bison_feature_captioners(args: argparse.Namespace) -> None:
    """Table 6's systems on one tower: ShowTell, ShowAttTell and UpDown trained on its frozen grid features, each
    scored by the captioning metrics and BISON (`papers/bison/feature_captioners.py`)."""
    from itmbench.io import write_parquet
    from itmbench.models.registry import build_encoder, pick_device
    from itmbench.models.spec import model_spec
    from itmbench.papers.bison import canonical, feature_captioners, queries
    from itmbench.papers.bison.config import BisonCaptionersConfig
    from itmbench.params import make_config, validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.scoring.embed import ItemStore

    set_threads(args.threads)
    section = _bison_section(args.config)
    options = make_config(BisonCaptionersConfig, args.captioners)
    metrics = validated_section(
        "bison_caption_metrics", args.caption_metrics, "bison_caption_metrics (--caption-metrics)"
    )
    spec = model_spec(args.tower, args.spec)
    encoder = build_encoder(spec, pick_device(args.device), args.checkpoint)
    captions = read_parquet_checked(args.captions, queries.CAPTION_COLUMNS, "the source's captions (items)")
    cells = feature_captioners.tower_cells(
        encoder,
        ItemStore(args.items, image_size=getattr(encoder, "image_size", 224)),
        captions,
        canonical.read(args.bench)["annotations"],
        options,
        section["split"],
        metrics["metrics"],
        score_section(args.score),
        args.tower,
    )
    write_parquet(args.out, cells)


def cmd_bison_table6(args: argparse.Namespace) -> None:
    """BISON Table 6: the world's three captioning systems on each tower beside the printed ones."""
    import pandas as pd

    from itmbench.errors import InputError
    from itmbench.metrics.captioning import NOT_POSSIBLE
    from itmbench.papers.bison import feature_captioners
    from itmbench.papers.published import published_wide
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table_set

    captioners = validated_section("bison_captioners", args.captioners, "bison_captioners (--captioners)")
    score = score_section(args.score)
    frames = []
    for tower, path in args.cells:
        frame = read_parquet_checked(path, feature_captioners.CELL_COLUMNS, f"Table 6's cells of {tower}")
        trainings = list(feature_captioners.TRAININGS[: 2 if captioners["scst_epochs"] else 1])
        got = (
            sorted(set(frame["tower"])),
            list(dict.fromkeys(frame["system"])),
            list(dict.fromkeys(frame["training"])),
        )
        if got != ([tower], list(captioners["systems"]), trainings):
            raise InputError(
                f"{path}: towers {got[0]}, systems {got[1]}, trainings {got[2]}; expected tower {tower}, systems "
                f"{list(captioners['systems'])} and trainings {trainings} (params bison_captioners)"
            )
        frames.append(frame)
    if [t for t, _ in args.cells] != list(captioners["towers"]):
        raise InputError(f"--cells for {[t for t, _ in args.cells]}; expected one per tower of {captioners['towers']}")
    published = {
        b: published_wide("bison", "Table 6", b)
        for b in (
            "Cross-entropy loss, ResNet-IN",
            "Cross-entropy loss, ResNeXt-IG-3.5B",
            "Self-critical sequence loss, ResNet-IN",
            "Self-critical sequence loss, ResNeXt-IG-3.5B",
            "",
        )
    }
    long = feature_captioners.table6_long(pd.concat(frames, ignore_index=True), published, dict(args.rows))
    metrics = set(pd.concat(frames)["metric"])
    title = (
        f"BISON Table 6 ({SOURCE_LABELS[args.source]}): the printed captioning systems (ResNet-IN and ResNeXt-IG-3.5B "
        "features, cross-entropy and self-critical training; captioning scores on COCO validation, Human on the COCO "
        "test set) and beneath them ShowTell, ShowAttTell and UpDown trained on each world tower's "
        f"frozen grid features ({', '.join(captioners['towers'])}): one greedy caption per image of the "
        f"{captioners['caption_split']} split scored by pycocoevalcap against the image's captions (BLEU-4: corpus; "
        f"CIDEr-D and METEOR: mean over images), x100, {100 * score['confidence']:g}% bootstrap intervals over images; "
        "BISON: accuracy by the length-normalised log-likelihood of the query (Wilson). "
        + (
            f"Self-critical: each cross-entropy system fine-tuned by SCST for {captioners['scst_epochs']} epochs "
            "(reward CIDEr-D over the greedy caption's, IDF over the train split's references). "
            if captioners["scst_epochs"]
            else "Self-critical training not run (bison_captioners.scst_epochs 0). "
        )
        + f"SPICE: not possible here ({NOT_POSSIBLE['spice']})"
        + (ANALOGUE_NOTE if "tuple_f1" in metrics else "")
    )
    write_table_set(long, args.out_csv, title, row_header="system", decimals=2)
    log.info("bison table6: %d world rows", long[long["source"] != "printed"]["row"].nunique())


def cmd_bison_figure8_data(args: argparse.Namespace) -> None:
    """BISON Figure 8's numbers: the captioning scores of each captioner's caption of the positive image, split by
    whether its BISON prediction is correct."""
    import pandas as pd

    from itmbench.io import output_set, write_parquet
    from itmbench.metrics.captioning import METRIC_NAMES, NOT_POSSIBLE
    from itmbench.papers.bison import captioning
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table

    section, metrics, score, generated, scores, split = _captioner_inputs(args, "scores")
    bins = validated_section("report.bison_figure8", args.figure_config, "report.bison_figure8 (--figure-config)")[
        "bins"
    ]
    instances, per_images = {}, []
    for model, (path, frame) in generated.items():
        per_image = captioning.per_image_scores(frame, split, metrics, str(path))
        per_images.append(per_image.assign(model=model)[["model", "image_id", *metrics]])
        bison = read_parquet_checked(scores[model], captioning.BISON_SCORE_COLUMNS, f"the BISON scores of {model}")
        instances[model] = captioning.instance_caption_scores(per_image, bison, str(scores[model]))
    long = captioning.figure8_long(
        instances, metrics, dict(args.rows), bins, score["n_boot"], score["seed"], score["confidence"]
    )
    level = f"{100 * score['confidence']:g}%"
    title = (
        f"BISON Figure 8 ({SOURCE_LABELS[args.source]}): the captioning scores (x100; "
        + ", ".join(METRIC_NAMES[m] for m in metrics)
        + ") of the caption each captioner generates (greedy) for the positive image of each BISON instance, scored "
        f"against that image's captions of the {section['split']} split as in Table 4, split by whether the "
        "captioner's BISON prediction is correct (a tie is wrong): mean and median with "
        f"{level} percentile bootstrap intervals, the share of instances per bin ({bins} equal bins over "
        f"[0, the metric's largest score]; edges in the CSV's bin_lo and bin_hi; {level} Wilson intervals) and the "
        f"difference of the means (stratified bootstrap). SPICE: not possible here ({NOT_POSSIBLE['spice']})"
        + (ANALOGUE_NOTE if "tuple_f1" in metrics else "")
    )
    out = Path(args.out_csv)
    extra = [Path(args.out_caption_scores)] if args.out_caption_scores else []
    with output_set(files=extra, folders=[out.parent]):  # .csv, .md, .tex (and the scores) together or not at all
        write_table(long, out.with_suffix(""), title, row_header="statistic", decimals=2)
        if extra:  # each generated caption's scores, for Figure 4 (METEOR's Java is not run twice)
            write_parquet(extra[0], pd.concat(per_images, ignore_index=True))
    summary = long[long["statistic"].isin(["mean", "n"])].set_index(["column", "statistic"])["value"].round(3)
    log.info("bison figure8: %s", summary.to_dict())


def cmd_bison_figure4_data(args: argparse.Namespace) -> None:
    """BISON Figure 4's numbers: the correctness and detailedness of each captioner's generated captions, the
    world's truth as the raters, by normalised captioning score (the scores bison-figure8-data wrote)."""
    from itmbench.errors import InputError
    from itmbench.io import output_set
    from itmbench.metrics.captioning import METRIC_NAMES, NOT_POSSIBLE
    from itmbench.papers.bison import captioning, human_eval
    from itmbench.papers.published import published_value
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked
    from itmbench.report.tables import write_table
    from itmbench.world.scene import Scene

    figure = validated_section("report.bison_figure4", args.figure_config, "report.bison_figure4 (--figure-config)")
    margin = float(validated_section("world", args.world, "world params (--world)")["relation_margin"])
    score = score_section(args.score)
    generated = dict(args.generated)
    if not generated:
        raise InputError("give --generated MODEL=PATH for at least one captioner")
    table = read_parquet_checked(args.scenes, ("image_id", "scene"), "the world's scenes (items)")
    scenes = {int(i): Scene.from_json(s) for i, s in zip(table["image_id"], table["scene"])}
    scores = read_parquet_checked(args.caption_scores, ("model", "image_id"), "the generated captions' scores")
    metrics = [m for m in scores.columns if m in METRIC_NAMES]
    if not metrics:
        raise InputError(f"{args.caption_scores}: no metric column; expected some of {sorted(METRIC_NAMES)}")
    rated = {}
    for model, path in generated.items():
        frame = read_parquet_checked(path, captioning.GENERATED_COLUMNS, f"the captions generated by {model}")
        rated[model] = human_eval.rate_captions(frame, scenes, margin, str(path))
    published = {p: published_value("bison", "Figure 4", "Average", p.capitalize()) for p in human_eval.PANELS}
    long = human_eval.figure4_long(
        rated,
        scores,
        metrics,
        dict(args.rows),
        published,
        figure["bins"],
        score["n_boot"],
        score["seed"],
        score["confidence"],
    )
    level = f"{100 * score['confidence']:g}%"
    title = (
        f"BISON Figure 4 ({SOURCE_LABELS[args.source]}): the correctness and detailedness (1-5) of each captioner's "
        "generated captions, the world's truth as the raters: correctness 1 + 4 x the share of the caption's "
        "statements (each mention, the relation) true of its image; detailedness, without the image, 1 + 4 x the "
        f"caption's units (objects, attributes, numbers, relations) / {human_eval.MAX_DETAIL}, the most the grammar "
        "states; a caption the grammar cannot read scores 1 on both. Mean rating per bin of the normalised score ("
        + ", ".join(METRIC_NAMES[m] for m in metrics)
        + f", each divided by its largest over the captioner's captions; {figure['bins']} equal bins over [0, 1]) and "
        f"the averages beside the printed ones (UpDown on COCO val), {level} percentile bootstrap intervals. "
        f"SPICE: not possible here ({NOT_POSSIBLE['spice']})" + (ANALOGUE_NOTE if "tuple_f1" in metrics else "")
    )
    out = Path(args.out_csv)
    with output_set(folders=[out.parent]):  # .csv, .md, .tex together or not at all
        write_table(long, out.with_suffix(""), title, row_header="statistic", decimals=3)
    averages = long[long["statistic"].isin(["mean", "unreadable"])].set_index(["row", "column"])["value"].round(3)
    log.info("bison figure4: %s", averages.to_dict())


def _captioner_inputs(args: argparse.Namespace, partner: str) -> tuple:
    """What BISON's Table 4 and Figure 8 read first: the `bison` section, the caption metrics (a list), the score
    section, each captioner's generated captions as (path, frame) paired with its `--<partner>` file, and the
    split's reference captions."""
    from itmbench.errors import InputError
    from itmbench.papers.bison import captioning, queries
    from itmbench.params import validated_section
    from itmbench.reading import read_parquet_checked

    section = _bison_section(args.config)
    caption_metrics = validated_section(
        "bison_caption_metrics", args.caption_metrics, "bison_caption_metrics (--caption-metrics)"
    )
    score = score_section(args.score)
    generated, partners = dict(args.generated), dict(getattr(args, partner))
    if not generated or set(generated) != set(partners):
        raise InputError(
            f"give --generated and --{partner} for the same captioners (got {sorted(generated)} and {sorted(partners)})"
        )
    captions = read_parquet_checked(args.captions, queries.CAPTION_COLUMNS, "the source's captions (items)")
    split = queries.split_captions(captions, section["split"], str(args.captions))
    frames = {
        model: (path, read_parquet_checked(path, captioning.GENERATED_COLUMNS, f"the captions generated by {model}"))
        for model, path in generated.items()
    }
    return section, list(caption_metrics["metrics"]), score, frames, partners, split


def cmd_bison_figure(args: argparse.Namespace) -> None:
    """Draw BISON's Figure 6 or 14 from its computed table (PNG and PDF)."""
    from itmbench.io import output_set
    from itmbench.papers.bison.figures import write_data_figure

    out = Path(args.out_png)
    with output_set(files=[out, out.with_suffix(".pdf")]):
        paths = write_data_figure(args.figure, args.data, out, SOURCE_LABELS[args.source], args.dpi)
    log.info("bison %s: %s", args.figure, [str(p) for p in paths])


def _captioner_options(sp: argparse.ArgumentParser, partner: str, partner_help: str) -> None:
    """The options of a table of generated captions (Table 4, Figure 8): each captioner's captions with its
    `partner` file, the references, the sections and the output."""
    sp.add_argument(
        "--generated", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: its captions"
    )
    sp.add_argument(partner, type=name_value("PATH"), action="append", default=[], help=partner_help)
    sp.add_argument("--captions", required=True, help="the source's captions parquet (the references)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split) as JSON")
    sp.add_argument("--caption-metrics", type=json_arg, default={}, help="params.yaml bison_caption_metrics as JSON")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (n_boot, seed, confidence) as JSON")
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")


def _common(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--bench", required=True, help="a BISON benchmark folder (data/<source>/bison)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (data/<source>/items)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split, seed) as JSON")
    add_confidence(sp)
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")


def cmd_bison_caption_metric(args: argparse.Namespace) -> None:
    """BISON section 6: one captioning metric as a BISON scorer, its per-instance predictions and accuracy."""
    from itmbench.io import output_set, write_json, write_parquet
    from itmbench.papers.bison import canonical
    from itmbench.papers.bison.caption_metrics import CAPTION_COLUMNS, caption_metric_summary, score_caption_metric
    from itmbench.papers.bison.config import BisonCaptionMetricsConfig
    from itmbench.params import make_config, validated_section
    from itmbench.reading import read_parquet_checked

    cfg = make_config(
        BisonCaptionMetricsConfig,
        validated_section("bison_caption_metrics", args.config, "bison_caption_metrics params (--config)"),
    )
    score_cfg = score_section(args.score)
    captions = read_parquet_checked(args.captions, CAPTION_COLUMNS, "the items' captions.parquet")
    tables = canonical.read(args.bench)
    predictions = score_caption_metric(tables["annotations"], captions, args.metric, cfg, source=args.captions)
    summary = caption_metric_summary(
        predictions,
        args.metric,
        cfg,
        n_boot=score_cfg["n_boot"],
        seed=score_cfg["seed"],
        confidence=score_cfg["confidence"],
    )
    with output_set(files=[args.out, args.metrics]):  # together or not at all
        write_parquet(args.out, predictions)
        write_json(args.metrics, summary)
    log.info("bison %s: %.2f%% of %d", args.metric, summary["metrics"]["bison"]["value"], len(predictions))


def add_commands(add, sub) -> None:
    """Register this stage's subcommands (`add(name, func, help)` returns the subparser)."""
    sp = add("bison-table2", cmd_bison_table2, "BISON Table 2: its key statistics beside the printed ones")
    _common(sp)
    sp = add(
        "bison-perturbation-scores",
        cmd_bison_perturbation_scores,
        "BISON Figure 9: one model's scores of the perturbed queries",
    )
    sp.add_argument("--model", required=True, help="the model's name (params.yaml models)")
    sp.add_argument("--spec", type=json_arg, required=True, help="its params.yaml models.<name> entry as JSON")
    sp.add_argument("--checkpoint", default=None, help="its trained weights (none for a model used as built)")
    sp.add_argument("--items", required=True, help="the source's items folder (images of the candidates)")
    sp.add_argument("--bench", required=True, help="a BISON benchmark folder (data/<source>/bison)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (data/<source>/items)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split, seed) as JSON")
    sp.add_argument("--device", default="auto", help="torch device (auto: CUDA when there is one)")
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--out", required=True, help="the per-instance scores parquet")
    sp = add("bison-generate-captions", cmd_bison_generate_captions, "BISON Table 4: a captioner's greedy captions")
    sp.add_argument("--model", required=True, help="the captioner's name (params.yaml models)")
    sp.add_argument("--spec", type=json_arg, required=True, help="its params.yaml models.<name> entry as JSON")
    sp.add_argument("--checkpoint", default=None, help="its trained weights and vocabulary")
    sp.add_argument("--items", required=True, help="the source's items folder (the images)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (the split's images)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split) as JSON")
    sp.add_argument("--device", default="auto", help="torch device (auto: CUDA when there is one)")
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--out", required=True, help="the generated captions parquet (image_id, caption)")
    sp = add("bison-table4", cmd_bison_table4, "BISON Table 4: world captioners beside the printed systems")
    _captioner_options(sp, "--bison", "MODEL=PATH: its BISON metrics")
    sp.add_argument(
        "--caption-scores",
        default=None,
        help="the per-image caption scores bison-figure8-data wrote (--out-caption-scores): read, not recomputed",
    )
    sp = add("bison-figure-data", cmd_bison_figure_data, "the numbers of BISON's Figure 6, 9 or 14, as a table")
    sp.add_argument("--figure", required=True, choices=("figure6", "figure9", "figure14"))
    _common(sp)
    sp.add_argument(
        "--scores", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: perturbation scores"
    )
    sp.add_argument(
        "--embeddings", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: a model's cache"
    )
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp = add("bison-figure8-data", cmd_bison_figure8_data, "BISON Figure 8's numbers: caption scores by correctness")
    _captioner_options(sp, "--scores", "MODEL=PATH: its BISON scores")
    sp.add_argument("--figure-config", type=json_arg, default={}, help="params.yaml report.bison_figure8 as JSON")
    sp.add_argument("--out-caption-scores", default=None, help="also write each generated caption's scores (parquet)")
    sp = add("bison-figure4-data", cmd_bison_figure4_data, "BISON Figure 4's numbers: caption ratings by score")
    sp.add_argument(
        "--generated", type=name_value("PATH"), action="append", default=[], help="MODEL=PATH: its captions"
    )
    sp.add_argument("--scenes", required=True, help="the world's scenes parquet (data/world/items)")
    sp.add_argument("--caption-scores", required=True, help="the captions' scores (bison-figure8-data)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--world", type=json_arg, default={}, help="params.yaml world (relation_margin) as JSON")
    sp.add_argument("--figure-config", type=json_arg, default={}, help="params.yaml report.bison_figure4 as JSON")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (n_boot, seed, confidence) as JSON")
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add("bison-figure", cmd_bison_figure, "draw BISON's Figure 4, 6, 8, 9 or 14 from its computed table")
    sp.add_argument("--figure", required=True, choices=("figure4", "figure6", "figure8", "figure9", "figure14"))
    sp.add_argument("--data", required=True, help="the figure's table (bison-figure-data)")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--dpi", type=positive_int, default=150)
    sp.add_argument("--out-png", required=True, help="the PNG; the PDF is written beside it")
    sp = add(
        "bison-feature-captioners",
        cmd_bison_feature_captioners,
        "BISON Table 6: ShowTell, ShowAttTell and UpDown trained and scored on one tower's frozen features",
    )
    sp.add_argument("--tower", required=True, help="the model whose image tower gives the features (params models)")
    sp.add_argument("--spec", type=json_arg, required=True, help="its params.yaml models.<name> entry as JSON")
    sp.add_argument("--checkpoint", default=None, help="its trained weights")
    sp.add_argument("--items", required=True, help="the source's items folder (the images)")
    sp.add_argument("--captions", required=True, help="the source's captions parquet (train captions, references)")
    sp.add_argument("--bench", required=True, help="a BISON benchmark folder (data/<source>/bison)")
    sp.add_argument("--config", type=json_arg, default={}, help="params.yaml `bison` (split) as JSON")
    sp.add_argument("--captioners", type=json_arg, required=True, help="params.yaml `bison_captioners` as JSON")
    sp.add_argument("--caption-metrics", type=json_arg, default={}, help="params.yaml bison_caption_metrics as JSON")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (n_boot, seed, confidence) as JSON")
    sp.add_argument("--device", default="auto", help="torch device (auto: CUDA when there is one)")
    sp.add_argument("--threads", type=positive_int, default=1)
    sp.add_argument("--out", required=True, help="the tower's cells (parquet)")
    sp = add("bison-table6", cmd_bison_table6, "BISON Table 6: the world's captioning systems beside the printed ones")
    sp.add_argument(
        "--cells", type=name_value("PATH"), action="append", default=[], help="TOWER=PATH: bison-feature-captioners"
    )
    sp.add_argument("--captioners", type=json_arg, required=True, help="params.yaml `bison_captioners` as JSON")
    sp.add_argument("--source", choices=sorted(SOURCE_LABELS), default="world", help="the source (titles)")
    sp.add_argument("--score", type=json_arg, default={}, help="params.yaml score (confidence) as JSON")
    sp.add_argument("--rows", type=json_arg, default={}, help="model -> row name (params.yaml report rows)")
    sp.add_argument("--out-csv", required=True, help="the table's CSV; .md and .tex are written beside it")
    sp = add(
        "bison-caption-metric",
        cmd_bison_caption_metric,
        "BISON section 6: a captioning metric (pycocoevalcap) as a BISON scorer",
    )
    sp.add_argument("--metric", required=True, choices=list(CAPTION_METRICS))
    sp.add_argument("--bench", required=True, help="the BISON benchmark's folder (build-benchmark)")
    sp.add_argument("--captions", required=True, help="the source's items/captions.parquet")
    sp.add_argument("--config", type=json_arg, required=True, help="params.yaml `bison_caption_metrics` as JSON")
    sp.add_argument("--score", type=json_arg, required=True, help="params.yaml `score` section as JSON")
    sp.add_argument("--out", required=True, help="per-instance predictions (parquet)")
    sp.add_argument("--metrics", required=True, help="BISON accuracy with its interval (JSON)")
