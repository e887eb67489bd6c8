"""ECCV Caption Section 4.1 and Appendix D.1: the user study's Bradley-Terry scores refitted from Table D.1.

The paper shows people five rankings of one caption's images (R = 8 positives): (A) only top-1 is wrong,
(B) only top-1 is correct, (C) top-1 to -5 are wrong, (D) only top-5 is correct, (E) all items are wrong;
collects 3,200 binary preferences (Table D.1: row i, column j = how often i was preferred to j), fits a
Bradley-Terry model and prints the scores "A: 70.85, B: 13.15, C: 10.66, D: 4.89, E: 0.44", which it reads
as "mAP@R is exactly aligned to the human preference score" (the five rankings' mAP@R: 66.0, 12.5, 10.3,
2.5, 0).

Here the maximum-likelihood fit (`itmbench.metrics.bradley_terry`, scores x 100, summing to 100) of the
transcribed Table D.1 (its diagonal, 24 in E's row, is not a comparison and is ignored), with a bootstrap
interval per score and per difference between systems adjacent in mAP@R order. The fit of D.1 as printed
gives its rows A-E the scores 10.66, 4.89, 70.85, 13.15, 0.44: the five printed scores exactly, but on
other rows. The only relabelling of D.1's rows (and columns) that reproduces the printed scores
(`relabellings`, over all 120) swaps A with C and B with D: D.1's row labels are permuted against the
paper's text. D.1's own caption ("231 responses preferred (A) ... than (B)") reads the table as labelled,
so the paper contradicts itself; the text's reading is the one whose ordering people would plausibly give
(as labelled, "top-1 to -5 are wrong" would be preferred 254 to 66 to "only top-1 is wrong").
The table shows both fits; the scores compared with the printed ones, and the claim, use the relabelling.

Each ranking's mAP@R, R@1 and R@5 are computed by `itmbench.metrics.ranking` from its hit pattern (R = 8),
the same worked examples its unit tests check against the printed values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from itmbench.metrics.bradley_terry import bradley_terry, bradley_terry_interval
from itmbench.metrics.intervals import DEFAULT_CONFIDENCE
from itmbench.metrics.ranking import map_at_r_batch, recall_at_k_batch
from itmbench.papers.paired import percentile_interval

TABLE = "Section 4.1"
BLOCK = "Bradley-Terry preference score"
DIFFERENCES = "Preference over the next ranking in mAP@R order"
D1 = "Table D.1"
N_POSITIVES = 8  # the paper's worked examples: R = 8
SCORE = "score"
AS_PRINTED = "score, Table D.1's rows as labelled"
LONG_COLUMNS = ("table", "block", "row", "column", "value", "lo", "hi", "system", "d1_row")


@dataclass(frozen=True)
class RankingSystem:
    """One of the study's five rankings: its letter, its description and its top-R hit pattern."""

    label: str
    description: str
    hits: tuple[int, ...]


SYSTEMS: tuple[RankingSystem, ...] = (
    RankingSystem("A", "only top-1 is wrong", (0, 1, 1, 1, 1, 1, 1, 1)),
    RankingSystem("B", "only top-1 is correct", (1, 0, 0, 0, 0, 0, 0, 0)),
    RankingSystem("C", "top-1 to -5 are wrong", (0, 0, 0, 0, 0, 1, 1, 1)),
    RankingSystem("D", "only top-5 is correct", (0, 0, 0, 0, 1, 0, 0, 0)),
    RankingSystem("E", "all items are wrong", (0, 0, 0, 0, 0, 0, 0, 0)),
)
LABELS: tuple[str, ...] = tuple(s.label for s in SYSTEMS)


