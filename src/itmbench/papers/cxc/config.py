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

    def __post_init__(self) -> None:
        """Reject values the construction cannot use, naming the field."""
        bad = [s for s in self.splits if s not in SPLIT_CODES]
        if bad or not self.splits:
            raise ValueError(
                f"cxc params: splits {list(self.splits)}; expected a non-empty subset of {list(SPLIT_CODES)}"
            )
        if self.score_split not in self.splits:
            raise ValueError(f"cxc params: score_split {self.score_split!r} is not among splits {list(self.splits)}")
        if (
            not self.caption_scorers
            or len(set(self.caption_scorers)) != len(self.caption_scorers)
            or any(s not in CAPTION_SCORER_NAMES for s in self.caption_scorers)
        ):
            raise ValueError(
                f"cxc params: caption_scorers {list(self.caption_scorers)}; expected distinct names among "
                f"{list(CAPTION_SCORER_NAMES)}"
            )
        if self.top_k < 1 or self.n_raters < 1:
            raise ValueError(f"cxc params: top_k={self.top_k}, n_raters={self.n_raters}; expected both >= 1")
        for name in ("cocaption_fraction", "intrasim_sts_fraction"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0 or (name == "cocaption_fraction" and value >= 1.0):
                raise ValueError(f"cxc params: {name}={value}; expected a fraction in [0, 1)")
        if self.sits_query not in ("image", "caption"):
            raise ValueError(f"cxc params: sits_query={self.sits_query!r}; expected 'image' or 'caption'")
        if not 0.0 <= self.sits_fit_base <= 5.0 or not 0.0 <= self.sits_partial_max <= 5.0:
            raise ValueError("cxc params: sits_fit_base and sits_partial_max must lie in [0, 5]")

    def threshold(self, task: str) -> float:
        """The positive threshold of a task."""
        return float(getattr(self, f"threshold_{task}"))

    def rater_sd(self, task: str) -> float:
        """The rater noise of a task."""
        return float(getattr(self, f"rater_sd_{task}"))
