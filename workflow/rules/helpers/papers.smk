# Input functions of the papers' tables and figures filled from the world (workflow/rules/papers.smk).

from itmbench.papers.claims import CLAIM_ORDER
from itmbench.papers.registry import baseline_metrics_files
from itmbench.papers.world import PAPER_BENCHMARKS, PAPER_TITLES, world_table_paths
from itmbench.papers.world_figures import world_figure_paths
from snakemake.io import report as snakemake_report

WORLD_PAPERS = sorted(PAPER_BENCHMARKS)


def get_world_paper_metrics(paper):
    """The metrics files a paper's world tables read (BISON also reads the retrieval benchmark's, and its
    caption-metric baseline's)."""
    models = [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAPER_BENCHMARKS[paper] for m in scored_models(b)]
    return models + baseline_metrics_files(paper, config, RESULTS)


def get_world_figure_metrics(paper):
    """The metrics files a paper's world figures read: its own benchmark's."""
    return [f"{RESULTS}/metrics/{paper}/{m}.json" for m in scored_models(paper)]


def get_report_rows(paper):
    """params.yaml report.rows.<paper> as canonical JSON (world model -> printed row)."""
    return json.dumps(config["report"]["rows"].get(paper, {}), sort_keys=True)


def get_report_table_options(paper):
    """The report options a paper's tables read (only BISON's Table 1 reads one)."""
    options = {"bison_table1_model": config["report"]["bison_table1_model"]} if paper == "bison" else {}
    return json.dumps(options, sort_keys=True)


def flag_report(path, caption, category, subcategory):
    """An output flagged for `snakemake --report` (a named helper: `report(` opens a directive in .smk files)."""
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
    """The Markdown of a paper's world tables, for its report (none for a benchmark that is no paper's)."""
    if wildcards.bench not in WORLD_PAPERS:
        return []
    return [p for p in world_table_paths(wildcards.bench, f"{RESULTS}/tables/{wildcards.bench}") if p.endswith(".md")]


def get_bench_world_figures(wildcards):
    """The PNG of a paper's world figures, for its report (none for a benchmark that is no paper's)."""
    if wildcards.bench not in WORLD_PAPERS:
        return []
    return [p for p in world_figure_paths(wildcards.bench, f"{RESULTS}/figures/{wildcards.bench}") if p.endswith(".png")]


def get_bench_claims(wildcards):
    """A paper's claims checked on the source's metrics, for its report (none for a paper without claims)."""
    return f"{RESULTS}/tables/claims/{wildcards.bench}.md" if wildcards.bench in CLAIM_ORDER else []


# The models trained on TROHN-Text (trainer negclip): BiVLC's Table 6 counts their hard negatives.
TROHN_TEXT_MODELS = sorted(m for m in TRAINED if MODEL_SPECS[m].get("trainer") == "negclip")


def get_trohn_text_histories():
    """The training summaries (history.json) of the TROHN-Text models, which count their hard negatives."""
    return [f"{RESULTS}/models/{m}/history.json" for m in TROHN_TEXT_MODELS]
