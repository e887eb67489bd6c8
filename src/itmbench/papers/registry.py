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
    kwargs: dict[str, Any] = {"world_cfg": world_cfg}
    if "cxc" in deps:
        kwargs["cxc_positives"] = package_part("cxc", "canonical").cxc_positives(deps["cxc"], split="test")
    return kwargs


def _truth_settings(section: dict[str, Any], world_cfg: WorldConfig) -> dict[str, Any]:
    """Configs that carry the world's truth settings get them from the world, never twice."""
    return {**section, "relation_margin": world_cfg.relation_margin, "max_objects": world_cfg.max_objects}


# Released-file key parts of more than one paper's declarations (SugarCrepe's seven subsets; BiVLC's models).
SUGARCREPE_SUBSETS = ("add_att", "add_obj", "replace_att", "replace_obj", "replace_rel", "swap_att", "swap_obj")
BIVLC_MODELS = ("vit_b_32", "clip_coco", "clip_trohn_text", "clip_trohn_img")
# The released files of the coco source's builds that their packages name one by one (`coco_files` below).
BIVLC_HF_KEYS = ("bivlc_hf_test_0", "bivlc_hf_test_1")
ECCV_KEYS = (
    "eccv_coco_test_ids",
    *(f"eccv_{s}_{d}" for s in ("eccv", "cxc", "original") for d in ("image_to_caption", "caption_to_image")),
)
ARO_VG_KEYS = {"vg_relation": "aro_vg_relation", "vg_attribution": "aro_vg_attribution"}
ARO_IMAGES_KEY = "aro_vg_images"
SUGARCREPE_KEYS = {subset: f"sugarcrepe_{subset}" for subset in SUGARCREPE_SUBSETS}  # subset -> its released file


def package_part(package: str, part: str) -> ModuleType:
    """A module of a paper's or benchmark's package, ``itmbench.papers.<package>.<part>``, imported on first use:
    the one place that imports a paper by name (tests/test_import_graph.py refuses any other)."""
    if package not in PAPERS and package not in BENCHMARKS:
        known = sorted({*PAPERS, *BENCHMARKS})
        raise ValueError(f"no paper or benchmark package {package!r}; expected one of {known}")
    return importlib.import_module(f"itmbench.papers.{package}.{part}")


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
    # what its tasks compare (a model is planned on it when it scores one of them: itmbench.models.capabilities)
    modalities: frozenset[str] = frozenset({"image-text"})
    # it ranks whole galleries (every caption against every image: a cross scorer's cost is the full grid)
    ranks_gallery: bool = False
    # its place in the world's release (its package's `export`, `itmbench export-release`; 0: it has none)
    export_order: int = 0
    # the coco source: the released files (registry keys) its package's `coco.from_released` reads, the DAG's
    # inputs of its build (none: a world-only benchmark), and the config class of `coco_benchmarks.<name>` in
    # that module (None: nothing to choose)
    coco_files: tuple[str, ...] = ()
    coco_config: str | None = None
    # its coco-source build adds items that are not COCO's (extra_items/: texts, images), embedded apart per model
    coco_adds_items: bool = False

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
        return package_part(self.name, name)

    def config(self, section: dict[str, Any], world_cfg: WorldConfig) -> Any:
        """The typed config from the params section (unknown keys are named)."""
        from itmbench.params import make_config

        cls = getattr(self.part("config"), self.config_class)
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
        ranks_gallery=True,
        coco_files=("eccv_coco_test_ids",),
        coco_config="RetrievalCocoConfig",
    ),
    "bison": BenchmarkEntry(
        "bison",
        "BisonConfig",
        _world_cfg_kwargs,
        heading="BISON (Hu, Misra, van der Maaten): pick which of two similar images a caption describes",
        decimals=2,
        export_order=1,
        coco_files=("bison_annotations",),
    ),
    "mcic": BenchmarkEntry(
        "mcic",
        "MCICConfig",
        _no_kwargs,
        truth_in_config=True,
        heading="MCIC-COCO (Ding et al.): pick the true caption of an image among 5",
        inputs=("pv_choice",),
        export_order=2,
        coco_files=("mcic_dev", "mcic_test"),
        coco_config="McicCocoConfig",
        coco_adds_items=True,
    ),
    "cxc": BenchmarkEntry(
        "cxc",
        "CxcConfig",
        _world_cfg_kwargs,
        heading="Crisscrossed Captions (Parekh et al.): graded intra- and inter-modal similarity",
        column_decimals={"MedR": 0},
        modalities=frozenset({"image-text", "text-text", "image-image"}),
        ranks_gallery=True,
        export_order=4,
        coco_files=("eccv_coco_test_ids", *(f"cxc_{t}_{s}" for t in ("sts", "sis", "sits") for s in ("val", "test"))),
        coco_config="CxcCocoConfig",
    ),
    "eccv": BenchmarkEntry(
        "eccv",
        "EccvConfig",
        _eccv_kwargs,
        depends_on=("cxc",),
        takes_annotator_embeddings=True,
        heading="ECCV Caption (Chun et al.): retrieval with machine-and-human-verified positives",
        decimals=2,
        ranks_gallery=True,
        export_order=3,
        coco_files=ECCV_KEYS,
    ),
    "bivlc": BenchmarkEntry(
        "bivlc",
        "BiVLCConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="BiVLC (Miranda et al.): SugarCrepe plus generated hard-negative images",
        decimals=2,
        export_order=5,
        coco_files=("bivlc_sugarcrepe_test", *BIVLC_HF_KEYS),
        coco_config="BivlcCocoConfig",
        coco_adds_items=True,
    ),
    "sugarcrepe": BenchmarkEntry(
        "sugarcrepe",
        "SugarCrepeConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="SugarCrepe (Hsieh et al.): pick the true caption against one hard negative of seven edit types",
        decimals=2,
        export_order=6,
        coco_files=tuple(SUGARCREPE_KEYS.values()),
        coco_config="SugarCrepeCocoConfig",
        coco_adds_items=True,
    ),
    "aro": BenchmarkEntry(
        "aro",
        "AroConfig",
        _no_kwargs,
        adds_items=True,
        truth_in_config=True,
        heading="ARO (Yuksekgonul et al.): relations and attributes swapped, word order perturbed",
        decimals=2,
        export_order=7,
        coco_files=(*ARO_VG_KEYS.values(), ARO_IMAGES_KEY),
        coco_config="AroCocoConfig",
        coco_adds_items=True,
    ),
}


