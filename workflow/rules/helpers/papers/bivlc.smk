# BiVLC's input functions: its Table 6 and Figure 4 (rules/papers/bivlc.smk).

# The models trained on TROHN-Text (trainer negclip): BiVLC's Table 6 counts their hard negatives.
TROHN_TEXT_MODELS = sorted(m for m in TRAINED if MODEL_SPECS[m].get("trainer") == "negclip")


def get_trohn_text_histories():
    """The training summaries (history.json) of the TROHN-Text models, which count their hard negatives."""
    return [f"{RESULTS}/models/{m}/history.json" for m in TROHN_TEXT_MODELS]


def bivlc_figure4_models():
    """params.yaml report.bivlc_figure4.models that score BiVLC in this source, in their order."""
    scored = set(scored_models("bivlc")) if "bivlc" in PAIR_BENCHMARKS else set()
    return [m for m in config["report"]["bivlc_figure4"]["models"] if m in scored]


def get_bivlc_figure4_scores(wildcards):
    """The per-instance BiVLC score files of Figure 4's models, by model."""
    return {m: f"{RESULTS}/scores/bivlc/{m}.parquet" for m in bivlc_figure4_models()}


def get_bivlc_figure4_flags(wildcards, input):
    """--scores MODEL=PATH for each of Figure 4's models, in their order."""
    return " ".join(f"--scores {m}={input[m]}" for m in bivlc_figure4_models())


def get_bivlc_figure4_config(wildcards):
    """What Figure 4's numbers read of report.bivlc_figure4 (the models are its inputs): the bins."""
    return json.dumps({"bins": config["report"]["bivlc_figure4"]["bins"]}, sort_keys=True)


# BiVLC's negative generators in the world: its candidates (bivlc.generator: diffusion) and both generators' filter
# rates (the `generators` target of the Snakefile, get_generator_targets; in its report when generators_in_report).
from itmbench.papers.bivlc.build import DIFFUSION_ONLY_KEYS, NOT_GENERATION_KEYS

BIVLC_GENERATOR = config["bivlc"]["generator"]
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


def generators_in_report():
    """The BiVLC report shows both generators' filter rates with diffusion (its models exist) or when asked."""
    return BIVLC_GENERATOR != "render" or config["filter_rates"]["in_report"]


def get_generator_targets():
    """The `generators` target: the filter-rate table of both generators and the grid of their negatives."""
    return [f"{FILTER_RATES}.md", NEGATIVES_FIGURE]


def bivlc_generated():
    """The pregenerated candidate images a BiVLC build reads (only when its generator is not the renderer)."""
    if BIVLC_GENERATOR != "render":
        return [f"{BIVLC_CANDIDATES}/candidates.parquet", f"{BIVLC_CANDIDATES}/images.npy"]
    return []


def bivlc_report_generators():
    """The generator files BiVLC's report shows (when generators_in_report)."""
    return get_generator_targets() if generators_in_report() else []


BUILD_SECTIONS["bivlc"] = bivlc_build_section
BUILD_EXTRA_INPUTS["bivlc"] = bivlc_generated
REPORT_EXTRA_INPUTS["bivlc"] = bivlc_report_generators
