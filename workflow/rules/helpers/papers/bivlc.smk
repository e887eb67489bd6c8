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
