"""MCIC-COCO built in the world: its parameters (params.yaml section `mcic`).

The fields' types, bounds and descriptions are the section of workflow/schemas/params.schema.yaml and their defaults
params.yaml's section (build a config with `itmbench.params.make_config(MCICConfig, values)`); the decisions behind
them are in the docstrings of itmbench.papers.mcic.build and itmbench.papers.mcic.audit (the simulated raters).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

N_OPTIONS = 5
OPTION_ORDERS = ("alphabetical", "shuffled")
DECOY_POOLS = ("split", "all")
BLEU_SMOOTHINGS = ("add_one", "none")
PV_LOSSES = ("hs", "negative")


@dataclass(frozen=True)
class MCICConfig:
    """MCIC-COCO construction and audit parameters (params.yaml section `mcic`)."""

    SECTION: ClassVar[str] = "mcic"
    OUTSIDE: ClassVar[dict[str, str]] = {"relation_margin": "world.relation_margin", "max_objects": "world.max_objects"}

    splits: dict[str, str]
    pv_train_split: str
    pv_grid: dict[str, tuple[int, ...]]
    pv_search_split: str
    pv_min_count: int
    pv_loss: str
    pv_seed: int
    neighbourhood: int
    decoy_pool: str
    bleu_threshold: float
    bleu_order: int
    bleu_smoothing: str
    lambda_grid: tuple[float, ...]
    lambda_search_split: str
    n_decoys: int
    dedupe_decoy_text: bool
    option_order: str
    order_seed: int
    relation_margin: float
    max_objects: int
    n_raters: int
    rater_noise: float
    rater_seed: int

    def __post_init__(self) -> None:
        checks = [
            (bool(self.splits), "splits must name at least one split"),
            (sorted(self.pv_grid) == ["epochs", "vector_size"], "pv_grid must name vector_size and epochs"),
            (all(len(v) >= 1 for v in self.pv_grid.values()), "pv_grid must give each at least one value"),
            (all(int(x) >= 1 for v in self.pv_grid.values() for x in v), "pv_grid values must be >= 1"),
            (all(len(set(v)) == len(v) for v in self.pv_grid.values()), "pv_grid values must be distinct"),
            (self.pv_min_count >= 1, "pv_min_count must be >= 1"),
            (self.pv_loss in PV_LOSSES, f"pv_loss must be one of {PV_LOSSES}"),
            (self.n_decoys >= 1, "n_decoys must be >= 1"),
            (self.n_decoys == N_OPTIONS - 1, f"n_decoys must be {N_OPTIONS - 1} (5 options per instance)"),
            (self.neighbourhood >= self.n_decoys, "neighbourhood must be >= n_decoys"),
            (self.decoy_pool in DECOY_POOLS, f"decoy_pool must be one of {DECOY_POOLS}"),
            (len(self.lambda_grid) >= 1, "lambda_grid must name at least one lambda"),
            (all(0.0 <= x <= 1.0 for x in self.lambda_grid), "lambda_grid values must lie in [0, 1]"),
            (len(set(self.lambda_grid)) == len(self.lambda_grid), "lambda_grid values must be distinct"),
            (self.bleu_order >= 1, "bleu_order must be >= 1"),
            (self.bleu_smoothing in BLEU_SMOOTHINGS, f"bleu_smoothing must be one of {BLEU_SMOOTHINGS}"),
            (self.option_order in OPTION_ORDERS, f"option_order must be one of {OPTION_ORDERS}"),
            (self.n_raters >= 1, "n_raters must be >= 1"),
            (0.0 <= self.rater_noise <= 1.0, "rater_noise must lie in [0, 1]"),
            (self.max_objects >= 1, "max_objects must be >= 1"),
        ]
        bad = [message for ok, message in checks if not ok]
        if bad:
            raise ValueError(f"mcic params: {'; '.join(bad)}")

    def single_pv_point(self) -> tuple[int, int] | None:
        """(vector_size, epochs) when `pv_grid` has one point (no search to run), else None."""
        points = grid_points(self)
        return points[0] if len(points) == 1 else None


def grid_points(cfg: MCICConfig) -> list[tuple[int, int]]:
    """The (vector_size, epochs) points of `pv_grid` (OPTIMIZE-PV's grid), sizes outer, each sorted."""
    sizes, epochs = (sorted(int(x) for x in cfg.pv_grid[k]) for k in ("vector_size", "epochs"))
    return list(itertools.product(sizes, epochs))
