# Input functions of the papers' tables and figures filled from the world (workflow/rules/papers.smk).

from itmbench.papers.claims import CLAIM_ORDER
from itmbench.papers.paired import PAIRED_BENCHMARKS
from itmbench.papers.registry import PAPERS as PAPER_ENTRIES, baseline_metrics_files
from itmbench.papers.world import PAPER_BENCHMARKS, PAPER_TITLES, world_table_paths
from itmbench.papers.world_figures import world_figure_paths
from snakemake.io import report as snakemake_report

# The papers whose every benchmark the source has (on COCO, a paper of a world-only benchmark is left out).
WORLD_PAPERS = sorted(p for p, benches in PAPER_BENCHMARKS.items() if set(benches) <= set(WORLD_BENCHMARKS))


def get_world_paper_metrics(paper):
    """The metrics files a paper's world tables read (BISON also reads the retrieval benchmark's, and its
    caption-metric baseline's)."""
    models = [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAPER_BENCHMARKS[paper] for m in scored_models(b)]
    return models + baseline_metrics_files(paper, config, RESULTS, SOURCE)


def get_world_figure_metrics(paper):
    """The metrics files a paper's world figures read: its own benchmark's."""
    return [f"{RESULTS}/metrics/{paper}/{m}.json" for m in scored_models(paper)]


def get_report_rows(paper):
    """params.yaml report.rows.<paper> as canonical JSON (world model -> printed row)."""
    return json.dumps(config["report"]["rows"].get(paper, {}), sort_keys=True)


def get_report_table_options(paper):
    """The report options a paper's tables read: BISON's Table 1 a world model's R@1 errors judged by the truth
    (which the coco source has not, so there Table 1 shows the printed numbers alone) and Table 7's systems on two
    image towers (the world's models); CxC's appendix Table 3 the
    model of each ablation (report.cxc.ablations)."""
    options = {}
    if paper == "bison" and SOURCE == "world":
        options["bison_table1_model"] = config["report"]["bison_table1_model"]
        options["bison_feature_pairs"] = config["report"]["bison_feature_pairs"]  # Table 7: two image towers
    if paper == "cxc":  # the appendix's Table 3: the model of each ablation of DE_I2T
        options["ablations"] = cxc_ablation_models()
    return json.dumps(options, sort_keys=True)


RULES_DIR = os.path.join(workflow.basedir, "workflow", "rules")


def flag_report(path, caption, category, subcategory):
    """An output flagged for `snakemake --report` (a named helper: `report(` opens a directive in .smk files).
    `caption` is named from workflow/rules/, as the shared rule files name it; Snakemake reads it from the folder
    of the .smk file that declares the rule (workflow/rules/papers/ for a paper's own rules), so it is given
    from there."""
    here = workflow.current_basedir.get_path_or_uri(secret_free=True)
    caption = os.path.relpath(os.path.join(RULES_DIR, caption), here)
    return snakemake_report(path, caption=caption, category=category, subcategory=subcategory)


def get_world_table_outputs(paper):
    """A paper's world tables (CSV, Markdown, LaTeX), flagged for `snakemake --report`."""
    caption = f"../report/{paper}.rst"
    return [flag_report(path, caption, PAPER_TITLES[paper], "tables") for path in world_table_paths(paper, f"{RESULTS}/tables/{paper}")]


def get_world_figure_outputs(paper):
    """A paper's world figures (PNG, PDF), flagged for `snakemake --report`."""
    caption = f"../report/{paper}.rst"
    return [flag_report(path, caption, PAPER_TITLES[paper], "figures") for path in world_figure_paths(paper, f"{RESULTS}/figures/{paper}")]


def get_first_output_dir(wildcards, output):
    """The folder of a rule's first output (where a paper's tables or figures go)."""
    return os.path.dirname(output[0])


def get_bench_world_tables(wildcards):
    """The Markdown of a paper's world tables, and of the tables computed from its data that this run writes
    (the registry's `data_tables`), for its report (none for a benchmark that is no paper's)."""
    if wildcards.bench not in WORLD_PAPERS:
        return []
    paths = [p for p in world_table_paths(wildcards.bench, f"{RESULTS}/tables/{wildcards.bench}") if p.endswith(".md")]
    data = [f"{RESULTS}/tables/{wildcards.bench}/{stem}.md" for stem in PAPER_ENTRIES[wildcards.bench].data_tables]
    return paths + [p for p in data if produced_here(p)]