def ranking_metrics() -> pd.DataFrame:
    """Each system's mAP@R, R@1 and R@5 (x 100) from its hit pattern: the top R, then the other positives, then
    negatives."""
    positives = np.arange(N_POSITIVES)
    rankings = []
    for s in SYSTEMS:
        pos, neg = iter(positives), iter(range(100, 100 + N_POSITIVES))
        top = [next(pos) if hit else next(neg) for hit in s.hits]
        rankings.append(np.array(top + list(pos) + list(range(200, 210))))
    pos_sets = [positives] * len(SYSTEMS)
    return pd.DataFrame(
        {
            "mAP@R": 100 * map_at_r_batch(rankings, pos_sets),
            "R@1": 100 * recall_at_k_batch(rankings, pos_sets, 1),
            "R@5": 100 * recall_at_k_batch(rankings, pos_sets, 5),
        },
        index=list(LABELS),
    )


def table_d1(published: pd.DataFrame) -> pd.DataFrame:
    """Table D.1's counts (rows and columns A-E, as printed: row i, column j = i preferred to j)."""
    cells = published[published["table"] == D1]
    if cells.empty:
        raise ValueError(f"published results: no {D1} cells; expected the 25 counts of the user study")
    rows = cells["row"].str.split(":", n=1).str[0].str.strip()
    wins = cells.assign(row=rows).pivot(index="row", columns="column", values="value")
    if sorted(wins.index) != list(LABELS) or sorted(wins.columns) != list(LABELS) or wins.isna().any().any():
        raise ValueError(f"published results: {D1} is not a complete 5 x 5 table of rows and columns {LABELS}")
    return wins.loc[list(LABELS), list(LABELS)].astype(float)


def printed_scores(published: pd.DataFrame) -> pd.Series:
    """Section 4.1's printed Bradley-Terry scores by system letter."""
    cells = published[(published["table"] == TABLE) & (published["block"] == BLOCK)]
    scores = cells.set_index("row")["value"].astype(float)
    if sorted(scores.index) != list(LABELS):
        raise ValueError(f"published results: {TABLE} prints no score for every one of {LABELS}")
    return scores.loc[list(LABELS)]


def relabellings(fitted: pd.Series, printed: pd.Series, decimals: int = 2) -> list[dict[str, str]]:
    """Every assignment {printed letter: D.1 row letter} under which the fitted scores, rounded to the printed
    decimals, equal the printed ones (the fit is equivariant: relabelling the counts relabels the scores)."""
    found = []
    for perm in itertools.permutations(fitted.index):
        if all(round(float(fitted[d1]), decimals) == round(float(printed[t]), decimals) for t, d1 in zip(LABELS, perm)):
            found.append(dict(zip(LABELS, perm)))
    return found


@dataclass(frozen=True)
class PreferenceFit:
    """The fit of D.1 as labelled, the relabelling that reproduces the printed scores, and the interval."""

    as_printed: pd.Series  # D.1 row letter -> score x 100
    relabelling: dict[str, str]  # text letter -> D.1 row letter (identity when none reproduces the print)
    reproduced: bool  # some relabelling reproduces every printed score
    scores: pd.Series  # text letter -> score x 100 under the relabelling
    lo: pd.Series
    hi: pd.Series
    differences: pd.DataFrame  # one row per mAP@R-adjacent pair: value, lo, hi (score points)


def fit(
    published: pd.DataFrame, n_boot: int = 1000, seed: int = 0, confidence: float = DEFAULT_CONFIDENCE
) -> PreferenceFit:
    """Refit Section 4.1's scores from Table D.1, with bootstrap intervals (`bradley_terry_interval`)."""
    wins = table_d1(published)
    as_printed = pd.Series(100 * bradley_terry(wins.to_numpy(), list(LABELS)), index=list(LABELS))
    found = relabellings(as_printed, printed_scores(published))
    relabel = found[0] if len(found) == 1 else {t: t for t in LABELS}
    order = [relabel[t] for t in LABELS]
    counts = wins.loc[order, order].to_numpy()
    lo, hi, reps = bradley_terry_interval(counts, n_boot=n_boot, seed=seed, confidence=confidence, labels=list(LABELS))
    scores = pd.Series([as_printed[d1] for d1 in order], index=list(LABELS))  # the fit is equivariant: relabelled
    metrics = ranking_metrics()
    by_map = list(metrics["mAP@R"].sort_values(ascending=False, kind="stable").index)
    records = []
    for a, b in itertools.pairwise(by_map):
        i, j = LABELS.index(a), LABELS.index(b)
        d_lo, d_hi = percentile_interval(100 * (reps[:, i] - reps[:, j]), confidence)
        records.append((f"{a} - {b}", float(scores[a] - scores[b]), d_lo, d_hi))
    differences = pd.DataFrame.from_records(records, columns=["pair", "value", "lo", "hi"])
    return PreferenceFit(
        as_printed,
        relabel,
        len(found) == 1,
        scores,
        pd.Series(100 * lo, index=list(LABELS)),
        pd.Series(100 * hi, index=list(LABELS)),
        differences,
    )


def section41_long(result: PreferenceFit) -> pd.DataFrame:
    """The regenerated cells: per system its score (relabelled, with interval), its score with D.1 as labelled,
    its mAP@R / R@1 / R@5; then the differences between mAP@R-adjacent systems (with intervals)."""
    metrics = ranking_metrics()
    described = {s.label: s.description for s in SYSTEMS}
    records = []
    for t in LABELS:
        d1 = result.relabelling[t]
        common = (described[t], d1)
        records.append((TABLE, BLOCK, t, SCORE, result.scores[t], result.lo[t], result.hi[t], *common))
        records.append((TABLE, BLOCK, t, AS_PRINTED, result.as_printed[t], np.nan, np.nan, described[t], t))
        for column in metrics.columns:
            records.append((TABLE, BLOCK, t, column, float(metrics.loc[t, column]), np.nan, np.nan, *common))
    for r in result.differences.itertuples():
        records.append((TABLE, DIFFERENCES, r.pair, "score difference", r.value, r.lo, r.hi, "", ""))
    return pd.DataFrame.from_records(records, columns=list(LONG_COLUMNS))


def section41_caption(result: PreferenceFit) -> str:
    """What the table shows, and D.1's labelling as the fit finds it."""
    if result.reproduced and any(t != d for t, d in result.relabelling.items()):
        moved = ", ".join(f"{t} is D.1's row {d}" for t, d in result.relabelling.items() if t != d)
        labelling = (
            f"Table D.1's rows as labelled give the printed scores to other rankings; the only relabelling that "
            f"reproduces them is: {moved} (the '{SCORE}' column; D.1's own caption reads the rows as labelled)"
        )
    elif result.reproduced:
        labelling = "Table D.1 as labelled reproduces the printed scores"
    else:
        labelling = "no relabelling of Table D.1 reproduces the printed scores: the rows are taken as labelled"
    return (
        "Maximum-likelihood Bradley-Terry scores (x 100, summing to 100) of the 3,200 preferences of Table D.1, "
        "percentile bootstrap intervals (each pair's preferences redrawn binomially); each ranking's mAP@R, R@1 "
        f"and R@5 for R = {N_POSITIVES} positives. {labelling}."
    )


def write_section41(prefix, published: pd.DataFrame | None = None, n_boot: int = 1000, seed: int = 0):
    """Write the Section 4.1 comparison as prefix.{csv,md,tex}; return the paths."""
    from itmbench.papers.published import load_published
    from itmbench.papers.tables import compare, write_comparison

    eccv = load_published("eccv") if published is None else published
    result = fit(eccv, n_boot=n_boot, seed=seed)
    compared = compare(section41_long(result), "eccv", published=eccv)
    title = "ECCV Caption Section 4.1: Bradley-Terry preference scores refitted from Table D.1 vs published"
    return write_comparison(compared, prefix, title, row_header="ranking", caption=section41_caption(result))
