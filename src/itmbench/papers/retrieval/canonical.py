"""The canonical retrieval tables, the same for the world and for COCO 5k (and the galleries of ECCV and CxC).

- `items.parquet`: kind ('image' | 'caption'), item_id — the gallery, in order;
- `positives.parquet`: image_id, caption_id, positive_set — which pairs count as matches.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from itmbench.io import write_parquet
from itmbench.reading import read_parquet_checked

REQUIRED_COLUMNS: dict[str, list[str]] = {
    "items": ["kind", "item_id"],
    "positives": ["image_id", "caption_id", "positive_set"],
}
POSITIVE_SETS = ("original", "truth")
CONSTRUCTION_TABLES: tuple[str, ...] = ()  # its build keeps no construction stages


def write(tables: dict[str, pd.DataFrame], out_dir: str | Path) -> None:
    """Write the canonical retrieval files (positives first; items.parquet marks completion)."""
    out = Path(out_dir)
    positives = tables["positives"].astype({"image_id": "int64", "caption_id": "int64"})
    write_parquet(out / "positives.parquet", positives)
    write_parquet(out / "items.parquet", tables["items"].astype({"item_id": "int64"}))


def read(bench_dir: str | Path) -> dict[str, pd.DataFrame]:
    """Read and validate the canonical retrieval files."""
    d = Path(bench_dir)
    return {
        name: read_parquet_checked(d / f"{name}.parquet", cols, f"the retrieval table {name!r} (build it first)")
        for name, cols in REQUIRED_COLUMNS.items()
    }
