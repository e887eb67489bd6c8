# The released source: every released file declared once (src/itmbench/sources/released.yaml),
# fetched through DVC from its URL or from `mirror` (a folder or base URL), md5-checked.


rule fetch_released:
    output:
        f"{RAW}/{{released_path}}",
    params:
        key=get_released_key,
        mirror=get_mirror_flag,
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/fetch/{released_path}.log",
    benchmark:
        "benchmarks/rules/fetch/{released_path}.tsv"
    conda:
        ENV
    shell:
        "itmbench fetch --key {params.key} --out {output} {params.mirror} {params.registry} > {log} 2>&1"


rule released_statistics:
    input:
        get_statistics_inputs,
    output:
        csv="results/released/tables/statistics/{paper}.csv",
        md="results/released/tables/statistics/{paper}.md",
        tex="results/released/tables/statistics/{paper}.tex",
    params:
        raw=RAW,
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=3000,
    log:
        "logs/released/statistics_{paper}.log",
    benchmark:
        "benchmarks/rules/released/statistics_{paper}.tsv"
    conda:
        ENV
    shell:
        "itmbench released-statistics --paper {wildcards.paper} --raw {params.raw} --out-csv {output.csv} "
        "{params.registry} > {log} 2>&1"


rule released_paper_tables:
    input:
        get_paper_table_inputs,
    output:
        papers=[f"results/released/{path}" for paper in PAPER_ENTRIES.values() for path in paper.released_outputs],
        claims=expand("results/released/tables/claims/claims.{ext}", ext=("csv", "md")),
    params:
        raw=RAW,
        out=get_released_root,
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=3000,
    log:
        "logs/released/paper_tables.log",
    benchmark:
        "benchmarks/rules/released/paper_tables.tsv"
    conda:
        ENV
    shell:
        "itmbench released-paper-tables --raw {params.raw} --out-dir {params.out} {params.registry} > {log} 2>&1"


rule report_released:
    input:
        notebook=f"{NOTEBOOKS}/released.ipynb",
        statistics=get_released_targets(),
        tables=rules.released_paper_tables.output,
    output:
        "reports/released/released.html",
    params:
        parameters=json.dumps({"root": "results/released", "papers": STATISTICS_PAPERS}, sort_keys=True),
        title="The papers' released files: statistics and tables regenerated from them",
        nav=get_report_nav,
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/reports/released.log",
    benchmark:
        "benchmarks/rules/reports/released.tsv"
    conda:
        ENV
    shell:
        "itmbench notebook --notebook {input.notebook} --parameters {params.parameters:q} --title {params.title:q} "
        "{params.nav} --out {output} > {log} 2>&1"
