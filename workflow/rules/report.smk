# Reports: tables (CSV, Markdown, LaTeX), papermill notebooks rendered to HTML, and the index.


rule index:
    input:
        unpack(get_index_inputs),
    output:
        "reports/index.html",
    params:
        source=SOURCE,
    threads: 1
    resources:
        mem_mb=500,
    log:
        "logs/reports/index.log",
    benchmark:
        "benchmarks/rules/reports/index.tsv"
    conda:
        ENV
    shell:
        "itmbench index {input.reports} --claims {input.claims} --tables {input.tables} "
        "--artefacts {input.artefacts} --source {params.source} --out {output} > {log} 2>&1"


rule table_benchmark:
    input:
        get_bench_metrics,
    output:
        csv=f"{RESULTS}/tables/{{bench}}/{{bench}}.csv",
        md=f"{RESULTS}/tables/{{bench}}/{{bench}}.md",
        tex=f"{RESULTS}/tables/{{bench}}/{{bench}}.tex",
    params:
        title=get_bench_title,
        absent=get_absent_flags,
        grid=get_grid_of,
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/tables/{bench}.log",
    benchmark:
        "benchmarks/rules/tables/{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench table-benchmark {input} --name {wildcards.bench} --out-csv {output.csv} --title {params.title:q} "
        "{params.absent} "
        "{params.grid} > {log} 2>&1"


rule report_benchmark:
    input:
        notebook=get_bench_notebook,
        table=rules.table_benchmark.output.csv,
        audit=get_bench_audit,
        metrics=get_bench_metrics,
        paper_tables=get_bench_world_tables,
        figures=get_bench_world_figures,
        claims=get_bench_claims,
        generators=get_bench_report_generators,
        images=get_bench_report_images,
    output:
        f"reports/{SOURCE}/{{bench}}.html",
    params:
        parameters=get_bench_report_parameters,
        title=get_bench_report_title,
        nav=get_report_nav,
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/reports/{bench}.log",
    benchmark:
        "benchmarks/rules/reports/{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench notebook --notebook {input.notebook} --parameters {params.parameters:q} --title {params.title:q} "
        "{params.nav} --out {output} > {log} 2>&1"


rule claims:
    input:
        metrics=get_claims_metrics,
        paired=get_paired_tables,
        tables=get_claims_tables,
    output:
        csv=f"{RESULTS}/tables/claims/claims.csv",
        md=f"{RESULTS}/tables/claims/claims.md",
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
        "logs/tables/claims.log",
    benchmark:
        "benchmarks/rules/tables/claims.tsv"
    conda:
        ENV
    shell:
        "itmbench claims --metrics-dir {params.metrics_dir} --source {params.source} --kinds {params.kinds:q} "
        "{params.paired} {params.tables} --out-csv {output.csv} > {log} 2>&1"
