"""Each paper's headline figure drawn from the world's metrics (matplotlib, PNG and PDF, byte-deterministic).

One figure per paper (`WORLD_FIGURES`), written as ``<out_dir>/<stem>.{png,pdf}`` by
`write_world_paper_figures` through `itmbench.papers.figures.write_figure`:

- BISON ``accuracy``: BISON accuracy per model with its interval and the 50% chance line.
- MCIC ``accuracy``: dev and test accuracy per model with intervals, the 20% chance line and the
  answer-position prior (always the option position most frequent on dev) on test.
- ECCV ``ranking``: the Table 5 point: each image-text model's COCO-style R@1 (original positives)
  against its ECCV mAP@R with intervals, and the two rankings side by side, Kendall tau-b in the title.
- BiVLC ``scores``: I2T, T2I and Group per model with intervals and the random levels (25, 25, 16.67).
- SugarCrepe ``subtypes``: accuracy per subtype and the mean over subtypes per model, chance 50%.
- CxC ``recall``: R@1, R@5, R@10 per model under the CxC positives, one panel per direction
  (i2t, t2i, t2t, i2i), with intervals.

Models are labelled by their world name, with the printed row they fill (params.yaml
``report.rows``) beneath it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from itmbench.papers.figures import figure_style, write_figure
from itmbench.papers.world import (
    ECCV_TABLE5_WORLD,
    PAPER_BENCHMARKS,
    WorldMetrics,
    check_rows,
    eccv_table5_models,
    interval_confidence,
    read_world_metrics,
)

WORLD_FIGURES: dict[str, tuple[str, ...]] = {
    "bison": ("accuracy",),
    "mcic": ("accuracy",),
    "eccv": ("ranking",),
    "bivlc": ("scores",),
    "cxc": ("recall",),
    "sugarcrepe": ("subtypes",),
}
COLOURS: tuple[str, ...] = ("#4C72B0", "#DD8452", "#55A868", "#C44E52")


def model_label(model: str, rows: Mapping[str, str]) -> str:
    """A model's axis label: its world name, and the printed row it fills beneath it."""
    return f"{model}\n({rows[model]})" if model in rows and rows[model] != model else model


def _intervals(metrics: WorldMetrics, paper: str) -> str:
    """The whiskers' level as the metrics computed it (params.yaml score.confidence): "95% intervals"."""
    return f"{100 * interval_confidence(metrics, paper):g}% intervals"


def _series(docs: Mapping[str, Mapping[str, Any]], models: Sequence[str], name: str) -> tuple[np.ndarray, np.ndarray]:
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


def _grouped_bars(ax, labels: Sequence[str], series: Sequence[tuple[str, np.ndarray, np.ndarray]]) -> np.ndarray:
    """Bars per label, one per series, with interval whiskers; returns the x positions of the labels."""
    x = np.arange(len(labels), dtype=float)
    width = 0.8 / max(1, len(series))
    for i, (name, values, err) in enumerate(series):
        ax.bar(x - 0.4 + width * (i + 0.5), values, width, yerr=err, capsize=2, color=COLOURS[i % 4], label=name)
    ax.set_xticks(x, labels, fontsize=7, rotation=25, ha="right", rotation_mode="anchor")
    return x


