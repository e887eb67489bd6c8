"""The retrieval table: every model under every positive set, i2t and t2i, with intervals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

METRIC_ORDER = ("R@1", "R@5", "R@10", "MedR")


def retrieval_long_table(metrics: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Long table (row, column, value, lo, hi) from metrics JSONs, rows 'model [positive set]'."""
    rows = []
    for m in metrics:
        for positive_set, by_direction in sorted(m["metrics"].items()):
            for direction in ("i2t", "t2i"):
                for name in METRIC_ORDER:
                    cell = by_direction[direction][name]
                    rows.append(
                        {
                            "row": f"{m['model']} [{positive_set}]",
                            "model": m["model"],
                            "positive_set": positive_set,
                            "column": f"{direction} {name}",
                            "value": cell["value"],
                            "lo": cell["lo"],
                            "hi": cell["hi"],
                            "n": cell["n"],
                        }
                    )
    return pd.DataFrame(rows)
