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
        get_bench_metrics,
    output:
        csv=f"{RESULTS}/tables/claims/{{bench}}.csv",
        md=f"{RESULTS}/tables/claims/{{bench}}.md",
    params:
        metrics_dir=get_metrics_root,
        source=SOURCE,
        kinds=get_model_kinds(),
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
        "--paper {wildcards.bench} --out-csv {output.csv} > {log} 2>&1"


if TROHN_TEXT_MODELS:

    rule world_trohn_text_table:
        input:
            get_trohn_text_histories(),
        output:
            csv=f"{RESULTS}/tables/bivlc/table6.csv",
            md=f"{RESULTS}/tables/bivlc/table6.md",
            tex=f"{RESULTS}/tables/bivlc/table6.tex",
        params:
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/trohn_text.log",
        benchmark:
            "benchmarks/rules/tables/trohn_text.tsv"
        conda:
            ENV
        shell:
            "itmbench trohn-text-table {input} --out-csv {output.csv} --confidence {params.confidence} > {log} 2>&1"