def _new_figure(width: float, height: float, ncols: int = 1, nrows: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def bison_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """BISON accuracy per model with intervals and the chance line."""
    docs = metrics["bison"]
    models = sorted(docs)
    fig, axes = _new_figure(7.5, 3.4)
    ax = axes[0, 0]
    values, err = _series(docs, models, "bison")
    _grouped_bars(ax, [model_label(m, rows) for m in models], [("BISON accuracy", values, err)])
    chance = float(next(iter(docs.values())).get("chance", 50.0))
    ax.axhline(chance, color="black", linestyle="--", linewidth=0.8, label=f"chance ({chance:g}%)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"BISON in the world: accuracy per model ({_intervals(metrics, 'bison')})")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def mcic_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """MCIC dev and test accuracy per model, chance and the answer-position prior."""
    docs = metrics["mcic"]
    models = sorted(docs)
    fig, axes = _new_figure(7.5, 3.4)
    ax = axes[0, 0]
    series = [(split, *_series(docs, models, f"accuracy_{split}")) for split in ("dev", "test")]
    _grouped_bars(ax, [model_label(m, rows) for m in models], series)
    chance = float(next(iter(docs.values())).get("chance", 20.0))
    ax.axhline(chance, color="black", linestyle="--", linewidth=0.8, label=f"chance ({chance:g}%)")
    prior = next((d["answer_position_prior"] for d in docs.values() if "answer_position_prior" in d), None)
    if prior and "dev" in prior and "test" in prior:
        position = int(np.argmax(prior["dev"]))
        value = float(prior["test"][position])
        ax.axhline(value, color="grey", linestyle=":", linewidth=1.0,
                   label=f"always option {position} (most frequent on dev), test: {value:.1f}%")  # fmt: skip
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"MCIC in the world: accuracy per model ({_intervals(metrics, 'mcic')})")
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def eccv_figure(metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """COCO-style R@1 against ECCV mAP@R per image-text model, and the two rankings side by side."""
    from scipy.stats import kendalltau

    docs = metrics["eccv"]
    models = eccv_table5_models(metrics, kinds)
    if len(models) < 2:
        raise ValueError(f"ECCV ranking figure needs >= 2 image-text models with every metric, got {models}")
    r1_name, map_name = ECCV_TABLE5_WORLD["COCO 5K R@1"], ECCV_TABLE5_WORLD["ECCV mAP@R"]
    r1, r1_err = _series(docs, models, r1_name)
    map_r, map_err = _series(docs, models, map_name)
    tau = float(kendalltau(r1, map_r, variant="b").statistic)
    fig, axes = _new_figure(9.0, 3.8, ncols=2)
    ax = axes[0, 0]
    for i, m in enumerate(models):
        ax.errorbar(r1[i], map_r[i], xerr=r1_err[:, i : i + 1], yerr=map_err[:, i : i + 1], fmt="o", capsize=2,
                    color=COLOURS[i % 4])  # fmt: skip
        ax.annotate(m, (r1[i], map_r[i]), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel("COCO-style R@1 (original positives, %)")
    ax.set_ylabel("ECCV mAP@R (%)")
    ax.set_title(f"per model ({_intervals(metrics, 'eccv')})", fontsize=9)
    ax = axes[0, 1]
    rank_r1 = _ranks(r1)
    rank_map = _ranks(map_r)
    for i, m in enumerate(models):
        ax.plot([0, 1], [rank_r1[i], rank_map[i]], marker="o", color=COLOURS[i % 4])
        ax.annotate(model_label(m, rows).replace("\n", " "), (1, rank_map[i]), textcoords="offset points",
                    xytext=(6, -3), fontsize=7)  # fmt: skip
    ax.set_xticks([0, 1], ["rank by R@1", "rank by mAP@R"])
    ax.set_xlim(-0.2, 2.0)
    ax.set_ylim(len(models) + 0.5, 0.5)
    ax.set_ylabel("rank (1 = best)")
    ax.set_title(f"Kendall tau-b = {tau:.2f} over {len(models)} models", fontsize=9)
    fig.suptitle("ECCV Caption in the world: R@1 and mAP@R rank models differently?", fontsize=10)
    fig.tight_layout()
    return fig


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 = highest value; ties share the best rank (stable, deterministic)."""
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))
    ranks = np.empty(len(values))
    for position, i in enumerate(order):
        ranks[i] = position + 1
    for i in range(len(values)):
        ranks[i] = min(ranks[j] for j in range(len(values)) if values[j] == values[i])
    return ranks


