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
