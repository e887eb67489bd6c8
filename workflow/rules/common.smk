# Config validation, the source's models and paths, and the input functions of the core rules (no lambdas in rules); each other part of the DAG has its helpers in workflow/rules/helpers/.
import json
import re
import os
import shlex


from itmbench.models.capabilities import capability
from itmbench.sources.coco_registry import COCO_BENCHMARKS
from itmbench.papers.registry import BENCHMARKS, PAPERS as PAPER_ENTRIES
from itmbench.sources.fetch import PAPER_TABLE_KEYS, STATISTICS_KEYS, raw_path
from itmbench.sources.released import load_registry
from itmbench.params import check_config, check_schema, coco_model_specs, fill_config, load_yaml
from itmbench.world.calibration import CALIBRATION_BENCHES, CALIBRATION_RELEASED
from itmbench.allocator import job_environment

# glibc's allocator keeps the memory a job frees for its next arrays instead of returning it to the kernel
# (itmbench.allocator): less system time, the same results. Every job and the warm worker inherit the setting.
job_environment(os.environ)


# Snakemake's `configfile:` keeps the last of a repeated key: read each config file again, refusing them.
for configfile_path in workflow.configfiles:
    load_yaml(configfile_path)
check_schema(config)  # the schema's complaints in one line each, naming the dotted key
fill_config(config)  # the defaults of the schema and of params.yaml, as validate(..., set_default=True) fills them
check_config(config)  # what the schema cannot state: NaN/infinity, cross-field constraints, nested sections

# A plain `dvc pull` is enough: the shared files whose content has the md5 that `itmbench share` recorded get
# the producer's modification times back (docs/dvc.md; cheap once done: a marker holds the manifest's hash).
if workflow.is_main_process and os.path.exists("dvc/mtimes.json"):
    from itmbench.share import restore_mtimes

    restore_mtimes()

SOURCE = config["source"]
DATA = f"data/{SOURCE}"
RESULTS = f"results/{SOURCE}"
# Threads of the model jobs (train, embed, pair scoring). The world's models are tiny: two one-thread
# trainings side by side train 1.6x the pairs/s of one two-thread training (measured: 479 vs 590
# pairs/s per job), and a fixed count keeps the results byte-identical on any machine (float
# reductions depend on the thread count). The COCO source's pretrained ViTs use every core (or a GPU).
# `coco.threads` sets them on COCO (1: each job in the warm worker, as the small models' DAG runs them).
COCO_THREADS = config["coco"].get("threads")
MODEL_THREADS = 1 if SOURCE == "world" else (COCO_THREADS or workflow.cores)
# The models of the source: the world's section `models`, or `coco.models` (pretrained and fine-tuned), only
# those `coco.only_models` names when it is set (a user's checkpoint scored alone: docs/coco.md).
MODEL_SPECS = config["models"] if SOURCE == "world" else coco_model_specs(config)
MODELS = sorted(MODEL_SPECS)
TRAINED = sorted(m for m, spec in MODEL_SPECS.items() if spec.get("trainer"))
# The benchmarks of the source: every registered one in the world; on COCO those with a COCO loader
# (sources.coco_benchmarks), a world-only benchmark (one whose released files are not mapped onto COCO) left out.
WORLD_BENCHMARKS = sorted(b for b in BENCHMARKS if SOURCE == "world" or b in COCO_BENCHMARKS)
ADDING_BENCHMARKS = (
    sorted(name for name, entry in BENCHMARKS.items() if entry.adds_items)
    if SOURCE == "world"
    else sorted(name for name in COCO_BENCHMARKS if BENCHMARKS[name].coco_adds_items)
)
NOTEBOOKS = "workflow/notebooks"
ENV = "../envs/itmbench.yaml"  # a rule's conda environment, relative to its .smk file in workflow/rules/
PAPER_ENV = "../../envs/itmbench.yaml"  # the same file, for the rules in workflow/rules/papers/
RAW = "data/raw"
MIRROR = config.get("mirror") or ""
REGISTRY = config.get("registry") or ""
STATISTICS_PAPERS = sorted(STATISTICS_KEYS)
RELEASED_PATHS = {str(rf.mirror_path): key for key, rf in load_registry().items()}
# The released source's report (papers' released results: statistics, paper tables, figures) joins the
# run when a mirror holds its files: any mirror of the real files, but not a release whose registry overlay
# declares only some of them (`itmbench export-release` writes the world's benchmarks, not the papers' results).
RELEASED_KEYS = sorted({k for keys in STATISTICS_KEYS.values() for k in keys} | set(PAPER_TABLE_KEYS))
RELEASED_REPORT = bool(MIRROR) and (not REGISTRY or set(RELEASED_KEYS) <= set(load_registry(REGISTRY)))

# The captioning metrics the papers' baselines score (registry Paper.baselines: a params section each, its `metrics`).
BASELINE_METRICS = [m for p in PAPER_ENTRIES.values() for s in p.baselines for m in config[s]["metrics"]]


wildcard_constraints:
    model="|".join(MODELS),
    trained="|".join(TRAINED) if TRAINED else "__none__",
    bench="|".join(WORLD_BENCHMARKS),
    added="|".join(ADDING_BENCHMARKS) if ADDING_BENCHMARKS else "__none__",
    paper="|".join(STATISTICS_PAPERS),
    released_path="|".join(re.escape(p) for p in RELEASED_PATHS),
    caption_metric="|".join(BASELINE_METRICS) or "__none__",


def section_json(name):
    """One params.yaml section as canonical JSON: the jobs that read it rerun when it changes."""
    return json.dumps(config[name], sort_keys=True)


def get_world_params(wildcards):
    return section_json("world")


def get_train_params(wildcards):
    """The train section, with the world's relation margin (the hard negatives' truth) never set twice."""
    return json.dumps({**config["train"], "relation_margin": config["world"]["relation_margin"]}, sort_keys=True)


def get_score_params(wildcards):
    return section_json("score")


def spec_json(name):
    """A model's spec as a job's params, without `benchmarks`: where a model is scored does not change what it
    computes, so adding a benchmark to it scores it there and retrains or re-embeds nothing."""
    return json.dumps({k: v for k, v in MODEL_SPECS[name].items() if k != "benchmarks"}, sort_keys=True)


def get_model_spec(wildcards):
    return spec_json(wildcards.model)


def get_trained_spec(wildcards):
    return spec_json(wildcards.trained)


def get_checkpoint(wildcards):
    """A trained model's checkpoint; a model used as built: its `pretrained` when that is a local checkpoint file
    (a user's own weights: its embeddings are redone when the file changes), else nothing (random, hub weights)."""
    if wildcards.model in TRAINED:
        return f"{RESULTS}/models/{wildcards.model}/model.pt"
    pretrained = MODEL_SPECS[wildcards.model].get("pretrained")
    if pretrained and os.path.isfile(pretrained):
        return pretrained
    return []


def get_checkpoint_flag(wildcards, input):
    return f"--checkpoint {input.checkpoint}" if input.get("checkpoint") else ""


def get_embed_inputs(wildcards):
    """What the embedding of a source's items reads: the world's items, or COCO's and the list of needed ones."""
    if SOURCE == "world":
        return {
            "images": f"{DATA}/items/images.npy",
            "image_table": f"{DATA}/items/images.parquet",
            "captions": f"{DATA}/items/captions.parquet",
        }
    return {
        "image_table": f"{DATA}/items/images.parquet",
        "captions": f"{DATA}/items/captions.parquet",
        "needed": f"{DATA}/needed_items.parquet",
    }


def get_embed_selection(wildcards, input):
    """Which items to embed: every item of the evaluated world splits, or the COCO items some benchmark needs."""
    if SOURCE == "world":
        return f"--splits {get_embed_splits()}"
    return f"--needed {input.needed}"


def get_items_images(wildcards):
    """The source's image file(s) a report shows examples from."""
    return f"{DATA}/items/images.npy" if SOURCE == "world" else f"{DATA}/items/images.parquet"


def get_bench_audit(wildcards):
    """The audit against the complete truth: the world's only (COCO has no scene graphs)."""
    return f"{RESULTS}/tables/{wildcards.bench}/audit.csv" if SOURCE == "world" else []


def get_embed_splits():
    """The world splits any benchmark evaluates on (each registered benchmark's `split`, or the values of its
    `splits`): their items are embedded once per model."""
    splits = set()
    for name in WORLD_BENCHMARKS:
        section = config[name]
        chosen = section.get("splits", [section["split"]] if "split" in section else [])
        splits |= set(chosen.values() if isinstance(chosen, dict) else chosen)
    return " ".join(sorted(splits))


# In the world a training job also writes its model's embeddings of the items (models.smk: one
# process, one model load); rule `embed` writes those of the models used as built (and every
# model's on the COCO source, whose items are the ones some benchmark needs, not the world's).
# A cross scorer (coca) gives no embeddings: rule train_cross_scorer trains it without.
TRAIN_EMBEDDINGS = {"embeddings": f"{RESULTS}/embeddings/{{trained}}/items.npz"} if SOURCE == "world" else {}
_CROSS_TRAINED = [m for m in TRAINED if TRAIN_EMBEDDINGS and capability(MODEL_SPECS[m]["family"]).cross]
TRAINED_CROSS = [m for m in _CROSS_TRAINED if not capability(MODEL_SPECS[m]["family"]).needs_upstream]
TRAINED_EMBEDDING = [m for m in TRAINED if m not in _CROSS_TRAINED]  # option scorers: rule train_ffnn
EMBEDDED_BY_EMBED = [m for m in MODELS if not (TRAIN_EMBEDDINGS and m in TRAINED)]


def get_train_embed_flag(wildcards, output):
    """A training job's own embedding of the world's items (TRAIN_EMBEDDINGS), or nothing."""
    if "embeddings" not in output.keys():
        return ""
    return f"--embed-out {output.embeddings} --embed-splits {get_embed_splits()}"


def get_added_items_dir(wildcards, input):
    """The folder of new items a benchmark added (registry `adds_items`: generated images and edited captions)."""
    return os.path.join(os.path.dirname(input.bench), "extra_items")


def get_bench_embeddings(wildcards):
    """A model's cache files a benchmark reads: the world's items, plus the items it added itself."""
    files = [f"{RESULTS}/embeddings/{wildcards.model}/items.npz"]
    if wildcards.bench in ADDING_BENCHMARKS:
        files.append(f"{RESULTS}/embeddings/{wildcards.model}/{wildcards.bench}.npz")
    return files


def get_bench_params(wildcards):
    """The params a benchmark's build reads: its paper's BUILD_SECTIONS, else its params section."""
    if wildcards.bench in BUILD_SECTIONS:
        return json.dumps(BUILD_SECTIONS[wildcards.bench](), sort_keys=True)
    return section_json(wildcards.bench)


def get_bench_deps(wildcards):
    """The items file of each benchmark this one builds on (registry `depends_on`)."""
    return [f"{DATA}/{dep}/items.parquet" for dep in BENCHMARKS[wildcards.bench].depends_on]


def get_bench_dep_flags(wildcards):
    """The build's flags for what it reads besides the world: `--dep` for each benchmark it builds on, `--input`
    for each file an earlier step chose for it (registry `inputs`). One parameter, so that adding the second kind
    left build_benchmark's shell as it was: a changed shell reruns every benchmark's build, and all after it."""
    deps = [f"--dep {dep}={DATA}/{dep}" for dep in BENCHMARKS[wildcards.bench].depends_on]
    return " ".join(deps + [get_bench_input_flags(wildcards)]).strip()


def get_bench_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.bench}/{{model}}.json", model=scored_models(wildcards.bench))


def rerank_note(bench):
    """A gallery table's title says which cross scorers re-rank a shortlist (their ranks past k are the shortlist's)."""
    if bench not in GALLERY_BENCHMARKS or not GALLERY_CROSS:
        return ""
    if SHORTLIST is None:
        return f"; {', '.join(GALLERY_CROSS)} score every caption x image pair"
    return f"; {', '.join(GALLERY_CROSS)} re-rank {SHORTLIST}'s top {SHORTLIST_K} per query"


def interval_level():
    """The interval level the score jobs compute (params.yaml score.confidence), as a table title says it."""
    return f"{100 * config['score']['confidence']:g}% intervals"


def get_bench_title(wildcards):
    """A benchmark's table title (the registry's `table_title`), with its interval level and re-ranking."""
    bench = wildcards.bench
    return BENCHMARKS[bench].table_title.format(
        name=bench, split=config[bench].get("split", ""), intervals=f"{interval_level()}{rerank_note(bench)}"
    )


def get_bench_notebook(wildcards):
    """The notebook a benchmark's report runs (the registry's `report_notebook`)."""
    return f"{NOTEBOOKS}/{BENCHMARKS[wildcards.bench].report_notebook}.ipynb"


def get_bench_report_images(wildcards):
    """The source's items a report may show examples of."""
    return get_items_images(wildcards)


def report_pages():
    """Every report with its name in the reports' navigation: the source's, and the released source's when a mirror
    holds its files (RELEASED_REPORT)."""
    pages = [(BENCHMARKS[bench].report_label(), f"reports/{SOURCE}/{bench}.html") for bench in WORLD_BENCHMARKS]
    if RELEASED_REPORT:
        pages.append(("released files", "reports/released/released.html"))
    return pages


def get_reports(wildcards):
    """Every report: the world's, and the released source's when a mirror is set."""
    return [path for _, path in report_pages()]


def get_report_nav(wildcards):
    """`--nav LABEL=PATH` for the index and every report: the links at the top of each report."""
    pages = [("index", "reports/index.html"), *report_pages()]
    options = [f"{label}={path}" for label, path in pages]
    return " ".join(f"--nav {shlex.quote(option)}" for option in options)


def get_bench_report_title(wildcards):
    """A report's title: its benchmark's heading (the paper and its task) and the source."""
    return f"{BENCHMARKS[wildcards.bench].heading} ({SOURCE})"


