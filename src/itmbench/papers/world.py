"""Each paper's results tables filled from the world's metrics, in the paper's own layout, beside the printed numbers.

The world's metrics (``results/world/metrics/<benchmark>/<model>.json``) are laid out as the paper
prints its tables (table numbers, blocks, row and column names as transcribed in
``papers/<paper>/published_results.csv``), then compared with `itmbench.papers.tables.compare`
with ``expect_equal=False`` (a world number is from another world: compared for direction, not
equality, so no cell is flagged) and ``keep_unregenerated=True`` (every printed cell stays, shown
``– | published | –`` where the world has no counterpart, e.g. the paper's other models).

World models fill printed rows through a declared mapping (params.yaml ``report.rows.<paper>``:
world model -> printed row name, e.g. BiVLC ``clip -> CLIP_COCO``); a model not mapped is a row of
its own under its world name. Each regenerated cell carries its ``model``, shown as ``row ← model``.

Tables the world fills (`WORLD_TABLES`) and what each cell is:

- BISON Table 3: BISON accuracy, and text-to-image ("Image retrieval") / image-to-text ("Caption
  retrieval") R@1, R@5 on the world's retrieval benchmark with the original positives. Table 1
  (how many of a model's R@1 errors are correct retrievals): for one model
  (``report.bison_table1_model``), t2i R@1 errors under the original positives whose top image fits
  the caption by the world's truth (the truth plays the human judge), derived from R@1 under the
  original and the complete-truth positives, which contain the original ones.
- MCIC Table 3: dev / test accuracy with the binomial standard error as "±", as printed, plus the
  answer-position prior row (always answer the option position most frequent on dev).
- ECCV Table 4: ECCV Caption mAP@R, R-P, R@1; CxC R@1; COCO 5K R@1 (the world's whole test gallery,
  original positives) and PMRP; each the mean of i2t and t2i as printed. COCO 1K and RSUM are not
  computed in the world. Table 5: Kendall tau-b (scipy) between the rankings of the world's
  image-text models by each pair of the metrics the world computes.
- BiVLC Tables 2-4: SugarCrepe, I2T, T2I, Group (and the four single comparisons; per type in Table 4),
  through `itmbench.papers.bivlc.tables.bivlc_long_table`.
- SugarCrepe (BiVLC Table 3's SugarCrepe column, the pooled accuracy), plus the mean over subtypes and
  each subtype's accuracy: `itmbench.papers.sugarcrepe.tables`.
- CxC Tables 2-5: i2t / t2i R@K and median rank under the MS-COCO and the CxC positives; t2t; i2i;
  Spearman x100 (mean and ± std over the bootstrap samples, as printed) for STS, SIS and SITS.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from itmbench.io import read_json
from itmbench.metrics.intervals import binomial_standard_error, recorded_confidence, wilson_interval
from itmbench.papers.published import PAPERS, load_published
from itmbench.papers.tables import compare, write_comparison

# paper -> {file stem: printed table}: the tables the world fills, written as <out_dir>/<stem>.{csv,md,tex}
WORLD_TABLES: dict[str, dict[str, str]] = {
    "bison": {"table1": "Table 1", "table3": "Table 3"},
    "mcic": {"table3": "Table 3"},
    "eccv": {"table4": "Table 4", "table5": "Table 5"},
    "bivlc": {"table2": "Table 2", "table3": "Table 3", "table4": "Table 4"},
    "cxc": {"table2": "Table 2", "table3": "Table 3", "table4": "Table 4", "table5": "Table 5"},
    "sugarcrepe": {"table3": "BiVLC Table 3"},
}
# paper -> the world benchmarks whose metrics its tables read
PAPER_BENCHMARKS: dict[str, tuple[str, ...]] = {
    "bison": ("bison", "retrieval"),
    "mcic": ("mcic",),
    "eccv": ("eccv",),
    "bivlc": ("bivlc",),
    "cxc": ("cxc",),
    "sugarcrepe": ("sugarcrepe",),
}
PAPER_TITLES: dict[str, str] = {
    "bison": "BISON",
    "mcic": "MCIC-COCO",
    "eccv": "ECCV Caption",
    "bivlc": "BiVLC",
    "cxc": "Crisscrossed Captions",
    "sugarcrepe": "SugarCrepe",
}
WORLD_CAPTION = (
    "World numbers come from the generated world (small scenes, small models trained for minutes), "
    "not from the paper's data and models: they are compared with the printed numbers for direction, "
    "not equality, so no cell is flagged. '–' marks a printed cell the world has no counterpart for."
)
LONG_COLUMNS: tuple[str, ...] = ("table", "block", "row", "column", "value", "lo", "hi", "model")

# ECCV Table 5 metrics the world computes -> the world's metric name (mean of i2t and t2i)
ECCV_TABLE5_WORLD: dict[str, str] = {
    "COCO 5K R@1": "original_r1",
    "COCO 5K R@5": "original_r5",
    "COCO 5K R@10": "original_r10",
    "CxC R@1": "cxc_r1",
    "ECCV R@1": "eccv_r1",
    "ECCV R-Precision": "eccv_r_precision",
    "ECCV mAP@R": "eccv_map_at_r",
    "PMRP": "pmrp",
}
# ECCV Table 4 (block, column) -> the world's metric name
ECCV_TABLE4_WORLD: dict[tuple[str, str], str] = {
    ("ECCV Caption", "mAP@R"): "eccv_map_at_r",
    ("ECCV Caption", "R-P"): "eccv_r_precision",
    ("ECCV Caption", "R@1"): "eccv_r1",
    ("CxC", "R@1"): "cxc_r1",
    ("COCO", "5K R@1"): "original_r1",
    ("COCO", "PMRP"): "pmrp",
}
CXC_DIRECTIONS: dict[str, str] = {
    "i2t": "Image → Text",
    "t2i": "Text → Image",
    "t2t": "Text → Text",
    "i2i": "Image → Image",
}
CXC_RECALLS: tuple[str, ...] = ("R@1", "R@5", "R@10")
CXC_CORRELATIONS: dict[str, str] = {"sts": "STS", "sis": "SIS", "sits": "SITS"}

WorldMetrics = Mapping[str, Mapping[str, Mapping[str, Any]]]


def read_world_metrics(paths: Iterable[str | os.PathLike]) -> dict[str, dict[str, dict[str, Any]]]:
    """{benchmark: {model: metrics JSON}} from files named <benchmark>/<model>.json; each checked."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(Path(p) for p in paths):
        doc = read_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("metrics"), dict):
            raise ValueError(f"{path}: expected a metrics JSON object with a 'metrics' mapping")
        out.setdefault(path.parent.name, {})[path.stem] = doc
    return out


