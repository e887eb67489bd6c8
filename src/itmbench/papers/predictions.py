"""Score predictions made elsewhere, in the papers' released formats, with the project's metric functions.

One entry point, `score_predictions(kind, paths, ...)`, returns a JSON-able dict
``{"kind", "options", "systems": {label: {"files", "metrics": {name: {value, lo, hi, n}}, ...}}}``
(values in percent, as the papers print them), and `itmbench.cli.predictions` gives the
CLI ``itmbench score-predictions KIND FILES... [--annotations A] [--positives P...] [--out-dir D]``,
which prints that JSON and, with --out-dir, writes ``metrics.json`` and ``metrics.{csv,md,tex}``.

Kinds and formats (``ranked`` is scored here; each paper's own format by its package's `predictions` module,
the paper named by `itmbench.papers.registry.PREDICTION_FORMATS`):

``bison``
    Prediction JSONs ``[{"bison_id", "predicted_image_id"}, ...]`` (one system per file) against
    an annotation file given with ``annotations``: the released JSON (``{"data": [{"bison_id",
    "caption_id", "image_candidates", "true_image_id"}]}``) or a canonical annotations table
    (parquet/CSV with bison_id, image_id_0, image_id_1, true_image_id, e.g. the world's). Accuracy
    with a Wilson interval. Every annotated triple needs exactly one prediction naming one of its two
    candidates (decision, BISON's option ``bison_missing`` = "error": a missing prediction is an error, so a
    truncated file cannot pass for a weak model; "wrong" counts it as a wrong answer and reports
    n_missing); an unknown bison_id is an error.
``ranked``
    Ranked lists ``{"<query id>": [gallery ids, best first], ...}``, one JSON per direction (i2t:
    image queries ranking caption ids; t2i: caption queries ranking image ids), the direction given
    as ``i2t=PATH`` / ``t2i=PATH`` or read from the file name (i2t, t2i, image_to_caption,
    caption_to_image). Positives (``positives``): ECCV-style association JSONs
    ``{"<query id>": [positive ids]}`` (direction as above), or tables (parquet/CSV) with
    image_id, caption_id [, direction (image_to_caption | caption_to_image)] [, source or
    positive_set, selected with ``positive_set`` = NAME; any column with ``positive_set`` =
    COLUMN=VALUE, e.g. split=test], or CxC tables (task, a_id, b_id: rows of task sits and
    original, a = caption, b = image). The queries scored are those with a positive; each
    needs a ranking. Every ranked id must be in the gallery: the ids of that modality the positives
    name (every row of every positives file, before ``positive_set`` selects some); ``positive_set``
    with an association JSON (one set) is an error.
    Per direction: R@K (hit rate, Wilson interval), R-Precision and mAP@R
    (percentile bootstrap over queries); with both directions, their mean (ECCV's Table 4 way;
    bootstrap resampling each direction on its own). A ranking shorter than R cannot give R-P or
    mAP@R exactly: an error by default, a lower bound (missing ranks non-relevant) with strict=False.
``bivlc``
    The released per-instance CSVs: ``BiVLC_<model>.csv`` (the four comparisons as booleans) and/or
    ``SUGARCREPE_CORRECT_<model>.csv``; one system per model (the name from the released file name,
    else the file stem). I2T, T2I, Group and the four comparisons are recomputed from the
    comparisons (and checked against the file's text/image/group_score columns), overall and by
    type, with Wilson intervals.
``sugarcrepe_gpt4v``
    SugarCrepe answer JSONs in GPT-4V's released format (``gpt-4v-results/<order>/gpt4v-<subset>.json``
    or a folder holding both orders), one system. An answer is correct when its
    multiple_choice_answer equals the positive caption (whitespace-stripped); a refusal or "neither"
    is wrong. The file's ``correct`` flag must agree (an error names the record otherwise).
    Accuracy per order and per (subset, order) with Wilson intervals, and the mean of the two orders'
    accuracies (the number the BiVLC paper quotes, 92.19), its interval a percentile bootstrap over
    instances (paired when both orders hold the same instances).
    Per order also the SugarCrepe paper's own metrics under ``sugarcrepe`` (accuracy per subtype, the
    mean over subtypes, the pooled accuracy: the scorer of the world's SugarCrepe).

Coverage: every format is checked against the benchmark's instances (BISON: the annotations;
ranked: the queries with positives; BiVLC: the declared row count of the released files; GPT-4V:
the 7 subsets of both orders, ids 0..n-1 of each subset's declared count). A missing instance is an
error naming how many and the first few, unless ``allow_missing`` (CLI ``--allow-missing``): then the
metrics are computed over the instances present, the system's JSON records ``n_missing``, and the
log says so. An unknown or duplicated id is an error naming both occurrences, whatever the option.

Bootstrap: ``n_boot`` = 1000 draws, ``seed`` = 0, percentile interval at ``confidence`` = 0.95.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.accuracy import Accuracy, accuracy_from_correct
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.metrics.ranking import map_at_r_batch, r_precision_batch, recall_at_k_batch
from itmbench.papers.registry import PAPERS, prediction_paper
from itmbench.papers.registry import paper as registered_paper
from itmbench.reading import decode_utf8, read_bytes, read_parquet_file
from itmbench.sources._common import INT64_MAX, SourceFormatError, check_unique, parse_int, read_json_file
from itmbench.sources.released import check_count

log = logging.getLogger("itmbench")
DIRECTIONS: dict[str, str] = {"i2t": "image_to_caption", "t2i": "caption_to_image"}
MEAN_OF_ORDERS = "mean of orders"
PathLike = str | os.PathLike


# The papers' prediction options (the registry's `prediction_options`) that `score_predictions` takes as keywords of
# their own; the others travel in ScoreOptions.paper.
KEYWORD_OPTIONS = ("annotations",)


def paper_option_declarations() -> dict[str, dict[str, Any]]:
    """Each paper's own prediction option (its argparse dest: `--a-b` is a_b) -> its argparse keywords, as the
    registry declares them, but those of KEYWORD_OPTIONS."""
    declared = {}
    for entry in PAPERS.values():
        for flag, keywords in entry.prediction_options:
            dest = flag.lstrip("-").replace("-", "_")
            if dest not in KEYWORD_OPTIONS:
                declared[dest] = dict(keywords)
    return declared


@dataclass(frozen=True)
class ScoreOptions:
    """How intervals are computed and how strict the ranked metrics are; `paper`: the papers' own options (the
    registry's `prediction_options`, by dest name), each declared default filled in and each value checked against
    its declared choices."""

    confidence: float = DEFAULT_CONFIDENCE
    n_boot: int = 1000
    seed: int = 0
    ks: tuple[int, ...] = (1, 5, 10)
    strict: bool = True
    allow_missing: bool = False
    paper: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        declared = paper_option_declarations()
        unknown = sorted(set(self.paper) - set(declared))
        if unknown:
            raise ValueError(
                f"no paper declares the prediction option {unknown[0]!r}; expected one of {sorted(declared)}"
            )
        values = {dest: keywords.get("default") for dest, keywords in declared.items()} | dict(self.paper)
        for dest, value in values.items():
            choices = declared[dest].get("choices")
            if choices is not None and value not in choices:
                raise ValueError(f"{dest} must be one of {list(choices)}, got {value!r}")
        object.__setattr__(self, "paper", values)

    def as_json(self) -> dict[str, Any]:
        """The options as the metrics JSON records them: the shared ones and each paper option beside them."""
        shared = {k: v for k, v in asdict(self).items() if k != "paper"}
        return {**shared, "ks": list(self.ks), **self.paper}


# --- shared helpers ---------------------------------------------------------------------------------


class MissingPredictionsError(ValueError):
    """Predictions do not cover every instance of the benchmark (and --allow-missing was not given)."""


def check_coverage(
    path: PathLike,
    n_missing: int,
    n_expected: int,
    what: str,
    options: ScoreOptions,
    missing_ids: Sequence[Any] = (),
    message: str | None = None,
) -> int:
    """Missing instances: an error naming how many and the first few, unless options.allow_missing (logged).

    Returns n_missing, for the system's JSON. `message` replaces the default first part of the text.
    """
    if n_missing <= 0:
        return 0
    shown = ", ".join(str(i) for i in list(missing_ids)[:5])
    text = message or f"{path}: {n_missing:,} of {n_expected:,} {what} have no prediction"
    if shown:
        text += f" (first: {shown}{', ...' if n_missing > 5 else ''})"
    if not options.allow_missing:
        raise MissingPredictionsError(f"{text}; pass --allow-missing to score the rest")
    log.warning("%s; scored without them (--allow-missing)", text)
    return n_missing


def read_table_file(path: PathLike) -> pd.DataFrame:
    """A canonical table (.parquet or .csv) read with pandas; unreadable bytes are an error naming the file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return read_parquet_file(path)
    if suffix != ".csv":
        raise ValueError(f"{path}: expected a .parquet or .csv table")
    text = decode_utf8(read_bytes(path), path)
    try:
        return pd.read_csv(StringIO(text))
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise ValueError(f"{path}: not a readable CSV table ({str(err).strip()})") from None


