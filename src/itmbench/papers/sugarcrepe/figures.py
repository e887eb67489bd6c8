"""SugarCrepe's world figure: accuracy per subtype and model, with intervals and the 50% chance line."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.negatives.captions import SUBSETS
from itmbench.papers.sugarcrepe.tables import subset_column

SUBTYPE_COLOURS = ("#4C72B0", "#8FAADC", "#2F4B7C", "#DD8452", "#F2B880", "#55A868", "#A6D8A8")


def subtypes_figure(metrics: Mapping[str, Mapping[str, Mapping]], rows: Mapping[str, str]):
    """Per model: the accuracy of each subtype present and the mean over subtypes, with intervals."""
    from itmbench.papers.world_figures import _intervals, _new_figure, _series, model_label

    docs = metrics["sugarcrepe"]
    models = sorted(docs)
    present = [s for s in SUBSETS if any(s in d.get("metrics", {}) for d in docs.values())]
    fig, axes = _new_figure(10.0, 3.8)
    ax = axes[0, 0]
    series = [(subset_column(s), *_series(docs, models, s)) for s in present]
    series.append(("mean over subtypes", *_series(docs, models, "mean_over_subtypes")))
    x = np.arange(len(models), dtype=float)
    width = 0.8 / len(series)
    for i, (name, values, err) in enumerate(series):  # one colour per subtype (8 series: the world's 4 repeat)
        colour = "0.35" if i == len(series) - 1 else SUBTYPE_COLOURS[i % len(SUBTYPE_COLOURS)]
        ax.bar(x - 0.4 + width * (i + 0.5), values, width, yerr=err, capsize=1.5, color=colour, label=name)
    ax.set_xticks(x, [model_label(m, rows) for m in models], fontsize=7, rotation=25, ha="right",
                  rotation_mode="anchor")  # fmt: skip
    chance = float(next(iter(docs.values())).get("chance", 50.0))
    ax.axhline(chance, color="black", linestyle="--", linewidth=0.8, label=f"chance ({chance:g}%)")
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"SugarCrepe in the world: accuracy per subtype and model ({_intervals(metrics, 'sugarcrepe')})")
    ax.legend(loc="lower left", fontsize=6, ncol=4)
    fig.tight_layout()
    return fig
