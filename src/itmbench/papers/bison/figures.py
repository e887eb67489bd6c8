"""BISON's world figure: accuracy per model with its interval and the chance line."""

from __future__ import annotations

from collections.abc import Mapping

from itmbench.papers.figures import grouped_bars, intervals_label, metric_series, model_label, new_figure
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