def get_bench_world_figures(wildcards):
    """The PNG of a paper's world figures, and of the figures drawn from its data that this run writes (the
    registry's `data_figures`: the source's, and with a mirror the released files'), for its report (none for
    a benchmark that is no paper's)."""
    if wildcards.bench not in WORLD_PAPERS:
        return []
    paths = [p for p in world_figure_paths(wildcards.bench, f"{RESULTS}/figures/{wildcards.bench}") if p.endswith(".png")]
    roots = [RESULTS, "results/released"] if RELEASED_REPORT else [RESULTS]
    data = [f"{root}/figures/{wildcards.bench}/{stem}.png" for root in roots for stem in PAPER_ENTRIES[wildcards.bench].data_figures]
    return paths + [p for p in data if produced_here(p)]


# --- CxC's Figures 3-5 and Table 1, computed from the rated pairs and the models' scores (papers.smk) ----------


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


def flag_paper(path, paper, subcategory):
    """A paper's table (its CSV) or figure (its PNG) flagged for `snakemake --report`, under the paper's title."""
    return flag_report(path, f"../report/{paper}.rst", PAPER_TITLES[paper], subcategory)


def flag_cxc(path, subcategory):
    """A CxC output flagged for `snakemake --report`."""
    return flag_paper(path, "cxc", subcategory)


def get_bench_claims(wildcards):
    """A paper's claims checked on the source's metrics, for its report (none for a paper without claims)."""
    return f"{RESULTS}/tables/claims/{wildcards.bench}.md" if wildcards.bench in CLAIM_ORDER else []


# The models trained on TROHN-Text (trainer negclip): BiVLC's Table 6 counts their hard negatives.
TROHN_TEXT_MODELS = sorted(m for m in TRAINED if MODEL_SPECS[m].get("trainer") == "negclip")


def get_trohn_text_histories():
    """The training summaries (history.json) of the TROHN-Text models, which count their hard negatives."""
    return [f"{RESULTS}/models/{m}/history.json" for m in TROHN_TEXT_MODELS]


# --- paired tests of model pairs over the same instances of an accuracy benchmark (papers.smk) -----------------
# BiVLC, BISON, MCIC and SugarCrepe (itmbench.papers.paired.PAIRED_BENCHMARKS): params.yaml report.<bench>_paired


def paired_pairs(bench):
    """params.yaml report.<bench>_paired: the pairs whose two models both score the benchmark in this source."""
    scored = set(scored_models(bench)) if bench in PAIR_BENCHMARKS else set()
    return [(a, b) for a, b in config["report"].get(f"{bench}_paired", []) if a in scored and b in scored]


def bivlc_paired_pairs():
    """params.yaml report.bivlc_paired, as `paired_pairs`."""
    return paired_pairs("bivlc")


def get_paired_scores(bench):
    """The per-instance score files of every model of a benchmark's pairs."""
    models = sorted({m for pair in paired_pairs(bench) for m in pair})
    return [f"{RESULTS}/scores/{bench}/{m}.parquet" for m in models]


def get_paired_flags_of(bench):
    """--scores MODEL=PATH for each model of a benchmark's pairs and --pair A=B for each pair."""
    models = sorted({m for pair in paired_pairs(bench) for m in pair})
    flags = [f"--scores {m}={RESULTS}/scores/{bench}/{m}.parquet" for m in models]
    flags += [f"--pair {a}={b}" for a, b in paired_pairs(bench)]
    return " ".join(flags)


def get_paired_tables(wildcards):
    """The paired-test tables the claims read (each paired benchmark's, where it has pairs)."""
    return [f"{RESULTS}/tables/{b}/paired.csv" for b in PAIRED_BENCHMARKS if paired_pairs(b)]


def get_paired_flags(wildcards, input):
    return " ".join(f"--paired {path}" for path in input.get("paired", []))


def get_claims_paper_paired(wildcards):
    """One paper's paired-test table, for its claims (none where it has no pairs)."""
    bench = wildcards.bench
    return [f"{RESULTS}/tables/{bench}/paired.csv"] if bench in PAIRED_BENCHMARKS and paired_pairs(bench) else []


def claims_table_files(papers):
    """The tables (CSV) the papers' claims read (each claims module's `TABLES`) that this source's run writes."""
    from itmbench.papers.claims import claims_tables

    paths = [f"{RESULTS}/tables/{p}/{name}.csv" for p in papers for name in claims_tables(p)]
    return [p for p in paths if produced_here(p)]


