# Helpers: config validation, the model registry view, and named input functions (no lambdas in rules).
import json
import re
import os

from snakemake.utils import validate

from itmbench.benchmarks.registry import BENCHMARKS
from itmbench.sources.fetch import PAPER_TABLE_KEYS, STATISTICS_KEYS, raw_path
from itmbench.sources.released import load_registry


validate(config, schema="../schemas/params.schema.yaml", set_default=True)

SOURCE = config["source"]
DATA = f"data/{SOURCE}"
RESULTS = f"results/{SOURCE}"
MODELS = sorted(config["models"])
TRAINED = sorted(m for m, spec in config["models"].items() if spec.get("trainer"))
RETRIEVAL_BENCHMARKS = ["retrieval"]
WORLD_BENCHMARKS = sorted(BENCHMARKS)
ADDING_BENCHMARKS = sorted(name for name, entry in BENCHMARKS.items() if entry.adds_items)
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
    return json.dumps(config["models"][wildcards.model], sort_keys=True)


def get_trained_spec(wildcards):
    return json.dumps(config["models"][wildcards.trained], sort_keys=True)


def get_checkpoint(wildcards):
    """A trained model's checkpoint, or nothing for a model used as built (random, pretrained)."""
    if wildcards.model in TRAINED:
        return f"{RESULTS}/models/{wildcards.model}/model.pt"
    return []


def get_checkpoint_flag(wildcards, input):
    return f"--checkpoint {input.checkpoint}" if input.get("checkpoint") else ""


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
    return section_json(wildcards.bench)


def get_bench_deps(wildcards):
    """The items file of each benchmark this one builds on (ECCV unions CxC's positives)."""
    return [f"{DATA}/{dep}/items.parquet" for dep in BENCHMARKS[wildcards.bench].depends_on]


def get_bench_dep_flags(wildcards):
    return " ".join(f"--dep {dep}={DATA}/{dep}" for dep in BENCHMARKS[wildcards.bench].depends_on)


def get_bench_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.bench}/{{model}}.json", model=scored_models(wildcards.bench))


def get_bench_title(wildcards):
    return f"{wildcards.bench} in the world: every model (%, 95% intervals)"


def get_retrieval_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.benchmark}/{{model}}.json", model=scored_models(wildcards.benchmark))


def get_retrieval_report():
    return "reports/world/retrieval.html"


def get_reports(wildcards):
    """Every report: the world's, and the released source's when a mirror is set."""
    reports = [get_retrieval_report()] + expand("reports/world/{bench}.html", bench=WORLD_BENCHMARKS)
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
    return json.dumps(
        {
            "source": SOURCE,
            "benchmark": wildcards.bench,
            "table_md": f"{tables}/{wildcards.bench}.md",
            "audit_md": f"{tables}/audit.md",
            "metrics": [f"{RESULTS}/metrics/{wildcards.bench}/{m}.json" for m in scored_models(wildcards.bench)],
            "bench_dir": f"{DATA}/{wildcards.bench}",
        },
        sort_keys=True,
    )


def get_metrics_root(wildcards, input):
    """results/<source>/metrics, from the metrics files the rule reads."""
    return os.path.dirname(os.path.dirname(input[0]))


def get_released_root(wildcards, output):
    """results/released, from the tables the rule writes."""
    return os.path.dirname(os.path.dirname(os.path.dirname(output.bivlc[0])))


def get_model_kinds():
    """What each model is, for the claims: a text-only dual encoder (de_t2t) is no image-text model."""
    kinds = {}
    for name, spec in config["models"].items():
        if spec.get("trainer") == "de_t2t":
            kinds[name] = "other"
        else:
            kinds[name] = capability(spec["family"]).kind  # contrastive, chance, generative (coca), other
    return json.dumps(kinds, sort_keys=True)


# --- Models that are not image-text dual encoders (the captioner, MCIC's FFNN, unimodal baselines) ---
# What each model can score (itmbench.models.capabilities) decides which (model, benchmark) jobs exist;
# a cell that is not scored appears in the tables with its reason.
import shlex

