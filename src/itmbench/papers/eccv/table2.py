"""ECCV Caption Table 2 as the paper defines it (section 3.3): precision and recall of the COCO, CxC and PM positives
measured by the human-verified pairs, restricted to the pairs the humans saw.

For a query i (an image for I2T, a caption for T2I):

- h_i, the human-verified pairs: every candidate the machine annotators proposed for i (their top-k), each judged
  once (the build's `annotations` table, unique (query, candidate));
- t_i, the human-annotated positives: the candidates of h_i whose answer is a positive one (`eccv.positive_answers`,
  the paper's "Yes" or "Weak Yes");
- r_i, the dataset's positives for i (`positives` of source original or cxc, or `pm_positives`), and
  r_i' = r_i ∩ h_i.

Prec = mean_i |r_i' ∩ t_i| / |r_i'| and Recall = mean_i 1 - |t_i \\ r_i'| / |t_i|, both over the queries with
|r_i'| > 0 (the paper filters |r_i'| = 0 out "for preventing an ill-defined result", footnote 2, and both sums run
over the same N); Recall also needs |t_i| > 0 (1 - 0/0 is not defined), so a query of that N without a single
positive answer is left out of Recall only. Values x100; the number of queries entering each cell is kept.
Intervals: a percentile bootstrap over queries, each direction's queries resampled on their own
(`papers.paired.query_bootstrap_means`).

This is not the world's audit (`papers/eccv/audit.py`), which measures the same positive sets against the complete
truth, every fitting pair of the split: Table 2 only sees what the annotators proposed and the humans answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.eccv.canonical import I2T, T2I
from itmbench.papers.eccv.released import DIRECTIONS
from itmbench.papers.paired import percentile_interval, query_bootstrap_means

# The printed directions (column prefixes) and measures, in printed order.
PRINTED_DIRECTION = {I2T: "I2T", T2I: "T2I"}
MEASURES = ("Prec", "Recall")
COCO_LABEL = "Original MS-COCO Caption"
CXC_LABEL = "CxC"


def pm_label(zeta: int) -> str:
    """The printed row label of the plausible-match positives."""
    return f"Plausible Match (ζ = {zeta})"


def _pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Unique (query_id, item_id) rows as int64."""
    out = pd.DataFrame(
        {"query_id": frame["query_id"].to_numpy(dtype=np.int64), "item_id": frame["item_id"].to_numpy(dtype=np.int64)}
    )
    return out.drop_duplicates(ignore_index=True)