def get_claims_tables(wildcards):
    """The tables every paper's claims read (the claims rule), or one paper's (claims_paper)."""
    from itmbench.papers.claims import CLAIM_ORDER

    return claims_table_files([wildcards.bench] if "bench" in wildcards.keys() else CLAIM_ORDER)


def get_table_flags(wildcards, input):
    return " ".join(f"--table {path}" for path in input.get("tables", []))

# --- BiVLC's Figure 4, from the per-instance scores of the models it contrasts (papers.smk) ----------------------


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


# --- BISON's Table 2 and Figures 6 and 14, from its queries and the models' embeddings (papers.smk) -----------


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
    """Table 4's inputs: the captions (references), and each captioner's generated captions and BISON metrics."""
    inputs = {"captions": f"{DATA}/items/captions.parquet"}
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


# --- ECCV's and CxC's paired tests over the same queries, and ECCV's ranking correlations (papers.smk) -----------


def gallery_paired_pairs(bench):
    """params.yaml report.<bench>_paired: the pairs whose two models both score the gallery benchmark here."""
    scored = set(scored_models(bench)) if bench in PAIR_BENCHMARKS else set()
    return [(a, b) for a, b in config["report"][f"{bench}_paired"] if a in scored and b in scored]


def get_gallery_paired_scores(wildcards):
    """The per-query score files of every model of the benchmark's pairs, by model."""
    models = sorted({m for pair in gallery_paired_pairs(wildcards.gallery) for m in pair})
    return {m: f"{RESULTS}/scores/{wildcards.gallery}/{m}.parquet" for m in models}


def get_gallery_paired_flags(wildcards, input):
    """--scores MODEL=PATH for each model and --pair A=B for each pair."""
    flags = [f"--scores {m}={path}" for m, path in input.items()]
    flags += [f"--pair {a}={b}" for a, b in gallery_paired_pairs(wildcards.gallery)]
    return " ".join(flags)


def eccv_rank_tau_models():
    """The models ECCV's ranking correlations rank: its image-text models (kind 'contrastive', as Table 5's)."""
    kinds = json.loads(get_model_kinds())
    scored = scored_models("eccv") if "eccv" in PAIR_BENCHMARKS else []
    return [m for m in scored if kinds.get(m) == "contrastive"]


def get_eccv_rank_tau_scores(wildcards):
    return {m: f"{RESULTS}/scores/eccv/{m}.parquet" for m in eccv_rank_tau_models()}


def get_eccv_rank_tau_flags(wildcards, input):
    return " ".join(f"--scores {m}={path}" for m, path in input.items())


# --- files a benchmark's build takes from a rule before it (registry BenchmarkEntry.inputs) --------------------

MCIC_PV_CHOICE = f"{RESULTS}/mcic/pv_choice.json"  # OPTIMIZE-PV's chosen point (rule mcic_optimize_pv)
BUILD_INPUT_FILES = {"pv_choice": MCIC_PV_CHOICE}


def bench_build_inputs(bench):
    """NAME -> file of each input the benchmark's build takes (none on a source without world builds)."""
    if SOURCE != "world":
        return {}
    return {name: BUILD_INPUT_FILES[name] for name in BENCHMARKS[bench].inputs}


def bench_build_input_flags(bench):
    """`--input NAME=FILE` of each input the benchmark's build takes."""
    return " ".join(f"--input {name}={path}" for name, path in bench_build_inputs(bench).items())


def get_bench_inputs(wildcards):
    return list(bench_build_inputs(wildcards.bench).values())


def get_bench_input_flags(wildcards):
    return bench_build_input_flags(wildcards.bench)


def get_mcic_build_inputs(wildcards):  # MCIC's train split: the same build, its own rule (mcic_train_split)
    return list(bench_build_inputs("mcic").values())


def get_mcic_build_input_flags(wildcards):
    return bench_build_input_flags("mcic")


MCIC_PV_KEYS = ("pv_grid", "pv_loss", "pv_min_count", "pv_seed", "pv_search_split", "pv_train_split")


def get_mcic_pv_params(wildcards):
    """The mcic keys OPTIMIZE-PV reads: they alone rerun the search."""
    return json.dumps({k: config["mcic"][k] for k in MCIC_PV_KEYS}, sort_keys=True)