def dir_of_input(key):
    """A param function giving the folder of input file `key` (lint: no hard-coded prefixes)."""

    def _dir(wildcards, input):
        return os.path.dirname(input[key])

    _dir.__name__ = f"get_dir_of_input_{key}"
    return _dir


def dir_of_output(key):
    """A param function giving the folder of output file `key`."""

    def _dir(wildcards, output):
        return os.path.dirname(output[key])

    _dir.__name__ = f"get_dir_of_output_{key}"
    return _dir


def get_released_key(wildcards):
    return RELEASED_PATHS[wildcards.released_path]


def get_mirror_flag(wildcards):
    return f"--mirror {MIRROR}" if MIRROR else ""


def get_registry_flag(wildcards):
    """`--registry FILE` when a registry overlay declares the released files (a world release's md5s and counts)."""
    return f"--registry {REGISTRY}" if REGISTRY else ""


def get_statistics_inputs(wildcards):
    return [str(raw_path(key, RAW)) for key in STATISTICS_KEYS[wildcards.paper]]


def get_paper_table_inputs(wildcards):
    return [str(raw_path(key, RAW)) for key in PAPER_TABLE_KEYS]


def get_released_targets():
    """The released source's statistics: each paper's dataset statistics from the released files."""
    return expand("results/released/tables/statistics/{paper}.md", paper=STATISTICS_PAPERS)


def get_all_targets(wildcards):
    """The default run: the reports (and their index), the claims table of the source and the world's calibration."""
    calibration = [f"{RESULTS}/tables/world/calibration.md"] if SOURCE == "world" else []
    return ["reports/index.html", f"{RESULTS}/tables/claims/claims.md", *calibration]


# The world's calibration reads its benchmarks' tables and, with a mirror, its released files (itmbench.world.calibration's
# CALIBRATION_BENCHES and CALIBRATION_RELEASED).


def get_calibration_benches(wildcards):
    return [f"{DATA}/{b}/items.parquet" for b in CALIBRATION_BENCHES if b in WORLD_BENCHMARKS]


def get_calibration_bench_flags(wildcards):
    return " ".join(f"--bench {b}={DATA}/{b}" for b in CALIBRATION_BENCHES if b in WORLD_BENCHMARKS)


def get_calibration_released(wildcards):
    """The released files COCO's values are computed from (a mirror's); without one the papers' printed values."""
    return [str(raw_path(key, RAW)) for key in CALIBRATION_RELEASED] if RELEASED_REPORT else []


def get_calibration_raw_flag(wildcards):
    return f"--raw {RAW}" if RELEASED_REPORT else ""


def get_bench_report_parameters(wildcards):
    """The notebook's parameters: where its benchmark's files are (it computes nothing expensive)."""
    tables = f"{RESULTS}/tables/{wildcards.bench}"
    parameters = {
        "source": SOURCE,
        "benchmark": wildcards.bench,
        "heading": BENCHMARKS[wildcards.bench].heading,
        "table": f"{tables}/{wildcards.bench}.csv",
        "table_md": f"{tables}/{wildcards.bench}.md",
        "items_dir": f"{DATA}/items",
        "audit_md": f"{tables}/audit.md" if SOURCE == "world" else "",
        "metrics": [f"{RESULTS}/metrics/{wildcards.bench}/{m}.json" for m in scored_models(wildcards.bench)],
        "bench_dir": f"{DATA}/{wildcards.bench}",
        "paper_tables": get_bench_world_tables(wildcards),
        "figures": get_bench_world_figures(wildcards),
        "claims_md": get_bench_claims(wildcards) or "",
    }
    generators = get_bench_report_generators(wildcards)
    if generators:
        parameters.update(generators_md=generators[0], generators_png=generators[1])
    return json.dumps(parameters, sort_keys=True)


def get_metrics_root(wildcards, input):
    """results/<source>/metrics, from the metrics files the rule reads."""
    return os.path.dirname(os.path.dirname(input[0]))


def get_released_root(wildcards, output):
    """results/released, from the tables the rule writes."""
    return os.path.dirname(os.path.dirname(os.path.dirname(output.claims[0])))


def get_model_kinds():
    """What each model is, for the claims: a text-only dual encoder (de_t2t) is no image-text model."""
    kinds = {}
    for name, spec in MODEL_SPECS.items():
        if spec.get("trainer") == "de_t2t":
            kinds[name] = "other"
        else:
            kinds[name] = capability(spec["family"]).kind  # contrastive, chance, generative (coca), other
    return json.dumps(kinds, sort_keys=True)


# The input functions of each part of the DAG, one file per part (workflow/rules/helpers/).
include: "helpers/coco.smk"
include: "helpers/papers.smk"
include: "helpers/negatives.smk"
include: "helpers/cross.smk"
include: "helpers/index.smk"
