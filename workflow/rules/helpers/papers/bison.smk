# BISON's input functions: its Tables 2 and 4 and Figures 4, 6, 8, 9 and 14 (rules/papers/bison.smk), its tables'
# report options.

def get_bison_caption_metrics_params(wildcards):
    return section_json("bison_caption_metrics")


def bison_section_json(*keys):
    """Some keys of params.yaml bison as canonical JSON (a job reruns only when the keys it reads change)."""
    return json.dumps({k: config["bison"][k] for k in keys}, sort_keys=True)


def get_bison_table2_config(wildcards):
    """What Table 2 reads of the bison section: the split BISON pairs."""
    return bison_section_json("split")


def get_bison_figure_data_config(wildcards):
    """What a figure's numbers read: Figure 6 the split, Figures 9 and 14 the split and the seed (of the
    perturbations, of the random caption)."""
    return bison_section_json("split") if wildcards.bison_data_figure == "figure6" else bison_section_json("split", "seed")


def bison_perturbation_models():
    """The models Figure 9 rescores on perturbed queries: BISON's, but those scoring an upstream model's features
    of known captions (the FFNN), which a perturbed query does not have."""
    return [m for m in scored_models("bison") if m not in FFNN]


def bison_embedding_models():
    """The models Figure 14 rescores: those scoring BISON from item embeddings (a cross scorer's pairs hold only
    the BISON query's)."""
    return [m for m in scored_models("bison") if m not in CROSS]


def get_bison_figure_data_inputs(wildcards):
    """A BISON figure's inputs: the benchmark and the captions, and for Figure 14 each embedding model's cache."""
    inputs = {"bench": f"{DATA}/bison/items.parquet", "captions": f"{DATA}/items/captions.parquet"}
    if wildcards.bison_data_figure == "figure14":
        inputs.update({m: f"{RESULTS}/embeddings/{m}/items.npz" for m in bison_embedding_models()})
    if wildcards.bison_data_figure == "figure9":
        inputs.update({m: f"{RESULTS}/scores/bison_perturbations/{m}.parquet" for m in bison_perturbation_models()})
    return inputs


def get_bison_model_file_flags(wildcards, input):
    """--embeddings MODEL=PATH for each cache of Figure 14, --scores MODEL=PATH for each model of Figure 9."""
    if wildcards.bison_data_figure == "figure14":
        return " ".join(f"--embeddings {m}={input[m]}" for m in bison_embedding_models())
    if wildcards.bison_data_figure == "figure9":
        return " ".join(f"--scores {m}={input[m]}" for m in bison_perturbation_models())
    return ""


def bison_captioners():
    """The models whose captions Table 4 scores: BISON's captioners (family coca: they generate captions)."""
    return [m for m in scored_models("bison") if MODEL_SPECS[m]["family"] == "coca"]


def get_bison_table4_inputs(wildcards):
    """Table 4's inputs: the captions (references), each captioner's generated captions and BISON metrics, and
    their per-image caption scores (Figure 8's: the metrics run once)."""
    inputs = {"captions": f"{DATA}/items/captions.parquet"}
    inputs["caption_scores"] = f"{RESULTS}/scores/bison_caption_scores.parquet"
    for m in bison_captioners():
        inputs[f"generated_{m}"] = f"{RESULTS}/captions/{m}.parquet"
        inputs[f"bison_{m}"] = f"{RESULTS}/metrics/bison/{m}.json"
    return inputs


def get_bison_figure8_inputs(wildcards):
    """Figure 8's inputs: the captions (references), and each captioner's generated captions and BISON scores."""
    inputs = {"captions": f"{DATA}/items/captions.parquet"}
    for m in bison_captioners():
        inputs[f"generated_{m}"] = f"{RESULTS}/captions/{m}.parquet"
        inputs[f"scores_{m}"] = f"{RESULTS}/scores/bison/{m}.parquet"
    return inputs


def get_bison_figure8_flags(wildcards, input):
    """--generated MODEL=PATH --scores MODEL=PATH for each captioner."""
    return " ".join(
        f"--generated {m}={input[f'generated_{m}']} --scores {m}={input[f'scores_{m}']}" for m in bison_captioners()
    )


def get_bison_figure8_metrics(wildcards):
    """What Figure 8 reads of bison_caption_metrics: the metrics scored."""
    return json.dumps({"metrics": config["bison_caption_metrics"]["metrics"]}, sort_keys=True)


def get_bison_figure8_config(wildcards):
    """params.yaml report.bison_figure8 (the histogram's bins) as canonical JSON."""
    return json.dumps(config["report"]["bison_figure8"], sort_keys=True)


def get_bison_figure4_inputs(wildcards):
    """Figure 4's inputs: the world's scenes, each captioner's generated captions, and their scores (Figure 8's)."""
    inputs = {"scenes": f"{DATA}/items/scenes.parquet"}
    inputs["caption_scores"] = f"{RESULTS}/scores/bison_caption_scores.parquet"
    for m in bison_captioners():
        inputs[f"generated_{m}"] = f"{RESULTS}/captions/{m}.parquet"
    return inputs


def get_bison_figure4_flags(wildcards, input):
    """--generated MODEL=PATH for each captioner."""
    return " ".join(f"--generated {m}={input[f'generated_{m}']}" for m in bison_captioners())


def get_bison_figure4_world(wildcards):
    """What Figure 4 reads of params.yaml world: the relation margin of the truth."""
    return json.dumps({"relation_margin": config["world"]["relation_margin"]}, sort_keys=True)


def get_bison_figure4_config(wildcards):
    """params.yaml report.bison_figure4 (the bins) as canonical JSON."""
    return json.dumps(config["report"]["bison_figure4"], sort_keys=True)


def get_bison_data_figures():
    """The BISON figures drawn from computed tables: 6, 9 and 14 (bison_figure_data), and 4 and 8 where a
    captioner scores BISON (bison_figure4_data, bison_figure8_data)."""
    return ("figure6", "figure9", "figure14") + (("figure4", "figure8") if bison_captioners() else ())


def get_bison_table4_flags(wildcards, input):
    """--generated MODEL=PATH --bison MODEL=PATH for each captioner."""
    return " ".join(
        f"--generated {m}={input[f'generated_{m}']} --bison {m}={input[f'bison_{m}']}" for m in bison_captioners()
    )


def get_bison_captioners_params(wildcards):
    """params.yaml bison_captioners as canonical JSON (Table 6's systems, sizes and training)."""
    return section_json("bison_captioners")


def get_bison_table6_inputs(wildcards):
    """Table 6's inputs: each tower's cells (bison_feature_captioners), in bison_captioners.towers' order."""
    return {f"cells_{t}": f"{RESULTS}/bison/table6/{t}.parquet" for t in config["bison_captioners"]["towers"]}


def get_bison_table6_flags(wildcards, input):
    """--cells TOWER=PATH for each tower, in order."""
    return " ".join(f"--cells {t}={input[f'cells_{t}']}" for t in config["bison_captioners"]["towers"])


def bison_table_options():
    """BISON's Table 1 a world model's R@1 errors judged by the truth (which the coco source has not, so there Table 1
    shows the printed numbers alone) and Table 7's systems on two image towers (the world's models)."""
    if SOURCE != "world":
        return {}
    return {
        "bison_table1_model": config["report"]["bison_table1_model"],
        "bison_feature_pairs": config["report"]["bison_feature_pairs"],  # Table 7: two image towers
    }


REPORT_TABLE_OPTIONS["bison"] = bison_table_options