def int_id_column(table: pd.DataFrame, name: str, path: PathLike) -> np.ndarray:
    """Column `name` as int64 ids: every value an integer in [0, 2**63 - 1], else an error naming the row."""
    values = table[name].to_numpy()
    for i, value in enumerate(values):
        ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        if not ok and isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
            ok = True
        if not ok and isinstance(value, str) and value.strip().isdigit():
            ok = True
        if not ok or not 0 <= int(value) <= INT64_MAX:
            raise SourceFormatError(path, f"row {i} {name}", "an integer id in [0, 2**63 - 1]", value)
    return np.asarray([int(v) for v in values], dtype=np.int64)


def accuracy_json(accuracy: Accuracy) -> dict[str, float | int]:
    """One accuracy as JSON: percent value, Wilson lo/hi, n and the count correct."""
    lo, hi = accuracy.ci_percent
    return {"value": accuracy.percent, "lo": lo, "hi": hi, "n": accuracy.n, "n_correct": accuracy.successes}


def bootstrap_mean_interval(
    samples: Sequence[np.ndarray],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    chunk: int = 50,
) -> tuple[float, float]:
    """Percentile interval of the mean of per-sample means, each sample resampled on its own (chunked, seeded)."""
    arrays = [np.asarray(s, dtype=float) for s in samples]
    if not arrays or any(a.size == 0 for a in arrays):
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    draws = np.zeros(n_boot)
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        total = np.zeros(size)
        for a in arrays:
            idx = rng.integers(0, a.size, size=(size, a.size))
            total += a[idx].mean(axis=1)
        draws[start : start + size] = total / len(arrays)
    lo, hi = np.percentile(draws, [50 * (1 - confidence), 50 * (1 + confidence)])
    return (float(lo), float(hi))


