"""ECCV Caption's world figure: COCO-style R@1 against ECCV mAP@R per model, and the two rankings (Table 5's point);
with one image-text model, its two metrics alone (no ranking to compare)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from itmbench.papers.eccv.tables import ECCV_TABLE5_WORLD, eccv_table5_models
from itmbench.papers.figures import (
    COLOURS,
    draw_intervals,
    interval_bars,
    interval_bounds,
    intervals_label,
    metric_series,
    model_label,
    new_figure,
)
from itmbench.papers.world_cells import WorldMetrics


def eccv_figure(metrics: WorldMetrics, rows: Mapping[str, str], kinds: Mapping[str, str]):
    """COCO-style R@1 against ECCV mAP@R per image-text model, and the two rankings side by side; with one
    image-text model, its two metrics in one panel (`_one_model_figure`)."""
    from scipy.stats import kendalltau

    docs = metrics["eccv"]
    models = eccv_table5_models(metrics, kinds)
    if not models:
        raise ValueError("ECCV ranking figure needs an image-text model with every metric ('random' is none), got none")
    if len(models) == 1:
        return _one_model_figure(metrics, models[0], rows)
    r1_name, map_name = ECCV_TABLE5_WORLD["COCO 5K R@1"], ECCV_TABLE5_WORLD["ECCV mAP@R"]
    r1, r1_bounds = metric_series(docs, models, r1_name)
    map_r, map_bounds = metric_series(docs, models, map_name)
    tau = float(kendalltau(r1, map_r, variant="b").statistic)
    fig, axes = new_figure(9.0, 3.8, ncols=2)
    ax = axes[0, 0]
    for i, m in enumerate(models):
        colour = COLOURS[i % 4]
        ax.plot(r1[i], map_r[i], "o", color=colour)
        draw_intervals(ax, map_r[i : i + 1], r1_bounds[:, i : i + 1], horizontal=True, color=colour)
        draw_intervals(ax, r1[i : i + 1], map_bounds[:, i : i + 1], color=colour)
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


def _one_model_figure(metrics: WorldMetrics, model: str, rows: Mapping[str, str]):
    """One image-text model: its COCO-style R@1 and ECCV mAP@R with intervals, one panel; no ranking to compare."""
    names = ("COCO 5K R@1", "ECCV mAP@R")
    labels = ("COCO-style R@1\n(original positives)", "ECCV mAP@R\n(ECCV positives)")
    values, bounds = zip(*(metric_series(metrics["eccv"], [model], ECCV_TABLE5_WORLD[n]) for n in names))
    fig, axes = new_figure(5.5, 3.8)
    ax = axes[0, 0]
    x = np.arange(len(names), dtype=float)
    interval_bars(ax, x, np.concatenate(values), np.hstack(bounds), 0.6, color=COLOURS[0])
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("%")
    label = model_label(model, rows).replace("\n", " ")
    ax.set_title(f"{label} ({intervals_label(metrics, 'eccv')})", fontsize=9)
    fig.suptitle(
        "ECCV Caption in the world: R@1 and mAP@R of the one image-text model scored\n"
        "(comparing the two rankings needs >= 2 image-text models; 'random' is none)",
        fontsize=9,
    )
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


# --- appendix E: drawn from the tables `itmbench eccv-appendix-e` and `eccv-annotator-ranks` wrote -------------

APPENDIX_FIGURES: dict[str, tuple[str, ...]] = {
    "figure3": ("direction", "source", "n_positives", "value"),
    "figure5": ("model", "metric", "rank"),
    "figureE2": ("direction", "metric", "quantity", "size", "value", "lo", "hi"),
    "figureE3": ("model", "annotator", "rank_r1", "rank_map_at_r", "column"),
}


def figure_e2(frame, source: str):
    """Fig. E.2: B, self-bias and non-self-bias against the number of annotators, a panel per direction x metric."""
    from itmbench.papers.eccv.bias import BIAS_QUANTITIES, block_label

    blocks = list(dict.fromkeys(zip(frame["direction"], frame["metric"])))
    fig, axes = new_figure(3.2 * len(blocks), 3.2, ncols=len(blocks))
    for ax, (direction, metric) in zip(axes[0], blocks):
        part = frame[(frame["direction"] == direction) & (frame["metric"] == metric)]
        for i, (quantity, label) in enumerate(BIAS_QUANTITIES.items()):
            q = part[part["quantity"] == quantity].sort_values("size")
            ax.plot(q["size"], q["value"].to_numpy(float), marker="o", label=label, color=COLOURS[i])
            draw_intervals(ax, q["size"].to_numpy(float), interval_bounds(q), color=COLOURS[i])
        ax.set_title(block_label(direction, metric), fontsize=9)
        ax.set_xlabel("annotators |Θ|")
        ax.set_xticks(sorted(set(part["size"])))
    axes[0, 0].set_ylabel("bias (points)")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"ECCV Caption Figure E.2 ({source}): number of annotators vs bias", fontsize=10)
    fig.tight_layout()
    return fig


def figure_e3(frame, source: str):
    """Fig. E.3: each model's rank by COCO R@1 and by ECCV mAP@R, a line per model, the annotators in colour."""
    models = frame.drop_duplicates("model")
    r1_label = next(c for c in frame["column"] if str(c).startswith("rank by ") and "mAP@R" not in str(c))[8:]
    fig, axes = new_figure(6.4, 0.35 * len(models) + 1.8)
    ax = axes[0, 0]
    labels: dict[tuple[int, int], list[str]] = {}  # (side, rank) -> models there (ties share a rank)
    for m in models.itertuples(index=False):
        annotator = str(m.annotator).lower() == "true"
        colour = COLOURS[3] if annotator else "#999999"
        ax.plot([0, 1], [m.rank_r1, m.rank_map_at_r], marker="o", color=colour, lw=2 if annotator else 1)
        labels.setdefault((0, int(m.rank_r1)), []).append(str(m.model))
        labels.setdefault((1, int(m.rank_map_at_r)), []).append(str(m.model))
    for (side, rank), names in labels.items():
        x, ha = (-0.05, "right") if side == 0 else (1.05, "left")
        ax.text(x, rank, ", ".join(names), ha=ha, va="center", fontsize=8)
    ax.set_xlim(-1.0, 2.0)
    ax.set_xticks([0, 1], [f"rank by\n{r1_label}", "rank by\nECCV mAP@R"])
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title(f"ECCV Caption Figure E.3 ({source}): the annotators (red) among all models", fontsize=9)
    fig.tight_layout()
    return fig


