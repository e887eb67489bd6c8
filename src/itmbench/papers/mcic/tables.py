"""MCIC-COCO's Table 3 filled from the world's metrics: dev / test accuracy with the binomial '±', and the prior row."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, binomial_standard_error, wilson_interval
from itmbench.papers.published import published_value
from itmbench.papers.world_cells import (
    WorldMetrics,
    cell,
    entry_cell,
    long_frame,
    metric_entry,
    models_of,
)


def mcic_world_long(
    metrics: WorldMetrics, rows: Mapping[str, str], confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
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


def mcic_prior_records(
    docs: Mapping[str, Mapping[str, Any]], confidence: float = DEFAULT_CONFIDENCE
) -> list[tuple[Any, ...]]:
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


def _search_long(
    points: list[tuple[str, float, float, dict[str, float]]],
    measure: str,
    published_row: str,
    published: dict[str, float],
    confidence: float,
) -> pd.DataFrame:
    """A grid search as a long table: per point (row, mean, standard error, other cells) the measure with its
    normal interval over captions (mean +- z * se) and the other cells; the published choice as a last row."""
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    records: list[dict[str, Any]] = []
    columns = [measure, *points[0][3]] if points else [measure]
    for row, mean, se, cells in points:
        records.append({"row": row, "column": measure, "value": mean, "lo": mean - z * se, "hi": mean + z * se})
        records.extend({"row": row, "column": c, "value": v, "lo": math.nan, "hi": math.nan} for c, v in cells.items())
    cells = {c: math.nan for c in columns} | published
    records.extend(
        {"row": published_row, "column": c, "value": v, "lo": math.nan, "hi": math.nan} for c, v in cells.items()
    )
    return pd.DataFrame(records, columns=["row", "column", "value", "lo", "hi"])


LAMBDA_SEARCH_TITLE = (
    "MCIC-COCO OPTIMIZE-SCORE (Algorithm 1, Section 3.3): wmgs-rank of each lambda of the grid on the "
    "search split, the chosen lambda, and the paper's on the MCIC-COCO dev set"
)


def lambda_search_long(search: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """The lambda search (the build's `lambda_search` table) as a long table, the published choice as a last row.

    wmgs-rank's interval is the normal one over captions (mean +- z * standard error)."""
    points = [
        (
            f"λ = {float(r['lambda']):g}",
            float(r["wmgs_rank"]),
            float(r["wmgs_rank_se"]),
            {
                "captions": float(r["captions"]),
                "ground truths ranked": float(r["ranked_ground_truths"]),
                "chosen λ": float(r["lambda"]) if bool(r["chosen"]) else math.nan,
            },
        )
        for r in search.sort_values("lambda", kind="stable").to_dict("records")
    ]
    published = published_value("mcic", "Section 3.3", "MCIC-COCO dev", "lambda", block="OPTIMIZE-SCORE")
    return _search_long(points, "wmgs-rank", "published (MCIC-COCO dev, N = 500)", {"chosen λ": published}, confidence)


PV_SEARCH_TITLE = (
    "MCIC-COCO OPTIMIZE-PV (Algorithm 1, Section 3.3): mgs-rank of each PV-DBOW (dim, epochs) of the grid on "
    "the search split, the chosen point, and the paper's on the MCIC-COCO dev set"
)


def pv_search_long(search: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """The PV search (`optimize_pv.optimize_pv`'s table) as a long table, the published choice as a last row.

    mgs-rank's interval is the normal one over captions (mean +- z * standard error)."""
    points = [
        (
            f"dim {int(r['vector_size'])}, {int(r['epochs'])} epochs",
            float(r["mgs_rank"]),
            float(r["mgs_rank_se"]),
            {
                "captions": float(r["captions"]),
                "pool": float(r["pool"]),
                "chosen": 1.0 if bool(r["chosen"]) else math.nan,
            },
        )
        for r in search.sort_values(["vector_size", "epochs"], kind="stable").to_dict("records")
    ]
    dim, epochs = (
        published_value("mcic", "Section 3.3", "MCIC-COCO dev", c, block="OPTIMIZE-PV") for c in ("dim", "epochs")
    )
    return _search_long(
        points, "mgs-rank", f"published (MCIC-COCO dev): dim {dim:g}, {epochs:g} epochs", {"chosen": 1.0}, confidence
    )
