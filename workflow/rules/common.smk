# Helpers: config validation, the model registry view, and named input functions (no lambdas in rules).
import json
import re
import os

from snakemake.utils import validate

from itmbench.benchmarks.coco import COCO_BENCHMARKS
from itmbench.benchmarks.registry import BENCHMARKS
from itmbench.sources.fetch import PAPER_TABLE_KEYS, STATISTICS_KEYS, raw_path
from itmbench.sources.released import load_registry


validate(config, schema="../schemas/params.schema.yaml", set_default=True)

SOURCE = config["source"]
DATA = f"data/{SOURCE}"
RESULTS = f"results/{SOURCE}"
# Threads of the model jobs (train, embed, pair scoring). The world's models are tiny: two one-thread
# trainings side by side train 1.6x the pairs/s of one two-thread training (measured: 479 vs 590
# pairs/s per job), and a fixed count keeps the results byte-identical on any machine (float
# reductions depend on the thread count). The COCO source's pretrained ViTs use every core (or a GPU).
MODEL_THREADS = 1 if SOURCE == "world" else workflow.cores
# The models of the source: the world's section `models`, or `coco.models` (pretrained and fine-tuned).
MODEL_SPECS = config["models"] if SOURCE == "world" else config["coco"]["models"]
MODELS = sorted(MODEL_SPECS)
TRAINED = sorted(m for m, spec in MODEL_SPECS.items() if spec.get("trainer"))
RETRIEVAL_BENCHMARKS = ["retrieval"]
WORLD_BENCHMARKS = sorted(BENCHMARKS)
ADDING_BENCHMARKS = (
    sorted(name for name, entry in BENCHMARKS.items() if entry.adds_items)
    if SOURCE == "world"
    else sorted(config["coco"]["adds_items"])
)
NOTEBOOKS = "workflow/notebooks"
ENV = "../envs/itmbench.yaml"
RAW = "data/raw"
MIRROR = config.get("mirror") or ""
STATISTICS_PAPERS = sorted(STATISTICS_KEYS)
RELEASED_PATHS = {str(rf.mirror_path): key for key, rf in load_registry().items()}


wildcard_constraints:
    model="|".join(MODELS),
    trained="|".join(TRAINED) if TRAINED else "__none__",
    benchmark="|".join(RETRIEVAL_BENCHMARKS),
    bench="|".join(WORLD_BENCHMARKS),
    added="|".join(ADDING_BENCHMARKS) if ADDING_BENCHMARKS else "__none__",
    paper="|".join(STATISTICS_PAPERS),
    released_path="|".join(re.escape(p) for p in RELEASED_PATHS),


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


def get_model_spec(wildcards):
    return json.dumps(MODEL_SPECS[wildcards.model], sort_keys=True)


def get_trained_spec(wildcards):
    return json.dumps(MODEL_SPECS[wildcards.trained], sort_keys=True)


def get_checkpoint(wildcards):
    """A trained model's checkpoint, or nothing for a model used as built (random, pretrained)."""
    if wildcards.model in TRAINED:
        return f"{RESULTS}/models/{wildcards.model}/model.pt"
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
    """The world splits any benchmark evaluates on: their items are embedded once per model."""
    splits = {config["retrieval"]["split"], config["bison"]["split"], config["eccv"]["split"], config["bivlc"]["split"]}
    splits |= set(config["mcic"]["splits"].values()) | set(config["cxc"]["splits"])
    return " ".join(sorted(splits))


def get_added_items_dir(wildcards, input):
    """The folder of new items a benchmark added (BiVLC's generated images and edited captions)."""
    return os.path.join(os.path.dirname(input.bench), "extra_items")


def get_bench_embeddings(wildcards):
    """A model's cache files a benchmark reads: the world's items, plus the items it added itself."""
    files = [f"{RESULTS}/embeddings/{wildcards.model}/items.npz"]
    if wildcards.bench in ADDING_BENCHMARKS:
        files.append(f"{RESULTS}/embeddings/{wildcards.model}/{wildcards.bench}.npz")
    return files


