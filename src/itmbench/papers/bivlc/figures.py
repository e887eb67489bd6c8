"""The GPT-4V SugarCrepe figure behind the number the BiVLC paper quotes (Section 5.3: GPT-4V 92.19).

The 92.19 comes from SugarCrepe's released GPT-4V answers (`gpt-4v-results/`, footnote 2 of the
paper): it is the mean of the two option orders' accuracies (positive caption shown first: 90.96;
negative first: 93.41) over all 7,512 instances. `gpt4v_figure_data` returns the numbers (accuracy
per subset and order with Wilson intervals, per order over all subsets, and the mean of orders with
a bootstrap interval; see `itmbench.papers.sugarcrepe.predictions.sugarcrepe_answer_table`), and `plot_gpt4v_accuracy`
draws them: grouped bars per subset (one per order, with interval whiskers), the mean of the orders
of each subset as a marker, and the overall mean of orders as a dashed line labelled with its value.
The figure is written as PNG and PDF, each atomically (temp file, then rename), without timestamps
in the metadata, so the same answers give the same bytes on one machine.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from itmbench.errors import InputError
from itmbench.papers.figures import (
    figure_style,
    grouped_bars,
    interval_bars,
    interval_bounds,
    intervals_label,
    metric_series,
    model_label,
    new_figure,
    read_figure_data,
    write_figure,
)
from itmbench.papers.predictions import MEAN_OF_ORDERS, ScoreOptions
from itmbench.papers.sugarcrepe.predictions import read_sugarcrepe_answers, sugarcrepe_answer_table
from itmbench.papers.world_cells import WorldMetrics

GPT4V_FOLDER = "raw.githubusercontent.com/RAIVNLab/sugar-crepe/main/gpt-4v-results"
ORDER_COLOURS: dict[str, str] = {"positive-first": "#4C72B0", "negative-first": "#DD8452"}


def gpt4v_figure_data(
    source: str | os.PathLike | Sequence[str | os.PathLike] | pd.DataFrame, options: ScoreOptions = ScoreOptions()
) -> pd.DataFrame:
    """Accuracy (%) per subset and order (plus 'all' and the mean of orders) behind the GPT-4V figure.

    `source` is a gpt-4v-results folder, answer files, a mirror root (the folder is looked up in it),
    or an answers table already read (with `correct` recomputed).
    """
    if isinstance(source, pd.DataFrame):
        answers = source
    else:
        specs = [source] if isinstance(source, (str, os.PathLike)) else list(source)
        resolved = []
        for spec in specs:
            path = Path(spec)
            resolved.append(path / GPT4V_FOLDER if (path / GPT4V_FOLDER).is_dir() else path)
        answers = read_sugarcrepe_answers(resolved)
    return sugarcrepe_answer_table(answers, options)


def gpt4v_mean_of_orders(data: pd.DataFrame) -> float:
    """The overall mean of the two orders' accuracies (the paper's 92.19), from the figure data."""
    hit = data[(data["subset"] == "all") & (data["order"] == MEAN_OF_ORDERS)]
    if hit.empty:
        raise ValueError("figure data has no overall mean of orders (both orders are needed)")
    return float(hit["accuracy"].iloc[0])


def plot_gpt4v_accuracy(data: pd.DataFrame, prefix: str | os.PathLike, dpi: int = 150) -> list[Path]:
    """Draw GPT-4V's SugarCrepe accuracy per subset and order, mean marked; write prefix.png and prefix.pdf."""
    from matplotlib.figure import Figure

    subsets = list(dict.fromkeys(data["subset"]))
    orders = [o for o in ORDER_COLOURS if o in set(data["order"])]
    if not orders:
        raise ValueError("figure data has no answer order (expected positive-first and/or negative-first)")
    fig = Figure(figsize=(8.0, 3.6))
    ax = fig.add_subplot()
    x = np.arange(len(subsets), dtype=float)
    width = 0.8 / len(orders)
    for i, order in enumerate(orders):
        part = data[data["order"] == order].set_index("subset").reindex(subsets)
        values = part["accuracy"].to_numpy(float)
        interval_bars(ax, x - 0.4 + width * (i + 0.5), values, interval_bounds(part), width,
                      color=ORDER_COLOURS[order], label=order)  # fmt: skip
    means = data[data["order"] == MEAN_OF_ORDERS].set_index("subset").reindex(subsets)["accuracy"].to_numpy(float)
    if np.isfinite(means).any():
        ax.scatter(x, means, marker="D", color="black", s=14, zorder=3, label="mean of orders")
    if ((data["subset"] == "all") & (data["order"] == MEAN_OF_ORDERS)).any():
        overall = gpt4v_mean_of_orders(data)
        per_order = data[(data["subset"] == "all") & (data["order"] != MEAN_OF_ORDERS)]
        label = f"mean of orders over all {int(per_order['n'].max()):,} instances: {overall:.2f}"
        ax.axhline(overall, color="black", linestyle="--", linewidth=0.8, label=label)
    low = float(np.nanmin(data["lo"].to_numpy(float)))
    ax.set_ylim(max(0.0, 5 * np.floor(low / 5) - 5), 100)
    ax.set_xticks(x, [s.replace("_", "-") for s in subsets])
    ax.set_ylabel("accuracy (%)")
    ax.set_title("GPT-4V on SugarCrepe, by option order (released answers)")
    ax.legend(loc="lower left", fontsize=7, ncol=2, framealpha=0.9)
    fig.tight_layout()
    return write_figure(fig, prefix, dpi)


