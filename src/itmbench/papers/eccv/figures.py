"""ECCV Caption's world figure: COCO-style R@1 against ECCV mAP@R per model, and the two rankings (Table 5's point)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.papers.eccv.tables import ECCV_TABLE5_WORLD, eccv_table5_models
from itmbench.papers.figures import COLOURS, intervals_label, metric_series, model_label, new_figure
from itmbench.papers.world_cells import WorldMetrics


def eccv_figure(metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """COCO-style R@1 against ECCV mAP@R per image-text model, and the two rankings side by side."""
    from scipy.stats import kendalltau

    docs = metrics["eccv"]
    models = eccv_table5_models(metrics, kinds)
    if len(models) < 2:
        raise ValueError(f"ECCV ranking figure needs >= 2 image-text models with every metric, got {models}")
    r1_name, map_name = ECCV_TABLE5_WORLD["COCO 5K R@1"], ECCV_TABLE5_WORLD["ECCV mAP@R"]
    r1, r1_err = metric_series(docs, models, r1_name)
    map_r, map_err = metric_series(docs, models, map_name)
    tau = float(kendalltau(r1, map_r, variant="b").statistic)
    fig, axes = new_figure(9.0, 3.8, ncols=2)
    ax = axes[0, 0]
    for i, m in enumerate(models):
        ax.errorbar(r1[i], map_r[i], xerr=r1_err[:, i : i + 1], yerr=map_err[:, i : i + 1], fmt="o", capsize=2,
                    color=COLOURS[i % 4])  # fmt: skip
        ax.annotate(m, (r1[i], map_r[i]), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel("COCO-style R@1 (original positives, %)")
    ax.set_ylabel("ECCV mAP@R (%)")
    ax.set_title(f"per model ({intervals_label(metrics, 'eccv')})", fontsize=9)
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


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return eccv_figure(metrics, rows, kinds)
