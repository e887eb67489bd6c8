"""Deterministic matplotlib figures: the same data give the same PNG and PDF bytes on one machine.

`figure_style` resets matplotlib's settings to its defaults inside a context (a user's matplotlibrc
cannot change a figure), with a fixed SVG hash salt; `write_figure` saves a `matplotlib.figure.Figure`
(Agg canvas, no pyplot state) as PNG and PDF, each atomically, with a fixed dpi and without the
metadata that changes from run to run (PDF CreationDate, and the Producer/Creator/Software strings
that carry the matplotlib version).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from itmbench.io import atomic_path

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
