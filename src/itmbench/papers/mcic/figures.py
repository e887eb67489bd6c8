"""MCIC's world figure: dev and test accuracy per model, the chance line and the answer-position prior."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.papers.figures import grouped_bars, intervals_label, metric_series, model_label, new_figure
from itmbench.papers.world_cells import WorldMetrics


def mcic_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """MCIC dev and test accuracy per model, chance and the answer-position prior."""
    docs = metrics["mcic"]
    models = sorted(docs)
    fig, axes = new_figure(7.5, 3.4)
    ax = axes[0, 0]
    series = [(split, *metric_series(docs, models, f"accuracy_{split}")) for split in ("dev", "test")]
    grouped_bars(ax, [model_label(m, rows) for m in models], series)
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
    ax.set_title(f"MCIC in the world: accuracy per model ({intervals_label(metrics, 'mcic')})")
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return mcic_figure(metrics, rows)
