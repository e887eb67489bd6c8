# MCIC-COCO's input functions: OPTIMIZE-PV (rules/papers/mcic.smk) and its chosen point, an input of MCIC's builds
# (registry BenchmarkEntry.inputs; the train split's build, rules/cross.smk).

MCIC_PV_CHOICE = build_input_file("mcic", "pv_choice")  # OPTIMIZE-PV's chosen point (rule mcic_optimize_pv)


MCIC_PV_KEYS = ("pv_grid", "pv_loss", "pv_min_count", "pv_seed", "pv_search_split", "pv_train_split")


def get_mcic_pv_params(wildcards):
    """The mcic keys OPTIMIZE-PV reads: they alone rerun the search."""
    return json.dumps({k: config["mcic"][k] for k in MCIC_PV_KEYS}, sort_keys=True)


def get_mcic_build_inputs(wildcards):  # MCIC's train split: the same build, its own rule (mcic_train_split)
    return list(bench_build_inputs("mcic").values())


def get_mcic_build_input_flags(wildcards):
    return bench_build_input_flags("mcic")


MCIC_SWEEP_OF = {"table4": "sizes", "table5": "lambda_gen"}  # MCIC's tables and the sweeps (mcic_sweeps) they show


def get_mcic_sweep_features(wildcards):
    """A sweep's features: its upstream model's embeddings of the train and the evaluated splits (as the FFNN's)."""
    upstream = config.get("mcic_sweeps", {}).get(wildcards.mcic_sweep, {}).get("upstream", "clip")
    if upstream not in MODEL_SPECS or capability(MODEL_SPECS[upstream]["family"]).cross:
        raise ValueError(f"params.yaml mcic_sweeps.{wildcards.mcic_sweep}.upstream: {upstream!r}; expected a model that gives embeddings")
    return [f"{RESULTS}/embeddings/{upstream}/train.npz", f"{RESULTS}/embeddings/{upstream}/items.npz"]


def get_mcic_train_params(wildcards):
    """MCIC's section with its splits replaced by the train split: Algorithm 1's decoys for the FFNN's training."""
    split = config["cross_scorers"]["mcic_train_split"]
    return json.dumps({**config["mcic"], "splits": {split: split}}, sort_keys=True)
