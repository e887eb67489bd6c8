"""CxC's world figure: R@1, R@5, R@10 per model under the CxC positives, one panel per direction."""

from __future__ import annotations

from collections.abc import Mapping

from itmbench.papers.figures import grouped_bars, intervals_label, metric_series, model_label, new_figure
from itmbench.papers.world_cells import WorldMetrics


def cxc_figure(metrics: WorldMetrics, rows: Mapping[str, str]):
    """CxC R@K per model under the CxC positives, one panel per direction."""
    docs = metrics["cxc"]
    models = sorted(docs)
    fig, axes = new_figure(10.0, 7.0, ncols=2, nrows=2)
    titles = {"i2t": "image → text", "t2i": "text → image", "t2t": "text → text (STS)", "i2i": "image → image (SIS)"}
    for ax, (direction, title) in zip(axes.ravel(), titles.items()):
        series = [(k, *metric_series(docs, models, f"{direction}/cxc/{k}")) for k in ("R@1", "R@5", "R@10")]
        grouped_bars(ax, [model_label(m, rows) for m in models], series)
        ax.set_ylim(0, 100)
        ax.set_ylabel("recall (%)")
        ax.set_title(title, fontsize=9)
    axes[0, 0].legend(loc="upper left", fontsize=7, ncol=3)
    fig.suptitle(f"Crisscrossed Captions in the world: R@K per model and direction, CxC positives "
                 f"({intervals_label(metrics, 'cxc')})", fontsize=10)  # fmt: skip
    fig.tight_layout()
    return fig


def world_figure(stem: str, metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """The paper's world figure `stem` as a matplotlib Figure."""
    return cxc_figure(metrics, rows)
