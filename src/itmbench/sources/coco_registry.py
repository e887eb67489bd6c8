"""The benchmarks of the coco source: each one's paper `coco` module, config, writer and released files.

Each benchmark's `itmbench.papers.<paper>.coco.from_released(raw_dir, items, cfg)` builds its canonical tables
from the released files and the COCO items with what `itmbench.sources.coco_benchmarks` shares; this module is
the registry that reaches those modules (through the paper registry's `package_part`), kept apart from the
shared helpers so that a paper's `coco` module imports the helpers without importing the registry that
imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from itmbench.papers.registry import BENCHMARKS, package_part
from itmbench.params import config_from_section
from itmbench.sources.coco_benchmarks import CocoItems, NoConfig, Released, Tables, write_extra_items


def _write_module(name: str) -> Callable[[Tables, str | Path], None]:
    def write(tables: Tables, out_dir: str | Path) -> None:
        package_part(name, "canonical").write(tables, out_dir)

    return write


@dataclass(frozen=True)
class CocoBenchmark:
    """One benchmark of the coco source: its paper's `coco` module (config, builder), its writer, its files.

    The builder and the config class live in the paper's package (``itmbench.papers.<name>.coco``:
    `from_released` and `config`, a class name, or none for `NoConfig`) and are imported on first use.
    """

    name: str  # also the paper package whose `coco` module builds it
    config_name: str | None
    write: Callable[[Tables, str | Path], None]
    released_keys: tuple[str, ...]  # the registry keys it reads (the DAG's inputs of its build): its `coco_files`

    def _coco(self) -> Any:
        return package_part(self.name, "coco")

    @property
    def config_class(self) -> type:
        """The config dataclass of its params section."""
        return NoConfig if self.config_name is None else getattr(self._coco(), self.config_name)

    def from_released(self, raw_dir: str | Path, items: CocoItems, cfg: Any) -> Released:
        """Its canonical tables (and added items) from the released files and the COCO items."""
        return self._coco().from_released(raw_dir, items, cfg)

    def config(self, section: Mapping[str, Any]) -> Any:
        """The typed config of a params section (unknown keys named)."""
        return config_from_section(self.config_class, f"coco_benchmarks.{self.name}", section)


# A view of the paper registry: every benchmark that declares the released files of a coco-source build.
COCO_BENCHMARKS: dict[str, CocoBenchmark] = {
    name: CocoBenchmark(name, entry.coco_config, _write_module(name), entry.coco_files)
    for name, entry in BENCHMARKS.items()
    if entry.coco_files
}


def coco_benchmark(name: str) -> CocoBenchmark:
    """The coco-source entry of a benchmark, naming the known ones when it is unknown."""
    if name not in COCO_BENCHMARKS:
        raise ValueError(f"unknown coco benchmark {name!r}; expected one of {sorted(COCO_BENCHMARKS)}")
    return COCO_BENCHMARKS[name]


def build_coco_benchmark(
    name: str, raw_dir: str | Path, items_dir: str | Path, section: Mapping[str, Any], out_dir: str | Path
) -> Released:
    """Build one benchmark from its released files and write it: added items first, items.parquet last."""
    entry = coco_benchmark(name)
    cfg = entry.config(section)
    released = entry.from_released(raw_dir, CocoItems.read(items_dir), cfg)
    if released.added is not None:
        write_extra_items(released.added, out_dir)
    entry.write(released.tables, out_dir)
    return released
