"""ARO's world figure: each set's headline accuracy per model, with intervals and each set's chance line."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.papers.aro.config import DATASETS
from itmbench.papers.aro.score import CHANCE_PERCENT
from itmbench.papers.aro.tables import COLUMNS
from itmbench.papers.figures import interval_bars, intervals_label, metric_series, model_label, new_figure
from itmbench.papers.world_cells import WorldMetrics

SET_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#8172B3")


def sets_figure(metrics: Mapping[str, Mapping[str, Mapping]], rows: Mapping[str, str]):
    """Per model: VG-Relation and VG-Attribution macro accuracy, COCO-Order and Flickr30k-Order accuracy."""
    docs = metrics["aro"]
    models = sorted(docs)
    fig, axes = new_figure(10.0, 3.8)
    ax = axes[0, 0]
    x = np.arange(len(models), dtype=float)
    width = 0.8 / len(DATASETS)
    for i, dataset in enumerate(DATASETS):
        values, bounds = metric_series(docs, models, dataset)
        left = x - 0.4 + width * i
        interval_bars(ax, left + width / 2, values, bounds, width, capsize=1.5, color=SET_COLOURS[i],
                      label=COLUMNS[dataset])  # fmt: skip
        chance = CHANCE_PERCENT[dataset]
        for start in left:  # each set's chance under its own bars
            ax.plot([start, start + width], [chance, chance], color="black", linestyle="--", linewidth=0.8)
    ax.set_xticks(x, [model_label(m, rows) for m in models], fontsize=7, rotation=25, ha="right",
                  rotation_mode="anchor")  # fmt: skip
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"ARO in the world: each set per model, dashed: chance ({intervals_label(metrics, 'aro')})")
    ax.legend(loc="upper right", fontsize=6, ncol=4)
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return sets_figure(metrics, rows)