def check_rows(paper: str, rows: Mapping[str, str]) -> dict[str, str]:
    """The world model -> printed row mapping of a paper, checked: every row printed, none filled twice."""
    if paper not in PAPERS:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(PAPERS)}")
    printed = set(load_published(paper)["row"])
    for model, row in rows.items():
        if row not in printed:
            raise ValueError(
                f"report.rows.{paper}: model {model!r} maps to row {row!r}, which {paper} does not print; "
                f"printed rows: {sorted(printed)}"
            )
    seen: dict[str, str] = {}
    for model, row in rows.items():
        if row in seen:
            raise ValueError(f"report.rows.{paper}: row {row!r} is filled by both {seen[row]!r} and {model!r}")
        seen[row] = model
    return dict(rows)


def _entry(doc: Mapping[str, Any], name: str, source: str) -> Mapping[str, Any] | None:
    """One {value, lo, hi, ...} entry of a metrics JSON (None when absent); a malformed one raises."""
    entry = doc.get("metrics", {}).get(name)
    if entry is None:
        return None
    if not isinstance(entry, Mapping) or "value" not in entry:
        raise ValueError(f"{source}: metric {name!r} is {entry!r}; expected an object with 'value' (and lo, hi)")
    return entry


def _cell(
    table: str, block: str, row: str, column: str, value: float, lo: float, hi: float, model: str
) -> tuple[Any, ...]:
    return (table, block, row, column, float(value), float(lo), float(hi), model)


