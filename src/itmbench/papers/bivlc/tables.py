"""BiVLC Tables 2, 3 and 4 rows regenerated from metrics, and from the released per-instance result files.

The released files (`results/BiVLC_<model>.csv`, `results/SUGARCREPE_CORRECT_<model>.csv` of
IMirandaM/BiVLC) hold, per instance, the four single comparisons of a model (text_score_i0 =
Ipos2T, text_score_i1 = Ineg2T, image_score_c0 = Tpos2I, image_score_c1 = Tneg2I) and SugarCrepe
correctness. The rows of the four released models (CLIP = ViT-B-32, CLIP_COCO, CLIP_TROHN-Text,
CLIP_TROHN-Img) are regenerated through OUR metric functions
(`metrics.accuracy.bivlc_scores_from_comparisons`, `accuracy_from_correct`), not through the files'
precomputed text_score / image_score / group_score columns; `released_scores` checks that both agree
and raises, naming the file and the first disagreeing row, if they do not.

Every metric is a percentage with a Wilson interval (confidence 0.95 by default), in the JSON shape
of the world's `results/<source>/metrics/bivlc/<model>.json`: ``{"metrics": {name: {value, lo, hi,
n}}, "by_type": {type: {name: {...}}}}`` with names sugarcrepe, i2t, t2i, group, ipos2t, ineg2t,
tpos2i, tneg2i. So `bivlc_long_table` lays out released and world metrics alike:
Table 2 and Table 3 (columns SugarCrepe, I2T, T2I, Group [, Ipos2T, Ineg2T, Tpos2I, Tneg2I]) and
Table 4 (blocks Replace / Swap / Add, columns I2T, T2I, Group).

Decision (the paper is silent): Table 4 has no SugarCrepe column, and per-type SugarCrepe numbers
are not printed anywhere, so they are computed (in ``by_type``) but not laid out.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.accuracy import Accuracy, accuracy_from_correct, bivlc_scores_from_comparisons
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.bivlc.detectors import (
    DETECTOR_THRESHOLD,
    detection_accuracy_flags,
    detector_comparisons,
    pair_rows,
    sugarcrepe_detector_correct,
)
from itmbench.papers.bivlc.released import COMPARISONS
from itmbench.papers.published import load_published
from itmbench.papers.tables import compare, write_comparison
from itmbench.papers.world_cells import LONG_COLUMNS as WORLD_LONG_COLUMNS
from itmbench.papers.world_cells import WorldMetrics, long_frame, models_of

# released-registry key suffix -> (file model name, row name in the paper)
RELEASED_MODELS: dict[str, tuple[str, str]] = {
    "vit_b_32": ("ViT-B-32", "CLIP"),
    "clip_coco": ("CLIP_COCO", "CLIP_COCO"),
    "clip_trohn_text": ("CLIP_TROHN-Text", "CLIP_TROHN-Text"),
    "clip_trohn_img": ("CLIP_TROHN-Img", "CLIP_TROHN-Img"),
}
# metric name -> column name as printed
PRINTED_COLUMNS: dict[str, str] = {
    "sugarcrepe": "SugarCrepe",
    "i2t": "I2T",
    "t2i": "T2I",
    "group": "Group",
    "ipos2t": "Ipos2T",
    "ineg2t": "Ineg2T",
    "tpos2i": "Tpos2I",
    "tneg2i": "Tneg2I",
}
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "Table 2": ("sugarcrepe", "i2t", "t2i", "group"),
    "Table 3": ("sugarcrepe", "i2t", "t2i", "group", "ipos2t", "ineg2t", "tpos2i", "tneg2i"),
    "Table 4": ("i2t", "t2i", "group"),
}
TYPE_BLOCKS: dict[str, str] = {"replace": "Replace", "swap": "Swap", "add": "Add"}
# the file's precomputed columns, and the metric each must equal
FILE_SCORE_COLUMNS: dict[str, str] = {"text_score": "i2t", "image_score": "t2i", "group_score": "group"}
LONG_COLUMNS: tuple[str, ...] = ("table", "block", "row", "column", "value", "lo", "hi", "n")


def metric_entry(accuracy: Accuracy) -> dict[str, float | int]:
    """One metric as the world's metrics JSON holds it: percent value, Wilson lo/hi, n."""
    lo, hi = accuracy.ci_percent
    return {"value": accuracy.percent, "lo": lo, "hi": hi, "n": accuracy.n}