def mean_json(samples: Sequence[np.ndarray], options: ScoreOptions) -> dict[str, float | int]:
    """Mean of per-sample means (x100) with its bootstrap interval."""
    value = float(np.mean([np.mean(s) for s in samples]))
    lo, hi = bootstrap_mean_interval(samples, options.n_boot, options.seed, options.confidence)
    return {"value": 100 * value, "lo": 100 * lo, "hi": 100 * hi, "n": int(sum(len(s) for s in samples))}


def split_spec(spec: PathLike) -> tuple[str | None, Path]:
    """'i2t=path' -> ('i2t', path); a plain path -> (None, path)."""
    text = os.fspath(spec)
    match = re.fullmatch(r"(i2t|t2i)=(.+)", text)
    return (match.group(1), Path(match.group(2))) if match else (None, Path(text))


def _direction_of(spec: PathLike, what: str) -> tuple[str, Path]:
    """Direction (i2t | t2i) of a ranking or positives file, explicit ('i2t=PATH') or from its name."""
    given, path = split_spec(spec)
    if given:
        return given, path
    name = path.name.lower()
    found = {d for d, long in DIRECTIONS.items() if re.search(rf"(^|[^a-z0-9]){d}([^a-z0-9]|$)", name) or long in name}
    if len(found) != 1:
        raise ValueError(
            f"{path}: cannot tell the direction of this {what} file from its name; "
            "expected 'i2t' or 't2i' (or image_to_caption / caption_to_image) in the name, or pass i2t=PATH / t2i=PATH"
        )
    return found.pop(), path


# --- ranked lists ------------------------------------------------------------------------------------


def read_ranking_json(path: PathLike) -> dict[int, np.ndarray]:
    """{query id: ranked gallery ids} from a JSON object; ids integers (or digit strings), unique per list."""
    document = read_json_file(path)
    if not isinstance(document, Mapping):
        raise SourceFormatError(
            path, "top level", 'an object {"<query id>": [ranked ids, best first], ...}', type(document).__name__
        )
    check_count(path, len(document), "keys")
    out: dict[int, np.ndarray] = {}
    seen: dict = {}
    for key, ranked in document.items():
        query = parse_int(key, path, f"key {key!r}", "a query id (digits)")
        check_unique(path, query, f"key {key!r}", seen, "one ranking per query id")
        if not isinstance(ranked, list):
            raise SourceFormatError(path, f"key {key!r}", "a list of ranked gallery ids", ranked)
        ids = [parse_int(v, path, f"key {key!r}[{i}]", "an integer gallery id") for i, v in enumerate(ranked)]
        if len(set(ids)) != len(ids):  # the first repeat and where it was first ranked, in one pass
            first: dict[int, int] = {}
            for i, v in enumerate(ids):
                if v in first:
                    raise SourceFormatError(
                        path,
                        f"key {key!r}[{i}]",
                        f"distinct gallery ids (id {v} is ranked twice, also at [{first[v]}])",
                    )
                first[v] = i
        out[query] = np.asarray(ids, dtype=np.int64)
    return out


def read_positive_pairs(spec: PathLike, positive_set: str | None = None) -> pd.DataFrame:
    """Positive (image_id, caption_id, direction) pairs from an association JSON or a positives table.

    direction is 'image_to_caption', 'caption_to_image' or 'both' (a table without a direction column).
    """
    return read_positives_and_gallery(spec, positive_set)[0]


