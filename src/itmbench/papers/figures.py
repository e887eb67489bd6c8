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
    """Values and 2xN error-bar lengths of one metric over models (NaN where a model lacks it)."""
    values, lo, hi = [], [], []
    for m in models:
        entry = docs[m].get("metrics", {}).get(name) or {}
        v = float(entry.get("value", math.nan))
        values.append(v)
        lo.append(float(entry.get("lo", v) if entry.get("lo") is not None else v))
        hi.append(float(entry.get("hi", v) if entry.get("hi") is not None else v))
    values_a = np.asarray(values)
    err = np.vstack([values_a - np.asarray(lo), np.asarray(hi) - values_a])
    return values_a, np.clip(np.nan_to_num(err), 0, None)


def grouped_bars(ax, labels: Sequence[str], series: Sequence[tuple[str, np.ndarray, np.ndarray]]) -> np.ndarray:
    """Bars per label, one per series, with interval whiskers; returns the x positions of the labels."""
    x = np.arange(len(labels), dtype=float)
    width = 0.8 / max(1, len(series))
    for i, (name, values, err) in enumerate(series):
        ax.bar(x - 0.4 + width * (i + 0.5), values, width, yerr=err, capsize=2, color=COLOURS[i % 4], label=name)
    ax.set_xticks(x, labels, fontsize=7, rotation=25, ha="right", rotation_mode="anchor")
    return x


def new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes
