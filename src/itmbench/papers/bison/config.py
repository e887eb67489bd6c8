"""BISON built in the world: its parameters (params.yaml section `bison`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(BisonConfig, values)`); the decisions behind
them are in itmbench.papers.bison.build's docstring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from itmbench.world.generate import SPLITS


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

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"bison params: split {self.split!r}; expected one of {SPLITS}")
        if self.pairing not in ("both", "query"):
            raise ValueError(f"bison params: pairing {self.pairing!r}; expected 'both' or 'query'")
        if self.embedding not in ("fasttext", "word2vec"):
            raise ValueError(f"bison params: embedding {self.embedding!r}; expected 'fasttext' or 'word2vec'")
        for name in ("annotator_error", "verifier_error"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"bison params: {name}={value}; expected a probability in [0, 1]")
        for name in ("vector_size", "window", "min_count", "epochs", "n_verifiers", "fasttext_bucket"):
            if getattr(self, name) < 1:
                raise ValueError(f"bison params: {name}={getattr(self, name)}; expected an integer >= 1")
        if not 1 <= self.fasttext_min_n <= self.fasttext_max_n:
            raise ValueError(
                f"bison params: fasttext_min_n={self.fasttext_min_n}, fasttext_max_n={self.fasttext_max_n}; "
                "expected 1 <= min_n <= max_n"
            )


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
