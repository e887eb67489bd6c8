"""BiVLC's released per-instance results reproduce the transcribed Tables 2-4 rows (needs the mirror)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from itmbench.papers.published import published_value

# released file stem -> row name in the paper
RELEASED_MODELS = {
    "ViT-B-32": "CLIP",
    "CLIP_COCO": "CLIP_COCO",
    "CLIP_TROHN-Text": "CLIP_TROHN-Text",
    "CLIP_TROHN-Img": "CLIP_TROHN-Img",
}
# released boolean column -> Table 3 column
RELEASED_COLUMNS = {
    "text_score": "I2T",
    "image_score": "T2I",
    "group_score": "Group",
    "text_score_i0": "Ipos2T",
    "text_score_i1": "Ineg2T",
    "image_score_c0": "Tpos2I",
    "image_score_c1": "Tneg2I",
}
BLOCKS = {"replace": "Replace", "swap": "Swap", "add": "Add"}


@pytest.fixture(scope="module")
def results_dir(github_raw: Path) -> Path:
    path = github_raw / "IMirandaM" / "BiVLC" / "main" / "results"
    if not path.is_dir():
        pytest.skip(f"BiVLC results not mirrored at {path}")
    return path


def _percent(flags: pd.Series) -> float:
    return round(100 * flags.astype(str).eq("True").mean(), 2)


@pytest.mark.parametrize(("stem", "model"), RELEASED_MODELS.items())
def test_released_results_reproduce_tables_2_to_4(results_dir: Path, stem: str, model: str) -> None:
    bivlc = pd.read_csv(results_dir / f"BiVLC_{stem}.csv", usecols=["type", *RELEASED_COLUMNS])
    assert len(bivlc) == 2933
    for column, printed in RELEASED_COLUMNS.items():
        assert _percent(bivlc[column]) == published_value("bivlc", "Table 3", model, printed), printed
    for kind, block in BLOCKS.items():
        part = bivlc[bivlc["type"] == kind]
        for column in ("text_score", "image_score", "group_score"):
            printed = RELEASED_COLUMNS[column]
            assert _percent(part[column]) == published_value("bivlc", "Table 4", model, printed, block=block)
    sugarcrepe = pd.read_csv(results_dir / f"SUGARCREPE_CORRECT_{stem}.csv", usecols=["correct"])
    assert len(sugarcrepe) == 7512
    assert round(100 * sugarcrepe["correct"].mean(), 2) == published_value("bivlc", "Table 3", model, "SugarCrepe")