def benchmark(name: str) -> BenchmarkEntry:
    """The registry entry of a benchmark, naming the known ones when it is unknown."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {sorted(BENCHMARKS)}")
    return BENCHMARKS[name]


# Views of the entries, by benchmark: what its tasks compare, and the benchmarks that rank whole galleries.
TASK_MODALITIES: dict[str, frozenset[str]] = {name: b.modalities for name, b in BENCHMARKS.items()}
GALLERY_BENCHMARKS = frozenset(name for name, b in BENCHMARKS.items() if b.ranks_gallery)


@dataclass(frozen=True)
class Paper:
    """One paper: its printed title, the world benchmarks its tables read, the tables and figures the world fills."""

    name: str
    title: str
    benchmarks: tuple[str, ...]
    world_tables: Mapping[str, str] = field(default_factory=dict)  # file stem -> printed table
    world_figures: tuple[str, ...] = ()
    row_headers: Mapping[str, str] = field(default_factory=dict)  # printed table -> row header when not "model"
    # the released files its dataset statistics are regenerated from (its `statistics`; none: it has none)
    statistics_keys: tuple[str, ...] = ()
    # the released files its tables, figures and claims on the released source read
    table_keys: tuple[str, ...] = ()
    # its place in the claims tables' order (its `claims`; 0: it states no claims)
    claims_order: int = 0
    # the predictions formats its `predictions.score` reads (`itmbench score-predictions KIND`)
    prediction_formats: tuple[str, ...] = ()
    # the `score-predictions` options its formats read, as (flag, argparse keywords): data, so that building the
    # CLI's parser imports no paper's package; `itmbench.papers.predictions.run` passes them on
    prediction_options: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    # Figures drawn from files computed from its rated data and scores, not from metrics (figures/<paper>/<stem>.png
    # of the source, and of results/released where the released files allow), and the tables of that kind its
    # report shows (tables/<paper>/<stem>.md): the workflow lists those a rule of the run writes.
    data_figures: tuple[str, ...] = ()
    data_tables: tuple[str, ...] = ()
    # params sections of scorers that are not models (BISON section 6's caption metrics), each run by its own
    # rule: results/<source>/metrics/<section>/<name>.json for each name of the section's `metrics`, read
    # by the paper's world tables
    baselines: tuple[str, ...] = ()
    # the files under results/released/ its package's `released_tables.write(raw, out)` writes from the released files
    # (rule released_paper_tables' outputs, beside the shared claims)
    released_outputs: tuple[str, ...] = ()
    # its rules that a user names to build (docs/outputs.md, "Named targets"), for their CPU time: rule -> the coverage
    # items it regenerates; the default run leaves them out (the index names those items without a link)
    named_targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # its package has a `commands` module whose `add_commands(add, sub)` registers its own `itmbench` subcommands
    # (its figures' and tables' computing and drawing, its sweeps): the CLI lists them through the registry
    commands: bool = False

    @property
    def has_statistics(self) -> bool:
        """Whether its dataset statistics are regenerated from its released files."""
        return bool(self.statistics_keys)

    def part(self, name: str) -> ModuleType:
        """A part of the paper's package (``itmbench.papers.<paper>.<name>``), imported on first use."""
        return package_part(self.name, name)

    def add_commands(self, add, sub) -> None:
        """Register its own subcommands (its `commands` part's `add_commands`; none when it has none)."""
        if self.commands:
            self.part("commands").add_commands(add, sub)


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
        named_targets={"bison_table6": ("Table 6",)},  # six captioner trainings (papers/bison/feature_captioners.py)
        claims_order=5,
        prediction_formats=("bison",),
        prediction_options=(
            ("--annotations", {"default": None, "help": "bison: the annotation JSON or a canonical table"}),
            (
                "--bison-missing",
                {"choices": ["error", "wrong"], "default": "error", "help": "bison: a triple without a prediction"},
            ),
        ),
        commands=True,
    ),
    "mcic": Paper(
        "mcic",
        "MCIC-COCO",
        ("mcic",),
        {"table3": "Table 3"},
        ("accuracy",),
        statistics_keys=("mcic_dev", "mcic_test"),
        table_keys=("mcic_dev", "mcic_test"),
        data_tables=("pv_search", "lambda_search", "table4", "table5", "paired"),
        claims_order=4,
        commands=True,
    ),
    "eccv": Paper(
        "eccv",
        "ECCV Caption",
        ("eccv",),
        {"table4": "Table 4", "table5": "Table 5"},
        ("ranking",),
        row_headers={"Table 5": "metric"},
        statistics_keys=tuple(
            f"eccv_{src}_{d}" for src in ("eccv", "cxc", "original") for d in ("image_to_caption", "caption_to_image")
        ),
        data_figures=("figure3", "figure5", "figureE2", "figureE3"),
        data_tables=("figure3", "tableA1", "tableB2", "tableE1", "figureE2", "figureE3", "figure5"),
        claims_order=2,
        commands=True,
        released_outputs=tuple(
            f"tables/eccv/{stem}.{ext}" for stem in ("table5", "section41") for ext in ("csv", "md", "tex")
        ),
    ),
    "bivlc": Paper(
        "bivlc",
        "BiVLC",
        ("bivlc",),
        {"table2": "Table 2", "table3": "Table 3", "table4": "Table 4"},
        ("scores",),
        statistics_keys=(
            *SUGARCREPE_KEYS.values(),
            "bivlc_sugarcrepe_test",
            "bivlc_results_vit_b_32",
        ),
        table_keys=(
            *(f"bivlc_results_{m}" for m in BIVLC_MODELS),
            *(f"bivlc_sugarcrepe_correct_{m}" for m in BIVLC_MODELS),
            *(f"bivlc_detector_{bench}_{d}" for bench in ("bivlc", "sugarcrepe") for d in ("baseline", "trohn_img")),
        ),
        data_figures=("figure4",),  # the positive pair's margins per model (report.bivlc_figure4)
        data_tables=("paired", "figure4"),  # model pairs tested over the same instances (report.bivlc_paired)
        claims_order=1,
        prediction_formats=("bivlc",),
        commands=True,
        released_outputs=(
            *(
                f"tables/bivlc/{stem}_released.{ext}"
                for stem in ("table2", "table3", "table4", "table5", "section5_3", "paired")
                for ext in ("csv", "md", "tex")
            ),
            *(f"figures/bivlc/gpt4v_sugarcrepe.{ext}" for ext in ("png", "pdf")),
        ),
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
        statistics_keys=tuple(f"cxc_{t}_{s}" for t in ("sts", "sis", "sits") for s in ("val", "test")),
        data_figures=("figure3", "figure4", "figure5", "appendix_figure2"),
        data_tables=("table1", "figure5"),
        claims_order=3,
        commands=True,
    ),
    # SugarCrepe's statistics (Table 1 of BiVLC) are BiVLC's: papers/bivlc/statistics.py reads its files
    "sugarcrepe": Paper(
        "sugarcrepe",
        "SugarCrepe",
        ("sugarcrepe",),
        {"table3": "BiVLC Table 3"},
        ("subtypes",),
        data_tables=("paired",),
        table_keys=tuple(
            f"sugarcrepe_gpt4v_{order}_{s}"
            for order in ("positive_first", "negative_first")
            for s in SUGARCREPE_SUBSETS
        ),
        claims_order=6,
        prediction_formats=("sugarcrepe_gpt4v",),
    ),
    "aro": Paper(
        "aro",
        "ARO",
        ("aro",),
        {"results": "Results", "relations": "VG-Relation per relation"},
        ("sets",),
        claims_order=7,
    ),
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
# `predictions.score`), a view of the papers' `prediction_formats`; `ranked` (ranked lists against positives)
# is the shared engine's own.
PREDICTION_FORMATS: dict[str, str] = {f: name for name, p in PAPERS.items() for f in p.prediction_formats}


def prediction_paper(kind: str) -> str:
    """The paper whose package scores a predictions format, naming the known formats when it is unknown."""
    if kind not in PREDICTION_FORMATS:
        raise ValueError(f"unknown prediction kind {kind!r}; expected ranked or one of {sorted(PREDICTION_FORMATS)}")
    return PREDICTION_FORMATS[kind]


def named_target_items() -> dict[tuple[str, str], str]:
    """(paper, coverage item) -> the named target that regenerates it, outside the default run."""
    return {(p.name, item): rule for p in PAPERS.values() for rule, items in p.named_targets.items() for item in items}
