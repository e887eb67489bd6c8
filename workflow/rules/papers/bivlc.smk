# BiVLC's rules beyond its tables and headline figure (included by rules/papers.smk).

if TROHN_TEXT_MODELS:

    rule world_trohn_text_table:
        input:
            get_trohn_text_histories(),
        output:
            csv=flag_paper(f"{RESULTS}/tables/bivlc/table6.csv", "bivlc", "tables"),
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
            PAPER_ENV
        shell:
            "itmbench trohn-text-table {input} --out-csv {output.csv} --confidence {params.confidence} > {log} 2>&1"



# BiVLC's Figure 4 (a diagram in the paper) measured: the margins of the positive caption over the negative image
# and of the positive image over the negative caption, from the models' per-instance scores; drawn by its own rule.
if bivlc_figure4_models():

    rule bivlc_figure4_data:
        input:
            unpack(get_bivlc_figure4_scores),
        output:
            csv=flag_paper(f"{RESULTS}/tables/bivlc/figure4.csv", "bivlc", "tables"),
            md=f"{RESULTS}/tables/bivlc/figure4.md",
            tex=f"{RESULTS}/tables/bivlc/figure4.tex",
        params:
            flags=get_bivlc_figure4_flags,
            source=SOURCE,
            config=get_bivlc_figure4_config,
            score=get_score_params,
            rows=get_report_rows("bivlc"),
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/bivlc_figure4_data.log",
        benchmark:
            "benchmarks/rules/figures/bivlc_figure4_data.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bivlc-figure4-data {params.flags} --source {params.source} --config {params.config:q} "
            "--score {params.score:q} --rows {params.rows:q} --out-csv {output.csv} > {log} 2>&1"

    rule bivlc_figure4:
        input:
            data=f"{RESULTS}/tables/bivlc/figure4.csv",
        output:
            png=flag_paper(f"{RESULTS}/figures/bivlc/figure4.png", "bivlc", "figures"),
            pdf=f"{RESULTS}/figures/bivlc/figure4.pdf",
        params:
            source=SOURCE,
            dpi=config["report"]["dpi"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/bivlc_figure4.log",
        benchmark:
            "benchmarks/rules/figures/bivlc_figure4.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bivlc-figure4 --data {input.data} --source {params.source} --dpi {params.dpi} "
            "--out-png {output.png} > {log} 2>&1"
