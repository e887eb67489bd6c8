"""SugarCrepe's world figure: accuracy per subtype and model, with intervals and the 50% chance line."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.figures import interval_bars, intervals_label, metric_series, model_label, new_figure
from itmbench.papers.sugarcrepe.tables import subset_column
from itmbench.papers.world_cells import WorldMetrics

SUBTYPE_COLOURS = ("#4C72B0", "#8FAADC", "#2F4B7C", "#DD8452", "#F2B880", "#55A868", "#A6D8A8")


def subtypes_figure(metrics: Mapping[str, Mapping[str, Mapping]], rows: Mapping[str, str]):
    """Per model: the accuracy of each subtype present and the mean over subtypes, with intervals."""
    docs = metrics["sugarcrepe"]
    models = sorted(docs)
    present = [s for s in SUBSETS if any(s in d.get("metrics", {}) for d in docs.values())]
    fig, axes = new_figure(10.0, 3.8)
    ax = axes[0, 0]
    series = [(subset_column(s), *metric_series(docs, models, s)) for s in present]
    series.append(("mean over subtypes", *metric_series(docs, models, "mean_over_subtypes")))
    x = np.arange(len(models), dtype=float)
    width = 0.8 / len(series)
    for i, (name, values, bounds) in enumerate(series):  # one colour per subtype (8 series: the world's 4 repeat)
        colour = "0.35" if i == len(series) - 1 else SUBTYPE_COLOURS[i % len(SUBTYPE_COLOURS)]
        interval_bars(ax, x - 0.4 + width * (i + 0.5), values, bounds, width, capsize=1.5, color=colour, label=name)
    ax.set_xticks(x, [model_label(m, rows) for m in models], fontsize=7, rotation=25, ha="right",
                  rotation_mode="anchor")  # fmt: skip
    chance = float(next(iter(docs.values())).get("chance", 50.0))
    ax.axhline(chance, color="black", linestyle="--", linewidth=0.8, label=f"chance ({chance:g}%)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"SugarCrepe in the world: accuracy per subtype and model ({intervals_label(metrics, 'sugarcrepe')})")
    ax.legend(loc="lower left", fontsize=6, ncol=4)
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return subtypes_figure(metrics, rows)
