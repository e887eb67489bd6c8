# Input functions of the models that are not image-text dual encoders (workflow/rules/cross.smk): the captioner, the option scorers, unimodal baselines.
# What each model can score (itmbench.models.capabilities) decides which (model, benchmark) jobs exist;
# a cell that is not scored appears in the tables with its reason.
import shlex

from itmbench.models.capabilities import DUAL as DUAL_SCORES, absent_reason, capability
from itmbench.papers.plan import check_listed, listed, scored_models as plan_scored_models
from itmbench.papers.registry import GALLERY_BENCHMARKS, TASK_MODALITIES

CROSS = sorted(m for m, spec in MODEL_SPECS.items() if capability(spec["family"]).cross)
FFNN = sorted(m for m, spec in MODEL_SPECS.items() if capability(spec["family"]).needs_upstream)
# cross_scorers name world models; the coco source keeps those of its own models (none by default)
GALLERY_CROSS = [m for m in config["cross_scorers"]["gallery_models"] if SOURCE == "world" or m in MODEL_SPECS]
PAIR_BENCHMARKS = WORLD_BENCHMARKS
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
check_listed(MODEL_SPECS, GALLERY_CROSS)  # a model's `benchmarks` names only benchmarks it scores
for _m in FFNN:
    _up = MODEL_SPECS[_m].get("upstream")
    if _up not in MODEL_SPECS or capability(MODEL_SPECS[_up]["family"]).cross:
        raise ValueError(f"params.yaml models.{_m}.upstream: {_up!r}; expected a model that gives embeddings")


wildcard_constraints:
    cross="|".join(CROSS) if CROSS else "__none__",
    ffnn="|".join(FFNN) if FFNN else "__none__",
    pairbench="|".join(PAIR_BENCHMARKS),


def benchmark_task(bench):
    """What a benchmark's tasks compare and whether it ranks whole galleries (the papers' registry): the
    capabilities' arguments, with the models asked to rank galleries."""
    if bench not in TASK_MODALITIES:
        raise ValueError(f"unknown benchmark {bench!r}; expected one of {sorted(TASK_MODALITIES)}")
    return {
        "modalities": TASK_MODALITIES[bench],
        "gallery": bench in GALLERY_BENCHMARKS,
        "gallery_models": GALLERY_CROSS,
    }


def scored_models(bench):
    """The models a benchmark scores (the others are not applicable, or cross scorers not asked to rank galleries):
    the plan's rule, which dvc.yaml's metrics list is written from too."""
    return plan_scored_models(bench, MODEL_SPECS, GALLERY_CROSS)


def get_absent_flags(wildcards):
    """--absent MODEL=REASON for every model a benchmark's table does not score."""
    bench = wildcards.bench
    flags = []
    task = benchmark_task(bench)
    for m in MODELS:
        if not listed(MODEL_SPECS[m], bench, m):
            continue  # scored elsewhere only (its `benchmarks`): no row here
        reason = absent_reason(MODEL_SPECS[m], **task, name=m)
        if reason:
            flags.append(f"--absent {shlex.quote(f'{m}={reason}')}")
    return " ".join(flags)


def get_grid_of(wildcards):
    """A gallery benchmark's items: the table counts the pairs a cross scorer would need."""
    bench = wildcards.bench
    return f"--grid-of {DATA}/{bench}/items.parquet" if bench in GALLERY_BENCHMARKS else ""


def get_claims_metrics(wildcards):
    """Every scored (model, benchmark) metrics file: what the claims read."""
    return [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAIR_BENCHMARKS for m in scored_models(b)]


def get_cross_spec(wildcards):
    return spec_json(wildcards.cross)


def get_ffnn_spec(wildcards):
    return spec_json(wildcards.ffnn)


def get_cross_checkpoint(wildcards):
    """A cross scorer's trained checkpoint (every cross scorer is trained)."""
    return f"{RESULTS}/models/{wildcards.cross}/model.pt"


def get_cross_features(wildcards):
    """An FFNN's features: its upstream model's cache files for this benchmark (none for the captioner)."""
    spec = MODEL_SPECS[wildcards.cross]
    if not capability(spec["family"]).needs_upstream:
        return []
    files = [f"{RESULTS}/embeddings/{spec['upstream']}/items.npz"]
    if wildcards.get("pairbench") in ADDING_BENCHMARKS:
        files.append(f"{RESULTS}/embeddings/{spec['upstream']}/{wildcards.pairbench}.npz")
    return files


def get_shortlist(wildcards):
    """On a gallery benchmark, the shortlist model's cache of the world's items: the cross scorer re-ranks its top-k."""
    bench = wildcards.get("pairbench") or wildcards.bench
    return get_gallery_shortlist(wildcards) if bench in GALLERY_BENCHMARKS else []


# The gallery benchmarks that rank the source's own items: a cross scorer scores the union of their pairs once
# (rule score_gallery_pairs, in this folder of results/<source>/pairs/).
GALLERY_PAIRS = "gallery"
SHARED_GALLERY = [b for b in PAIR_BENCHMARKS if b in GALLERY_BENCHMARKS and b not in ADDING_BENCHMARKS]
if GALLERY_PAIRS in BENCHMARKS:
    raise ValueError(f"benchmark {GALLERY_PAIRS!r}: the name of the shared gallery pairs' folder; rename one")


def gallery_benches(cross):
    """The shared-gallery benchmarks cross scorer `cross` is scored on, in the registry's order."""
    return [b for b in SHARED_GALLERY if cross in scored_models(b)]


def get_gallery_benches(wildcards):
    benches = gallery_benches(wildcards.cross)
    if not benches:
        raise ValueError(f"models.{wildcards.cross}: scores no gallery benchmark; nothing asks for its gallery pairs")
    return [f"{DATA}/{b}/items.parquet" for b in benches]


def get_gallery_shortlist(wildcards):
    """The shortlist of the gallery benchmarks (the same for each: the shortlist model's cache of the items), none
    without a shortlist model."""
    return [f"{RESULTS}/embeddings/{SHORTLIST}/items.npz"] if SHORTLIST is not None else []


def get_pairs_file(wildcards):
    """The pair scores a benchmark's table reads: the shared gallery's for a gallery benchmark on the source's own
    items, else the benchmark's own."""
    folder = GALLERY_PAIRS if wildcards.bench in SHARED_GALLERY else wildcards.bench
    return f"{RESULTS}/pairs/{folder}/{wildcards.cross}.parquet"


def get_shortlist_flag(wildcards, input):
    return f"--shortlist {' '.join(input.shortlist)} --shortlist-k {SHORTLIST_K}" if input.get("shortlist") else ""


def get_features_flag(wildcards, input):
    return f"--features {' '.join(input.features)}" if input.get("features") else ""


def get_extra_items_flag(wildcards, input):
    """The folder of items a benchmark added (registry `adds_items`), which the cross scorer reads beside the world's."""
    if wildcards.pairbench in ADDING_BENCHMARKS:
        return f"--extra-items {os.path.join(os.path.dirname(input.bench), 'extra_items')}"
    return ""


def get_ffnn_features(wildcards):
    """The FFNN's training features: its upstream model's embeddings of the train and the evaluated splits."""
    upstream = MODEL_SPECS[wildcards.ffnn]["upstream"]
    return [f"{RESULTS}/embeddings/{upstream}/train.npz", f"{RESULTS}/embeddings/{upstream}/items.npz"]
