"""BiVLC's tables and figure from its released files (rule released_paper_tables; the registry's `released_outputs`).

Tables 2-5 and Section 5.3 from the released per-instance results (`tables.write_released_tables`), the paired
test of CLIP_TROHN-Img against CLIP_COCO over the same instances, and GPT-4V's SugarCrepe accuracy figure.
"""

from __future__ import annotations

import os
from pathlib import Path


def write(raw: str | os.PathLike, out: str | os.PathLike) -> None:
    """Write BiVLC's released tables and figure under `out` (results/released) from the files under `raw`."""
    from itmbench.papers.bivlc.figures import gpt4v_figure_data, plot_gpt4v_accuracy
    from itmbench.papers.bivlc.tables import load_released_paired, write_released_tables
    from itmbench.papers.paired import write_paired_table

    out = Path(out)
    gpt4v = gpt4v_figure_data(raw)  # GPT-4V's SugarCrepe accuracy: a row of Section 5.3 and the figure
    write_released_tables(raw, out / "tables" / "bivlc", gpt4v=gpt4v)
    title = "BiVLC: CLIP_TROHN-Img vs CLIP_COCO over the same instances of their released per-instance results"
    write_paired_table(load_released_paired(raw), out / "tables" / "bivlc" / "paired_released", title)
    plot_gpt4v_accuracy(gpt4v, out / "figures" / "bivlc" / "gpt4v_sugarcrepe")
