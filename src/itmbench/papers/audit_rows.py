"""The rows of a benchmark's audit table (long form: row, column, value, lo, hi): a rate with its
Wilson interval in %, or a plain value without an interval. Every paper's `audit` builds its table
from these, so the audit tables share one layout and one interval."""

from __future__ import annotations

from typing import Any

from itmbench.metrics.intervals import DEFAULT_CONFIDENCE, wilson_interval

COLUMNS = ["row", "column", "value", "lo", "hi"]


def rate_row(row: str, column: str, successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, Any]:
    """successes / n in %, with its Wilson interval (NaN when n is 0)."""
    lo, hi = wilson_interval(successes, n, confidence)
    value = successes / n if n else float("nan")
    return {"row": row, "column": column, "value": 100.0 * value, "lo": 100.0 * lo, "hi": 100.0 * hi}


def value_row(row: str, column: str, value: float) -> dict[str, Any]:
    """A count or a published figure: no interval."""
    return {"row": row, "column": column, "value": float(value), "lo": float("nan"), "hi": float("nan")}
