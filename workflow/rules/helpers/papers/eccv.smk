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
