"""BISON built in the world: its parameters (params.yaml section `bison`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(BisonConfig, values)`); the decisions behind
them are in itmbench.papers.bison.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True)
class BisonConfig:
    """BISON construction in the world (params.yaml section `bison`); defaults are the module's decisions."""

    SECTION: ClassVar[str] = "bison"

    split: str
    seed: int
    pairing: str
    embedding: str
    vector_size: int
    window: int
    min_count: int
    epochs: int
    fasttext_min_n: int
    fasttext_max_n: int
    fasttext_bucket: int
    annotator_error: float
    verifier_error: float
    n_verifiers: int
    shuffle_candidates: bool


@dataclass(frozen=True)
class BisonCaptionMetricsConfig:
    """BISON section 6's caption-metric baseline (params.yaml section `bison_caption_metrics`).

    The decisions behind the fields are in itmbench.papers.bison.caption_metrics's docstring.
    """

    SECTION: ClassVar[str] = "bison_caption_metrics"

    metrics: tuple[str, ...]
    negative_references: int
    seed: int

    def __post_init__(self) -> None:
        from itmbench.metrics.captioning import METRICS, NOT_POSSIBLE

        for metric in self.metrics:
            if metric not in METRICS:
                reason = f" ({NOT_POSSIBLE[metric]})" if metric in NOT_POSSIBLE else ""
                raise ValueError(
                    f"bison_caption_metrics params: metric {metric!r}{reason}; expected some of {list(METRICS)}"
                )
        if len(set(self.metrics)) != len(self.metrics):
            raise ValueError(f"bison_caption_metrics params: metrics {list(self.metrics)} repeat a metric")
        if self.negative_references < 1:
            raise ValueError(
                f"bison_caption_metrics params: negative_references={self.negative_references}; "
                "expected an integer >= 1"
            )


@dataclass(frozen=True)
class BisonCaptionersConfig:
    """BISON Table 6's captioning systems on frozen tower features (params.yaml section `bison_captioners`).

    The decisions behind the fields are in itmbench.papers.bison.feature_captioners's docstring.
    """

    SECTION: ClassVar[str] = "bison_captioners"

    towers: tuple[str, ...]
    systems: tuple[str, ...]
    caption_split: str
    embed: int
    hidden: int
    epochs: int
    scst_epochs: int
    batch_size: int
    lr: float
    max_len: int
    seed: int