def per_query_precision_recall(
    query_ids: Sequence[int] | np.ndarray, positives: pd.DataFrame, candidates: pd.DataFrame, verified: pd.DataFrame
) -> pd.DataFrame:
    """Each query's |r'|, |t|, |r' ∩ t|, precision and recall (fractions; NaN where the query is left out).

    `positives` (r), `candidates` (h) and `verified` (t) are frames of (query_id, item_id) pairs; pairs of queries
    outside `query_ids` are ignored. Precision is NaN where |r'| = 0; recall where |r'| = 0 or |t| = 0.
    """
    q = pd.Index(np.asarray(query_ids, dtype=np.int64), name="query_id")
    if q.has_duplicates:
        raise ValueError(f"Table 2: query {int(q[q.duplicated()][0])} is listed twice; expected distinct queries")
    r, h, t = _pairs(positives), _pairs(candidates), _pairs(verified)
    r_prime = r.merge(h, on=["query_id", "item_id"])
    hits = r_prime.merge(t, on=["query_id", "item_id"])
    n_r_prime = r_prime.groupby("query_id").size().reindex(q, fill_value=0).to_numpy(np.int64)
    n_t = t.groupby("query_id").size().reindex(q, fill_value=0).to_numpy(np.int64)
    n_hit = hits.groupby("query_id").size().reindex(q, fill_value=0).to_numpy(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(n_r_prime > 0, n_hit / n_r_prime, np.nan)
        recall = np.where((n_r_prime > 0) & (n_t > 0), 1.0 - (n_t - n_hit) / n_t, np.nan)
    return pd.DataFrame(
        {
            "query_id": q.to_numpy(),
            "n_r_prime": n_r_prime,
            "n_t": n_t,
            "n_hit": n_hit,
            "precision": precision,
            "recall": recall,
        }
    )


def _as_query_item(frame: pd.DataFrame, direction: str) -> pd.DataFrame:
    """(image_id, caption_id) pairs of one direction as (query_id, item_id)."""
    query, item = ("image_id", "caption_id") if direction == I2T else ("caption_id", "image_id")
    return pd.DataFrame({"query_id": frame[query].to_numpy(np.int64), "item_id": frame[item].to_numpy(np.int64)})


def positive_sets(tables: Mapping[str, pd.DataFrame], zeta: int) -> dict[str, pd.DataFrame]:
    """Table 2's rows: printed label -> the positives (source, direction, image_id, caption_id) of that dataset.

    COCO's are the build's original pairs, CxC's its cxc positives (CxC ∪ original; absent when built without
    CxC), PM's the pm_positives (absent when the build has no PM tables)."""
    pos = tables["positives"]
    sets = {COCO_LABEL: pos[pos["source"] == "original"]}
    cxc = pos[pos["source"] == "cxc"]
    if len(cxc):
        sets[CXC_LABEL] = cxc
    if "pm_positives" in tables:
        sets[pm_label(zeta)] = tables["pm_positives"]
    return sets


def table2_per_query(
    tables: Mapping[str, pd.DataFrame], positive_answers: Sequence[str], zeta: int
) -> dict[tuple[str, str], pd.DataFrame]:
    """(row label, direction) -> `per_query_precision_recall` over the ECCV queries of the direction, from a world
    build's tables (queries, annotations, positives, pm_positives)."""
    if "annotations" not in tables:
        raise ValueError(
            "no annotations table: Table 2 needs the candidates the annotators proposed and the answers to them, "
            "which only a build in the world has"
        )
    queries, ann = tables["queries"], tables["annotations"]
    out: dict[tuple[str, str], pd.DataFrame] = {}
    sets = positive_sets(tables, zeta)
    for direction in DIRECTIONS:
        q_ids = queries.loc[queries["direction"] == direction, "query_id"].to_numpy(np.int64)
        a = ann[ann["direction"] == direction]
        h = pd.DataFrame(
            {"query_id": a["query_id"].to_numpy(np.int64), "item_id": a["candidate_id"].to_numpy(np.int64)}
        )
        yes = a["answer"].isin(list(positive_answers)).to_numpy(bool)
        t = h[yes]
        for label, positives in sets.items():
            part = positives[positives["direction"] == direction]
            out[(label, direction)] = per_query_precision_recall(q_ids, _as_query_item(part, direction), h, t)
    return out


def table2_cells(
    per_query: Mapping[tuple[str, str], pd.DataFrame],
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Table 2's cells (x100): label, direction, measure, value, lo, hi, n_queries (the queries entering the mean)."""
    columns: dict[str, pd.Series] = {}
    keys: list[tuple[str, str, str]] = []
    for (label, direction), frame in per_query.items():
        for measure, name in zip(MEASURES, ("precision", "recall"), strict=True):
            index = pd.MultiIndex.from_arrays(
                [np.full(len(frame), direction), frame["query_id"].to_numpy(np.int64)], names=["direction", "query_id"]
            )
            columns[f"{len(keys)}"] = pd.Series(100.0 * frame[name].to_numpy(float), index=index)
            keys.append((label, direction, measure))
    wide = pd.DataFrame(columns)  # the directions' queries side by side: NaN where a column has no such query
    point, reps = query_bootstrap_means(wide, n_boot, seed)
    rows = []
    for j, (label, direction, measure) in enumerate(keys):
        frame = per_query[(label, direction)]
        n = int(frame["precision" if measure == "Prec" else "recall"].notna().sum())
        lo, hi = percentile_interval(reps[:, j], confidence) if n else (np.nan, np.nan)
        rows.append((label, direction, measure, float(point[j]) if n else np.nan, lo, hi, n))
    return pd.DataFrame(rows, columns=["label", "direction", "measure", "value", "lo", "hi", "n_queries"])


def table2_long(cells: pd.DataFrame, published: pd.DataFrame | None) -> pd.DataFrame:
    """Table 2 as printed (rows COCO / CxC / PM, columns I2T Prec, I2T Recall, T2I Prec, T2I Recall), then each row's
    number of queries entering its means, then the printed Table 2 as rows of its own ('published ...')."""
    records = []
    for r in cells.itertuples(index=False):
        column = f"{PRINTED_DIRECTION[r.direction]} {r.measure}"
        records.append(
            (r.label, column, r.value, r.lo, r.hi, "world", r.label, r.direction, r.measure, r.n_queries, "")
        )
    for r in cells.itertuples(index=False):
        column = f"{PRINTED_DIRECTION[r.direction]} {r.measure}"
        row = f"{r.label}: queries"
        records.append(
            (row, column, float(r.n_queries), np.nan, np.nan, "queries", r.label, r.direction, r.measure, 0, "")
        )
    if published is not None:
        direction_of = {v: k for k, v in PRINTED_DIRECTION.items()}
        for r in published[published["table"] == "Table 2"].itertuples(index=False):
            value = float(r.value)
            prefix, measure = str(r.column).split(" ", 1)
            note = f"{value:.{int(r.decimals)}f}"  # as printed
            row = f"published {r.row}"
            records.append(
                (
                    row,
                    str(r.column),
                    value,
                    np.nan,
                    np.nan,
                    "published",
                    str(r.row),
                    direction_of[prefix],
                    measure,
                    0,
                    note,
                )
            )
    columns = ["row", "column", "value", "lo", "hi", "source", "dataset", "direction", "measure", "n_queries", "note"]
    return pd.DataFrame.from_records(records, columns=columns).astype({"n_queries": "int64"})


def table2_title(source: str, top_k: int, positive_answers: Sequence[str], confidence: float) -> str:
    """The caption of the written table: what r, h and t are and which queries each mean runs over."""
    return (
        f"ECCV Caption Table 2 ({source}): precision and recall (%) of each dataset's positives r measured by the "
        f"human-verified pairs, Prec = mean |r' ∩ t| / |r'|, Recall = mean 1 - |t \\ r'| / |t|, r' = r ∩ h, h = the "
        f"annotators' top-{top_k} candidates of the query, t = those answered {' or '.join(positive_answers)}; means "
        "over the queries with |r'| > 0 (Recall: and |t| > 0; their numbers in the ': queries' rows), "
        f"{100 * confidence:g}% bootstrap intervals over queries; the printed Table 2 below"
    )
