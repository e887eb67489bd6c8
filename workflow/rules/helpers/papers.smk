# Input functions of the papers' tables and figures filled from the world (workflow/rules/papers.smk).

from itmbench.papers.claims import CLAIM_ORDER
from itmbench.papers.paired import PAIRED_BENCHMARKS
from itmbench.papers.registry import GALLERY_BENCHMARKS, PAPERS as PAPER_ENTRIES, baseline_metrics_files
from itmbench.papers.world import PAPER_BENCHMARKS, PAPER_TITLES, world_table_paths
from itmbench.papers.world_figures import world_figure_paths
from snakemake.io import report as snakemake_report

# The papers whose every benchmark the source has (on COCO, a paper of a world-only benchmark is left out).
WORLD_PAPERS = sorted(p for p, benches in PAPER_BENCHMARKS.items() if set(benches) <= set(WORLD_BENCHMARKS))


def get_world_paper_metrics(paper):
    """The metrics files a paper's world tables read: its benchmarks' (the registry's `benchmarks`, the retrieval
    benchmark's among them for a paper that reads it) and its baselines' (`baselines`)."""
    models = [f"{RESULTS}/metrics/{b}/{m}.json" for b in PAPER_BENCHMARKS[paper] for m in scored_models(b)]
    return models + baseline_metrics_files(paper, config, RESULTS, SOURCE)


def get_world_figure_metrics(paper):
    """The metrics files a paper's world figures read: its own benchmark's."""
    return [f"{RESULTS}/metrics/{paper}/{m}.json" for m in scored_models(paper)]


def get_report_rows(paper):
    """params.yaml report.rows.<paper> as canonical JSON (world model -> printed row)."""
    return json.dumps(config["report"]["rows"].get(paper, {}), sort_keys=True)


# A paper's own part in the shared rules, each a function of none that its helpers/papers/<paper>.smk adds: by paper,
# the report options its tables read; by benchmark, the params its build reads (default: its params section), the
# files its build reads beyond the world and the files its report shows beyond its tables.
REPORT_TABLE_OPTIONS = {}
BUILD_SECTIONS = {}
BUILD_EXTRA_INPUTS = {}
REPORT_EXTRA_INPUTS = {}
# The papers' rules built only when a user names them (the registry's `named_targets`; docs/outputs.md, "Named
# targets"), for their CPU time: what they write is no input of the index, so the default run leaves them out.
NAMED_TARGET_RULES = {rule for entry in PAPER_ENTRIES.values() for rule in entry.named_targets}


def get_report_table_options(paper):
    """The report options a paper's tables read (its REPORT_TABLE_OPTIONS function's; none for most papers)."""
    options = REPORT_TABLE_OPTIONS[paper]() if paper in REPORT_TABLE_OPTIONS else {}
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


def flag_paper(path, paper, subcategory):
    """A paper's table (its CSV) or figure (its PNG) flagged for `snakemake --report`, under the paper's title."""
    return flag_report(path, f"../report/{paper}.rst", PAPER_TITLES[paper], subcategory)


def get_bench_claims(wildcards):
    """A paper's claims checked on the source's metrics, for its report (none for a paper without claims)."""
    return f"{RESULTS}/tables/claims/{wildcards.bench}.md" if wildcards.bench in CLAIM_ORDER else []


# --- paired tests of model pairs over the same instances of an accuracy benchmark (papers.smk) -----------------
# itmbench.papers.paired.PAIRED_BENCHMARKS: params.yaml report.<bench>_paired


def paired_pairs(bench):
    """params.yaml report.<bench>_paired: the pairs whose two models both score the benchmark in this source."""
    scored = set(scored_models(bench)) if bench in PAIR_BENCHMARKS else set()
    return [(a, b) for a, b in config["report"].get(f"{bench}_paired", []) if a in scored and b in scored]


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


# --- paired tests over the same queries of the papers' gallery benchmarks (registry `ranks_gallery`, papers.smk) -


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


# --- files a benchmark's build takes from a rule before it (registry BenchmarkEntry.inputs) --------------------


def build_input_file(bench, name):
    """The file of a build's input NAME: results/<source>/<bench>/<name>.json, which the paper's own rule before the
    build writes (workflow/rules/papers/<paper>.smk)."""
    return f"{RESULTS}/{bench}/{name}.json"


def bench_build_inputs(bench):
    """NAME -> file of each input the benchmark's build takes (none on a source without world builds)."""
    if SOURCE != "world":
        return {}
    return {name: build_input_file(bench, name) for name in BENCHMARKS[bench].inputs}


def bench_build_input_flags(bench):
    """`--input NAME=FILE` of each input the benchmark's build takes."""
    return " ".join(f"--input {name}={path}" for name, path in bench_build_inputs(bench).items())


def get_bench_inputs(wildcards):
    return list(bench_build_inputs(wildcards.bench).values())


def get_bench_input_flags(wildcards):
    return bench_build_input_flags(wildcards.bench)


# Each paper's own input functions, before the shared rules that use them: helpers/papers/<paper>.smk, for each
# paper of the registry that has one.
for _paper in PAPER_ENTRIES:
    if os.path.exists(os.path.join(RULES_DIR, "helpers", "papers", f"{_paper}.smk")):

        include: f"papers/{_paper}.smk"
