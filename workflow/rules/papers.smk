# Each paper's tables in its own layout and its headline figure, filled from the world's metrics,
# beside the published numbers. One tables rule and one figures rule per paper (plotting is separate
# from compute: restyling a figure reruns only its rule), and each paper's claims on their own.

for _paper in WORLD_PAPERS:

    rule:
        name:
            f"world_tables_{_paper}"
        input:
            get_world_paper_metrics(_paper),
        output:
            get_world_table_outputs(_paper),
        params:
            paper=_paper,
            rows=get_report_rows(_paper),
            kinds=get_model_kinds(),
            options=get_report_table_options(_paper),
            out=get_first_output_dir,
        threads: 1
        resources:
            mem_mb=1000,
        log:
            f"logs/tables/world_{_paper}.log",
        benchmark:
            f"benchmarks/rules/tables/world_{_paper}.tsv"
        conda:
            ENV
        shell:
            "itmbench world-paper-tables {input} --paper {params.paper} --rows {params.rows:q} "
            "--kinds {params.kinds:q} --options {params.options:q} --out-dir {params.out} > {log} 2>&1"

    rule:
        name:
            f"world_figures_{_paper}"
        input:
            get_world_figure_metrics(_paper),
        output:
            get_world_figure_outputs(_paper),
        params:
            paper=_paper,
            rows=get_report_rows(_paper),
            kinds=get_model_kinds(),
            dpi=config["report"]["dpi"],
            out=get_first_output_dir,
        threads: 1
        resources:
            mem_mb=1000,
        log:
            f"logs/figures/world_{_paper}.log",
        benchmark:
            f"benchmarks/rules/figures/world_{_paper}.tsv"
        conda:
            ENV
        shell:
            "itmbench world-paper-figures {input} --paper {params.paper} --rows {params.rows:q} "
            "--kinds {params.kinds:q} --dpi {params.dpi} --out-dir {params.out} > {log} 2>&1"


rule claims_paper:
    input:
        metrics=get_bench_metrics,
        paired=get_claims_paper_paired,
        tables=get_claims_tables,
    output:
        csv=f"{RESULTS}/tables/claims/{{bench}}.csv",
        md=f"{RESULTS}/tables/claims/{{bench}}.md",
    params:
        metrics_dir=get_metrics_root,
        source=SOURCE,
        kinds=get_model_kinds(),
        paired=get_paired_flags,
        tables=get_table_flags,
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/tables/claims_{bench}.log",
    benchmark:
        "benchmarks/rules/tables/claims_{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench claims --metrics-dir {params.metrics_dir} --source {params.source} --kinds {params.kinds:q} "
        "--paper {wildcards.bench} {params.paired} {params.tables} --out-csv {output.csv} > {log} 2>&1"


# Paired tests of model pairs over the same instances of each accuracy benchmark with pairs (report.<bench>_paired):
# one rule per benchmark (<bench>_paired), from its per-instance scores.
for _bench in PAIRED_BENCHMARKS:
    if not paired_pairs(_bench):
        continue

    rule:
        name:
            f"{_bench}_paired"
        input:
            get_paired_scores(_bench),
        output:
            csv=flag_paper(f"{RESULTS}/tables/{_bench}/paired.csv", _bench, "tables"),
            md=f"{RESULTS}/tables/{_bench}/paired.md",
            tex=f"{RESULTS}/tables/{_bench}/paired.tex",
        params:
            bench=_bench,
            flags=get_paired_flags_of(_bench),
            score=get_score_params,
        threads: 1
        resources:
            mem_mb=2000,
        log:
            f"logs/tables/{_bench}_paired.log",
        benchmark:
            f"benchmarks/rules/tables/{_bench}_paired.tsv"
        conda:
            ENV
        shell:
            "itmbench paired-tests --name {params.bench} {params.flags} --config {params.score:q} "
            "--out-csv {output.csv} > {log} 2>&1"


# The model pairs of each paper's gallery benchmark (registry `ranks_gallery`; report.<bench>_paired) compared over
# the same queries: a paired bootstrap of the difference of their per-query metrics, from the per-query score files
# (never re-scored); the claims read it.
_GALLERY_PAIRED = [b for b in sorted(GALLERY_BENCHMARKS & set(PAPER_ENTRIES)) if gallery_paired_pairs(b)]
if _GALLERY_PAIRED:

    rule gallery_paired:
        input:
            unpack(get_gallery_paired_scores),
        output:
            csv=f"{RESULTS}/tables/{{gallery}}/paired.csv",
            md=f"{RESULTS}/tables/{{gallery}}/paired.md",
            tex=f"{RESULTS}/tables/{{gallery}}/paired.tex",
        wildcard_constraints:
            gallery="|".join(_GALLERY_PAIRED),
        params:
            flags=get_gallery_paired_flags,
            score=get_score_params,
        threads: 1
        resources:
            mem_mb=4000,
        log:
            "logs/tables/{gallery}_paired.log",
        benchmark:
            "benchmarks/rules/tables/{gallery}_paired.tsv"
        conda:
            ENV
        shell:
            "itmbench gallery-paired --name {wildcards.gallery} {params.flags} --config {params.score:q} "
            "--out-csv {output.csv} > {log} 2>&1"


# Each paper's own rules beyond the shared ones here: workflow/rules/papers/<paper>.smk, for each registered paper
# that has one, in the registry's order.
for _paper in PAPER_ENTRIES:
    if os.path.exists(os.path.join(RULES_DIR, "papers", f"{_paper}.smk")):

        include: f"papers/{_paper}.smk"