def released_scores(results: pd.DataFrame, source: str = "BiVLC results") -> dict[str, np.ndarray]:
    """Per-instance booleans of the seven BiVLC scores from the four comparisons, checked against the file's columns."""
    missing = [c for c in (*COMPARISONS, *FILE_SCORE_COLUMNS) if c not in results.columns]
    if missing:
        raise ValueError(f"{source}: missing columns {missing}; expected the released BiVLC result columns")
    scores = bivlc_scores_from_comparisons(*(results[c].to_numpy(dtype=bool) for c in COMPARISONS))
    for column, name in FILE_SCORE_COLUMNS.items():
        ours = getattr(scores, name)
        theirs = results[column].to_numpy(dtype=bool)
        if (ours != theirs).any():
            row = int(np.flatnonzero(ours != theirs)[0])
            raise ValueError(
                f"{source}: data row {row} column {column} is {bool(theirs[row])}, but the comparisons "
                f"give {name} = {bool(ours[row])} ({int((ours != theirs).sum())} rows disagree)"
            )
    return {name: np.asarray(getattr(scores, name)) for name in PRINTED_COLUMNS if name != "sugarcrepe"}


def metrics_from_released(
    results: pd.DataFrame | None,
    sugarcrepe_correct: pd.DataFrame | None = None,
    model: str = "",
    confidence: float = DEFAULT_CONFIDENCE,
    source: str = "BiVLC results",
) -> dict[str, Any]:
    """A model's BiVLC metrics JSON (overall and by type) from its released per-instance files (either may be None)."""
    if results is None and sugarcrepe_correct is None:
        raise ValueError(f"{source}: neither BiVLC results nor SugarCrepe correctness given for model {model!r}")
    metrics: dict[str, Any] = {}
    by_type: dict[str, dict[str, Any]] = {}
    if results is not None:
        scores = released_scores(results, source)
        kinds = results["type"].astype(str).to_numpy()
        metrics.update({name: metric_entry(accuracy_from_correct(flags, confidence)) for name, flags in scores.items()})
        for kind in TYPE_BLOCKS:
            mask = kinds == kind
            if mask.any():
                by_type[kind] = {
                    name: metric_entry(accuracy_from_correct(f[mask], confidence)) for name, f in scores.items()
                }
    if sugarcrepe_correct is not None:
        correct = sugarcrepe_correct["correct"].to_numpy(dtype=bool)
        metrics["sugarcrepe"] = metric_entry(accuracy_from_correct(correct, confidence))
        sc_kinds = sugarcrepe_correct["type"].astype(str).to_numpy()
        for kind in TYPE_BLOCKS:
            mask = sc_kinds == kind
            if mask.any():
                by_type.setdefault(kind, {})["sugarcrepe"] = metric_entry(
                    accuracy_from_correct(correct[mask], confidence)
                )
    return {
        "benchmark": "bivlc",
        "model": model,
        "confidence": confidence,
        "interval": f"Wilson {round(100 * confidence)}%",
        "n_bivlc": 0 if results is None else len(results),
        "n_sugarcrepe": 0 if sugarcrepe_correct is None else len(sugarcrepe_correct),
        "metrics": metrics,
        "by_type": by_type,
    }


def load_released_metrics(
    mirror: str | os.PathLike, confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, dict[str, Any]]:
    """{paper row name: metrics JSON} of the four released models, read (md5-checked) from a mirror."""
    from itmbench.sources.loading import load_released

    out: dict[str, dict[str, Any]] = {}
    for suffix, (file_model, row) in RELEASED_MODELS.items():
        results = load_released(f"bivlc_results_{suffix}", mirror)
        correct = load_released(f"bivlc_sugarcrepe_correct_{suffix}", mirror)
        out[row] = metrics_from_released(results, correct, file_model, confidence, f"BiVLC_{file_model}.csv")
    return out


