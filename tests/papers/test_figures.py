"""The figures' interval whiskers: drawn from each interval's ends, whether or not the interval holds its value."""

import numpy as np
import pandas as pd
import pytest

from itmbench.errors import InputError
from itmbench.papers.eccv.bias import BIAS_QUANTITIES, I2T
from itmbench.papers.eccv.figures import figure_e2
from itmbench.papers.figures import draw_intervals, interval_bars, metric_series, new_figure, read_figure_data


def _whisker_segments(ax) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Every whisker drawn on `ax` as ((x0, y0), (x1, y1)), from the errorbar line collections, to 9 decimals
    (a whisker is drawn as centre +- half its length)."""
    segments = []
    for collection in ax.collections:
        for path in collection.get_segments():
            (x0, y0), (x1, y1) = (round(float(v), 9) for v in path[0]), (round(float(v), 9) for v in path[1])
            segments.append(((x0, y0), (x1, y1)))
    return segments


def test_a_whisker_spans_the_interval_even_when_the_interval_lies_above_the_value():
    # a percentile bootstrap interval need not contain its estimate (ECCV Fig. E.2: 1.245 with 1.285-1.40)
    fig, axes = new_figure(3, 3)
    ax = axes[0, 0]
    draw_intervals(ax, [2.0, 3.0], np.array([[1.285, 0.5], [1.40, 0.9]]))
    assert sorted(_whisker_segments(ax)) == [((2.0, 1.285), (2.0, 1.40)), ((3.0, 0.5), (3.0, 0.9))]


def test_horizontal_whiskers_and_missing_ends():
    fig, axes = new_figure(3, 3)
    ax = axes[0, 0]
    draw_intervals(ax, [7.0, 8.0], np.array([[1.0, np.nan], [2.0, 4.0]]), horizontal=True)
    assert _whisker_segments(ax) == [((1.0, 7.0), (2.0, 7.0))]  # the interval without a lower end is not drawn


def test_an_interval_whose_lower_end_is_above_its_upper_end_is_a_bug_not_bad_input():
    fig, axes = new_figure(3, 3)
    with pytest.raises(AssertionError, match="lower end 2.0 above its upper end 1.0"):
        draw_intervals(axes[0, 0], [0.0], np.array([[2.0], [1.0]]))


def test_bars_carry_the_whiskers_of_their_intervals():
    fig, axes = new_figure(3, 3)
    ax = axes[0, 0]
    interval_bars(ax, np.array([0.0, 1.0]), np.array([50.0, 60.0]), np.array([[52.0, 55.0], [58.0, 65.0]]), 0.4)
    assert [p.get_height() for p in ax.patches] == [50.0, 60.0]
    assert sorted(_whisker_segments(ax)) == [((0.0, 52.0), (0.0, 58.0)), ((1.0, 55.0), (1.0, 65.0))]


def test_metric_series_gives_the_interval_ends_and_nan_where_absent():
    docs = {
        "a": {"metrics": {"r1": {"value": 10.0, "lo": 11.0, "hi": 12.0}}},
        "b": {"metrics": {"r1": {"value": 5.0}}},
        "c": {"metrics": {}},
    }
    values, bounds = metric_series(docs, ["a", "b", "c"], "r1")
    np.testing.assert_array_equal(values, [10.0, 5.0, np.nan])
    np.testing.assert_array_equal(bounds, [[11.0, np.nan, np.nan], [12.0, np.nan, np.nan]])


def test_figure_e2_draws_a_bias_whose_interval_lies_above_its_value():
    rows = []
    for size, (value, lo, hi) in zip((2, 3), ((1.245, 1.285, 1.40), (1.0, 0.8, 1.2))):
        for quantity in BIAS_QUANTITIES:
            rows.append((I2T, "recall_at_1", quantity, size, value, lo, hi))
    frame = pd.DataFrame(rows, columns=["direction", "metric", "quantity", "size", "value", "lo", "hi"])
    fig = figure_e2(frame, "world")
    segments = _whisker_segments(fig.axes[0])
    assert ((2.0, 1.285), (2.0, 1.40)) in segments


def test_a_figure_table_with_an_interval_upside_down_is_refused_naming_the_file_and_row(tmp_path):
    path = tmp_path / "figure.csv"
    path.write_text("x,value,lo,hi\n1,0.5,0.4,0.6\n2,0.5,,0.6\n3,0.5,0.7,0.6\n")
    with pytest.raises(InputError, match=r"figure.csv: line 4: interval lo 0.7 above hi 0.6; expected lo <= hi"):
        read_figure_data(path, ("x", "value", "lo", "hi"))
    path.write_text("x,value,lo,hi\n1,0.5,0.4,0.6\n2,0.5,,0.6\n")
    assert len(read_figure_data(path, ("x", "value", "lo", "hi"))) == 2
