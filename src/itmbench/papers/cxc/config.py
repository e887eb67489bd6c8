"""Crisscrossed Captions built in the world: its parameters (params.yaml section `cxc`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(CxcConfig, values)`); the decisions behind
them are in itmbench.papers.cxc.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

SPLIT_CODES = {"train": 0, "val": 1, "test": 2}
CAPTION_SCORER_NAMES = ("bow", "ngram")  # build.CAPTION_SCORERS


@dataclass(frozen=True)
class CxcConfig:
    """CxC construction in the world (params.yaml section `cxc`); defaults are the world-scaled decisions."""

    SECTION: ClassVar[str] = "cxc"

    seed: int
    splits: tuple[str, ...]
    score_split: str
    top_k: int
    caption_scorers: tuple[str, ...]
    cocaption_fraction: float
    intrasim_per_image: float
    intrasim_sts_fraction: float
    n_raters: int
    rater_sd_sts: float
    rater_sd_sis: float
    rater_sd_sits: float
    rating_decimals: int
    threshold_sts: float
    threshold_sis: float
    threshold_sits: float
    colour_bins: int
    layout_grid: int
    saturation_min: int
    layout_weight: float
    sts_overlap_weight: float
    sis_w_shape: float
    sis_w_colour: float
    sis_w_size: float
    sis_w_position: float
    sis_position_scale: float
    sits_fit_base: float
    sits_partial_max: float
    sits_query: str

    def threshold(self, task: str) -> float:
        """The positive threshold of a task."""
        return float(getattr(self, f"threshold_{task}"))

    def rater_sd(self, task: str) -> float:
        """The rater noise of a task."""
        return float(getattr(self, f"rater_sd_{task}"))
