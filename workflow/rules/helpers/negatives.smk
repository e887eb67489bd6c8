# Input functions of the negative generators (workflow/rules/negatives.smk) and the trainings they feed.
from itmbench.papers.bivlc.build import DIFFUSION_ONLY_KEYS, NOT_GENERATION_KEYS

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
