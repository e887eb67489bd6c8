"""CxC's text encoders against the STS ratings: Table 1's example pairs and Figure 5's sample with its line.

The paper compares the STS rating of caption pairs with two encoders' cosine similarity: GloVe bag of
words (BoW) and the Universal Sentence Encoder (USE). Table 1 prints six COCO caption pairs with the
three numbers; Figure 5 plots BoW cosine against STS for 1,000 sampled pairs with the line of best
fit ("a weak positive correlation").

Neither GloVe, USE nor the COCO caption texts are here (the released files name captions by id), so
both are regenerated in the world, where `report.cxc.encoders` names the world model standing for
each printed encoder (`bow`, the TF-IDF bag of words, for BoW; `de_t2t`, the text-text dual
encoder, for USE). Their cosines are the `model_score` of the STS correlation rows that
`score-benchmark` writes for the scored split (the dot product of unit vectors), so nothing is
embedded again. Decisions where the paper is silent:

- Table 1's world pairs: for each printed pair, the rated STS pair of the scored split whose mean
  rating is nearest the printed STS (ties: the lowest caption ids), each world pair used once; its
  STS interval is Student's t over its raters (the world keeps each rating), clipped to the 0-5
  scale; the cosines are exact.
- Figure 5: STS on x, the encoder's cosine on y, the least-squares line of the cosine on STS; the
  pairs a seeded draw without replacement from the scored split's rated STS pairs; slope,
  intercept, Pearson r and Spearman rho with percentile intervals over resampled pairs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.metrics.correlation import line_fit_bootstrap
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.papers.cxc.released import SCORE_RANGE
from itmbench.sources._common import FLOAT, INT, typed_frame

POINT_SCHEMA: dict[str, str] = {"caption1_id": INT, "caption2_id": INT, "sts": FLOAT, "cosine": FLOAT}
# Figure 5's table: the columns in order, each a statistic of `line_fit_bootstrap` (or the count of pairs).
FIT_COLUMNS: dict[str, str] = {
    "pairs": "",
    "slope": "slope",
    "intercept": "intercept",
    "Pearson r": "pearson",
    "Spearman ρ": "spearman",
}
TABLE1_COLUMNS: tuple[str, ...] = ("Caption 1", "Caption 2", "STS", "BoW", "USE")
PRINTED_ENCODERS: tuple[str, ...] = ("BoW", "USE")


def sts_scores(scores: pd.DataFrame, where: str | os.PathLike) -> pd.DataFrame:
    """The rated STS pairs of a CxC scores file: caption1_id, caption2_id, sts (the mean rating), cosine.

    `scores` is what `score-benchmark --name cxc` writes for a text model (its rows with part
    'correlation' and task 'sts': query_id is caption 1, item_id caption 2, model_score the cosine).
    """
    needed = {"part", "task", "query_id", "item_id", "agg_score", "model_score"}
    missing = sorted(needed - set(scores.columns))
    if missing:
        raise InputError(f"{where}: columns {missing} are missing; expected a CxC scores file (score-benchmark)")
    rows = scores[(scores["part"] == "correlation") & (scores["task"] == "sts")]
    if rows.empty:
        raise InputError(f"{where}: no STS correlation rows; expected the CxC scores of a model that embeds captions")
    cols = {
        "caption1_id": rows["query_id"].to_numpy(np.int64),
        "caption2_id": rows["item_id"].to_numpy(np.int64),
        "sts": rows["agg_score"].to_numpy(np.float64),
        "cosine": rows["model_score"].to_numpy(np.float64),
    }
    return typed_frame(cols, POINT_SCHEMA)


def figure5_points(sts: pd.DataFrame, sample: int, seed: int) -> pd.DataFrame:
    """Fig. 5's pairs: `sample` rated STS pairs drawn without replacement (seeded; all when fewer), in file order."""
    n = len(sts)
    if n < 3:
        raise InputError(f"Figure 5 needs at least 3 rated STS pairs, the scores hold {n}")
    take = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
    return sts.iloc[take].reset_index(drop=True)


def figure5_table(points: pd.DataFrame, label: str, n_boot: int, seed: int, confidence: float) -> pd.DataFrame:
    """Fig. 5's line of best fit as a one-row long table (row `label`): pairs, slope, intercept, Pearson r,
    Spearman rho, each statistic with its bootstrap interval."""
    fit = line_fit_bootstrap(points["sts"], points["cosine"], n_boot=n_boot, seed=seed, confidence=confidence)
    records = [(label, "pairs", float(len(points)), np.nan, np.nan)]
    records += [(label, column, *fit[key]) for column, key in FIT_COLUMNS.items() if key]
    return pd.DataFrame.from_records(records, columns=["row", "column", "value", "lo", "hi"])


