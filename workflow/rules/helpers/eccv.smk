# Input functions of ECCV Caption's machine-in-the-loop: the trained models whose embeddings propose its
# candidates (params eccv.annotator_source = models, the paper's design), checked against the source's models.


def eccv_annotator_models():
    """The models that annotate ECCV in the world (none when the simulated oracles do, or on COCO)."""
    section = config["eccv"]
    if SOURCE != "world" or section["annotator_source"] != "models":
        return []
    names = section["annotator_models"]
    kinds = json.loads(get_model_kinds())
    bad = [m for m in names if m not in MODEL_SPECS or kinds[m] != "contrastive"]
    if bad:
        raise ValueError(
            f"params eccv.annotator_models: {bad} are not image-text dual encoders of `models`; "
            f"expected some of {sorted(m for m, k in kinds.items() if k == 'contrastive')}"
        )
    return list(names)


def get_bench_annotators(wildcards):
    """The embeddings files of the models that propose a benchmark's candidates (ECCV's annotators)."""
    if not BENCHMARKS[wildcards.bench].takes_annotator_embeddings:
        return []
    return [f"{RESULTS}/embeddings/{m}/items.npz" for m in eccv_annotator_models()]


def get_bench_annotator_flags(wildcards):
    if not BENCHMARKS[wildcards.bench].takes_annotator_embeddings:
        return ""
    return " ".join(
        f"--annotator-embeddings {m}={RESULTS}/embeddings/{m}/items.npz" for m in eccv_annotator_models()
    )


eccv_annotator_models()  # a model named in eccv.annotator_models that cannot annotate fails at load