def get_bench_params(wildcards):
    if wildcards.bench == "bivlc":
        return json.dumps(bivlc_build_section(), sort_keys=True)
    return section_json(wildcards.bench)


def get_bench_deps(wildcards):
    """The items file of each benchmark this one builds on (ECCV unions CxC's positives)."""
    return [f"{DATA}/{dep}/items.parquet" for dep in BENCHMARKS[wildcards.bench].depends_on]


def get_bench_dep_flags(wildcards):
    return " ".join(f"--dep {dep}={DATA}/{dep}" for dep in BENCHMARKS[wildcards.bench].depends_on)


def get_bench_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.bench}/{{model}}.json", model=scored_models(wildcards.bench))


def rerank_note(bench):
    """A gallery table's title says which cross scorers re-rank a shortlist (their ranks past k are the shortlist's)."""
    if bench not in GALLERY_BENCHMARKS or not GALLERY_CROSS:
        return ""
    if SHORTLIST is None:
        return f"; {', '.join(GALLERY_CROSS)} score every caption x image pair"
    return f"; {', '.join(GALLERY_CROSS)} re-rank {SHORTLIST}'s top {SHORTLIST_K} per query"


def get_bench_title(wildcards):
    return f"{wildcards.bench} in the world: every model (%, 95% intervals{rerank_note(wildcards.bench)})"


def get_retrieval_title(wildcards):
    return (
        "COCO-style retrieval on the world's test split: R@K (%) and median rank, "
        f"95% intervals{rerank_note(wildcards.benchmark)}"
    )


def get_retrieval_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.benchmark}/{{model}}.json", model=scored_models(wildcards.benchmark))


def get_retrieval_report():
    return f"reports/{SOURCE}/retrieval.html"


def get_reports(wildcards):
    """Every report: the world's, and the released source's when a mirror is set."""
    reports = [get_retrieval_report(), *expand(f"reports/{SOURCE}/{{bench}}.html", bench=WORLD_BENCHMARKS)]
    if MIRROR:
        reports.append("reports/released/released.html")
    return reports


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


def get_statistics_inputs(wildcards):
    return [str(raw_path(key, RAW)) for key in STATISTICS_KEYS[wildcards.paper]]


def get_paper_table_inputs(wildcards):
    return [str(raw_path(key, RAW)) for key in PAPER_TABLE_KEYS]


def get_released_targets():
    """The released source's statistics: each paper's dataset statistics from the released files."""
    return expand("results/released/tables/statistics/{paper}.md", paper=STATISTICS_PAPERS)


def get_all_targets(wildcards):
    """The default run: the reports (and their index) and the claims table of the source."""
    return ["reports/index.html", f"{RESULTS}/tables/claims/claims.md"]


