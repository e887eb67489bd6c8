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


# --- appendix E: Table E.1 and Figures E.2/E.3 (workflow/rules/eccv.smk) -----------------------------------


def eccv_evaluated_models():
    """The models Table E.1 scores: eccv.annotator_models (the annotators themselves, the paper's rows)."""
    return list(config["eccv"]["annotator_models"])


def eccv_annotator_names():
    """The names in the build's annotations table: the models, or the simulated oracles."""
    section = config["eccv"]
    return list(section["annotator_models"] if section["annotator_source"] == "models" else section["annotators"])


def get_eccv_evaluated_scores(wildcards):
    return [f"{RESULTS}/scores/eccv/{m}.parquet" for m in eccv_evaluated_models()]


def get_eccv_evaluated_flags(wildcards, input):
    """--scores MODEL=PATH and --annotator NAME (in order) of Table E.1's command."""
    scores = [f"--scores {m}={p}" for m, p in zip(eccv_evaluated_models(), input.scores)]
    return " ".join(scores + [f"--annotator {a}" for a in eccv_annotator_names()])


def get_eccv_annotator_flags(wildcards):
    return " ".join(f"--annotator {m}" for m in eccv_evaluated_models())


def get_eccv_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/eccv/{{model}}.json", model=scored_models("eccv"))


def get_eccv_score_settings(wildcards):
    score = config["score"]
    return f"--n-boot {score['n_boot']} --seed {score['seed']} --confidence {score['confidence']}"


# --- appendices A.2 and B.3: Tables A.1 and B.2 (workflow/rules/eccv.smk) -----------------------------------


def get_eccv_similarity_embeddings(wildcards):
    """The embedding caches of the models Table A.1 compares: eccv.annotator_models (the annotators when
    annotator_source is models; with the simulated oracles the models are compared all the same)."""
    return [f"{RESULTS}/embeddings/{m}/items.npz" for m in config["eccv"]["annotator_models"]]


def get_eccv_similarity_flags(wildcards, input):
    """--embeddings MODEL=PATH of Table A.1's command, in annotator order."""
    models = config["eccv"]["annotator_models"]
    return " ".join(f"--embeddings {m}={p}" for m, p in zip(models, input.embeddings))


def get_eccv_report_params(wildcards):
    """params.yaml report.eccv as canonical JSON (Table A.1 reruns when it changes)."""
    return json.dumps(config["report"].get("eccv", {}), sort_keys=True)


def get_eccv_annotator_name_flags(wildcards):
    """--annotator NAME of Table B.2's command: the names in the build's annotations table, in order."""
    return " ".join(f"--annotator {a}" for a in eccv_annotator_names())


# ECCV Caption's input functions: its ranking correlations (rules/papers/eccv.smk).

def eccv_rank_tau_models():
    """The models ECCV's ranking correlations rank: its image-text models (kind 'contrastive', as Table 5's)."""
    kinds = json.loads(get_model_kinds())
    scored = scored_models("eccv") if "eccv" in PAIR_BENCHMARKS else []
    return [m for m in scored if kinds.get(m) == "contrastive"]


def get_eccv_rank_tau_scores(wildcards):
    return {m: f"{RESULTS}/scores/eccv/{m}.parquet" for m in eccv_rank_tau_models()}


def get_eccv_rank_tau_flags(wildcards, input):
    return " ".join(f"--scores {m}={path}" for m, path in input.items())


def get_eccv_released_inputs(wildcards):
    """ECCV's six released association files (its statistics' inputs, Figure 3(a)'s)."""
    return [str(raw_path(key, RAW)) for key in STATISTICS_KEYS["eccv"]]
