"""ECCV Caption's tables that follow from its printed numbers (rule released_paper_tables; the registry's
`released_outputs`): Table 5's comparison and Section 4.1's Bradley-Terry scores refitted from Table D.1."""

from __future__ import annotations

import os
from pathlib import Path


def write(raw: str | os.PathLike, out: str | os.PathLike) -> None:
    """Write ECCV Caption's released tables under `out` (results/released); `raw` is not read (their inputs are the
    transcribed tables)."""
    from itmbench.papers.eccv.preference import write_section41
    from itmbench.papers.eccv.tables import write_table5_comparison

    del raw
    out = Path(out)
    write_table5_comparison(out / "tables" / "eccv" / "table5")
    write_section41(out / "tables" / "eccv" / "section41")  # Bradley-Terry refitted from Table D.1