# --- Figure 4: the margins of the positive pair (drawn from its computed table) ---------------------------------


def figure4(frame: pd.DataFrame, source: str):
    """Fig. 4 in the world: per margin (a panel), each model's histogram over BiVLC instances as a step line,
    its median a dashed vertical line, and zero (below it the negative is the closer) a black line."""
    from itmbench.papers.bivlc.margins import MARGINS

    margins = [m for m in MARGINS if m in set(frame["margin"].astype(str))]
    if not margins:
        raise InputError(f"figure data has no margin; expected some of {list(MARGINS)}")
    fig, axes = new_figure(9.0, 3.6, ncols=len(margins))
    for ax, margin in zip(axes[0], margins):
        part = frame[frame["margin"].astype(str) == margin]
        for i, model in enumerate(dict.fromkeys(part["model"].astype(str))):
            rows = part[part["model"].astype(str) == model]
            hist = rows[rows["statistic"] == "bin"]
            edges = np.append(hist["bin_lo"].to_numpy(float), hist["bin_hi"].to_numpy(float)[-1:])
            median = rows[rows["statistic"] == "median"].iloc[0]
            positive = rows[rows["statistic"] == "positive"].iloc[0]
            name = str(rows["column"].iloc[0]).rsplit(":", 1)[0]
            label = f"{name}: median {median['value']:+.3f}, > 0 {positive['value']:.1f}%"
            ax.stairs(hist["value"].to_numpy(float), edges, color=f"C{i}", linewidth=1.2, label=label)
            ax.axvline(float(median["value"]), color=f"C{i}", linestyle="--", linewidth=0.8)
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel(MARGINS[margin][0])
        ax.set_ylabel("BiVLC instances (%)")
        ax.set_title(f"BiVLC Figure 4 ({source}): {margin} margin", fontsize=9)
        ax.legend(loc="upper right", fontsize=6)
    fig.tight_layout()
    return fig


def write_figure4(data: str | os.PathLike, out_png: str | os.PathLike, source: str, dpi: int = 150) -> list[Path]:
    """Draw Figure 4 from its computed table (`bivlc-figure4-data`); write <out_png> and the PDF beside it."""
    from itmbench.papers.bivlc.margins import FIGURE4_COLUMNS

    frame = read_figure_data(data, FIGURE4_COLUMNS)
    with figure_style():
        return write_figure(figure4(frame, source), Path(out_png).with_suffix(""), dpi)


# --- the world figure ------------------------------------------------------------------------------


def bivlc_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """BiVLC I2T, T2I and Group per model with intervals and the random levels."""
    docs = metrics["bivlc"]
    models = sorted(docs)
    fig, axes = new_figure(8.5, 3.6)
    ax = axes[0, 0]
    names = (("i2t", "I2T"), ("t2i", "T2I"), ("group", "Group"))
    series = [(label, *metric_series(docs, models, name)) for name, label in names]
    grouped_bars(ax, [model_label(m, rows) for m in models], series)
    chance = next(iter(docs.values())).get("chance", {})
    for name, style in (("i2t", "--"), ("group", ":")):
        if name in chance:
            label = f"random I2T / T2I ({chance[name]:g}%)" if name == "i2t" else f"random Group ({chance[name]:.2f}%)"
            ax.axhline(float(chance[name]), color="black", linestyle=style, linewidth=0.8, label=label)
    ax.set_ylim(0, 100)
    ax.set_ylabel("score (%)")
    ax.set_title(f"BiVLC in the world: I2T, T2I and Group per model ({intervals_label(metrics, 'bivlc')})")
    ax.legend(loc="upper left", fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return bivlc_figure(metrics, rows)
