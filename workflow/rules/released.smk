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


rule released_cxc_figure_data:
    input:
        get_cxc_released_inputs,
    output:
        csv=flag_cxc("results/released/tables/cxc/{cxc_data_figure}.csv", "tables"),
        md="results/released/tables/cxc/{cxc_data_figure}.md",
        tex="results/released/tables/cxc/{cxc_data_figure}.tex",
    wildcard_constraints:
        cxc_data_figure="figure3|figure4",  # the released files hold each pair's mean rating, not each rater's
    params:
        raw=RAW,
        config=get_cxc_figure_data_config,
    threads: 1
    resources:
        mem_mb=3000,
    log:
        "logs/released/cxc_{cxc_data_figure}_data.log",
    benchmark:
        "benchmarks/rules/released/cxc_{cxc_data_figure}_data.tsv"
    conda:
        ENV
    shell:
        "itmbench cxc-figure-data --figure {wildcards.cxc_data_figure} --raw {params.raw} "
        "--config {params.config:q} --out-csv {output.csv} > {log} 2>&1"


rule released_cxc_figure:
    input:
        data=rules.released_cxc_figure_data.output.csv,
    output:
        png=flag_cxc("results/released/figures/cxc/{cxc_data_figure}.png", "figures"),
        pdf="results/released/figures/cxc/{cxc_data_figure}.pdf",
    wildcard_constraints:
        cxc_data_figure="figure3|figure4",
    params:
        config=get_cxc_released_figure_config,
        dpi=config["report"]["dpi"],
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/released/cxc_{cxc_data_figure}.log",
    benchmark:
        "benchmarks/rules/released/cxc_{cxc_data_figure}.tsv"
    conda:
        ENV
    shell:
        "itmbench cxc-figure --figure {wildcards.cxc_data_figure} --data {input.data} --source released "
        "--config {params.config:q} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"


# ECCV Figure 3(a) from the released association files: the eccv files' queries by their number of positives under
# each set (eccv, cxc, original), the numbers and their drawing (the world's: rules eccv_positives_per_query and
# eccv_figure, workflow/rules/eccv.smk).
rule released_eccv_figure3_data:
    input:
        get_eccv_released_inputs,
    output:
        csv=flag_paper("results/released/tables/eccv/figure3.csv", "eccv", "tables"),
        md="results/released/tables/eccv/figure3.md",
        tex="results/released/tables/eccv/figure3.tex",
    params:
        raw=RAW,
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/released/eccv_figure3_data.log",
    benchmark:
        "benchmarks/rules/released/eccv_figure3_data.tsv"
    conda:
        ENV
    shell:
        "itmbench eccv-positives-per-query --raw {params.raw} --out-csv {output.csv} > {log} 2>&1"


rule released_eccv_figure3:
    input:
        data=rules.released_eccv_figure3_data.output.csv,
    output:
        png=flag_paper("results/released/figures/eccv/figure3.png", "eccv", "figures"),
        pdf="results/released/figures/eccv/figure3.pdf",
    params:
        dpi=config["report"]["dpi"],
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/released/eccv_figure3.log",
    benchmark:
        "benchmarks/rules/released/eccv_figure3.tsv"
    conda:
        ENV
    shell:
        "itmbench eccv-figure --figure figure3 --data {input.data} --source released --dpi {params.dpi} "
        "--out-png {output.png} > {log} 2>&1"


rule released_paper_tables:
    input:
        get_paper_table_inputs,
    output:
        bivlc=expand(
            "results/released/tables/bivlc/{stem}_released.{ext}",
            stem=("table2", "table3", "table4", "table5", "section5_3", "paired"),
            ext=("csv", "md", "tex"),
        ),
        eccv=expand("results/released/tables/eccv/{stem}.{ext}", stem=("table5", "section41"), ext=("csv", "md", "tex")),
        figure=expand("results/released/figures/bivlc/gpt4v_sugarcrepe.{ext}", ext=("png", "pdf")),
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
