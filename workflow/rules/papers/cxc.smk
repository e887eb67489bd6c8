# Crisscrossed Captions' rules beyond its tables and headline figure (included by rules/papers.smk).

# CxC's Figures 3-5 and Table 1 come from the rated pairs and the models' scores, not from metrics: one rule
# computes each figure's numbers (a table), another draws it, so restyling never recomputes.
# Figures 3 and 4 from any source's rated pairs; the appendix's Figure 2 from each rater's rating, which only
# the world keeps (the released files, and so the coco source, hold one mean per pair).
CXC_DATA_FIGURES = ("figure3", "figure4") + (("appendix_figure2",) if SOURCE == "world" else ())


rule cxc_figure_data:
    input:
        bench=f"{DATA}/cxc/items.parquet",
    output:
        csv=flag_cxc(f"{RESULTS}/tables/cxc/{{cxc_data_figure}}.csv", "tables"),
        md=f"{RESULTS}/tables/cxc/{{cxc_data_figure}}.md",
        tex=f"{RESULTS}/tables/cxc/{{cxc_data_figure}}.tex",
    wildcard_constraints:
        cxc_data_figure="|".join(CXC_DATA_FIGURES),
    params:
        bench_dir=dir_of_input("bench"),
        source=SOURCE,
        config=get_cxc_figure_data_config,
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/figures/cxc_{cxc_data_figure}_data.log",
    benchmark:
        "benchmarks/rules/figures/cxc_{cxc_data_figure}_data.tsv"
    conda:
        PAPER_ENV
    shell:
        "itmbench cxc-figure-data --figure {wildcards.cxc_data_figure} --bench {params.bench_dir} "
        "--source {params.source} --config {params.config:q} --out-csv {output.csv} > {log} 2>&1"


if cxc_encoders_scored():

    rule cxc_encoder_sts:
        input:
            get_cxc_bow_scores,
        output:
            points=f"{RESULTS}/figures/cxc/figure5_points.csv",
            csv=flag_cxc(f"{RESULTS}/tables/cxc/figure5.csv", "tables"),
            md=f"{RESULTS}/tables/cxc/figure5.md",
            tex=f"{RESULTS}/tables/cxc/figure5.tex",
        params:
            source=SOURCE,
            config=cxc_section_json("encoders", "bow_sample", "seed"),
            n_boot=config["score"]["n_boot"],
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/cxc_figure5_data.log",
        benchmark:
            "benchmarks/rules/figures/cxc_figure5_data.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench cxc-encoder-sts --scores {input} --source {params.source} --config {params.config:q} "
            "--n-boot {params.n_boot} --confidence {params.confidence} --out-points {output.points} "
            "--out-csv {output.csv} > {log} 2>&1"

    rule cxc_table1:
        input:
            bench=f"{DATA}/cxc/items.parquet",
            captions=f"{DATA}/items/captions.parquet",
            scores=get_cxc_encoder_scores,
        output:
            csv=flag_cxc(f"{RESULTS}/tables/cxc/table1.csv", "tables"),
            md=f"{RESULTS}/tables/cxc/table1.md",
            tex=f"{RESULTS}/tables/cxc/table1.tex",
        params:
            bench_dir=dir_of_input("bench"),
            scores=get_cxc_scores_flags,
            source=SOURCE,
            config=cxc_section_json("encoders"),
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/cxc_table1.log",
        benchmark:
            "benchmarks/rules/tables/cxc_table1.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench cxc-table1 --bench {params.bench_dir} --captions {input.captions} {params.scores} "
            "--source {params.source} --config {params.config:q} --confidence {params.confidence} "
            "--out-csv {output.csv} > {log} 2>&1"


rule cxc_figure:
    input:
        unpack(get_cxc_figure_inputs),
    output:
        png=flag_cxc(f"{RESULTS}/figures/cxc/{{cxc_figure}}.png", "figures"),
        pdf=f"{RESULTS}/figures/cxc/{{cxc_figure}}.pdf",
    wildcard_constraints:
        cxc_figure="|".join(CXC_DATA_FIGURES + (("figure5",) if cxc_encoders_scored() else ())),
    params:
        points=get_cxc_points_flag,
        source=SOURCE,
        config=get_cxc_figure_config,
        dpi=config["report"]["dpi"],
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/figures/cxc_{cxc_figure}.log",
    benchmark:
        "benchmarks/rules/figures/cxc_{cxc_figure}.tsv"
    conda:
        PAPER_ENV
    shell:
        "itmbench cxc-figure --figure {wildcards.cxc_figure} --data {input.data} {params.points} "
        "--source {params.source} --config {params.config:q} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"


# CxC's Figures 3 and 4 from the released rating files (each pair's mean rating), the numbers and their drawing.
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
        PAPER_ENV
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
        PAPER_ENV
    shell:
        "itmbench cxc-figure --figure {wildcards.cxc_data_figure} --data {input.data} --source released "
        "--config {params.config:q} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"
