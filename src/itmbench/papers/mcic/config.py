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

    def single_pv_point(self) -> tuple[int, int] | None:
        """(vector_size, epochs) when `pv_grid` has one point (no search to run), else None."""
        points = grid_points(self)
        return points[0] if len(points) == 1 else None


def grid_points(cfg: MCICConfig) -> list[tuple[int, int]]:
    """The (vector_size, epochs) points of `pv_grid` (OPTIMIZE-PV's grid), sizes outer, each sorted."""
    sizes, epochs = (sorted(int(x) for x in cfg.pv_grid[k]) for k in ("vector_size", "epochs"))
    return list(itertools.product(sizes, epochs))
