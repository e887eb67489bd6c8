"""Deterministic matplotlib figures: the same data give the same PNG and PDF bytes on one machine.

`figure_style` resets matplotlib's settings to its defaults inside a context (a user's matplotlibrc
cannot change a figure), with a fixed SVG hash salt; `write_figure` saves a `matplotlib.figure.Figure`
(Agg canvas, no pyplot state) as PNG and PDF, each atomically, with a fixed dpi and without the
metadata that changes from run to run (PDF CreationDate, and the Producer/Creator/Software strings
that carry the matplotlib version).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from itmbench.errors import InputError, reading
from itmbench.io import atomic_path
from itmbench.papers.world_cells import WorldMetrics, interval_confidence

if TYPE_CHECKING:
    import pandas as pd

FIGURE_FORMATS: tuple[str, ...] = ("png", "pdf")
_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
}


@contextlib.contextmanager
def figure_style() -> Iterator[None]:
    """matplotlib's default settings (plus a fixed svg.hashsalt) for the block; the caller's settings after."""
    import matplotlib

    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update({"svg.hashsalt": "itmbench", "figure.dpi": 100, "savefig.dpi": 100})
        yield


def read_figure_data(path: str | os.PathLike, columns: tuple[str, ...]) -> pd.DataFrame:
    """A figure's computed CSV (the table its own rule wrote), naming the file and the missing columns when it is
    not one: the papers' figures drawn from data files read it so."""
    import pandas as pd

    with reading(path):
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: columns {missing} are missing; expected {list(columns)}")
    if frame.empty:
        raise InputError(f"{path}: no rows; expected the numbers of a figure")
    if {"lo", "hi"} <= set(frame.columns):
        lo, hi = (pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float) for c in ("lo", "hi"))
        inverted = np.flatnonzero(lo > hi)  # NaN compares False: a missing end is allowed
        if len(inverted):
            row = int(inverted[0])
            raise InputError(
                f"{path}: line {row + 2}: interval lo {float(lo[row])!r} above hi {float(hi[row])!r}; expected lo <= hi"
            )
    return frame


def write_figure(fig, prefix: str | os.PathLike, dpi: int = 150) -> list[Path]:
    """Save `fig` as prefix.png and prefix.pdf (atomically, fixed dpi, no run-dependent metadata)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    prefix = Path(prefix)
    paths = [prefix.with_suffix(f".{fmt}") for fmt in FIGURE_FORMATS]
    for path in paths:
        fmt = path.suffix[1:]
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
    return paths


# --- the pieces of the papers' world figures ------------------------------------------------------

COLOURS: tuple[str, ...] = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")


def model_label(model: str, rows: Mapping[str, str]) -> str:
    """A model's axis label: its world name, and the printed row it fills beneath it."""
    return f"{model}\n({rows[model]})" if model in rows and rows[model] != model else model


def intervals_label(metrics: WorldMetrics, paper: str) -> str:
    """The whiskers' level as the metrics computed it (params.yaml score.confidence): "95% intervals"."""
    return f"{100 * interval_confidence(metrics, paper):g}% intervals"


def metric_series(
    docs: Mapping[str, Mapping[str, Any]], models: Sequence[str], name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Values and 2xN interval ends (lower, upper) of one metric over models (NaN where a model lacks either)."""
    values, lo, hi = [], [], []
    for m in models:
        entry = docs[m].get("metrics", {}).get(name) or {}
        values.append(float(entry.get("value", math.nan)))
        lo.append(math.nan if entry.get("lo") is None else float(entry["lo"]))
        hi.append(math.nan if entry.get("hi") is None else float(entry["hi"]))
    return np.asarray(values), np.vstack([lo, hi])


def interval_bounds(frame) -> np.ndarray:
    """The 2xN interval ends (lower, upper) of a figure table's `lo` and `hi` columns."""
    return np.vstack([frame["lo"].to_numpy(dtype=float), frame["hi"].to_numpy(dtype=float)])


def draw_intervals(ax, positions, bounds, *, horizontal: bool = False, color="black", capsize: float = 2.0) -> None:
    """Whiskers from each interval's lower end to its upper end, at `positions` on the other axis.

    Drawn from the ends themselves, not as value - lower and upper - value: a percentile bootstrap interval
    need not contain its estimate (its lower end can lie above the value), and matplotlib refuses negative
    error lengths. An interval with a missing end is not drawn; one whose lower end lies above its upper
    end is a bug in whatever computed it (`read_figure_data` refuses a file with one).
    """
    lo, hi = np.asarray(bounds, dtype=float)
    positions = np.broadcast_to(np.asarray(positions, dtype=float), lo.shape)
    keep = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(positions)
    if (lo[keep] > hi[keep]).any():
        bad = np.flatnonzero(keep & (lo > hi))[0]
        raise AssertionError(
            f"interval {bad} has its lower end {float(lo[bad])!r} above its upper end {float(hi[bad])!r}"
        )
    if not keep.any():
        return
    centre, half = (lo[keep] + hi[keep]) / 2, (hi[keep] - lo[keep]) / 2
    if horizontal:
        ax.errorbar(centre, positions[keep], xerr=half, fmt="none", ecolor=color, capsize=capsize)
    else:
        ax.errorbar(positions[keep], centre, yerr=half, fmt="none", ecolor=color, capsize=capsize)


def interval_bars(ax, x, values, bounds, width: float, *, capsize: float = 2.0, **bar_options) -> None:
    """Bars of `values` at `x` with the intervals `bounds` (2xN lower, upper ends) drawn as whiskers."""
    ax.bar(x, values, width, **bar_options)
    draw_intervals(ax, x, bounds, capsize=capsize)


def grouped_bars(ax, labels: Sequence[str], series: Sequence[tuple[str, np.ndarray, np.ndarray]]) -> np.ndarray:
    """Bars per label, one per series (name, values, 2xN interval ends), with interval whiskers; returns the x
    positions of the labels."""
    x = np.arange(len(labels), dtype=float)
    width = 0.8 / max(1, len(series))
    for i, (name, values, bounds) in enumerate(series):
        interval_bars(ax, x - 0.4 + width * (i + 0.5), values, bounds, width, color=COLOURS[i % 4], label=name)
    ax.set_xticks(x, labels, fontsize=7, rotation=25, ha="right", rotation_mode="anchor")
    return x


def new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes
