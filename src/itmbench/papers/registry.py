"""The paper registry: what each paper provides, and how the workflow builds, audits and scores its benchmark.

`PAPERS` lists the papers (title, the world benchmarks its tables read, the tables and figures the
world fills; `papers.claims.CLAIM_ORDER` lists those with claims); the parts of a paper live in its
package `itmbench.papers.<paper>` (`tables`, `figures`, `claims`, `statistics`, ...) and are reached
through `Paper.part`, so the shared table, figure and claims engines dispatch on the registry instead
of chains over paper names, and importing this module imports no paper.

`BENCHMARKS` lists the world benchmarks, each of one paper's package with the same interface, its parts
reached through `BenchmarkEntry.part`: a config dataclass (`config`; the params schema states its fields'
defaults), `build` (construction in the world), `canonical` (the tables' columns, `write`, `read`),
`audit` (against the world's truth) and `score` (`score_dual`, `pairs_needed`, `score_pairs`,
`summarize`). This registry is the one place that knows what each build needs beyond the world (the
world's truth settings, another benchmark's tables) and whether it adds new items (BiVLC's generated
images and captions).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the registry imports nothing heavy: building the CLI's parser reads it
    import pandas as pd

    from itmbench.world.generate import World, WorldConfig

Tables = dict[str, "pd.DataFrame"]


def _world_cfg_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    return {"world_cfg": world_cfg}


def _no_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    return {}


def _eccv_kwargs(world_cfg: WorldConfig, deps: Mapping[str, Tables]) -> dict[str, Any]:
    from itmbench.papers.cxc import canonical as cxc

    kwargs: dict[str, Any] = {"world_cfg": world_cfg}
    if "cxc" in deps:
        kwargs["cxc_positives"] = cxc.cxc_positives(deps["cxc"], split="test")
    return kwargs


def _truth_settings(section: dict[str, Any], world_cfg: WorldConfig) -> dict[str, Any]:
    """Configs that carry the world's truth settings get them from the world, never twice."""
    return {**section, "relation_margin": world_cfg.relation_margin, "max_objects": world_cfg.max_objects}


RETRIEVAL_TITLE = "COCO-style retrieval on the world's {split} split: R@K (%) and median rank, {intervals}"


@dataclass(frozen=True)
class BenchmarkEntry:
    """One world benchmark: its package's parts, config class and what its build needs."""

    name: str
    config_class: str
    build_kwargs: Callable[[WorldConfig, Mapping[str, Tables]], dict[str, Any]]
    depends_on: tuple[str, ...] = ()
    adds_items: bool = False
    truth_in_config: bool = False
    # its table's title: `{name}`, `{split}` (its section's) and `{intervals}` (the level, and which cross
    # scorers re-rank) are filled by the workflow
    table_title: str = "{name} in the world: every model (%, {intervals})"
    heading: str = ""  # its report's heading: the paper and its task in a line
    report_notebook: str = "benchmark"  # workflow/notebooks/<report_notebook>.ipynb renders its report
    label: str = ""  # its name in the reports' navigation ('': its paper's title)
    # the decimals its table prints (Markdown, LaTeX; the CSV is exact): its paper's printed precision for
    # these metrics (the most common in the paper's results tables; tests/papers/test_registry.py checks it
    # against published_results.csv), 1 for a benchmark without a paper; `column_decimals` overrides it for
    # the columns whose name ends with a key (CxC prints median ranks as whole numbers)
    decimals: int = 1
    column_decimals: Mapping[str, int] = field(default_factory=dict)
    # its build takes machine annotators from models' embedding caches (ECCV's machine-in-the-loop):
    # build-benchmark's --annotator-embeddings NAME=NPZ
    takes_annotator_embeddings: bool = False
    # JSON files a rule before the build writes, each passed to its build as a keyword (MCIC's OPTIMIZE-PV
    # choice, `pv_choice`): build-benchmark's --input NAME=JSON
    inputs: tuple[str, ...] = ()

    def report_label(self) -> str:
        """The benchmark's name in the reports' navigation: `label`, else its paper's title."""
        return self.label or PAPERS[self.name].title

    def column_precision(self, columns: Iterable[str]) -> dict[str, int]:
        """The decimals each of a table's columns prints at: `decimals`, or `column_decimals`' by name ending."""
        return {
            c: next((d for end, d in self.column_decimals.items() if str(c).endswith(end)), self.decimals)
            for c in columns
        }

    def part(self, name: str) -> ModuleType:
        """A part of the benchmark's package (``itmbench.papers.<name>.<part>``: build, canonical, audit, score)."""
        return importlib.import_module(f"itmbench.papers.{self.name}.{name}")

    def config(self, section: dict[str, Any], world_cfg: WorldConfig) -> Any:
        """The typed config from the params section (unknown keys are named)."""
        from itmbench.params import make_config

        cls = getattr(importlib.import_module(f"itmbench.papers.{self.name}.config"), self.config_class)
        return make_config(cls, _truth_settings(section, world_cfg) if self.truth_in_config else section)

    def build(
        self,
        world: World,
        section: dict[str, Any],
        world_cfg: WorldConfig,
        deps: Mapping[str, Tables],
        annotator_embeddings: Mapping[str, str] | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> Tables:
        """Build the canonical tables from the world (and the tables of the benchmarks it depends on, and the
        embeddings files of the models that annotate, for a benchmark that takes them)."""
        missing = [d for d in self.depends_on if d not in deps]
        if missing:
            raise ValueError(f"benchmark {self.name} needs the tables of {missing}")
        kwargs = self.build_kwargs(world_cfg, deps)
        if annotator_embeddings:
            if not self.takes_annotator_embeddings:
                raise ValueError(
                    f"benchmark {self.name}: annotator embeddings given for {sorted(annotator_embeddings)}; "
                    "its build takes none"
                )
            kwargs["annotator_embeddings"] = dict(annotator_embeddings)
        unknown = sorted(set(inputs or {}) - set(self.inputs))
        if unknown:
            raise ValueError(f"benchmark {self.name}: inputs {unknown} given; its build takes {list(self.inputs)}")
        kwargs.update(inputs or {})
        return self.part("build").build(world, self.config(section, world_cfg), **kwargs)

    def audit(self, world: World, tables: Tables, section: dict[str, Any], world_cfg: WorldConfig) -> pd.DataFrame:
        """The audit only the world allows: how far the benchmark is from the complete truth."""
        missing = [t for t in self.part("canonical").CONSTRUCTION_TABLES if t not in tables]
        if missing:
            raise ValueError(
                f"benchmark {self.name}: the audit needs the construction tables {missing}; "
                "expected a benchmark built in the world (one from the released files has none)"
            )
        kwargs = {} if self.build_kwargs is _no_kwargs else {"world_cfg": world_cfg}
        return self.part("audit").audit(world, tables, self.config(section, world_cfg), **kwargs)


BENCHMARKS: dict[str, BenchmarkEntry] = {
    "retrieval": BenchmarkEntry(
        "retrieval",
        "RetrievalConfig",
        _world_cfg_kwargs,
        table_title=RETRIEVAL_TITLE,
        heading="COCO-style retrieval: i2t and t2i under the original and the complete-truth positives",
        report_notebook="retrieval",
        label="COCO-style retrieval",
    ),
    "bison": BenchmarkEntry(
        "bison",
        "BisonConfig",
        _world_cfg_kwargs,
        heading="BISON (Hu, Misra, van der Maaten): pick which of two similar images a caption describes",
        decimals=2,
    ),
    "mcic": BenchmarkEntry(
        "mcic",
        "MCICConfig",
        _no_kwargs,
        truth_in_config=True,
        heading="MCIC-COCO (Ding et al.): pick the true caption of an image among 5",
        inputs=("pv_choice",),
    ),
    "cxc": BenchmarkEntry(
        "cxc",
        "CxcConfig",
        _world_cfg_kwargs,
        heading="Crisscrossed Captions (Parekh et al.): graded intra- and inter-modal similarity",
        column_decimals={"MedR": 0},
    ),
    "eccv": BenchmarkEntry(
        "eccv",
        "EccvConfig",
        _eccv_kwargs,
        depends_on=("cxc",),
        takes_annotator_embeddings=True,
        heading="ECCV Caption (Chun et al.): retrieval with machine-and-human-verified positives",
        decimals=2,
    ),
    "bivlc": BenchmarkEntry(
        "bivlc",
        "BiVLCConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="BiVLC (Miranda et al.): SugarCrepe plus generated hard-negative images",
        decimals=2,
    ),
    "sugarcrepe": BenchmarkEntry(
        "sugarcrepe",
        "SugarCrepeConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="SugarCrepe (Hsieh et al.): pick the true caption against one hard negative of seven edit types",
        decimals=2,
    ),
    "aro": BenchmarkEntry(
        "aro",
        "AroConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="ARO (Yuksekgonul et al.): relations and attributes swapped, word order perturbed",
        decimals=2,
    ),
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
    "aro": frozenset({"image-text"}),
    "eccv": frozenset({"image-text"}),
    "cxc": frozenset({"image-text", "text-text", "image-image"}),
}
GALLERY_BENCHMARKS = frozenset({"retrieval", "eccv", "cxc"})


@dataclass(frozen=True)
class Paper:
    """One paper: its printed title, the world benchmarks its tables read, the tables and figures the world fills."""

    name: str
    title: str
    benchmarks: tuple[str, ...]
    world_tables: Mapping[str, str] = field(default_factory=dict)  # file stem -> printed table
    world_figures: tuple[str, ...] = ()
    row_headers: Mapping[str, str] = field(default_factory=dict)  # printed table -> row header when not "model"
    has_statistics: bool = False  # dataset statistics regenerated from its released files (`statistics`)
    # Figures drawn from files computed from its rated data and scores, not from metrics (figures/<paper>/<stem>.png
    # of the source, and of results/released where the released files allow), and the tables of that kind its
    # report shows (tables/<paper>/<stem>.md): the workflow lists those a rule of the run writes.
    data_figures: tuple[str, ...] = ()
    data_tables: tuple[str, ...] = ()
    # params sections of scorers that are not models (BISON section 6's caption metrics), each run by its own
    # rule: results/<source>/metrics/<section>/<name>.json for each name of the section's `metrics`, read
    # by the paper's world tables
    baselines: tuple[str, ...] = ()

    def part(self, name: str) -> ModuleType:
        """A part of the paper's package (``itmbench.papers.<paper>.<name>``), imported on first use."""
        return importlib.import_module(f"itmbench.papers.{self.name}.{name}")


PAPERS: dict[str, Paper] = {
    "bison": Paper(
        "bison",
        "BISON",
        ("bison", "retrieval"),
        {"table1": "Table 1", "table3": "Table 3", "table7": "Table 7", "section6": "Section 6"},
        ("accuracy",),
        row_headers={"Section 6": "caption metric", "Table 7": "system"},
        baselines=("bison_caption_metrics",),
        data_figures=("figure4", "figure6", "figure8", "figure9", "figure14"),
        data_tables=("table2", "table4", "figure4", "figure6", "figure8", "figure9", "figure14", "paired"),
    ),
    "mcic": Paper(
        "mcic",
        "MCIC-COCO",
        ("mcic",),
        {"table3": "Table 3"},
        ("accuracy",),
        has_statistics=True,
        data_tables=("pv_search", "lambda_search", "table4", "table5", "paired"),
    ),
    "eccv": Paper(
        "eccv",
        "ECCV Caption",
        ("eccv",),
        {"table4": "Table 4", "table5": "Table 5"},
        ("ranking",),
        row_headers={"Table 5": "metric"},
        has_statistics=True,
        data_figures=("figure3", "figure5", "figureE2", "figureE3"),
        data_tables=("figure3", "tableA1", "tableB2", "tableE1", "figureE2", "figureE3", "figure5"),
    ),
    "bivlc": Paper(
        "bivlc",
        "BiVLC",
        ("bivlc",),
        {"table2": "Table 2", "table3": "Table 3", "table4": "Table 4"},
        ("scores",),
        has_statistics=True,
        data_figures=("figure4",),  # the positive pair's margins per model (report.bivlc_figure4)
        data_tables=("paired", "figure4"),  # model pairs tested over the same instances (report.bivlc_paired)
    ),
    "cxc": Paper(
        "cxc",
        "Crisscrossed Captions",
        ("cxc",),
        {
            "table2": "Table 2",
            "table3": "Table 3",
            "table4": "Table 4",
            "table5": "Table 5",
            "appendix_table3": "Appendix Table 3",
        },
        ("recall",),
        has_statistics=True,
        data_figures=("figure3", "figure4", "figure5", "appendix_figure2"),
        data_tables=("table1", "figure5"),
    ),
    # SugarCrepe's statistics (Table 1 of BiVLC) are BiVLC's: papers/bivlc/statistics.py reads its files
    "sugarcrepe": Paper(
        "sugarcrepe", "SugarCrepe", ("sugarcrepe",), {"table3": "BiVLC Table 3"}, ("subtypes",), data_tables=("paired",)
    ),
    "aro": Paper("aro", "ARO", ("aro",), {"results": "Results", "relations": "VG-Relation per relation"}, ("sets",)),
}


def baseline_metrics_files(name: str, params: Mapping[str, Any], results: str, source: str) -> list[str]:
    """The metrics files of a paper's baselines (`Paper.baselines`) under `results` (results/<source>), from
    params whose baseline sections carry their `metrics` (defaults filled): those computed on `source`
    (`metrics.captioning.metrics_on_source`: the world's SPICE analogue on the world only)."""
    from itmbench.metrics.captioning import metrics_on_source

    return [
        f"{results}/metrics/{s}/{m}.json"
        for s in paper(name).baselines
        for m in metrics_on_source(params[s]["metrics"], source)
    ]


def paper(name: str) -> Paper:
    """The registry entry of a paper, naming the known ones when it is unknown."""
    if name not in PAPERS:
        raise KeyError(f"unknown paper {name!r}; expected one of {', '.join(PAPERS)}")
    return PAPERS[name]


# The predictions formats each paper's package scores (`itmbench score-predictions KIND`: its
# `predictions.score`); `ranked` (ranked lists against positives) is the shared engine's own.
PREDICTION_FORMATS: dict[str, str] = {"bison": "bison", "bivlc": "bivlc", "sugarcrepe_gpt4v": "sugarcrepe"}


def prediction_paper(kind: str) -> str:
    """The paper whose package scores a predictions format, naming the known formats when it is unknown."""
    if kind not in PREDICTION_FORMATS:
        raise ValueError(f"unknown prediction kind {kind!r}; expected ranked or one of {sorted(PREDICTION_FORMATS)}")
    return PREDICTION_FORMATS[kind]
