"""CxC's figures: the world's R@K summary, and the paper's Figures 3-5 and the appendix's Figure 2 drawn from the
files holding their numbers.

Figures 3 and 4 are drawn from the tables `itmbench cxc-figure-data` writes (from the released rating
files or a benchmark's tables: `statistics.figure3_table`, `figure4_table`), Figure 5 from the sampled
pairs and the fit table `itmbench cxc-encoder-sts` writes (`encoders`), so restyling one reruns only
its drawing. The split drawn is the paper's validation split unless told otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.papers.figures import (
    COLOURS,
    figure_style,
    grouped_bars,
    intervals_label,
    metric_series,
    model_label,
    new_figure,
    read_figure_data,
    write_figure,
)
from itmbench.papers.world_cells import WorldMetrics


def cxc_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """CxC R@K per model under the CxC positives, one panel per direction."""
    docs = metrics["cxc"]
    models = sorted(docs)
    fig, axes = new_figure(10.0, 7.0, ncols=2, nrows=2)
    titles = {"i2t": "image → text", "t2i": "text → image", "t2t": "text → text (STS)", "i2i": "image → image (SIS)"}
    for ax, (direction, title) in zip(axes.ravel(), titles.items()):
        series = [(k, *metric_series(docs, models, f"{direction}/cxc/{k}")) for k in ("R@1", "R@5", "R@10")]
        grouped_bars(ax, [model_label(m, rows) for m in models], series)
        ax.set_ylim(0, 100)
        ax.set_ylabel("recall (%)")
        ax.set_title(title, fontsize=9)
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=3)
    fig.suptitle(f"Crisscrossed Captions in the world: R@K per model and direction, CxC positives "
                 f"({intervals_label(metrics, 'cxc')})", fontsize=10)  # fmt: skip
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return cxc_figure(metrics, rows)


# --- Figures 3-5, drawn from the files that hold their numbers (restyling never recomputes) ----------

# stem -> what it draws; each is written as <stem>.png and <stem>.pdf from the computed files.
DATA_FIGURES: dict[str, str] = {
    "figure3": "Figure 3: distribution of ratings per task (All, Intramodal Sampling, Same Example)",
    "figure4": "Figure 4: items by their number of positive partners, per task",
    "figure5": "Figure 5: an encoder's cosine against STS on sampled caption pairs, with the line of best fit",
    "appendix_figure2": "Appendix Figure 2: rated pairs by the standard deviation of their raters' ratings, per task",
}
DATA_FIGURE_COLUMNS: dict[str, tuple[str, ...]] = {
    "figure3": ("column", "value", "task", "split", "sampling", "bin_left", "bin_right"),
    "figure4": ("value", "task", "split", "item", "n_positives"),
    "figure5": ("row", "column", "value", "lo", "hi"),
    "appendix_figure2": ("column", "value", "task", "split", "sampling", "bin_left", "bin_right"),
}
POINT_COLUMNS: tuple[str, ...] = ("caption1_id", "caption2_id", "sts", "cosine")
_TASKS = {"sts": "STS", "sis": "SIS", "sits": "SITS"}
_SPLITS = {"val": "validation", "test": "test", "train": "train"}


def _split_rows(frame: pd.DataFrame, split: str, path: str | os.PathLike) -> pd.DataFrame:
    rows = frame[frame["split"].astype(str) == split]
    if rows.empty:
        found = sorted(set(frame["split"].astype(str)))
        raise InputError(f"{path}: no rows of split {split!r}; expected one of {found}")
    return rows


def figure3(frame: pd.DataFrame, split: str, source: str):
    """Fig. 3: rated pairs per rating bin, one panel per task, bars per sampling (the paper's legend)."""
    title = f"Crisscrossed Captions Figure 3 ({source}): ratings of the {_SPLITS.get(split, split)} split"
    return _binned_panels(frame, "mean rating (bin's left edge)", title)


def appendix_figure2(frame: pd.DataFrame, split: str, source: str):
    """Appendix Fig. 2: rated pairs per bin of their raters' standard deviation, one panel per task, bars per
    sampling, as Fig. 3 draws its ratings."""
    title = (
        f"Crisscrossed Captions Appendix Figure 2 ({source}): standard deviation of the raters' ratings per "
        f"pair, {_SPLITS.get(split, split)} split"
    )
    return _binned_panels(frame, "standard deviation of the ratings (bin's left edge)", title)


def _binned_panels(frame: pd.DataFrame, xlabel: str, title: str):
    """Rated pairs per bin, one panel per task, bars per sampling (the paper's legend)."""
    from itmbench.papers.cxc.statistics import SAMPLING_LABELS

    tasks = [t for t in _TASKS if t in set(frame["task"])]
    fig, axes = new_figure(4.0 * len(tasks), 3.6, ncols=len(tasks))
    for ax, task in zip(axes[0], tasks):
        rows = frame[frame["task"] == task]
        bins = list(dict.fromkeys(rows["column"]))
        groups = [g for g in SAMPLING_LABELS if g in set(rows["sampling"])]
        if "same example" not in groups:  # every pair from other-modality sampling (SIS): its bars are All's
            groups = ["all"]
        width = 0.8 / len(groups)
        x = np.arange(len(bins), dtype=float)
        for i, group in enumerate(groups):
            counts = rows[rows["sampling"] == group].set_index("column")["value"].reindex(bins).fillna(0.0)
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                counts.to_numpy(),
                width,
                color=COLOURS[i % 4],
                label=SAMPLING_LABELS[group],
            )
        ax.set_xticks(x, [f"{left:g}" for left in rows.drop_duplicates("column")["bin_left"]], fontsize=7)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel("rated pairs", fontsize=8)
        ax.set_title(_TASKS[task], fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def figure4(frame: pd.DataFrame, split: str, source: str):
    """Fig. 4: items by their number of positive partners, one panel per task and item (SITS: captions, images)."""
    from matplotlib.ticker import MaxNLocator

    panels = [
        (t, i) for t in _TASKS for i in ("caption", "image") if ((frame["task"] == t) & (frame["item"] == i)).any()
    ]
    fig, axes = new_figure(3.4 * len(panels), 3.4, ncols=len(panels))
    for n, (ax, (task, item)) in enumerate(zip(axes[0], panels)):
        rows = frame[(frame["task"] == task) & (frame["item"] == item)]
        ax.bar(rows["n_positives"].to_numpy(dtype=float), rows["value"].to_numpy(), 0.8, color=COLOURS[n % 4])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("positive partners", fontsize=8)
        ax.set_ylabel(f"{item}s", fontsize=8)
        ax.set_title(f"{_TASKS[task]}, per {item}", fontsize=9)
    fig.suptitle(f"Crisscrossed Captions Figure 4 ({source}): positives per item, {_SPLITS.get(split, split)} split",
                 fontsize=10)  # fmt: skip
    fig.tight_layout()
    return fig


def figure5(points: pd.DataFrame, fit: pd.DataFrame, source: str):
    """Fig. 5: the encoder's cosine against STS for the sampled pairs, with the line of best fit and its r."""
    label = str(fit["row"].iloc[0])
    cells = fit.set_index("column")
    fig, axes = new_figure(5.0, 4.2)
    ax = axes[0, 0]
    ax.scatter(points["sts"], points["cosine"], s=6, alpha=0.4, color=COLOURS[0], linewidths=0)
    slope, intercept = float(cells.loc["slope", "value"]), float(cells.loc["intercept", "value"])
    xs = np.array([0.0, 5.0])
    r = cells.loc["Pearson r"]
    ax.plot(xs, intercept + slope * xs, color=COLOURS[3],
            label=f"best fit: Pearson r {r['value']:.2f} ({r['lo']:.2f}–{r['hi']:.2f})")  # fmt: skip
    ax.set_xlim(0, 5)
    ax.set_xlabel("STS (mean rating)", fontsize=8)
    ax.set_ylabel(f"{label} cosine", fontsize=8)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"Crisscrossed Captions Figure 5 ({source}): {len(points)} caption pairs", fontsize=9)
    fig.tight_layout()
    return fig


def write_data_figure(
    stem: str,
    data: str | os.PathLike,
    out_png: str | os.PathLike,
    source: str,
    split: str = "val",
    points: str | os.PathLike | None = None,
    dpi: int = 150,
) -> list[Path]:
    """Draw Figure `stem` from its computed file(s) and write <out_png> and the PDF beside it."""
    if stem not in DATA_FIGURES:
        raise InputError(f"unknown CxC figure {stem!r}; expected one of {sorted(DATA_FIGURES)}")
    frame = read_figure_data(data, DATA_FIGURE_COLUMNS[stem])
    with figure_style():
        if stem == "figure5":
            if points is None:
                raise InputError("CxC Figure 5 draws its sampled pairs: give --points (the figure5_points.csv)")
            fig = figure5(read_figure_data(points, POINT_COLUMNS), frame, source)
        else:
            draw = {"figure3": figure3, "figure4": figure4, "appendix_figure2": appendix_figure2}[stem]
            fig = draw(_split_rows(frame, split, data), split, source)
        return write_figure(fig, Path(out_png).with_suffix(""), dpi)