def _entry_cell(table: str, block: str, row: str, column: str, entry: Mapping[str, Any], model: str) -> tuple:
    lo, hi = entry.get("lo"), entry.get("hi")
    return _cell(
        table, block, row, column, entry["value"], math.nan if lo is None else lo, math.nan if hi is None else hi, model
    )


def _long(records: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(list(records), columns=list(LONG_COLUMNS))
    return frame.astype({"value": float, "lo": float, "hi": float})


def _models(metrics: WorldMetrics, benchmark: str) -> list[str]:
    return sorted(metrics.get(benchmark, {}))


# --- BISON ---------------------------------------------------------------------------------------------


def bison_world_long(
    metrics: WorldMetrics, rows: Mapping[str, str], table1_model: str | None = None, confidence: float = 0.95
) -> pd.DataFrame:
    """BISON Table 3 (BISON accuracy + retrieval R@1/R@5 per model) and Table 1 (one model's R@1 errors)."""
    records: list[tuple[Any, ...]] = []
    retrieval = metrics.get("retrieval", {})
    for model in _models(metrics, "bison"):
        row = rows.get(model, model)
        entry = _entry(metrics["bison"][model], "bison", f"bison/{model}.json")
        if entry is not None:
            records.append(_entry_cell("Table 3", "", row, "BISON", entry, model))
        original = retrieval.get(model, {}).get("metrics", {}).get("original", {})
        for direction, label in (("t2i", "Image retrieval"), ("i2t", "Caption retrieval")):
            for k in ("R@1", "R@5"):
                cell = original.get(direction, {}).get(k)
                if cell is not None:
                    records.append(_entry_cell("Table 3", "", row, f"{label} {k}", cell, model))
    # Table 3 prints columns in this order: image R@1, R@5, caption R@1, R@5, BISON
    order = {"Image retrieval R@1": 0, "Image retrieval R@5": 1, "Caption retrieval R@1": 2,
             "Caption retrieval R@5": 3, "BISON": 4}  # fmt: skip
    records.sort(key=lambda r: (r[2], order[r[3]]))
    if table1_model:
        records += bison_table1_records(retrieval, table1_model, confidence)
    return _long(records)


def bison_table1_records(
    retrieval: Mapping[str, Mapping[str, Any]], model: str, confidence: float = 0.95
) -> list[tuple[Any, ...]]:
    """BISON Table 1 in the world: of a model's t2i R@1 errors (original positives), those correct by the truth."""
    doc = retrieval.get(model)
    if doc is None:
        raise ValueError(
            f"report.bison_table1_model is {model!r}, but the retrieval metrics have no such model; "
            f"models: {sorted(retrieval)}"
        )
    t2i = doc.get("metrics", {})
    try:
        original, truth = t2i["original"]["t2i"]["R@1"], t2i["truth"]["t2i"]["R@1"]
    except KeyError as err:
        raise ValueError(
            f"retrieval/{model}.json: no t2i R@1 under {err} positives; expected original and truth"
        ) from None
    n = int(original["n"])
    if int(truth["n"]) != n:
        raise ValueError(f"retrieval/{model}.json: t2i R@1 counts differ (original n={n}, truth n={truth['n']})")
    hits_original = round(float(original["value"]) * n / 100)
    hits_truth = round(float(truth["value"]) * n / 100)
    if hits_truth < hits_original:
        raise ValueError(
            f"retrieval/{model}.json: t2i R@1 under the truth ({truth['value']}) is below the original "
            f"({original['value']}); the truth's positives should contain the original ones"
        )
    errors = n - hits_original
    correct = hits_truth - hits_original
    records: list[tuple[Any, ...]] = []
    for label, count in (("Recall@1 Incorrect, Human Incorrect", errors - correct),
                         ("Recall@1 Incorrect, Human Correct", correct)):  # fmt: skip
        lo, hi = wilson_interval(count, errors, confidence)
        share = 100.0 * count / errors if errors else math.nan
        records.append(_cell("Table 1", "", label, "Number", count, math.nan, math.nan, model))
        if errors:
            records.append(_cell("Table 1", "", label, "Percentage", share, 100 * lo, 100 * hi, model))
    return records


# --- MCIC ----------------------------------------------------------------------------------------------


def mcic_world_long(metrics: WorldMetrics, rows: Mapping[str, str], confidence: float = 0.95) -> pd.DataFrame:
    """MCIC Table 3: dev / test accuracy and binomial '±' per model, plus the answer-position prior row."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("mcic", {})
    for model in _models(metrics, "mcic"):
        row, doc = rows.get(model, model), docs[model]
        for split, column in (("dev", "Dev"), ("test", "Test")):
            entry = _entry(doc, f"accuracy_{split}", f"mcic/{model}.json")
            if entry is None:
                continue
            records.append(_entry_cell("Table 3", "", row, column, entry, model))
            se = doc.get("standard_error", {}).get(f"accuracy_{split}")
            if se is None:
                se = 100 * binomial_standard_error(float(entry["value"]) / 100, int(entry["n"]))
            records.append(_cell("Table 3", "", row, f"{column} ±", se, math.nan, math.nan, model))
    records += mcic_prior_records(docs, confidence)
    return _long(records)


def mcic_prior_records(docs: Mapping[str, Mapping[str, Any]], confidence: float = 0.95) -> list[tuple[Any, ...]]:
    """The answer-position prior as a Table 3 row: always answer the position most frequent on dev."""
    priors = {m: d["answer_position_prior"] for m, d in sorted(docs.items()) if "answer_position_prior" in d}
    if not priors:
        return []
    first_model, prior = next(iter(priors.items()))
    for model, other in priors.items():
        if other != prior:
            raise ValueError(
                f"mcic/{model}.json: answer_position_prior {other} differs from mcic/{first_model}.json's {prior}; "
                "expected one prior per benchmark"
            )
    chosen_on = "dev" if "dev" in prior else sorted(prior)[0]
    position = int(np.argmax(prior[chosen_on]))
    row = f"answer-position prior (always option {position}, chosen on {chosen_on})"
    records: list[tuple[Any, ...]] = []
    doc = docs[first_model]
    for split, column in (("dev", "Dev"), ("test", "Test")):
        if split not in prior:
            continue
        share = float(prior[split][position])
        n = int(doc.get("metrics", {}).get(f"accuracy_{split}", {}).get("n", 0))
        if n <= 0:
            raise ValueError(f"mcic/{first_model}.json: split {split!r} has a prior but no accuracy_{split}.n")
        k = round(share * n / 100)
        lo, hi = wilson_interval(k, n, confidence)
        records.append(_cell("Table 3", "", row, column, share, 100 * lo, 100 * hi, ""))
        se = 100 * binomial_standard_error(share / 100, n)
        records.append(_cell("Table 3", "", row, f"{column} ±", se, math.nan, math.nan, ""))
    return records


# --- ECCV Caption --------------------------------------------------------------------------------------


def eccv_table5_models(metrics: WorldMetrics, kinds: Mapping[str, str]) -> list[str]:
    """The world models ECCV Table 5 ranks: image-text models (kind 'contrastive') with every Table 5 metric."""
    docs = metrics.get("eccv", {})
    return [
        m
        for m in _models(metrics, "eccv")
        if kinds.get(m, "chance" if m == "random" else "contrastive") == "contrastive"
        and all(_entry(docs[m], name, f"eccv/{m}.json") is not None for name in ECCV_TABLE5_WORLD.values())
    ]


def eccv_world_long(metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]) -> pd.DataFrame:
    """ECCV Table 4 (per model) and Table 5 (Kendall tau-b between metric rankings over the world's models)."""
    from itmbench.papers.eccv.tables import TABLE5_METRICS, kendall_matrix, table5_long

    records: list[tuple[Any, ...]] = []
    docs = metrics.get("eccv", {})
    for model in _models(metrics, "eccv"):
        row = rows.get(model, model)
        for (block, column), name in ECCV_TABLE4_WORLD.items():
            entry = _entry(docs[model], name, f"eccv/{model}.json")
            if entry is not None:
                records.append(_entry_cell("Table 4", block, row, column, entry, model))
    ranked = eccv_table5_models(metrics, kinds)
    if len(ranked) >= 2:
        columns = [m for m in TABLE5_METRICS if m in ECCV_TABLE5_WORLD]
        inputs = pd.DataFrame(
            {m: [float(docs[model]["metrics"][ECCV_TABLE5_WORLD[m]]["value"]) for model in ranked] for m in columns},
            index=ranked,
        )
        taus = table5_long(kendall_matrix(inputs, columns))
        records += [
            _cell(r.table, r.block, r.row, r.column, r.value, math.nan, math.nan, "")
            for r in taus.itertuples(index=False)
        ]
    return _long(records)


# --- BiVLC ---------------------------------------------------------------------------------------------


def bivlc_world_long(metrics: WorldMetrics, rows: Mapping[str, str]) -> pd.DataFrame:
    """BiVLC Tables 2-4 from the world's BiVLC metrics (rows named by the mapping)."""
    from itmbench.papers.bivlc.tables import bivlc_long_table

    docs = metrics.get("bivlc", {})
    by_row = {rows.get(m, m): docs[m] for m in _models(metrics, "bivlc")}
    model_of = {rows.get(m, m): m for m in docs}
    long = bivlc_long_table(by_row)
    if long.empty:
        return _long([])
    long["model"] = long["row"].map(model_of)
    return long[list(LONG_COLUMNS)].reset_index(drop=True)


# --- CxC -----------------------------------------------------------------------------------------------


def cxc_world_long(metrics: WorldMetrics, rows: Mapping[str, str]) -> pd.DataFrame:
    """CxC Tables 2-5: R@K and median rank per direction and positive set, and the Spearman correlations."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("cxc", {})
    layout: list[tuple[str, str, str, str]] = [
        ("Table 2", "MS-COCO", "i2t", "coco"),
        ("Table 2", "MS-COCO", "t2i", "coco"),
        ("Table 2", "CxC", "i2t", "cxc"),
        ("Table 2", "CxC", "t2i", "cxc"),
        ("Table 3", "", "t2t", "cxc"),
        ("Table 4", "", "i2i", "cxc"),
    ]
    for model in _models(metrics, "cxc"):
        row, doc = rows.get(model, model), docs[model]
        for table, block, direction, positives in layout:
            for k in (*CXC_RECALLS, "MedR"):
                entry = _entry(doc, f"{direction}/{positives}/{k}", f"cxc/{model}.json")
                if entry is not None:
                    column = f"{CXC_DIRECTIONS[direction]} {'med r' if k == 'MedR' else k}"
                    records.append(_entry_cell(table, block, row, column, entry, model))
        for name, column in CXC_CORRELATIONS.items():
            entry = _entry(doc, f"{name}/spearman", f"cxc/{model}.json")
            if entry is not None:
                records.append(_entry_cell("Table 5", "", row, column, entry, model))
                if entry.get("std") is not None:
                    records.append(_cell("Table 5", "", row, f"{column} ±", entry["std"], math.nan, math.nan, model))
    return _long(records)


# --- every paper ---------------------------------------------------------------------------------------


def world_long(
    paper: str,
    metrics: WorldMetrics,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One paper's world cells (table, block, row, column, value, lo, hi, model), rows named by the mapping."""
    rows = check_rows(paper, rows or {})
    kinds, options = dict(kinds or {}), dict(options or {})
    confidence = interval_confidence(metrics, paper)
    if paper == "bison":
        return bison_world_long(metrics, rows, options.get("bison_table1_model"), confidence)
    if paper == "mcic":
        return mcic_world_long(metrics, rows, confidence)
    if paper == "eccv":
        return eccv_world_long(metrics, rows, kinds)
    if paper == "bivlc":
        return bivlc_world_long(metrics, rows)
    if paper == "sugarcrepe":
        from itmbench.papers.sugarcrepe.tables import world_records

        return _long(world_records(metrics.get("sugarcrepe", {}), rows))
    return cxc_world_long(metrics, rows)


def interval_confidence(metrics: WorldMetrics, paper: str) -> float:
    """The interval confidence the metrics were computed with (0.95 when they do not say)."""
    for bench in PAPER_BENCHMARKS[paper]:
        level = recorded_confidence(metrics.get(bench, {}).values())
        if level is not None:
            return level
    return 0.95


def world_comparison(
    paper: str,
    metrics: WorldMetrics,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The world's cells beside every printed cell of the paper's `WORLD_TABLES` (statuses compared / not_*)."""
    long = world_long(paper, metrics, rows, kinds, options)
    return compare(long, paper, expect_equal=False, keep_unregenerated=True, tables=tuple(WORLD_TABLES[paper].values()))


def table_caption(paper: str, table: str, metrics: WorldMetrics, kinds: Mapping[str, str] | None = None) -> str:
    """The caption of one world table: the world disclaimer, the interval, and what the cells are."""
    confidence = round(100 * interval_confidence(metrics, paper))
    notes: dict[tuple[str, str], str] = {
        ("bison", "Table 1"): "Human = the world's truth: of one world model's text-to-image R@1 errors under the "
        "original (COCO-style) positives, those whose top image fits the caption; derived from R@1 under the "
        "original and the complete-truth positives, which contain them. Number: count; Percentage: Wilson interval.",
        ("bison", "Table 3"): "Image retrieval = text-to-image, Caption retrieval = image-to-text R@K on the world's "
        "test split with the original positives; BISON = accuracy on the world's BISON.",
        ("mcic", "Table 3"): "'±' is the binomial standard error, as printed. The prior row always answers the option "
        "position most frequent on dev (options sorted alphabetically, as released). dim is not regenerated.",
        ("eccv", "Table 4"): "Each cell is the mean of i2t and t2i, as printed. COCO 5K R@1 = R@1 over the world's "
        "whole test gallery with the original positives; COCO 1K R@1 and RSUM are not computed in the world.",
        ("eccv", "Table 5"): "Kendall tau-b (scipy) between the rankings of the world's image-text models "
        f"({', '.join(eccv_table5_models(metrics, kinds or {}))}) by each pair of metrics, no interval; "
        "COCO 1K and RSUM are not computed in the world.",
        ("bivlc", "Table 2"): "Random = the world's random-embedding model.",
        ("sugarcrepe", "BiVLC Table 3"): "Published: the SugarCrepe column of BiVLC's Table 3 (accuracy pooled over "
        "the instances); the world adds the mean over subtypes and each subtype's accuracy (Wilson intervals; the "
        "mean's: a bootstrap within subtypes).",
        ("cxc", "Table 2"): "MS-COCO = the original positives, CxC = the original positives with SITS >= 3 pairs, on "
        "the world's test split; med r = median rank of the first positive.",
        ("cxc", "Table 5"): "Spearman x100 between model similarity and the mean rating: mean and ± std over the "
        "bootstrap samples (half the queries, one rated partner each), as printed; interval: bootstrap percentiles.",
    }
    interval = f"Intervals: {confidence}%."
    return " ".join(part for part in (WORLD_CAPTION, interval, notes.get((paper, table), "")) if part)


def write_world_paper_tables(
    paper: str,
    metric_files: Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> list[Path]:
    """Write each of the paper's world tables as <out_dir>/<stem>.{csv,md,tex}; return the paths."""
    if paper not in WORLD_TABLES:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(WORLD_TABLES)}")
    metrics = read_world_metrics(metric_files)
    absent = [b for b in PAPER_BENCHMARKS[paper] if b not in metrics]
    if absent:
        raise ValueError(f"{paper}: no metrics files of benchmarks {absent} among the inputs")
    compared = world_comparison(paper, metrics, rows, kinds, options)
    paths: list[Path] = []
    for stem, table in WORLD_TABLES[paper].items():
        part = compared[compared["table"] == table]
        title = f"{PAPER_TITLES[paper]} {table}, filled from the world, beside the published numbers"
        row_header = "metric" if (paper, table) == ("eccv", "Table 5") else "model"
        caption = table_caption(paper, table, metrics, kinds)
        paths += write_comparison(part, Path(out_dir) / stem, title, row_header=row_header, caption=caption)
    return paths


def world_table_paths(paper: str, out_dir: str) -> list[str]:
    """The files `write_world_paper_tables` writes for a paper (for the workflow's outputs)."""
    return [f"{out_dir}/{stem}.{ext}" for stem in WORLD_TABLES[paper] for ext in ("csv", "md", "tex")]