def read_positives_and_gallery(
    spec: PathLike, positive_set: str | None = None
) -> tuple[pd.DataFrame, dict[str, set[int]]]:
    """`read_positive_pairs`, and the gallery the file names: {"image": ids, "caption": ids}, every id of each
    modality in it (a table's rows of every set, before `positive_set` selects some)."""
    given, path = split_spec(spec)
    suffix = path.suffix.lower()
    if suffix == ".json":
        direction, path = _direction_of(spec, "positives")
        if positive_set is not None:  # an association JSON is one set: a name to select would be ignored
            raise ValueError(
                f"{path}: --positive-set {positive_set!r} selects rows of a positives table; an association JSON "
                "holds one set (drop --positive-set, or give a .parquet/.csv table with a source or positive_set "
                "column)"
            )
        document = read_json_file(path)
        if not isinstance(document, Mapping):
            raise SourceFormatError(
                path, "top level", 'an object {"<query id>": [positive ids], ...}', type(document).__name__
            )
        check_count(path, len(document), "keys")
        queries: list[int] = []
        targets: list[int] = []
        seen: dict = {}
        for key, values in document.items():
            query = parse_int(key, path, f"key {key!r}", "a query id (digits)")
            check_unique(path, query, f"key {key!r}", seen, "one key per query id")
            if not isinstance(values, list):
                raise SourceFormatError(path, f"key {key!r}", "a list of positive ids", values)
            for i, value in enumerate(values):
                targets.append(parse_int(value, path, f"key {key!r}[{i}]", "an integer positive id"))
                queries.append(query)
        images, captions = (queries, targets) if direction == "i2t" else (targets, queries)
        frame = pd.DataFrame({"image_id": images, "caption_id": captions, "direction": DIRECTIONS[direction]})
        return frame, {"image": set(images), "caption": set(captions)}
    if suffix not in (".parquet", ".csv"):
        raise ValueError(f"{path}: positives must be an association .json or a .parquet/.csv table")
    table = read_table_file(path)
    if {"task", "a_id", "b_id"} <= set(table.columns) and not {"image_id", "caption_id"} <= set(table.columns):
        table = table[table["task"].isin(["sits", "original"])].rename(
            columns={"a_id": "caption_id", "b_id": "image_id"}
        )
    missing = [c for c in ("image_id", "caption_id") if c not in table.columns]
    if missing:
        raise SourceFormatError(
            path, "columns", "image_id and caption_id (or CxC's task, a_id, b_id)", f"columns {list(table.columns)}"
        )
    gallery = {
        "image": set(int_id_column(table, "image_id", path).tolist()),
        "caption": set(int_id_column(table, "caption_id", path).tolist()),
    }
    if positive_set is not None:
        column, _, value = positive_set.rpartition("=")
        positive_set = value
        if not column:
            column = next((c for c in ("source", "positive_set") if c in table.columns), "")
        if column not in table.columns:
            raise SourceFormatError(
                path, "columns", f"a {column or 'source or positive_set'} column to select {positive_set!r}"
            )
        if positive_set not in set(table[column].astype(str)):
            raise SourceFormatError(
                path,
                f"column {column}",
                f"positive set {positive_set!r} among {sorted(set(table[column].astype(str)))}",
            )
        table = table[table[column].astype(str) == positive_set]
    if given is not None:
        direction_value = pd.Series(DIRECTIONS[given], index=table.index)
    elif "direction" in table.columns:
        direction_value = table["direction"].astype(str)
        bad = ~direction_value.isin(list(DIRECTIONS.values()))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise SourceFormatError(
                path, f"row {i} direction", "image_to_caption or caption_to_image", direction_value.iloc[i]
            )
    else:
        direction_value = pd.Series("both", index=table.index)
    check_count(path, len(table), "rows")
    frame = pd.DataFrame(
        {
            "image_id": int_id_column(table, "image_id", path),
            "caption_id": int_id_column(table, "caption_id", path),
            "direction": direction_value.to_numpy(),
        }
    )
    return frame, gallery


def check_gallery(rankings: Mapping[int, np.ndarray], gallery: set[int], path: PathLike, what: str) -> None:
    """Every ranked id must be in the gallery (the ids of that modality the positives name): a file of other ids
    (another split, ids shifted by an offset) would score 0 everywhere instead of being refused."""
    if not rankings:
        return
    known = np.fromiter(gallery, dtype=np.int64, count=len(gallery))
    outside = ~np.isin(np.concatenate(list(rankings.values())), known)  # one pass over every ranked id
    if outside.any():
        at = int(np.flatnonzero(outside)[0])
        for query, ranked in rankings.items():
            if at < len(ranked):
                raise SourceFormatError(
                    path,
                    f"key '{query}'[{at}]",
                    f"a {what} id of the gallery (the {len(gallery):,} {what} ids the positives name; "
                    f"{int(outside.sum()):,} ranked ids of this file are outside it)",
                    int(ranked[at]),
                )
            at -= len(ranked)


