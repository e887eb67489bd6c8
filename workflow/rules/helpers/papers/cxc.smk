# CxC's input functions: its Figures 3-5 and Table 1 (rules/papers/cxc.smk, rules/released.smk), its tables' report
# options (the appendix's Table 3: the model of each ablation, report.cxc.ablations).

def cxc_section_json(*keys):
    """Some keys of params.yaml report.cxc as canonical JSON (a job reruns only when the keys it reads change)."""
    return json.dumps({k: config["report"]["cxc"][k] for k in keys}, sort_keys=True)


def get_cxc_figure_data_config(wildcards):
    """What the numbers of a figure read: Figure 3 and appendix Figure 2 their bin widths, Figure 4 nothing (the
    thresholds are the data's)."""
    keys = {"figure3": ("rating_bin_width",), "appendix_figure2": ("std_bin_width",)}
    return cxc_section_json(*keys.get(wildcards.cxc_data_figure, ()))


def get_cxc_figure_config(wildcards):
    """What drawing a figure reads: the split Figures 3 and 4 show."""
    return cxc_section_json("split") if wildcards.cxc_figure != "figure5" else cxc_section_json()


def get_cxc_released_figure_config(wildcards):
    """What drawing a released figure (3 or 4) reads: the split it shows."""
    return cxc_section_json("split")


def get_cxc_figure_inputs(wildcards):
    """A CxC figure's computed files: its table, and for Figure 5 the sampled pairs."""
    inputs = {"data": f"{RESULTS}/tables/cxc/{wildcards.cxc_figure}.csv"}
    if wildcards.cxc_figure == "figure5":
        inputs["points"] = f"{RESULTS}/figures/cxc/figure5_points.csv"
    return inputs


def get_cxc_points_flag(wildcards, input):
    return f"--points {input.points}" if input.get("points") else ""


def cxc_encoder_models():
    """The world models standing for Table 1's printed encoders (report.cxc.encoders), printed name -> model."""
    return dict(config["report"]["cxc"]["encoders"])


def cxc_ablation_models():
    """report.cxc.ablations (printed ablation of DE_I2T -> world model), checked in the world: each an image-text
    dual encoder that scores CxC (the coco source has none of them: its appendix Table 3 shows the printed numbers
    alone)."""
    ablations = dict(config["report"]["cxc"]["ablations"])
    if SOURCE == "world":
        dual = [m for m in scored_models("cxc") if capability(MODEL_SPECS[m]["family"]).scores == DUAL_SCORES]
        bad = {name: m for name, m in ablations.items() if m not in dual}
        if bad:
            raise ValueError(
                f"params.yaml report.cxc.ablations: {bad} name no image-text dual encoder that scores cxc; "
                f"expected some of {dual}"
            )
    return ablations


def cxc_encoders_scored():
    """Whether every model standing for a printed encoder scores CxC in this source (Figure 5 and Table 1 need them)."""
    return all(model in scored_models("cxc") for model in cxc_encoder_models().values())


def get_cxc_bow_scores(wildcards):
    return f"{RESULTS}/scores/cxc/{cxc_encoder_models()['BoW']}.parquet"


def get_cxc_encoder_scores(wildcards):
    return [f"{RESULTS}/scores/cxc/{model}.parquet" for model in sorted(set(cxc_encoder_models().values()))]


def get_cxc_scores_flags(wildcards, input):
    """--scores MODEL=PATH for each of the encoders' scores files."""
    return " ".join(f"--scores {os.path.basename(path)[: -len('.parquet')]}={path}" for path in input.scores)


def flag_cxc(path, subcategory):
    """A CxC output flagged for `snakemake --report`."""
    return flag_paper(path, "cxc", subcategory)


REPORT_TABLE_OPTIONS["cxc"] = lambda: {"ablations": cxc_ablation_models()}  # the appendix's Table 3


def get_cxc_released_inputs(wildcards):
    """CxC's six released rating files (its statistics' inputs)."""
    return [str(raw_path(key, RAW)) for key in STATISTICS_KEYS["cxc"]]