def _t_interval(ratings: np.ndarray, confidence: float) -> tuple[float, float]:
    """Student's t interval of the mean of one pair's ratings, clipped to the rating scale (NaN under 2 raters)."""
    from scipy import stats

    r = ratings[np.isfinite(ratings)]
    if r.size < 2:
        return (np.nan, np.nan)
    half = stats.t.ppf(0.5 + confidence / 2, r.size - 1) * r.std(ddof=1) / np.sqrt(r.size)
    low, high = SCORE_RANGE
    return (float(max(low, r.mean() - half)), float(min(high, r.mean() + half)))


def table1_long(
    published: pd.DataFrame,
    encoders: Mapping[str, tuple[str, pd.DataFrame]],
    sts_pairs: pd.DataFrame,
    captions: Mapping[int, str],
    confidence: float = DEFAULT_CONFIDENCE,
    printed_decimals: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """CxC Table 1: each printed pair, and beneath it the world's pair nearest its STS, as a long table.

    `published` is the printed table (`published_wide('cxc', 'Table 1')`: rows 'Caption 1 / Caption 2',
    columns STS, BoW, USE); `encoders` maps each printed encoder to (world model, its `sts_scores`);
    `sts_pairs` is the benchmark's STS table (caption1_id, caption2_id, agg_score and, in the world,
    rating_0..); `captions` maps caption ids to their text; `printed_decimals` the digits each column is
    printed with (its printed cells are shown so). Rows '<k> printed' and '<k> world'; columns
    `TABLE1_COLUMNS` (captions as the cells' notes); extra columns pair, source, model, caption1_id,
    caption2_id.
    """
    missing = [name for name in PRINTED_ENCODERS if name not in encoders]
    if missing:
        raise InputError(f"CxC Table 1: no world model for the printed encoders {missing}; expected {PRINTED_ENCODERS}")
    keys = ["caption1_id", "caption2_id"]
    pool = None
    for name in PRINTED_ENCODERS:
        model, scores = encoders[name]
        part = scores[[*keys, "sts", "cosine"]].rename(columns={"cosine": name})
        pool = part if pool is None else pool.merge(part.drop(columns="sts"), on=keys, how="inner")
    ratings = [c for c in sts_pairs.columns if c.startswith("rating_")]
    rated = sts_pairs[keys + ratings].drop_duplicates(keys)
    pool = pool.merge(rated, on=keys, how="left").sort_values(keys, kind="stable").reset_index(drop=True)
    if pool.empty:
        raise InputError("CxC Table 1: the encoders' scores share no rated STS pair")
    records: list[dict] = []
    used = np.zeros(len(pool), dtype=bool)
    decimals = dict(printed_decimals or {})
    for k, (label, printed) in enumerate(published.iterrows(), start=1):
        first, _, second = str(label).partition(" / ")
        base = {"pair": k, "lo": np.nan, "hi": np.nan, "caption1_id": pd.NA, "caption2_id": pd.NA}
        row = f"{k} printed"
        for column, note in (("Caption 1", first), ("Caption 2", second)):
            records.append({**base, "row": row, "column": column, "value": np.nan, "note": note, "source": "printed"})
        for column in ("STS", *PRINTED_ENCODERS):
            value = float(printed.get(column, np.nan))
            text = f"{value:.{decimals[column]}f}" if column in decimals and np.isfinite(value) else ""
            records.append({**base, "row": row, "column": column, "value": value, "note": text, "source": "printed"})
        distance = np.where(used, np.inf, np.abs(pool["sts"].to_numpy() - float(printed["STS"])))
        if not np.isfinite(distance).any():
            break  # fewer world pairs than printed ones
        pick = int(np.argmin(distance))  # the first of the nearest: the lowest caption ids
        used[pick] = True
        chosen = pool.iloc[pick]
        ids = {"caption1_id": int(chosen["caption1_id"]), "caption2_id": int(chosen["caption2_id"])}
        world = {**base, **ids, "row": f"{k} world", "source": "world", "note": ""}
        for column, key in (("Caption 1", "caption1_id"), ("Caption 2", "caption2_id")):
            text = captions.get(ids[key])
            if text is None:
                raise InputError(f"CxC Table 1: caption {ids[key]} of an STS pair is not among the items' captions")
            records.append({**world, "column": column, "value": np.nan, "note": text})
        lo, hi = _t_interval(chosen[ratings].to_numpy(np.float64), confidence) if ratings else (np.nan, np.nan)
        records.append({**world, "column": "STS", "value": float(chosen["sts"]), "lo": lo, "hi": hi})
        for name in PRINTED_ENCODERS:
            records.append({**world, "column": name, "value": float(chosen[name]), "model": encoders[name][0]})
    frame = pd.DataFrame.from_records(records)
    frame["model"] = frame["model"].fillna("") if "model" in frame else ""
    columns = ["row", "column", "value", "lo", "hi", "note", "pair", "source", "model", "caption1_id", "caption2_id"]
    return frame[columns].astype({"caption1_id": "Int64", "caption2_id": "Int64", "pair": "int64"})


__all__ = ["figure5_points", "figure5_table", "sts_scores", "table1_long"]
