"""MCIC-COCO's Table 3 filled from the world's metrics: dev / test accuracy with the binomial '±', and the prior row."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import binomial_standard_error, wilson_interval
from itmbench.papers.published import published_value
from itmbench.papers.world_cells import (
    WorldMetrics,
    cell,
    entry_cell,
    long_frame,
    metric_entry,
    models_of,
)


def mcic_world_long(metrics: WorldMetrics, rows: Mapping[str, str], confidence: float = 0.95) -> pd.DataFrame:
    """MCIC Table 3: dev / test accuracy and binomial '±' per model, plus the answer-position prior row."""
    records: list[tuple[Any, ...]] = []
    docs = metrics.get("mcic", {})
    for model in models_of(metrics, "mcic"):
        row, doc = rows.get(model, model), docs[model]
        for split, column in (("dev", "Dev"), ("test", "Test")):
            entry = metric_entry(doc, f"accuracy_{split}", f"mcic/{model}.json")
            if entry is None:
                continue
            records.append(entry_cell("Table 3", "", row, column, entry, model))
            se = doc.get("standard_error", {}).get(f"accuracy_{split}")
            if se is None:
                se = 100 * binomial_standard_error(float(entry["value"]) / 100, int(entry["n"]))
            records.append(cell("Table 3", "", row, f"{column} ±", se, math.nan, math.nan, model))
    records += mcic_prior_records(docs, confidence)
    return long_frame(records)


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
        records.append(cell("Table 3", "", row, column, share, 100 * lo, 100 * hi, ""))
        se = 100 * binomial_standard_error(share / 100, n)
        records.append(cell("Table 3", "", row, f"{column} ±", se, math.nan, math.nan, ""))
    return records


def world_long(
    metrics: WorldMetrics,
    rows: Mapping[str, str],
    kinds: Mapping[str, str],
    options: Mapping[str, Any],
    confidence: float,
) -> pd.DataFrame:
    """MCIC's world cells (rows named by the mapping)."""
    return mcic_world_long(metrics, rows, confidence)


def world_table_notes(metrics: WorldMetrics, kinds: Mapping[str, str]) -> dict[str, str]:
    """What each world table's cells are, for its caption (printed table -> note)."""
    return {
        "Table 3": "'±' is the binomial standard error, as printed. The prior row always answers the option "
        "position most frequent on dev (options sorted alphabetically, as released). dim is not regenerated.",
    }


LAMBDA_SEARCH_TITLE = (
    "MCIC-COCO OPTIMIZE-SCORE (Algorithm 1, Section 3.3): wmgs-rank of each lambda of the grid on the "
    "search split, the chosen lambda, and the paper's on the MCIC-COCO dev set"
)


def lambda_search_long(search: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """The lambda search (the build's `lambda_search` table) as a long table, the published choice as a last row.

    wmgs-rank's interval is the normal one over captions (mean +- z * standard error)."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    records: list[dict[str, Any]] = []

    def add(row: str, column: str, value: float, lo: float = math.nan, hi: float = math.nan) -> None:
        records.append({"row": row, "column": column, "value": value, "lo": lo, "hi": hi})

    for r in search.sort_values("lambda", kind="stable").to_dict("records"):
        lam, mean, se = float(r["lambda"]), float(r["wmgs_rank"]), float(r["wmgs_rank_se"])
        row = f"λ = {lam:g}"
        add(row, "wmgs-rank", mean, mean - z * se, mean + z * se)
        add(row, "captions", float(r["captions"]))
        add(row, "ground truths ranked", float(r["ranked_ground_truths"]))
        add(row, "chosen λ", lam if bool(r["chosen"]) else math.nan)
    published = published_value("mcic", "Section 3.3", "MCIC-COCO dev", "lambda", block="OPTIMIZE-SCORE")
    row = "published (MCIC-COCO dev, N = 500)"
    for column in ("wmgs-rank", "captions", "ground truths ranked"):
        add(row, column, math.nan)
    add(row, "chosen λ", published)
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi"])
