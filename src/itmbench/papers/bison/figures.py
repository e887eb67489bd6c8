"""BISON's world figure (accuracy per model with its interval and the chance line), Figures 6, 9 and 14 drawn
from the tables `itmbench bison-figure-data` computes (`papers/bison/queries.py`), Figure 8 from the table
`itmbench bison-figure8-data` computes (`papers/bison/captioning.py`) and Figure 4 from the table
`itmbench bison-figure4-data` computes (`papers/bison/human_eval.py`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from itmbench.errors import InputError
from itmbench.papers.figures import (
    draw_intervals,
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
from itmbench.papers.world_cells import WorldMetrics


def bison_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """BISON accuracy per model with intervals and the chance line."""
    docs = metrics["bison"]
    models = sorted(docs)
    fig, axes = new_figure(7.5, 3.4)
    ax = axes[0, 0]
    values, err = metric_series(docs, models, "bison")
    grouped_bars(ax, [model_label(m, rows) for m in models], [("BISON accuracy", values, err)])
    chance = float(next(iter(docs.values())).get("chance", 50.0))
    ax.axhline(chance, color="black", linestyle="--", linewidth=0.8, label=f"chance ({chance:g}%)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"BISON in the world: accuracy per model ({intervals_label(metrics, 'bison')})")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return bison_figure(metrics, rows)


# --- Figures 6 and 14, drawn from the tables that hold their numbers (restyling never recomputes) -------------

# stem -> what it draws; each is written as <stem>.png and <stem>.pdf from its computed table
DATA_FIGURES: dict[str, str] = {
    "figure4": "Figure 4: correctness and detailedness of the generated captions by normalised captioning score",
    "figure6": "Figure 6: query length and part-of-speech distributions of the captions and the BISON queries",
    "figure8": "Figure 8: captioning scores of the positive image's generated caption, correct and incorrect BISON",
    "figure9": "Figure 9: the share of each model's BISON predictions that change under automatic query perturbations",
    "figure14": "Figure 14: BISON accuracy, the query being the BISON query or a random or longest positive caption",
}
DATA_FIGURE_COLUMNS: dict[str, tuple[str, ...]] = {
    "figure4": ("row", "column", "value", "lo", "hi", "model", "panel", "metric", "statistic", "bin_lo", "bin_hi", "n"),
    "figure6": ("row", "column", "value", "lo", "hi", "panel", "bin"),
    "figure8": ("row", "column", "value", "lo", "hi", "model", "metric", "group", "statistic", "bin_lo", "bin_hi", "n"),
    "figure9": ("row", "column", "value", "lo", "hi", "model"),
    "figure14": ("row", "column", "value", "lo", "hi", "model"),
}


def _panel_series(frame, panel: str):
    rows = frame[frame["panel"].astype(str) == panel]
    bins = list(dict.fromkeys(rows["bin"].astype(str)))
    series = []
    for group in dict.fromkeys(rows["column"].astype(str)):
        part = rows[rows["column"].astype(str) == group]
        part = part.set_index(part["bin"].astype(str)).reindex(bins)
        series.append((group, part["value"].to_numpy(dtype=float), interval_bounds(part)))
    return bins, series


def figure6(frame, source: str):
    """Fig. 6: the share of captions per length (left) and per part of speech (right), captions against queries."""
    fig, axes = new_figure(9.0, 3.4, ncols=2)
    for ax, panel, xlabel in ((axes[0, 0], "length", "query length (words)"), (axes[0, 1], "pos", "part of speech")):
        bins, series = _panel_series(frame, panel)
        grouped_bars(ax, bins, series)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("share (%)")
        ax.legend(fontsize=7)
    axes[0, 0].set_title(f"BISON Figure 6 ({source}): query length", fontsize=9)
    axes[0, 1].set_title(f"BISON Figure 6 ({source}): part of speech", fontsize=9)
    fig.tight_layout()
    return fig


def _model_series(frame):
    """The models (rows, in order) and one bar series per column with its whiskers."""
    models = list(dict.fromkeys(frame["row"].astype(str)))
    series = []
    for kind in dict.fromkeys(frame["column"].astype(str)):
        part = frame[frame["column"].astype(str) == kind].set_index("row").reindex(models)
        series.append((kind, part["value"].to_numpy(dtype=float), interval_bounds(part)))
    return models, series


def figure9(frame, source: str):
    """Fig. 9: per model, the share of BISON predictions each perturbation of the query changes."""
    models, series = _model_series(frame)
    fig, axes = new_figure(8.5, 3.4)
    ax = axes[0, 0]
    x = np.arange(len(models), dtype=float)
    width = 0.8 / max(1, len(series))
    for i, (name, values, bounds) in enumerate(series):  # five perturbations: five colours (grouped_bars cycles four)
        interval_bars(ax, x - 0.4 + width * (i + 0.5), values, bounds, width, color=f"C{i}", label=name)
    ax.set_xticks(x, models, fontsize=7, rotation=25, ha="right", rotation_mode="anchor")
    ax.set_ylim(0, 100)
    ax.set_ylabel("predictions changed (%)")
    ax.set_title(f"BISON Figure 9 ({source}): changes in BISON prediction under query perturbations", fontsize=9)
    ax.legend(loc="upper left", fontsize=7, ncols=5)
    fig.tight_layout()
    return fig


def figure14(frame, source: str):
    """Fig. 14: each model's BISON accuracy with the BISON query, a random and the longest caption."""
    models, series = _model_series(frame)
    fig, axes = new_figure(7.5, 3.4)
    ax = axes[0, 0]
    grouped_bars(ax, models, series)
    ax.axhline(50.0, color="black", linestyle="--", linewidth=0.8, label="chance (50%)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("BISON accuracy (%)")
    ax.set_title(f"BISON Figure 14 ({source}): the positive image's caption as the query", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def figure8(frame, source: str):
    """Fig. 8: per captioning metric (a panel), the distribution of the positive image's caption score over the
    BISON instances the captioner predicts correctly and incorrectly (step histograms; means dashed)."""
    from itmbench.metrics.captioning import METRIC_NAMES

    metrics = list(dict.fromkeys(frame["metric"].astype(str)))
    fig, axes = new_figure(3.3 * max(1, len(metrics)), 3.4, ncols=max(1, len(metrics)))
    colours = {"correct": "#D65F9E", "incorrect": "#6A3D9A"}  # the paper: pink and purple
    for ax, metric in zip(axes[0], metrics):
        part = frame[frame["metric"].astype(str) == metric]
        for m, model in enumerate(dict.fromkeys(part["model"].astype(str))):
            style = ("-", "--", ":", "-.")[m % 4]
            for group, colour in colours.items():
                rows = part[(part["model"].astype(str) == model) & (part["group"].astype(str) == group)]
                hist = rows[rows["statistic"] == "bin"]
                if hist.empty:
                    continue
                edges = np.append(hist["bin_lo"].to_numpy(float), hist["bin_hi"].to_numpy(float)[-1:])
                mean = float(rows.loc[rows["statistic"] == "mean", "value"].iloc[0])
                name = str(rows["column"].iloc[0]).split(":", 1)[0]
                label = f"{name} {group} (n={int(rows['n'].iloc[0])}, mean {mean:.1f})"
                ax.stairs(hist["value"].to_numpy(float), edges, color=colour, linestyle=style, label=label)
                ax.axvline(mean, color=colour, linestyle="--", linewidth=0.8)
        ax.set_xlabel(f"{METRIC_NAMES.get(metric, metric)} (x100)")
        ax.set_ylabel("BISON instances (%)")
        ax.legend(loc="upper right", fontsize=6)
    fig.suptitle(
        f"BISON Figure 8 ({source}): captioning scores of correct and incorrect BISON predictions "
        "(SPICE: not possible here, its Stanford CoreNLP models cannot be installed"
        + ("; Tuple F1 is the world's SPICE analogue, not SPICE)" if "tuple_f1" in metrics else ")"),
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def figure4(frame, source: str):
    """Fig. 4: per scale (a panel: correctness left, detailedness right), the mean rating of the captions in each
    bin of each normalised captioning score (a line per metric and captioner, bootstrap whiskers), the world's
    average (dashed) and the printed one (dotted)."""
    from itmbench.metrics.captioning import METRIC_NAMES

    fig, axes = new_figure(9.0, 3.6, ncols=2)
    for ax, panel in zip(axes[0], ("correctness", "detailedness")):
        part = frame[frame["panel"].astype(str) == panel]
        bins = part[part["statistic"] == "bin"]
        for m, (key, rows) in enumerate(bins.groupby(["model", "metric"], sort=True)):
            model, metric = key
            rows = rows[rows["n"] > 0]
            centres = (rows["bin_lo"].to_numpy(float) + rows["bin_hi"].to_numpy(float)) / 2
            name = str(rows["column"].iloc[0]).split(":", 1)[0] if len(rows) else model
            rho = part[(part["statistic"] == "spearman") & (part["model"] == model) & (part["metric"] == metric)]
            rho_text = f" (Spearman {float(rho['value'].iloc[0]):.2f})" if len(rho) else ""
            ax.plot(
                centres,
                rows["value"].to_numpy(float),
                marker="o",
                markersize=3,
                color=f"C{m}",
                label=f"{name}: {METRIC_NAMES.get(metric, metric)}{rho_text}",
            )
            draw_intervals(ax, centres, interval_bounds(rows), color=f"C{m}")
        for _, row in part[part["statistic"] == "mean"].iterrows():
            printed = str(row["model"]) == "printed"
            ax.axhline(
                float(row["value"]),
                color="grey" if printed else "black",
                linestyle=":" if printed else "--",
                linewidth=0.9,
                label=f"{str(row['column']).split(':', 1)[0]} average {float(row['value']):.3f}",
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0.8, 5.2)
        ax.set_xlabel("normalised captioning score")
        ax.set_ylabel(f"{panel} (1-5)")
        ax.set_title(f"BISON Figure 4 ({source}): {panel}", fontsize=9)
        ax.legend(fontsize=6, loc="best")
    analogue = "; Tuple F1: the world's SPICE analogue" if (frame["metric"].astype(str) == "tuple_f1").any() else ""
    fig.suptitle(
        f"rated by the world's truth (detailedness without the image); SPICE: not possible here{analogue}", fontsize=8
    )
    fig.tight_layout()
    return fig


def write_data_figure(stem: str, data: str | os.PathLike, out_png: str | os.PathLike, source: str, dpi: int = 150):
    """Draw Figure `stem` from its computed table and write <out_png> and the PDF beside it."""
    if stem not in DATA_FIGURES:
        raise InputError(f"unknown BISON figure {stem!r}; expected one of {sorted(DATA_FIGURES)}")
    frame = read_figure_data(data, DATA_FIGURE_COLUMNS[stem])
    draw = {"figure4": figure4, "figure6": figure6, "figure8": figure8, "figure9": figure9, "figure14": figure14}[stem]
    with figure_style():
        return write_figure(draw(frame, source), Path(out_png).with_suffix(""), dpi)