def figure_3(frame, source: str):
    """Fig. 3(a): queries by their number of positives, a panel per direction, a line per set of positives."""
    from itmbench.papers.eccv.bias import DIRECTION_LABELS

    directions = list(dict.fromkeys(frame["direction"]))
    fig, axes = new_figure(4.2 * len(directions), 3.2, ncols=len(directions))
    for ax, direction in zip(axes[0], directions):
        part = frame[frame["direction"] == direction]
        for i, (name, rows) in enumerate(part.groupby("source", sort=False)):
            rows = rows.sort_values("n_positives")
            ax.plot(rows["n_positives"], rows["value"], marker=".", color=COLOURS[i % 4], label=str(name))
        ax.set_title(f"{DIRECTION_LABELS.get(direction, direction)} queries", fontsize=9)
        ax.set_xlabel("positives per query")
    axes[0, 0].set_ylabel("queries")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"ECCV Caption Figure 3(a) ({source}): positives per query", fontsize=10)
    fig.tight_layout()
    return fig


def figure_5(frame, source: str):
    """Fig. 5: each model's rank under each metric (printed order), a line per model."""
    metrics = list(dict.fromkeys(frame["metric"]))
    models = list(dict.fromkeys(frame["model"]))
    fig, axes = new_figure(1.0 * len(metrics) + 2.5, 0.4 * len(models) + 2.2)
    ax = axes[0, 0]
    for i, model in enumerate(models):
        part = frame[frame["model"] == model].set_index("metric").reindex(metrics)
        ax.plot(range(len(metrics)), part["rank"], marker="o", color=COLOURS[i % 4], ls=("-", "--")[i // 4 % 2])
        ax.text(len(metrics) - 0.9, part["rank"].iloc[-1], model, va="center", fontsize=8, color=COLOURS[i % 4])
    ax.set_xticks(range(len(metrics)), metrics, rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.3, len(metrics) + 0.8)
    ax.invert_yaxis()
    ax.set_ylabel("rank (1 = best)")
    ax.set_title(f"ECCV Caption Figure 5 ({source}): the models' rankings under each metric", fontsize=9)
    fig.tight_layout()
    return fig


def write_appendix_figure(stem: str, data, out_png, source: str, dpi: int = 150):
    """Draw Figure 3(a), 5, E.2 or E.3 from its computed table and write <out_png> and the PDF beside it."""
    from pathlib import Path

    import pandas as pd

    from itmbench.errors import InputError, reading
    from itmbench.papers.figures import figure_style, write_figure

    if stem not in APPENDIX_FIGURES:
        raise InputError(f"unknown ECCV appendix figure {stem!r}; expected one of {sorted(APPENDIX_FIGURES)}")
    with reading(data):
        frame = pd.read_csv(data, keep_default_na=False, na_values=[""])
    missing = [c for c in APPENDIX_FIGURES[stem] if c not in frame.columns]
    if missing or frame.empty:
        raise InputError(f"{data}: columns {missing} missing or no rows; expected the table of ECCV {stem}")
    with figure_style():
        draw = {"figure3": figure_3, "figure5": figure_5, "figureE2": figure_e2, "figureE3": figure_e3}[stem]
        fig = draw(frame, source)
        return write_figure(fig, Path(out_png).with_suffix(""), dpi)