def get_bench_report_parameters(wildcards):
    """The notebook's parameters: where its benchmark's files are (it computes nothing expensive)."""
    tables = f"{RESULTS}/tables/{wildcards.bench}"
    parameters = {
        "source": SOURCE,
        "benchmark": wildcards.bench,
        "table_md": f"{tables}/{wildcards.bench}.md",
        "audit_md": f"{tables}/audit.md" if SOURCE == "world" else "",
        "metrics": [f"{RESULTS}/metrics/{wildcards.bench}/{m}.json" for m in scored_models(wildcards.bench)],
        "bench_dir": f"{DATA}/{wildcards.bench}",
        "paper_tables": get_bench_world_tables(wildcards),
        "figures": get_bench_world_figures(wildcards),
        "claims_md": get_bench_claims(wildcards),
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
    return os.path.dirname(os.path.dirname(os.path.dirname(output.bivlc[0])))


def get_model_kinds():
    """What each model is, for the claims: a text-only dual encoder (de_t2t) is no image-text model."""
    kinds = {}
    for name, spec in MODEL_SPECS.items():
        if spec.get("trainer") == "de_t2t":
            kinds[name] = "other"
        else:
            kinds[name] = capability(spec["family"]).kind  # contrastive, chance, generative (coca), other
    return json.dumps(kinds, sort_keys=True)


# --- the coco source --------------------------------------------------------------------------------

def raw_file(key):
    """Where the data registry puts a released file (data/raw/<host>/<url path>)."""
    return str(raw_path(key, RAW))


def get_coco_bench_files(wildcards):
    """The released files a COCO benchmark's build reads (declared by its entry in benchmarks/coco.py)."""
    name = wildcards.get("bench", "retrieval")
    return [raw_file(key) for key in COCO_BENCHMARKS[name].released_keys]


def get_coco_bench_params(wildcards):
    """The benchmark's own `coco_benchmarks` settings (id offsets of added items...)."""
    return json.dumps(config["coco_benchmarks"][wildcards.get("bench", "retrieval")], sort_keys=True)


def get_coco_bench_item_tables(wildcards):
    return [f"{DATA}/retrieval/items.parquet", *expand(f"{DATA}/{{bench}}/items.parquet", bench=WORLD_BENCHMARKS)]


def get_coco_llm_params(wildcards):
    return json.dumps(config["coco"]["llm"], sort_keys=True)


def get_coco_sdxl_params(wildcards):
    return json.dumps(config["coco"]["sdxl"], sort_keys=True)


def get_coco_train_params(wildcards):
    return json.dumps(config["coco"]["train"], sort_keys=True)


def get_finetune_inputs(wildcards):
    """A fine-tuning's inputs: the COCO items, plus the TROHN negatives its recipe reads."""
    trainer = MODEL_SPECS[wildcards.trained]["trainer"]
    inputs = {"images": f"{DATA}/items/images.parquet", "captions": f"{DATA}/items/captions.parquet"}
    if trainer in ("negclip", "trohn_img"):
        inputs["negatives"] = f"{RESULTS}/negatives/text/negatives.parquet"
    if trainer == "trohn_img":
        inputs["manifests"] = expand(
            f"{RESULTS}/negatives/images/shard_{{image_shard}}/manifest.parquet",
            image_shard=range(config["coco"]["sdxl_shards"]),
        )
    return inputs


def get_finetune_flags(wildcards, input):
    flags = f"--negatives {input.negatives}" if input.get("negatives") else ""
    if input.get("manifests"):
        flags += f" --negative-images {os.path.dirname(os.path.dirname(input.manifests[0]))}"
    return flags


# --- the papers' tables and figures filled from the world (workflow/rules/papers.smk) ---------------

from itmbench.papers.world import PAPER_BENCHMARKS, PAPER_TITLES, world_table_paths
from itmbench.papers.world_figures import world_figure_paths
from snakemake.io import report as snakemake_report

WORLD_PAPERS = sorted(PAPER_BENCHMARKS)


def get_world_paper_metrics(paper):
    """The metrics files a paper's world tables read (BISON also reads the retrieval benchmark's)."""
    return [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAPER_BENCHMARKS[paper] for m in scored_models(b)]


def get_world_figure_metrics(paper):
    """The metrics files a paper's world figures read: its own benchmark's."""
    return [f"{RESULTS}/metrics/{paper}/{m}.json" for m in scored_models(paper)]


def get_report_rows(paper):
    """params.yaml report.rows.<paper> as canonical JSON (world model -> printed row)."""
    return json.dumps(config["report"]["rows"].get(paper, {}), sort_keys=True)


def get_report_table_options(paper):
    """The report options a paper's tables read (only BISON's Table 1 reads one)."""
    options = {"bison_table1_model": config["report"]["bison_table1_model"]} if paper == "bison" else {}
    return json.dumps(options, sort_keys=True)


def flag_report(path, caption, category, subcategory):
    """An output flagged for `snakemake --report` (a named helper: `report(` opens a directive in .smk files)."""
    return snakemake_report(path, caption=caption, category=category, subcategory=subcategory)


def get_world_table_outputs(paper):
    """A paper's world tables (CSV, Markdown, LaTeX), flagged for `snakemake --report`."""
    caption = f"../report/{paper}.rst"
    return [flag_report(path, caption, PAPER_TITLES[paper], "tables") for path in world_table_paths(paper, f"{RESULTS}/tables/{paper}")]


def get_world_figure_outputs(paper):
    """A paper's world figures (PNG, PDF), flagged for `snakemake --report`."""
    caption = f"../report/{paper}.rst"
    return [flag_report(path, caption, PAPER_TITLES[paper], "figures") for path in world_figure_paths(paper, f"{RESULTS}/figures/{paper}")]


def get_first_output_dir(wildcards, output):
    """The folder of a rule's first output (where a paper's tables or figures go)."""
    return os.path.dirname(output[0])


def get_bench_world_tables(wildcards):
    """The Markdown of a paper's world tables, for its report."""
    return [p for p in world_table_paths(wildcards.bench, f"{RESULTS}/tables/{wildcards.bench}") if p.endswith(".md")]


def get_bench_world_figures(wildcards):
    """The PNG of a paper's world figures, for its report."""
    return [p for p in world_figure_paths(wildcards.bench, f"{RESULTS}/figures/{wildcards.bench}") if p.endswith(".png")]


def get_bench_claims(wildcards):
    """A paper's claims checked on the source's metrics, for its report."""
    return f"{RESULTS}/tables/claims/{wildcards.bench}.md"


# --- negative generators (workflow/rules/negatives.smk) ---------------------------------------------
from itmbench.benchmarks.bivlc import DIFFUSION_ONLY_KEYS, NOT_GENERATION_KEYS

BIVLC_GENERATOR = config["bivlc"]["generator"]
GENERATOR_MODELS = f"{RESULTS}/models"
BIVLC_CANDIDATES = f"{DATA}/bivlc_candidates"
FILTER_RATES = f"{RESULTS}/tables/bivlc/generators"
FILTER_SAMPLE = f"{RESULTS}/generators/bivlc"
NEGATIVES_FIGURE = f"{RESULTS}/figures/bivlc/generated_negatives.png"


def bivlc_build_section():
    """The bivlc section a build reads: without the diffusion keys under render, with the candidates folder else."""
    section = dict(config["bivlc"])
    if BIVLC_GENERATOR == "render":
        for key in DIFFUSION_ONLY_KEYS:
            section.pop(key, None)
    else:
        section["candidates"] = BIVLC_CANDIDATES
    return section


def get_bench_generated(wildcards):
    """The pregenerated candidate images a BiVLC build reads (only when its generator is not the renderer)."""
    if wildcards.bench == "bivlc" and BIVLC_GENERATOR != "render":
        return [f"{BIVLC_CANDIDATES}/candidates.parquet", f"{BIVLC_CANDIDATES}/images.npy"]
    return []


def get_bivlc_generation_params(wildcards):
    """The bivlc keys generation reads (not the annotators', the renderer's or the final ids'): they alone rerun it."""
    section = {k: v for k, v in config["bivlc"].items() if k not in NOT_GENERATION_KEYS}
    return json.dumps(section, sort_keys=True)


def get_filter_rate_params(wildcards):
    """Both generators' and both filters' keys of bivlc, and the sample (in_report only changes the report's inputs)."""
    section = {k: v for k, v in config["bivlc"].items() if k != "candidates"}
    return json.dumps(section, sort_keys=True)


def get_filter_rate_sample(wildcards):
    return json.dumps({k: v for k, v in config["filter_rates"].items() if k != "in_report"}, sort_keys=True)


def get_diffusion_params(wildcards):
    return section_json("diffusion")


def get_recognizer_params(wildcards):
    """The recognizer section, with the world's relation margin and object limit (never set twice)."""
    world = config["world"]
    section = {**config["recognizer"], "margin": world["relation_margin"], "max_objects": world["max_objects"]}
    return json.dumps(section, sort_keys=True)


def generators_in_report():
    """The BiVLC report shows both generators' filter rates with diffusion (its models exist) or when asked."""
    return BIVLC_GENERATOR != "render" or config["filter_rates"]["in_report"]


def get_generator_targets():
    """The `generators` target: the filter-rate table of both generators and the grid of their negatives."""
    return [f"{FILTER_RATES}.md", NEGATIVES_FIGURE]


def get_bench_report_generators(wildcards):
    """The generator files a benchmark's report shows (BiVLC's, when generators_in_report)."""
    if wildcards.bench == "bivlc" and generators_in_report():
        return get_generator_targets()
    return []


def get_init_checkpoint(wildcards):
    """The checkpoint a fine-tuned model starts from (its spec's `init`: another trained model), or nothing."""
    init = MODEL_SPECS[wildcards.trained].get("init")
    if init is None:
        return []
    if init not in TRAINED:
        raise ValueError(f"models.{wildcards.trained}: init {init!r} is not a trained model; expected one of {TRAINED}")
    return f"{RESULTS}/models/{init}/model.pt"


def get_train_priority(wildcards):
    """Trainings before the short jobs, and first among them the models others build on (`clip`: fine-tuned
    from, features of, shortlist of).

    Longest first: a training started after the short jobs have run leaves the other cores idle for its whole
    length, and `clip` heads the DAG's longest chain (clip -> its fine-tunes -> their scores). 1 + the number of
    models that read it (every other job has priority 0).
    """
    name = wildcards.trained
    readers = [m for m, spec in MODEL_SPECS.items() if name in (spec.get("init"), spec.get("upstream"))]
    if name == config["cross_scorers"].get("shortlist", {}).get("model"):
        readers.append("shortlist")
    return 1 + len(readers)


def get_init_flag(wildcards, input):
    return f"--init {input.init}" if input.get("init") else ""


# --- Models that are not image-text dual encoders (the captioner, MCIC's FFNN, unimodal baselines) ---
# What each model can score (itmbench.models.capabilities) decides which (model, benchmark) jobs exist;
# a cell that is not scored appears in the tables with its reason.
import shlex

from itmbench.models.capabilities import DUAL as DUAL_SCORES, absent_reason, capability, cell as model_cell
from itmbench.benchmarks.registry import GALLERY_BENCHMARKS

CROSS = sorted(m for m, spec in MODEL_SPECS.items() if capability(spec["family"]).cross)
FFNN = sorted(m for m, spec in MODEL_SPECS.items() if capability(spec["family"]).needs_upstream)
# cross_scorers name world models; the coco source keeps those of its own models (none by default)
GALLERY_CROSS = [m for m in config["cross_scorers"]["gallery_models"] if SOURCE == "world" or m in MODEL_SPECS]
PAIR_BENCHMARKS = sorted([*RETRIEVAL_BENCHMARKS, *WORLD_BENCHMARKS])
_not_cross = sorted(set(GALLERY_CROSS) - set(CROSS))
if _not_cross:
    raise ValueError(f"params.yaml cross_scorers.gallery_models: {_not_cross} are not cross-scoring models {CROSS}")
SHORTLIST = config["cross_scorers"].get("shortlist", {}).get("model")
SHORTLIST_K = int(config["cross_scorers"].get("shortlist", {}).get("k", 16))
if GALLERY_CROSS and SHORTLIST is not None and (
    SHORTLIST not in MODEL_SPECS or capability(MODEL_SPECS[SHORTLIST]["family"]).scores != DUAL_SCORES
):
    raise ValueError(
        f"params.yaml cross_scorers.shortlist.model: {SHORTLIST!r}; expected a model of `models` that embeds "
        f"images and captions (one of {sorted(m for m in MODEL_SPECS if capability(MODEL_SPECS[m]['family']).scores == DUAL_SCORES)}) or null"
    )
for _m in FFNN:
    _up = MODEL_SPECS[_m].get("upstream")
    if _up not in MODEL_SPECS or capability(MODEL_SPECS[_up]["family"]).cross:
        raise ValueError(f"params.yaml models.{_m}.upstream: {_up!r}; expected a model that gives embeddings")


wildcard_constraints:
    cross="|".join(CROSS) if CROSS else "__none__",
    ffnn="|".join(FFNN) if FFNN else "__none__",
    pairbench="|".join(PAIR_BENCHMARKS),


def scored_models(bench):
    """The models a benchmark scores (the others are not applicable, or cross scorers not asked to rank galleries)."""
    return [m for m in MODELS if model_cell(MODEL_SPECS[m], bench, GALLERY_CROSS, m) == "scored"]


def get_absent_flags(wildcards):
    """--absent MODEL=REASON for every model a benchmark's table does not score."""
    bench = wildcards.get("bench") or wildcards.get("benchmark")
    flags = []
    for m in MODELS:
        reason = absent_reason(MODEL_SPECS[m], bench, GALLERY_CROSS, m)
        if reason:
            flags.append(f"--absent {shlex.quote(f'{m}={reason}')}")
    return " ".join(flags)


def get_grid_of(wildcards):
    """A gallery benchmark's items: the table counts the pairs a cross scorer would need."""
    bench = wildcards.get("bench") or wildcards.get("benchmark")
    return f"--grid-of {DATA}/{bench}/items.parquet" if bench in GALLERY_BENCHMARKS else ""


def get_claims_metrics(wildcards):
    """Every scored (model, benchmark) metrics file: what the claims read."""
    return [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAIR_BENCHMARKS for m in scored_models(b)]


def get_cross_spec(wildcards):
    return json.dumps(MODEL_SPECS[wildcards.cross], sort_keys=True)


def get_ffnn_spec(wildcards):
    return json.dumps(MODEL_SPECS[wildcards.ffnn], sort_keys=True)


def get_cross_checkpoint(wildcards):
    """A cross scorer's trained checkpoint (every cross scorer is trained)."""
    return f"{RESULTS}/models/{wildcards.cross}/model.pt"


def get_cross_features(wildcards):
    """An FFNN's features: its upstream model's cache files for this benchmark (none for the captioner)."""
    spec = MODEL_SPECS[wildcards.cross]
    if not capability(spec["family"]).needs_upstream:
        return []
    files = [f"{RESULTS}/embeddings/{spec['upstream']}/items.npz"]
    if wildcards.pairbench in ADDING_BENCHMARKS:
        files.append(f"{RESULTS}/embeddings/{spec['upstream']}/{wildcards.pairbench}.npz")
    return files


def get_shortlist(wildcards):
    """On a gallery benchmark, the shortlist model's cache of the world's items: the cross scorer re-ranks its top-k."""
    bench = wildcards.get("pairbench") or wildcards.get("bench") or wildcards.get("benchmark")
    if SHORTLIST is None or bench not in GALLERY_BENCHMARKS:
        return []
    return [f"{RESULTS}/embeddings/{SHORTLIST}/items.npz"]


def get_shortlist_flag(wildcards, input):
    return f"--shortlist {' '.join(input.shortlist)} --shortlist-k {SHORTLIST_K}" if input.get("shortlist") else ""


def get_features_flag(wildcards, input):
    return f"--features {' '.join(input.features)}" if input.get("features") else ""


def get_extra_items_flag(wildcards, input):
    """The folder of items a benchmark added (BiVLC), which the cross scorer reads beside the world's."""
    if wildcards.pairbench in ADDING_BENCHMARKS:
        return f"--extra-items {os.path.join(os.path.dirname(input.bench), 'extra_items')}"
    return ""


def get_ffnn_features(wildcards):
    """The FFNN's training features: its upstream model's embeddings of the train and the evaluated splits."""
    upstream = MODEL_SPECS[wildcards.ffnn]["upstream"]
    return [f"{RESULTS}/embeddings/{upstream}/train.npz", f"{RESULTS}/embeddings/{upstream}/items.npz"]


def get_mcic_train_params(wildcards):
    """MCIC's section with its splits replaced by the train split: Algorithm 1's decoys for the FFNN's training."""
    split = config["cross_scorers"]["mcic_train_split"]
    return json.dumps({**config["mcic"], "splits": {split: split}}, sort_keys=True)