def bivlc_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """BiVLC I2T, T2I and Group per model with intervals and the random levels."""
    docs = metrics["bivlc"]
    models = sorted(docs)
    fig, axes = _new_figure(8.5, 3.6)
    ax = axes[0, 0]
    names = (("i2t", "I2T"), ("t2i", "T2I"), ("group", "Group"))
    series = [(label, *_series(docs, models, name)) for name, label in names]
    _grouped_bars(ax, [model_label(m, rows) for m in models], series)
    chance = next(iter(docs.values())).get("chance", {})
    for name, style in (("i2t", "--"), ("group", ":")):
        if name in chance:
            label = f"random I2T / T2I ({chance[name]:g}%)" if name == "i2t" else f"random Group ({chance[name]:.2f}%)"
            ax.axhline(float(chance[name]), color="black", linestyle=style, linewidth=0.8, label=label)
    ax.set_ylim(0, 100)
    ax.set_ylabel("score (%)")
    ax.set_title(f"BiVLC in the world: I2T, T2I and Group per model ({_intervals(metrics, 'bivlc')})")
    ax.legend(loc="upper left", fontsize=7, ncol=3)
    fig.tight_layout()
    return fig


def cxc_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """CxC R@K per model under the CxC positives, one panel per direction."""
    docs = metrics["cxc"]
    models = sorted(docs)
    fig, axes = _new_figure(10.0, 7.0, ncols=2, nrows=2)
    titles = {"i2t": "image → text", "t2i": "text → image", "t2t": "text → text (STS)", "i2i": "image → image (SIS)"}
    for ax, (direction, title) in zip(axes.ravel(), titles.items()):
        series = [(k, *_series(docs, models, f"{direction}/cxc/{k}")) for k in ("R@1", "R@5", "R@10")]
        _grouped_bars(ax, [model_label(m, rows) for m in models], series)
        ax.set_ylim(0, 100)
        ax.set_ylabel("recall (%)")
        ax.set_title(title, fontsize=9)
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=3)
    fig.suptitle(f"Crisscrossed Captions in the world: R@K per model and direction, CxC positives "
                 f"({_intervals(metrics, 'cxc')})", fontsize=10)  # fmt: skip
    fig.tight_layout()
    return fig


def world_figure(paper: str, stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """One of a paper's world figures as a matplotlib Figure."""
    if paper == "bison":
        return bison_figure(metrics, rows)
    if paper == "mcic":
        return mcic_figure(metrics, rows)
    if paper == "eccv":
        return eccv_figure(metrics, rows, kinds)
    if paper == "bivlc":
        return bivlc_figure(metrics, rows)
    if paper == "cxc":
        return cxc_figure(metrics, rows)
    if paper == "sugarcrepe":
        from itmbench.papers.sugarcrepe.figures import subtypes_figure

        return subtypes_figure(metrics, rows)
    raise KeyError(f"no world figure {stem!r} of paper {paper!r}; expected one of {WORLD_FIGURES}")


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
    rows = check_rows(paper, rows or {})
    metrics = read_world_metrics(metric_files)
    if paper not in metrics:
        raise ValueError(f"{paper}: no metrics files of benchmark {paper!r} among the inputs")
    paths: list[Path] = []
    with figure_style():
        for stem in WORLD_FIGURES[paper]:
            fig = world_figure(paper, stem, metrics, rows, dict(kinds or {}))
            paths += write_figure(fig, Path(out_dir) / stem, dpi)
    return paths


def world_figure_paths(paper: str, out_dir: str) -> list[str]:
    """The files `write_world_paper_figures` writes for a paper (for the workflow's outputs)."""
    return [f"{out_dir}/{stem}.{ext}" for stem in WORLD_FIGURES[paper] for ext in ("png", "pdf")]


__all__ = ["PAPER_BENCHMARKS", "WORLD_FIGURES", "write_world_paper_figures", "world_figure_paths"]
