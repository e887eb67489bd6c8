"""CxC's dataset statistics regenerated from its released files, beside the published numbers."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
import pandas as pd

from itmbench.papers.cxc import released as cxc_source
from itmbench.papers.cxc.canonical import _config_value
from itmbench.papers.statistics import compare_with_published, load_published, regenerated_frame
from itmbench.sources._common import FLOAT, INT, STRING, typed_frame
from itmbench.sources.released import resolve

# What is known about each published number the files do not reproduce, keyed (table, row, column).
NOTES: dict[tuple[str, str, str], str] = {
    ("section 3 text", "STS other-modality sampling", "positive pairs"): (
        "no count of the released aggregated files gives 20,587: other-modality (c2c_isim) STS pairs with "
        "agg_score >= 3 number 1,092 (val) + 583 (test) = 1,675, and all STS positives 30,967; the number "
        "may count something the released files do not hold"
    ),
}


_CXC_TASK_LABEL = {"sts": "STS", "sis": "SIS", "sits": "SITS"}
_CXC_SPLIT_LABEL = {"val": "Validation", "test": "Test"}


def cxc_regenerated(
    raw: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """CxC numbers regenerated from the raw rating tables {(task, split): read_cxc_csv(...)}."""
    rows: list[tuple[str, str, str, float, str]] = []
    files = "{sts,sis,sits}_{val,test}.csv rows"
    table1 = "appendix Table 1"
    for split in cxc_source.SPLITS:
        for task in cxc_source.TASKS:
            rows.append((table1, _CXC_SPLIT_LABEL[split], _CXC_TASK_LABEL[task], len(raw[task, split]), files))
        total = sum(len(raw[task, split]) for task in cxc_source.TASKS)
        rows.append((table1, _CXC_SPLIT_LABEL[split], "Total (per split)", total, files))
    for task in cxc_source.TASKS:
        total = sum(len(raw[task, split]) for split in cxc_source.SPLITS)
        rows.append((table1, "Total (per task)", _CXC_TASK_LABEL[task], total, files))
    grand = sum(len(table) for table in raw.values())
    rows.append((table1, "Total (per task)", "Total (per split)", grand, files))
    rows.append(("abstract", "all tasks and splits", "rated pairs", grand, files))
    for split in cxc_source.SPLITS:
        sits = raw["sits", split]
        original = sits[sits["sampling_method"] == "c2i_original"]
        label = _CXC_SPLIT_LABEL[split]
        source = f"sits_{split}.csv rows with sampling_method c2i_original"
        rows.append(("section 2 text", label, "MS-COCO image-caption pairs rated", len(original), source))
        rows.append(("section 1 text", label, "captions", original["caption_id"].nunique(), source))
        rows.append(("section 1 text", label, "images", original["image_id"].nunique(), source))
    isim = 0
    for split in cxc_source.SPLITS:
        sts = raw["sts", split]
        isim += int(((sts["sampling_method"] == "c2c_isim") & (sts["agg_score"] >= thresholds.sts)).sum())
    rows.append(
        (
            "section 3 text",
            "STS other-modality sampling",
            "positive pairs",
            isim,
            f"sts_{{val,test}}.csv c2c_isim rows with agg_score >= {thresholds.sts:g}",
        )
    )
    return regenerated_frame(rows)


def cxc_statistics(
    raw: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """CxC appendix Table 1 and the dataset numbers of the text, beside the published values."""
    return compare_with_published(cxc_regenerated(raw, thresholds), load_published("cxc"), "cxc")


def cxc_rating_histogram(tables: Mapping[tuple[str, str], pd.DataFrame], bin_width: float = 0.5) -> pd.DataFrame:
    """Counts of mean ratings per score bin, per task, split and sampling (the paper's Fig. 3).

    Sampling is 'intramodal sampling' (other-modality selection), 'same example' (original
    MS-COCO pairs: co-captions for STS, image-caption pairs for SITS) or 'all'. Bins are
    [left, left + bin_width), the last one closed at 5. Columns: task, split, sampling: string,
    bin_left, bin_right: float64, count: int64, share: float64 (of the group).
    """
    low, high = cxc_source.SCORE_RANGE
    n_bins = int(round((high - low) / bin_width))
    if n_bins <= 0 or not np.isclose(n_bins * bin_width, high - low):
        raise ValueError(f"bin_width must divide the score range {low}-{high}, got {bin_width}")
    edges = low + bin_width * np.arange(n_bins + 1)
    bins = {
        key: np.clip(np.floor((table["agg_score"].to_numpy() - low) / bin_width).astype(int), 0, n_bins - 1)
        for key, table in tables.items()
    }
    return _sampling_histogram(tables, bins, edges)


def cxc_positives_per_item(
    tables: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """Distribution of the number of positive partners per rated item (the paper's Fig. 4).

    Items are those rated in the task and split (so 0 counts items with no positive). STS counts
    caption partners per caption, SIS image partners per image (both symmetric), SITS images per
    caption and captions per image. Columns: task, split, item: string, n_positives: int64,
    n_items: int64.
    """
    cols: dict[str, list] = {name: [] for name in ("task", "split", "item", "n_positives", "n_items")}
    for (task, split), table in tables.items():
        a, b = cxc_source.ITEM_COLUMNS[task]
        positive = table["agg_score"] >= thresholds.for_task(task)
        if task in cxc_source.SYMMETRIC_TASKS:
            items = pd.concat([table[f"{a}_id"], table[f"{b}_id"]])
            hits = pd.concat([table.loc[positive, f"{a}_id"], table.loc[positive, f"{b}_id"]])
            per_kind = {"caption" if task == "sts" else "image": (items, hits)}
        else:
            per_kind = {
                "caption": (table["caption_id"], table.loc[positive, "caption_id"]),
                "image": (table["image_id"], table.loc[positive, "image_id"]),
            }
        for kind, (items, hits) in per_kind.items():
            counts = hits.value_counts().reindex(items.unique(), fill_value=0)
            distribution = counts.value_counts().sort_index()
            for n_positives, n_items in distribution.items():
                cols["task"].append(task)
                cols["split"].append(split)
                cols["item"].append(kind)
                cols["n_positives"].append(int(n_positives))
                cols["n_items"].append(int(n_items))
    return typed_frame(cols, {"task": STRING, "split": STRING, "item": STRING, "n_positives": INT, "n_items": INT})


def rating_columns(table: pd.DataFrame) -> list[str]:
    """The world's per-rater columns (rating_0, rating_1, ...) in rater order; [] for released or coco tables."""
    found = [c for c in table.columns if c.startswith("rating_") and c[len("rating_") :].isdigit()]
    return sorted(found, key=lambda c: int(c[len("rating_") :]))


def cxc_rating_std(tables: Mapping[tuple[str, str], pd.DataFrame], bin_width: float = 0.25) -> pd.DataFrame:
    """Counts of rated pairs per bin of the standard deviation of their raw ratings (the appendix's Figure 2).

    Each pair's sample standard deviation (ddof=1) over its raters' ratings, per task, split and sampling
    ('intramodal sampling', 'same example', 'all', as in Fig. 3). Bins are [left, left + bin_width) from 0
    up to the bin holding the largest deviation of any table, the same edges for every group. Only the
    world's tables hold each rater's rating (rating_0, ...): the released files keep the mean alone, so a
    table without them, or a pair with fewer than two ratings, is refused. Columns as
    `cxc_rating_histogram`'s.
    """
    if not bin_width > 0:
        raise ValueError(f"bin_width must be positive, got {bin_width}")
    stds: dict[tuple[str, str], np.ndarray] = {}
    for (task, split), table in tables.items():
        columns = rating_columns(table)
        if not columns:
            raise ValueError(
                f"CxC {task} ({split}): no per-rater columns rating_0, rating_1, ...; the appendix's Figure 2 needs "
                "each rater's rating, which only the world's CxC keeps (the released files hold the mean alone)"
            )
        ratings = table[columns].to_numpy(dtype="float64")
        counts = np.isfinite(ratings).sum(axis=1)
        if (counts < 2).any():
            row = int(np.flatnonzero(counts < 2)[0])
            raise ValueError(
                f"CxC {task} ({split}) row {row}: {int(counts[row])} rating(s); a standard deviation needs at least two"
            )
        stds[task, split] = np.nanstd(ratings, axis=1, ddof=1)
    top = max((float(v.max()) for v in stds.values() if len(v)), default=0.0)
    n_bins = max(1, int(np.floor(top / bin_width)) + 1)
    edges = bin_width * np.arange(n_bins + 1)
    bins = {key: np.floor(values / bin_width).astype(int) for key, values in stds.items()}
    return _sampling_histogram(tables, bins, edges)


def _sampling_histogram(
    tables: Mapping[tuple[str, str], pd.DataFrame], bins: Mapping[tuple[str, str], np.ndarray], edges: np.ndarray
) -> pd.DataFrame:
    """Counts per bin (`bins`: each table row's bin index into `edges`) per task, split and sampling group:
    'intramodal sampling' (other-modality selection), 'same example' (original MS-COCO pairs), 'all' (a group
    without rows is left out, but 'all')."""
    n_bins = len(edges) - 1
    cols: dict[str, list] = {
        name: [] for name in ("task", "split", "sampling", "bin_left", "bin_right", "count", "share")
    }
    for (task, split), table in tables.items():
        same = table["sampling_method"].isin(cxc_source.SAME_EXAMPLE_METHODS).to_numpy()
        index = bins[task, split]
        groups = {"intramodal sampling": index[~same], "same example": index[same], "all": index}
        for sampling, group in groups.items():
            if sampling != "all" and not len(group):
                continue
            counts = np.bincount(group, minlength=n_bins)
            for b in range(n_bins):
                cols["task"].append(task)
                cols["split"].append(split)
                cols["sampling"].append(sampling)
                cols["bin_left"].append(float(edges[b]))
                cols["bin_right"].append(float(edges[b + 1]))
                cols["count"].append(int(counts[b]))
                cols["share"].append(float(counts[b] / len(group)) if len(group) else float("nan"))
    schema = {
        "task": STRING,
        "split": STRING,
        "sampling": STRING,
        "bin_left": FLOAT,
        "bin_right": FLOAT,
        "count": INT,
        "share": FLOAT,
    }
    return typed_frame(cols, schema)


def read_released_ratings(mirror: str | os.PathLike) -> dict[tuple[str, str], pd.DataFrame]:
    """The six released rating files as raw tables {(task, split): read_cxc_csv(...)}, one row per line."""
    return {
        (task, split): cxc_source.read_cxc_csv(resolve(f"cxc_{task}_{split}", mirror, must_exist=True), task, split)
        for task in cxc_source.TASKS
        for split in cxc_source.SPLITS
    }


def from_mirror(mirror: str | os.PathLike) -> pd.DataFrame:
    """Regenerate the paper's dataset statistics from the released files in a mirror folder."""
    return cxc_statistics(read_released_ratings(mirror))


def _split_order(split: str) -> tuple[int, str]:
    """The released files' order (val, test), other splits after them by name."""
    known = cxc_source.SPLITS
    return (known.index(split) if split in known else len(known), split)


def bench_ratings(
    tables: Mapping[str, pd.DataFrame],
) -> tuple[dict[tuple[str, str], pd.DataFrame], cxc_source.CxcThresholds]:
    """A CxC benchmark folder's rated pairs as {(task, split): pairs} and the thresholds it was built with.

    `tables` is `canonical.read(folder)` (the world's build or the coco source's): one `sts`, `sis`,
    `sits` table each with a split column; the thresholds come from its `config` table (the schema's
    defaults where it has none), so the positives counted are the ones the benchmark scores.
    """
    thresholds = cxc_source.CxcThresholds(
        *(float(_config_value(tables, f"threshold_{task}")) for task in cxc_source.TASKS)
    )
    out: dict[tuple[str, str], pd.DataFrame] = {}
    for task in cxc_source.TASKS:
        frame = tables[task]
        for split in sorted(set(frame["split"].astype(str)), key=_split_order):
            out[task, split] = frame[frame["split"] == split].reset_index(drop=True)
    return out, thresholds


# --- the numbers of Figures 3 and 4, as tables (the figures are drawn from these files) ---------------

# The paper's legend of Fig. 3, for the histogram's sampling groups.
SAMPLING_LABELS: dict[str, str] = {
    "all": "All",
    "intramodal sampling": "Intramodal Sampling",
    "same example": "Same Example",
}
FIGURE_TABLE_EXTRA: dict[str, tuple[str, ...]] = {
    "figure3": ("task", "split", "sampling", "bin_left", "bin_right", "share"),
    "figure4": ("task", "split", "item", "n_positives"),
    "appendix_figure2": ("task", "split", "sampling", "bin_left", "bin_right", "share"),
}


def _bin_label(left: float, right: float, last: bool) -> str:
    return f"[{left:.2f}, {right:.2f}{']' if last else ')'}"


def figure3_table(ratings: Mapping[tuple[str, str], pd.DataFrame], bin_width: float = 0.5) -> pd.DataFrame:
    """Fig. 3's numbers: rated pairs per rating bin, per split, task and sampling, as a long table.

    `ratings` holds one row per rated annotation ({(task, split): table} with agg_score and
    sampling_method: the released files' rows, or a benchmark's pairs). Columns: row ('<split> <TASK>
    <Sampling>'), column (the bin, '[0.00, 0.50)', the last closed), value (the count), lo, hi (NaN:
    a count of the whole file, no sample), then task, split, sampling, bin_left, bin_right, share (of the group).
    """
    hist = cxc_rating_histogram(ratings, bin_width)
    return _binned_table(hist, hist["bin_right"] >= cxc_source.SCORE_RANGE[1], "figure3")


def appendix_figure2_table(ratings: Mapping[tuple[str, str], pd.DataFrame], bin_width: float = 0.25) -> pd.DataFrame:
    """The appendix's Figure 2 numbers: rated pairs per bin of their raters' standard deviation, per split, task
    and sampling, as a long table with Figure 3's columns (`cxc_rating_std`; the world's tables only)."""
    hist = cxc_rating_std(ratings, bin_width)
    return _binned_table(hist, pd.Series(False, index=hist.index), "appendix_figure2")


def _binned_table(hist: pd.DataFrame, last: pd.Series, stem: str) -> pd.DataFrame:
    """A histogram (task, split, sampling, bin_left, bin_right, count, share) as a figure's long table."""
    frame = pd.DataFrame(
        {
            "row": [
                f"{split} {_CXC_TASK_LABEL[task]} {SAMPLING_LABELS[sampling]}"
                for task, split, sampling in zip(hist["task"], hist["split"], hist["sampling"])
            ],
            "column": [_bin_label(a, b, c) for a, b, c in zip(hist["bin_left"], hist["bin_right"], last)],
            "value": hist["count"].astype("float64"),
            "lo": np.nan,
            "hi": np.nan,
        }
    )
    for name in FIGURE_TABLE_EXTRA[stem]:
        frame[name] = hist[name].to_numpy()
    return _ordered(frame)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows by split (val, test, others), task (STS, SIS, SITS) and sampling (All first), keeping the order within."""
    order = pd.DataFrame(
        {
            "split": frame["split"].map(lambda s: _split_order(str(s))),
            "task": frame["task"].map(lambda t: cxc_source.TASKS.index(str(t))),
            "sampling": frame["sampling"].map(lambda s: list(SAMPLING_LABELS).index(str(s)))
            if "sampling" in frame
            else 0,
            "n": np.arange(len(frame)),
        }
    )
    index = order.sort_values(["split", "task", "sampling", "n"], kind="stable").index
    return frame.loc[index].reset_index(drop=True)


def figure4_table(
    pairs: Mapping[tuple[str, str], pd.DataFrame], thresholds: cxc_source.CxcThresholds = cxc_source.CxcThresholds()
) -> pd.DataFrame:
    """Fig. 4's numbers: items by their number of positive partners, per split, task and item kind (long table).

    Every count from 0 to the largest of its (split, task) is a column, zeros included. Columns: row
    ('<split> <TASK> per <item>'), column (the number of positives), value (items with that many), lo,
    hi (NaN), then task, split, item, n_positives.
    """
    counts = cxc_positives_per_item(pairs, thresholds)
    records = []
    for (task, split), group in counts.groupby(["task", "split"], sort=False):
        top = int(group["n_positives"].max())
        for item, sub in group.groupby("item", sort=True):
            found = dict(zip(sub["n_positives"].astype(int), sub["n_items"].astype(int)))
            for n in range(top + 1):
                row = f"{split} {_CXC_TASK_LABEL[task]} per {item}"
                records.append((row, str(n), float(found.get(n, 0)), task, split, item, n))
    frame = pd.DataFrame.from_records(
        records, columns=["row", "column", "value", "task", "split", "item", "n_positives"]
    )
    frame.insert(3, "lo", np.nan)
    frame.insert(4, "hi", np.nan)
    return _ordered(frame)
