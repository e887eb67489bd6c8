# Input functions of the negative generators (workflow/rules/negatives.smk) and the trainings they feed; a
# benchmark's own uses of them (its candidates, filter rates, build section) are its paper's helpers'.

GENERATOR_MODELS = f"{RESULTS}/models"


def get_bench_generated(wildcards):
    """The files a benchmark's build reads beyond the world (its paper's BUILD_EXTRA_INPUTS: pregenerated candidates)."""
    return BUILD_EXTRA_INPUTS[wildcards.bench]() if wildcards.bench in BUILD_EXTRA_INPUTS else []


def get_diffusion_params(wildcards):
    return section_json("diffusion")


def get_recognizer_params(wildcards):
    """The recognizer section, with the world's relation margin and object limit (never set twice)."""
    world = config["world"]
    section = {**config["recognizer"], "margin": world["relation_margin"], "max_objects": world["max_objects"]}
    return json.dumps(section, sort_keys=True)


def get_bench_report_generators(wildcards):
    """The generator files a benchmark's report shows (its paper's REPORT_EXTRA_INPUTS)."""
    return REPORT_EXTRA_INPUTS[wildcards.bench]() if wildcards.bench in REPORT_EXTRA_INPUTS else []


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
