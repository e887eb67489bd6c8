"""The world the unit tests build: params.yaml's world with a grammar of the unit tests' own.

The default world (params.yaml) is calibrated to COCO: nearly every caption is a relation. The unit tests were
written on a grammar that draws every caption kind often (single, relation, pair, count), one to four objects
and attributes that are sometimes unstated, so that a few dozen images exercise every path of the parser, the
truth and the benchmarks. That grammar is stated here, once; params.yaml stays the home of every default
(tests/test_params_defaults.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from itmbench.params import make_config
from itmbench.world.generate import WorldConfig

UNIT_GRAMMAR: dict[str, Any] = {
    "n_test": 500,
    "min_objects": 1,
    "max_objects": 4,
    "relation_margin": 0.05,
    "p_colour": 0.9,
    "p_size": 0.5,
    "caption_kinds": {"single": 0.2, "relation": 0.45, "pair": 0.2, "count": 0.15},
}


def unit_world(values: Mapping[str, Any] | None = None, /, **overrides: Any) -> WorldConfig:
    """`make_config(WorldConfig, ...)` over the unit tests' grammar (`values`, then `overrides`, win)."""
    return make_config(WorldConfig, {**UNIT_GRAMMAR, **(values or {})}, **overrides)


# The truth settings of that grammar, for the configs that carry the world's (`OUTSIDE` in their class: a
# benchmark, the trainer's negatives, the recognizer), built here without a world config to take them from.
UNIT_TRUTH: dict[str, Any] = {
    "relation_margin": UNIT_GRAMMAR["relation_margin"],
    "max_objects": UNIT_GRAMMAR["max_objects"],
}