from itmbench.models.capabilities import absent_reason, capability, cell as model_cell
from itmbench.benchmarks.registry import GALLERY_BENCHMARKS

CROSS = sorted(m for m, spec in config["models"].items() if capability(spec["family"]).cross)
FFNN = sorted(m for m, spec in config["models"].items() if capability(spec["family"]).needs_upstream)
GALLERY_CROSS = list(config["cross_scorers"]["gallery_models"])
PAIR_BENCHMARKS = sorted([*RETRIEVAL_BENCHMARKS, *WORLD_BENCHMARKS])
_not_cross = sorted(set(GALLERY_CROSS) - set(CROSS))
if _not_cross:
    raise ValueError(f"params.yaml cross_scorers.gallery_models: {_not_cross} are not cross-scoring models {CROSS}")
for _m in FFNN:
    _up = config["models"][_m].get("upstream")
    if _up not in config["models"] or capability(config["models"][_up]["family"]).cross:
        raise ValueError(f"params.yaml models.{_m}.upstream: {_up!r}; expected a model that gives embeddings")


wildcard_constraints:
    cross="|".join(CROSS) if CROSS else "__none__",
    ffnn="|".join(FFNN) if FFNN else "__none__",
    pairbench="|".join(PAIR_BENCHMARKS),


def scored_models(bench):
    """The models a benchmark scores (the others are not applicable, or cross scorers not asked to rank galleries)."""
    return [m for m in MODELS if model_cell(config["models"][m], bench, GALLERY_CROSS, m) == "scored"]


def get_absent_flags(wildcards):
    """--absent MODEL=REASON for every model a benchmark's table does not score."""
    bench = wildcards.get("bench") or wildcards.get("benchmark")
    flags = []
    for m in MODELS:
        reason = absent_reason(config["models"][m], bench, GALLERY_CROSS, m)
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
    return json.dumps(config["models"][wildcards.cross], sort_keys=True)


def get_ffnn_spec(wildcards):
    return json.dumps(config["models"][wildcards.ffnn], sort_keys=True)


def get_cross_checkpoint(wildcards):
    """A cross scorer's trained checkpoint (every cross scorer is trained)."""
    return f"{RESULTS}/models/{wildcards.cross}/model.pt"


def get_cross_features(wildcards):
    """An FFNN's features: its upstream model's cache files for this benchmark (none for the captioner)."""
    spec = config["models"][wildcards.cross]
    if not capability(spec["family"]).needs_upstream:
        return []
    files = [f"{RESULTS}/embeddings/{spec['upstream']}/items.npz"]
    if wildcards.pairbench in ADDING_BENCHMARKS:
        files.append(f"{RESULTS}/embeddings/{spec['upstream']}/{wildcards.pairbench}.npz")
    return files


def get_features_flag(wildcards, input):
    return f"--features {' '.join(input.features)}" if input.get("features") else ""


def get_extra_items_flag(wildcards, input):
    """The folder of items a benchmark added (BiVLC), which the cross scorer reads beside the world's."""
    if wildcards.pairbench in ADDING_BENCHMARKS:
        return f"--extra-items {os.path.join(os.path.dirname(input.bench), 'extra_items')}"
    return ""


def get_ffnn_features(wildcards):
    """The FFNN's training features: its upstream model's embeddings of the train and the evaluated splits."""
    upstream = config["models"][wildcards.ffnn]["upstream"]
    return [f"{RESULTS}/embeddings/{upstream}/train.npz", f"{RESULTS}/embeddings/{upstream}/items.npz"]


def get_mcic_train_params(wildcards):
    """MCIC's section with its splits replaced by the train split: Algorithm 1's decoys for the FFNN's training."""
    split = config["cross_scorers"]["mcic_train_split"]
    return json.dumps({**config["mcic"], "splits": {split: split}}, sort_keys=True)