def load_released_paired(
    mirror: str | os.PathLike,
    pairs: Iterable[tuple[str, str]] = (("clip_trohn_img", "clip_coco"),),
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Paired tests (`itmbench.papers.paired`) of released models over the same instances (their released
    per-instance results, matched by id): pairs of `RELEASED_MODELS` keys, records named by the printed rows."""
    from itmbench.papers.paired import paired_records
    from itmbench.sources.loading import load_released

    outcomes: dict[str, pd.DataFrame] = {}
    pairs = [tuple(p) for p in pairs]
    for suffix in sorted({m for pair in pairs for m in pair}):
        file_model, row = RELEASED_MODELS[suffix]
        results = load_released(f"bivlc_results_{suffix}", mirror)
        scores = released_scores(results, f"BiVLC_{file_model}.csv")
        frame = pd.DataFrame({k: scores[k] for k in ("i2t", "t2i", "group")}, index=results["id"].to_numpy())
        outcomes[row] = frame.sort_index()
    named = [(RELEASED_MODELS[a][1], RELEASED_MODELS[b][1]) for a, b in pairs]
    return paired_records("bivlc", outcomes, named, ("i2t", "t2i", "group"), n_boot, seed, confidence)


def bivlc_long_table(
    metrics_by_row: Mapping[str, Mapping[str, Any]],
    tables: Iterable[str] = tuple(TABLE_COLUMNS),
    printed_rows_only: bool = False,
) -> pd.DataFrame:
    """Tables 2-4 as a long table (table, block, row, column, value, lo, hi, n) from metrics JSONs.

    A metric absent from a model's JSON is left out. With printed_rows_only, a model is laid out in
    a table only where the paper prints a row of that name (CLIP_TROHN-* are not in Table 2).
    """
    printed: dict[str, set[str]] = {}
    if printed_rows_only:
        pub = load_published("bivlc")
        printed = {t: set(pub.loc[pub["table"] == t, "row"]) for t in TABLE_COLUMNS}
    records: list[tuple[Any, ...]] = []
    for table in tables:
        if table not in TABLE_COLUMNS:
            raise KeyError(f"BiVLC table {table!r} is not regenerated; expected one of {list(TABLE_COLUMNS)}")
        for row, doc in metrics_by_row.items():
            if printed_rows_only and row not in printed[table]:
                continue
            if table == "Table 4":
                groups = [(block, doc.get("by_type", {}).get(kind, {})) for kind, block in TYPE_BLOCKS.items()]
            else:
                groups = [("", doc.get("metrics", {}))]
            for block, metrics in groups:
                for name in TABLE_COLUMNS[table]:
                    if name in metrics:
                        m = metrics[name]
                        records.append(
                            (
                                table,
                                block,
                                row,
                                PRINTED_COLUMNS[name],
                                float(m["value"]),
                                float(m["lo"]),
                                float(m["hi"]),
                                int(m["n"]),
                            )
                        )
    frame = pd.DataFrame.from_records(records, columns=list(LONG_COLUMNS))
    return frame.astype({"value": float, "lo": float, "hi": float, "n": "int64"})


def released_long_table(mirror: str | os.PathLike, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """The released models' rows of Tables 2-4 (only where the paper prints them), regenerated."""
    return bivlc_long_table(load_released_metrics(mirror, confidence), printed_rows_only=True)


def released_comparison(mirror: str | os.PathLike, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Released-file rows of Tables 2-4 beside the published cells (status match / differs per cell)."""
    return compare(released_long_table(mirror, confidence), "bivlc")


# --- Table 5 and Section 5.3 from the released detector outputs and GPT-4V's answers ---------------

# released-registry key suffix of a detector -> row name in the paper
DETECTOR_ROWS: dict[str, str] = {"baseline": "CLIP_Det", "trohn_img": "CLIP_TROHN-Img/Det"}
# detector metric -> Table 5 column as printed
TABLE5_COLUMNS: dict[str, str] = {
    "text_detection": "Text detection acc",
    "img_detection": "Img detection acc",
    "i2t": "I2T",
    "t2i": "T2I",
    "group": "Group",
}
SECTION53 = "Section 5.3"
STATE_OF_THE_ART = "SugarCrepe state of the art"
DETECTOR_ACCURACY = "SugarCrepe detector accuracy"


def _cell(table: str, block: str, row: str, column: str, accuracy: Accuracy) -> tuple[Any, ...]:
    """One long-table record of a percentage with its Wilson interval."""
    lo, hi = accuracy.ci_percent
    return (table, block, row, column, accuracy.percent, lo, hi, accuracy.n)


def detector_long(
    bivlc: Mapping[str, pd.DataFrame],
    sugarcrepe: Mapping[str, pd.DataFrame],
    confidence: float = DEFAULT_CONFIDENCE,
    threshold: float = DETECTOR_THRESHOLD,
) -> pd.DataFrame:
    """Table 5 (BiVLC detection accuracies, detector-based I2T/T2I/Group) and the detectors' SugarCrepe accuracy.

    `bivlc` and `sugarcrepe` map a printed row (CLIP_Det, ...) to its released detector outputs
    (`read_detector_results`); Wilson intervals on every accuracy.
    """
    records: list[tuple[Any, ...]] = []
    for row, frame in bivlc.items():
        pairs = pair_rows(frame, f"BiVLC detector results of {row}", images=True)
        flags = detection_accuracy_flags(pairs, threshold)
        scores = detector_comparisons(pairs, threshold)
        flags.update(i2t=scores.i2t, t2i=scores.t2i, group=scores.group)
        for name, column in TABLE5_COLUMNS.items():
            records.append(_cell("Table 5", "", row, column, accuracy_from_correct(flags[name], confidence)))
    for row, frame in sugarcrepe.items():
        pairs = pair_rows(frame, f"SugarCrepe detector results of {row}", images=False)
        correct = sugarcrepe_detector_correct(pairs)
        records.append(
            _cell(SECTION53, DETECTOR_ACCURACY, row, "SugarCrepe", accuracy_from_correct(correct, confidence))
        )
    frame = pd.DataFrame.from_records(records, columns=list(LONG_COLUMNS))
    return frame.astype({"value": float, "lo": float, "hi": float, "n": "int64"})


def gpt4v_long(gpt4v: pd.DataFrame) -> pd.DataFrame:
    """GPT-4V's SugarCrepe cell of Section 5.3 (the mean of its two answer orders, bootstrap interval) from the
    figure data (`itmbench.papers.bivlc.figures.gpt4v_figure_data`); n is the number of instances."""
    from itmbench.papers.predictions import MEAN_OF_ORDERS

    overall = gpt4v[gpt4v["subset"] == "all"]
    mean = overall[overall["order"] == MEAN_OF_ORDERS]
    if mean.empty:
        raise ValueError("GPT-4V figure data has no overall mean of orders; expected both answer orders")
    n = int(overall.loc[overall["order"] != MEAN_OF_ORDERS, "n"].max())
    record = (SECTION53, STATE_OF_THE_ART, "GPT-4V", "SugarCrepe", *mean[["accuracy", "lo", "hi"]].iloc[0], n)
    frame = pd.DataFrame.from_records([record], columns=list(LONG_COLUMNS))
    return frame.astype({"value": float, "lo": float, "hi": float, "n": "int64"})


def load_detector_results(mirror: str | os.PathLike) -> tuple[dict[str, pd.DataFrame], dict[str, pd.DataFrame]]:
    """({row: BiVLC detector outputs}, {row: SugarCrepe detector outputs}) of the two released detectors."""
    from itmbench.sources.loading import load_released

    bivlc = {row: load_released(f"bivlc_detector_bivlc_{key}", mirror) for key, row in DETECTOR_ROWS.items()}
    sugarcrepe = {row: load_released(f"bivlc_detector_sugarcrepe_{key}", mirror) for key, row in DETECTOR_ROWS.items()}
    return bivlc, sugarcrepe


def detector_comparison(
    mirror: str | os.PathLike, gpt4v: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Table 5 and Section 5.3 regenerated from the released files, beside every printed cell of them.

    Cells the released files cannot give (the Random row; VQAScore-XXL and CapPa) are kept as
    ``not_regenerated``; the others are ``match`` or ``differs``.
    """
    detectors = detector_long(*load_detector_results(mirror), confidence)
    table5 = detectors["table"] == "Table 5"
    # Section 5.3 in the text's order: the state of the art (GPT-4V), then the detectors on SugarCrepe
    long = pd.concat([detectors[table5], gpt4v_long(gpt4v), detectors[~table5]], ignore_index=True)
    return compare(long, "bivlc", keep_unregenerated=True, tables=("Table 5", SECTION53))


TABLE5_CAPTION = (
    "Detector outputs: the released per-row probabilities of synthetic (src/Detectors/results), called "
    f"synthetic above {DETECTOR_THRESHOLD:g} as the released code's rounding does; I2T, T2I and Group by the "
    "paper's detector procedure (papers/bivlc/detectors.py). Intervals: Wilson 95%."
)
SECTION53_CAPTION = (
    "GPT-4V: the mean of its two answer orders' accuracies over the released answers (interval: bootstrap over "
    "instances); the detectors: caption+ judged less synthetic than caption- (Wilson 95%). VQAScore-XXL and CapPa "
    "released no per-instance answers."
)


def write_released_tables(
    mirror: str | os.PathLike,
    out_dir: str | os.PathLike,
    confidence: float = DEFAULT_CONFIDENCE,
    gpt4v: pd.DataFrame | None = None,
) -> list[Path]:
    """Write one comparison table per BiVLC table from the released files; return the paths.

    table2/3/4_released (the four models' per-instance results), table5_released (the detectors) and
    section5_3_released (GPT-4V and the detectors on SugarCrepe: `gpt4v` is the GPT-4V figure data,
    computed from the mirror when None).
    """
    compared = released_comparison(mirror, confidence)
    paths: list[Path] = []
    for table, part in compared.groupby("table", sort=False):
        number = str(table).split()[-1]
        title = f"BiVLC {table}: rows regenerated from the released per-instance results vs published"
        paths += write_comparison(part, Path(out_dir) / f"table{number}_released", title)
    if gpt4v is None:
        from itmbench.papers.bivlc.figures import gpt4v_figure_data

        gpt4v = gpt4v_figure_data(mirror)
    detectors = detector_comparison(mirror, gpt4v, confidence)
    table5 = detectors[detectors["table"] == "Table 5"]
    title = "BiVLC Table 5: the synthetic-vs-natural detectors regenerated from their released outputs vs published"
    paths += write_comparison(table5, Path(out_dir) / "table5_released", title, caption=TABLE5_CAPTION)
    section = detectors[detectors["table"] == SECTION53]
    title = "BiVLC Section 5.3: SugarCrepe numbers quoted in the text, regenerated from released files vs published"
    paths += write_comparison(section, Path(out_dir) / "section5_3_released", title, caption=SECTION53_CAPTION)
    return paths


# --- Tables 2-4 filled from the world's metrics ----------------------------------------------------


def bivlc_world_long(metrics: WorldMetrics, rows: Mapping[str, str]) -> pd.DataFrame:
    """BiVLC Tables 2-4 from the world's BiVLC metrics (rows named by the mapping)."""
    docs = metrics.get("bivlc", {})
    by_row = {rows.get(m, m): docs[m] for m in models_of(metrics, "bivlc")}
    model_of = {rows.get(m, m): m for m in docs}
    long = bivlc_long_table(by_row)
    if long.empty:
        return long_frame([])
    long["model"] = long["row"].map(model_of)
    return long[list(WORLD_LONG_COLUMNS)].reset_index(drop=True)


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """BiVLC's world cells (rows named by the mapping)."""
    return bivlc_world_long(metrics, rows)


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    return {
        "Table 2": "Random = the world's random-embedding model.",
    }


# --- Table 6 (TROHN-Text statistics) from the world's TROHN-Text trainer ----------------------------

TABLE6 = "Table 6"
# SugarCrepe's subtypes in Table 6's printed order
TABLE6_SUBSETS: tuple[str, ...] = (
    "replace_obj",
    "replace_att",
    "replace_rel",
    "swap_obj",
    "swap_att",
    "add_obj",
    "add_att",
)
TABLE6_TOTAL = "TOTAL"
INSTANCES_ROW = "# instances"
SHARE_ROW = "share of instances (%)"
TROHN_TEXT_TRAINER = "negclip"
TABLE6_CAPTION = (
    "An instance is a train caption with its image and one hard-negative caption (the paper's: one image and "
    "two captions). World: the hard negatives the TROHN-Text trainer (negclip) made and trained on, counted from "
    "its training summary (history.json): one SugarCrepe-style edit per train caption where one false of the "
    "image exists (train.hard_negatives_per_sample), subtypes tried in a random order; the paper's LLM wrote one "
    "per subtype for each COCO caption and kept those that follow the template. The share row (Wilson intervals) "
    "compares the mix of subtypes; its published values are the printed counts over the printed TOTAL (not printed)."
)


def table6_column(subset: str) -> str:
    """A subtype's Table 6 column: 'replace_obj' -> 'Replace Obj'."""
    return " ".join(word.capitalize() for word in subset.split("_"))


def trohn_text_counts(summary: Any, source: str) -> tuple[str, dict[str, int]]:
    """(model, hard negatives per subtype) of a TROHN-Text (negclip) trainer's summary (its history.json).

    The world's trainer records them as ``samples.by_subset``, the COCO source's as ``samples.negatives``.
    """
    if not isinstance(summary, Mapping) or summary.get("trainer") != TROHN_TEXT_TRAINER:
        got = summary.get("trainer") if isinstance(summary, Mapping) else type(summary).__name__
        raise InputError(
            f"{source}: key trainer: expected the training summary of a {TROHN_TEXT_TRAINER} model, got {got!r}"
        )
    samples = summary.get("samples")
    counts = samples.get("by_subset", samples.get("negatives")) if isinstance(samples, Mapping) else None
    if not isinstance(counts, Mapping):
        raise InputError(
            f"{source}: key samples.by_subset: expected the hard negatives counted by subtype, got {counts!r}"
        )
    out: dict[str, int] = {}
    for subset, count in counts.items():
        if subset not in TABLE6_SUBSETS:
            raise InputError(
                f"{source}: key samples.by_subset.{subset}: expected a subtype among {', '.join(TABLE6_SUBSETS)}"
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(f"{source}: key samples.by_subset.{subset}: expected a count >= 0, got {count!r}")
        out[subset] = count
    # no hard negative at all is a count too: an LLM that followed no template (the small COCO DAG's) gave none
    return str(summary.get("model", Path(source).parent.name)), {s: out.get(s, 0) for s in TABLE6_SUBSETS}


def table6_long(
    counts_by_model: Mapping[str, Mapping[str, int]], confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Table 6 cells of each model's TROHN-Text: instances per subtype and in total, and each subtype's share (%).

    One model fills the printed rows; several each get a block named after the model.
    """
    records: list[tuple[Any, ...]] = []
    for model, counts in counts_by_model.items():
        block = "" if len(counts_by_model) == 1 else model
        total = int(sum(counts[s] for s in TABLE6_SUBSETS))
        nan = float("nan")
        for subset in TABLE6_SUBSETS:
            records.append(
                (TABLE6, block, INSTANCES_ROW, table6_column(subset), float(counts[subset]), nan, nan, total, model)
            )
        records.append((TABLE6, block, INSTANCES_ROW, TABLE6_TOTAL, float(total), nan, nan, total, model))
        for subset in TABLE6_SUBSETS if total else ():  # no instance: no share of them
            share = _cell(TABLE6, block, SHARE_ROW, table6_column(subset), _share(counts[subset], total, confidence))
            records.append((*share, model))
    frame = pd.DataFrame.from_records(records, columns=[*LONG_COLUMNS, "model"])
    return frame.astype({"value": float, "lo": float, "hi": float, "n": "int64"})


def _share(count: int, total: int, confidence: float) -> Accuracy:
    """A subtype's share of the instances as a proportion with its Wilson interval."""
    return accuracy_from_correct(np.r_[np.ones(count, bool), np.zeros(total - count, bool)], confidence)


def table6_published() -> pd.DataFrame:
    """BiVLC's transcription plus Table 6's share row, derived from the printed counts (the paper prints none)."""
    pub = load_published("bivlc")
    printed = pub[(pub["table"] == TABLE6) & (pub["row"] == INSTANCES_ROW)].set_index("column")["value"]
    total = float(printed[TABLE6_TOTAL])
    derived = pd.DataFrame(
        {
            "table": TABLE6,
            "block": "",
            "row": SHARE_ROW,
            "column": [table6_column(s) for s in TABLE6_SUBSETS],
            "value": [100 * float(printed[table6_column(s)]) / total for s in TABLE6_SUBSETS],
            "decimals": 2,
            "note": "not printed: the printed count over the printed TOTAL",
        }
    )
    return pd.concat([pub, derived], ignore_index=True)


def trohn_text_comparison(
    histories: Iterable[str | os.PathLike], confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Table 6 from TROHN-Text trainers' summaries beside the printed counts (compared, never flagged)."""
    from itmbench.reading import read_json

    counts: dict[str, dict[str, int]] = {}
    for path in histories:
        model, by_subset = trohn_text_counts(read_json(path), str(path))
        if model in counts:
            raise InputError(f"{path}: key model: {model!r} again; expected one training summary per model")
        counts[model] = by_subset
    if not counts:
        raise InputError("Table 6: no training summary given; expected a TROHN-Text (negclip) model's history.json")
    long = table6_long(counts, confidence)
    return compare(long, "bivlc", table6_published(), expect_equal=False, keep_unregenerated=True, tables=(TABLE6,))


def write_trohn_text_table(
    histories: Iterable[str | os.PathLike], prefix: str | os.PathLike, confidence: float = DEFAULT_CONFIDENCE
) -> list[Path]:
    """Write Table 6 (prefix.csv, .md, .tex) from TROHN-Text trainers' summaries, beside the printed counts."""
    from itmbench.papers.world import WORLD_CAPTION

    compared = trohn_text_comparison(histories, confidence)
    title = "BiVLC Table 6: TROHN-Text statistics, the world's TROHN-Text beside the published counts"
    caption = f"{WORLD_CAPTION} {TABLE6_CAPTION}"
    return write_comparison(compared, prefix, title, row_header="statistic", caption=caption)
