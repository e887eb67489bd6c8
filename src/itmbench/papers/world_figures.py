"""Each paper's headline figure drawn from the world's metrics (matplotlib, PNG and PDF, byte-deterministic).

One figure per paper (`WORLD_FIGURES`), written as ``<out_dir>/<stem>.{png,pdf}`` by
`write_world_paper_figures` through `itmbench.papers.figures.write_figure`:

- BISON ``accuracy``: BISON accuracy per model with its interval and the 50% chance line.
- MCIC ``accuracy``: dev and test accuracy per model with intervals, the 20% chance line and the
  answer-position prior (always the option position most frequent on dev) on test.
- ECCV ``ranking``: the Table 5 point: each image-text model's COCO-style R@1 (original positives)
  against its ECCV mAP@R with intervals, and the two rankings side by side, Kendall tau-b in the title;
  with one image-text model (a user's checkpoint beside `random`), its R@1 and mAP@R with intervals in one
  panel, the title saying that the rank comparison needs two or more.
- BiVLC ``scores``: I2T, T2I and Group per model with intervals and the random levels (25, 25, 16.67).
- CxC ``recall``: R@1, R@5, R@10 per model under the CxC positives, one panel per direction
  (i2t, t2i, t2t, i2i), with intervals.

Models are labelled by their world name, with the printed row they fill (params.yaml
``report.rows``) beneath it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from itmbench.papers.figures import figure_style, write_figure
from itmbench.papers.registry import PAPERS as REGISTERED
from itmbench.papers.registry import paper as registered_paper
from itmbench.papers.world_cells import WorldMetrics, check_rows, read_world_metrics

# paper -> the stems of its world figures (each written as <stem>.png and <stem>.pdf)
WORLD_FIGURES: dict[str, tuple[str, ...]] = {name: p.world_figures for name, p in REGISTERED.items() if p.world_figures}


def world_figure(paper: str, stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """One of a paper's world figures as a matplotlib Figure (drawn by the paper's own `figures` module)."""
    if stem not in WORLD_FIGURES.get(paper, ()):
        raise KeyError(f"no world figure {stem!r} of paper {paper!r}; expected one of {WORLD_FIGURES}")
    return registered_paper(paper).part("figures").world_figure(stem, metrics, rows, kinds)


def write_world_paper_figures(
    paper: str,
    metric_files: Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    rows: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    dpi: int = 150,
) -> list[Path]:
    """Draw each of the paper's world figures and write <out_dir>/<stem>.{png,pdf}; return the paths."""
    if paper not in WORLD_FIGURES:
        raise KeyError(f"unknown paper {paper!r}; expected one of {', '.join(WORLD_FIGURES)}")
    metrics = read_world_metrics(metric_files)
    if paper not in metrics:
        raise ValueError(f"{paper}: no metrics files of benchmark {paper!r} among the inputs")
    rows = check_rows(paper, rows or {}, metrics)
    paths: list[Path] = []
    with figure_style():
        for stem in WORLD_FIGURES[paper]:
            fig = world_figure(paper, stem, metrics, rows, dict(kinds or {}))
            paths += write_figure(fig, Path(out_dir) / stem, dpi)
    return paths


def world_figure_paths(paper: str, out_dir: str) -> list[str]:
    """The files `write_world_paper_figures` writes for a paper (for the workflow's outputs)."""
    return [f"{out_dir}/{stem}.{ext}" for stem in WORLD_FIGURES[paper] for ext in ("png", "pdf")]


__all__ = ["WORLD_FIGURES", "write_world_paper_figures", "world_figure_paths"]