def positives_for(pairs: pd.DataFrame, direction: str) -> dict[int, set[int]]:
    """{query id: positive ids} of one direction (i2t | t2i) from the pairs table."""
    part = pairs[pairs["direction"].isin([DIRECTIONS[direction], "both"])]
    query, target = ("image_id", "caption_id") if direction == "i2t" else ("caption_id", "image_id")
    # numpy, not a pandas groupby: iterating 300,000 groups costs a pandas object each
    queries, targets = part[query].to_numpy(np.int64), part[target].to_numpy(np.int64)
    order = np.argsort(queries, kind="stable")
    queries, targets = queries[order], targets[order]
    starts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1]]) if len(queries) else np.zeros(0, np.int64)
    return {int(q): set(t.tolist()) for q, t in zip(queries[starts], np.split(targets, starts[1:]))}


def ranked_per_query(
    rankings: Mapping[int, np.ndarray],
    positives: Mapping[int, set[int]],
    path: PathLike,
    options: ScoreOptions,
) -> tuple[dict[str, np.ndarray], int]:
    """Per-query R@K, R-Precision and mAP@R (fractions) of the queries that have positives, and how many lack a ranking.

    A query with positives but no ranking is an error (`check_coverage`) unless options.allow_missing,
    which scores the queries ranked. Rankings of queries without positives are not scored.
    """
    wanted = sorted(positives)
    missing = [q for q in wanted if q not in rankings]
    n_missing = check_coverage(path, len(missing), len(wanted), "queries with positives", options, missing)
    queries = [q for q in wanted if q in rankings]
    if not queries:
        raise ValueError(f"{path}: no ranking for any of the {len(wanted):,} queries with positives")
    ranked = [rankings[q] for q in queries]
    pos = [np.fromiter(positives[q], dtype=np.int64) for q in queries]
    if options.strict:
        for q, r, p in zip(queries, ranked, pos):
            if len(r) < len(p):
                raise SourceFormatError(
                    path,
                    f"key '{q}'",
                    f"at least R = {len(p)} ranked ids for R-Precision and mAP@R (or strict=False for a lower bound)",
                    f"{len(r)} ids",
                )
    # Every metric here reads the top max(K) or the top R of a ranking: cut each there, so one very long list
    # does not make the batch functions pad every query to its length (n_queries x longest list)
    deepest_k = max(options.ks)
    ranked = [r[: max(deepest_k, len(p))] for r, p in zip(ranked, pos)]
    out = {f"R@{k}": recall_at_k_batch(ranked, pos, k) for k in options.ks}
    out["R-P"] = r_precision_batch(ranked, pos, strict=False)
    out["mAP@R"] = map_at_r_batch(ranked, pos, strict=False)
    return out, n_missing


def score_ranked(
    paths: Sequence[PathLike],
    positives: Sequence[PathLike],
    options: ScoreOptions,
    positive_set: str | None = None,
    label: str = "predictions",
) -> dict[str, Any]:
    """R@K, R-Precision and mAP@R of ranked lists (i2t and/or t2i) against positives, and their mean."""
    if not positives:
        raise ValueError("ranked predictions need positives (association JSONs or a positives table)")
    parts = [read_positives_and_gallery(p, positive_set) for p in positives]
    pairs = pd.concat([frame for frame, _ in parts], ignore_index=True)
    gallery: dict[str, set[int]] = {"image": set(), "caption": set()}
    for _, named in parts:
        for modality, ids in named.items():
            gallery[modality] |= ids
    per_direction: dict[str, dict[str, np.ndarray]] = {}
    n_missing: dict[str, int] = {}
    files: list[str] = []
    for spec in paths:
        direction, path = _direction_of(spec, "ranking")
        if direction in per_direction:
            raise ValueError(f"{path}: a second {direction} ranking file; expected at most one per direction")
        wanted = positives_for(pairs, direction)
        if not wanted:
            raise ValueError(f"{path}: the positives hold no {direction} ({DIRECTIONS[direction]}) pairs")
        rankings = read_ranking_json(path)
        target = "caption" if direction == "i2t" else "image"
        check_gallery(rankings, gallery[target], path, target)
        per_direction[direction], n_missing[direction] = ranked_per_query(rankings, wanted, path, options)
        files.append(str(path))
    metrics: dict[str, Any] = {}
    for direction, values in per_direction.items():
        for name, v in values.items():
            if name.startswith("R@"):
                metrics[f"{direction}/{name}"] = accuracy_json(
                    accuracy_from_correct(v.astype(bool), options.confidence)
                )
            else:
                metrics[f"{direction}/{name}"] = mean_json([v], options)
    if len(per_direction) == 2:
        for name in per_direction["i2t"]:
            metrics[f"mean/{name}"] = mean_json([per_direction["i2t"][name], per_direction["t2i"][name]], options)
    queries = {d: len(next(iter(v.values()))) for d, v in per_direction.items()}
    return {
        label: {
            "files": files,
            "positives": [str(p) for p in positives],
            "queries": queries,
            "n_missing": n_missing,
            "metrics": metrics,
        }
    }


# --- entry points -------------------------------------------------------------------------------------


def score_predictions(
    kind: str,
    paths: PathLike | Sequence[PathLike],
    *,
    annotations: PathLike | None = None,
    positives: Sequence[PathLike] = (),
    positive_set: str | None = None,
    label: str | None = None,
    options: ScoreOptions = ScoreOptions(),
) -> dict[str, Any]:
    """Score predictions made elsewhere (kind: ranked, or a paper's own: PREDICTION_FORMATS) -> JSON-able metrics."""
    files = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not files:
        raise ValueError("no prediction files given")
    if kind == "ranked":  # the shared format of the retrieval papers (ECCV Caption, CxC, COCO)
        systems = score_ranked(files, list(positives), options, positive_set, label or "predictions")
    else:  # a paper's own format: its package's `predictions.score` (the registry names the paper)
        systems = (
            registered_paper(prediction_paper(kind))
            .part("predictions")
            .score(kind, files, options, annotations=annotations, label=label)
        )
    return {"kind": kind, "options": options.as_json(), "systems": systems}


def metrics_long_table(result: Mapping[str, Any]) -> pd.DataFrame:
    """The headline metrics of every system as a long table (row = system, column = metric, value, lo, hi)."""
    records = [
        (system, name, m["value"], m.get("lo", np.nan), m.get("hi", np.nan))
        for system, doc in result["systems"].items()
        for name, m in doc["metrics"].items()
    ]
    return pd.DataFrame.from_records(records, columns=["row", "column", "value", "lo", "hi"])


def write_outputs(result: Mapping[str, Any], out_dir: PathLike) -> list[Path]:
    """Write metrics.json and metrics.{csv,md,tex} into out_dir atomically; return the paths."""
    from itmbench.io import write_json
    from itmbench.report.tables import write_table

    out = Path(out_dir)
    write_json(out / "metrics.json", result)
    title = f"Scores of predictions made elsewhere ({result['kind']}), % with intervals"
    paths = write_table(metrics_long_table(result), out / "metrics", title, row_header="system", decimals=2)
    return [out / "metrics.json", *paths]


def _json_default(obj: Any) -> Any:
    """numpy scalars as plain JSON numbers."""
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, np.bool_)):
        return obj.item()
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def run(args: argparse.Namespace) -> int:
    """Score the files named by parsed arguments, print the metrics JSON, write tables with --out-dir."""
    options = ScoreOptions(
        confidence=args.confidence,
        n_boot=args.n_boot,
        seed=args.seed,
        ks=tuple(args.ks),
        strict=not args.lenient,
        allow_missing=getattr(args, "allow_missing", False),
        paper={dest: getattr(args, dest) for dest in paper_option_declarations()},
    )
    result = score_predictions(
        args.kind,
        args.files,
        annotations=args.annotations,
        positives=args.positives,
        positive_set=args.positive_set,
        label=args.label,
        options=options,
    )
    print(json.dumps(result, indent=2, sort_keys=True, default=_json_default))
    if args.out_dir:
        write_outputs(result, args.out_dir)
    return 0
