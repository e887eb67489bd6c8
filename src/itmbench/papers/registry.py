"""The benchmark registry: how the workflow builds, audits and scores each world benchmark.

Each benchmark is one module (bison, mcic, eccv, bivlc, cxc) with the same interface: a config
dataclass, `build`, `write`, `read`, `audit`, `score_dual`, `summarize`. This registry is the one
place that knows what each build needs beyond the world (the world's truth settings, another
benchmark's tables) and whether it adds new items (BiVLC's generated images and captions).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pandas as pd

from itmbench.world.generate import World, WorldConfig

Tables = dict[str, pd.DataFrame]


def _world_cfg_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    return {"world_cfg": world_cfg}


def _no_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    return {}


def _eccv_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    from itmbench.papers.cxc import benchmark as cxc

    kwargs: dict[str, Any] = {"world_cfg": world_cfg}
    if "cxc" in deps:
        kwargs["cxc_positives"] = cxc.cxc_positives(deps["cxc"], split="test")
    return kwargs


def _truth_settings(section: dict[str, Any], world_cfg: WorldConfig) -> dict[str, Any]:
    """Configs that carry the world's truth settings get them from the world, never twice."""
    return {**section, "relation_margin": world_cfg.relation_margin, "max_objects": world_cfg.max_objects}


@dataclass(frozen=True)
class BenchmarkEntry:
    """One world benchmark: its module, config class and what its build needs."""

    name: str
    config_class: str
    build_kwargs: Callable[[WorldConfig, Mapping[str, Tables]], dict[str, Any]]
    depends_on: tuple[str, ...] = ()
    adds_items: bool = False
    truth_in_config: bool = False

    @property
    def module(self) -> ModuleType:
        """The benchmark's module."""
        return importlib.import_module(f"itmbench.papers.{self.name}.benchmark")

    def config(self, section: dict[str, Any], world_cfg: WorldConfig) -> Any:
        """The typed config from the params section (unknown keys are named)."""
        cls = getattr(self.module, self.config_class)
        return cls.from_dict(_truth_settings(section, world_cfg) if self.truth_in_config else dict(section))

    def build(
        self, world: World, section: dict[str, Any], world_cfg: WorldConfig, deps: Mapping[str, Tables]
    ) -> Tables:
        """Build the canonical tables from the world (and the tables of the benchmarks it depends on)."""
        missing = [d for d in self.depends_on if d not in deps]
        if missing:
            raise ValueError(f"benchmark {self.name} needs the tables of {missing}")
        return self.module.build(world, self.config(section, world_cfg), **self.build_kwargs(world_cfg, deps))

    def audit(self, world: World, tables: Tables, section: dict[str, Any], world_cfg: WorldConfig) -> pd.DataFrame:
        """The audit only the world allows: how far the benchmark is from the complete truth."""
        missing = [t for t in getattr(self.module, "CONSTRUCTION_TABLES", ()) if t not in tables]
        if missing:
            raise ValueError(
                f"benchmark {self.name}: the audit needs the construction tables {missing}; "
                "expected a benchmark built in the world (one from the released files has none)"
            )
        kwargs = {} if self.build_kwargs is _no_kwargs else {"world_cfg": world_cfg}
        return self.module.audit(world, tables, self.config(section, world_cfg), **kwargs)


BENCHMARKS: dict[str, BenchmarkEntry] = {
    "bison": BenchmarkEntry("bison", "BisonConfig", _world_cfg_kwargs),
    "mcic": BenchmarkEntry("mcic", "MCICConfig", _no_kwargs, truth_in_config=True),
    "cxc": BenchmarkEntry("cxc", "CxcConfig", _world_cfg_kwargs),
    "eccv": BenchmarkEntry("eccv", "EccvConfig", _eccv_kwargs, depends_on=("cxc",)),
    "bivlc": BenchmarkEntry("bivlc", "BiVLCConfig", _no_kwargs, adds_items=True, truth_in_config=True),
    "sugarcrepe": BenchmarkEntry("sugarcrepe", "SugarCrepeConfig", _no_kwargs, adds_items=True, truth_in_config=True),
}


def benchmark(name: str) -> BenchmarkEntry:
    """The registry entry of a benchmark, naming the known ones when it is unknown."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {sorted(BENCHMARKS)}")
    return BENCHMARKS[name]


# What each benchmark's tasks compare (a model is planned on a benchmark when it scores one of
# them: itmbench.models.capabilities), and which benchmarks rank whole galleries (every caption
# against every image: a cross scorer's cost is the full grid of pairs).
TASK_MODALITIES: dict[str, frozenset[str]] = {
    "retrieval": frozenset({"image-text"}),
    "bison": frozenset({"image-text"}),
    "mcic": frozenset({"image-text"}),
    "bivlc": frozenset({"image-text"}),
    "sugarcrepe": frozenset({"image-text"}),
    "eccv": frozenset({"image-text"}),
    "cxc": frozenset({"image-text", "text-text", "image-image"}),
}
GALLERY_BENCHMARKS = frozenset({"retrieval", "eccv", "cxc"})
