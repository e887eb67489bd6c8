# ECCV Caption's rules beyond its tables and headline figure (included by rules/papers.smk).

if len(eccv_rank_tau_models()) >= 3:

    rule eccv_rank_tau:
        input:
            unpack(get_eccv_rank_tau_scores),
        output:
            csv=f"{RESULTS}/tables/eccv/rank_tau.csv",
            md=f"{RESULTS}/tables/eccv/rank_tau.md",
            tex=f"{RESULTS}/tables/eccv/rank_tau.tex",
        params:
            flags=get_eccv_rank_tau_flags,
            score=get_score_params,
        threads: 1
        resources:
            mem_mb=4000,
        log:
            "logs/tables/eccv_rank_tau.log",
        benchmark:
            "benchmarks/rules/tables/eccv_rank_tau.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-rank-tau {params.flags} --config {params.score:q} --out-csv {output.csv} > {log} 2>&1"


# ECCV Caption's appendix E in the world: the benchmark rebuilt with each subset of its machine annotators and
# scored (Table E.1, Figure E.2's numbers), the annotators' ranks among all models (Figure E.3's numbers) and
# every model's rank under each metric (Figure 5's), and the figures drawn from those tables by their own rule
# (restyling never recomputes). Appendices A.2 and B.3: the annotators' similarity (Table A.1, from their
# embedding caches) and the workers' answers per annotator and rank (Table B.2, from the build's annotations).
if SOURCE == "world":

    rule eccv_appendix_e:
        input:
            bench=f"{DATA}/eccv/items.parquet",
            scores=get_eccv_evaluated_scores,
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/tableE1.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/tableE1.md",
            tex=f"{RESULTS}/tables/eccv/tableE1.tex",
            bias_csv=f"{RESULTS}/tables/eccv/figureE2.csv",
            bias_md=f"{RESULTS}/tables/eccv/figureE2.md",
            bias_tex=f"{RESULTS}/tables/eccv/figureE2.tex",
        params:
            bench_dir=dir_of_input("bench"),
            models=get_eccv_evaluated_flags,
            score=get_eccv_score_settings,
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=2000,
        log:
            "logs/tables/eccv_appendix_e.log",
        benchmark:
            "benchmarks/rules/tables/eccv_appendix_e.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-appendix-e --bench {params.bench_dir} {params.models} {params.score} --source {params.source} "
            "--out-table {output.csv} --out-bias {output.bias_csv} > {log} 2>&1"


    rule eccv_annotator_ranks:
        input:
            get_eccv_metrics,
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/figureE3.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/figureE3.md",
            tex=f"{RESULTS}/tables/eccv/figureE3.tex",
            ranks_csv=f"{RESULTS}/tables/eccv/figure5.csv",
            ranks_md=f"{RESULTS}/tables/eccv/figure5.md",
            ranks_tex=f"{RESULTS}/tables/eccv/figure5.tex",
        params:
            kinds=get_model_kinds(),
            annotators=get_eccv_annotator_flags,
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/eccv_annotator_ranks.log",
        benchmark:
            "benchmarks/rules/tables/eccv_annotator_ranks.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-annotator-ranks {input} --kinds {params.kinds:q} {params.annotators} "
            "--source {params.source} --out-csv {output.csv} --out-ranks {output.ranks_csv} > {log} 2>&1"


    rule eccv_annotator_similarity:
        input:
            bench=f"{DATA}/eccv/items.parquet",
            embeddings=get_eccv_similarity_embeddings,
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/tableA1.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/tableA1.md",
            tex=f"{RESULTS}/tables/eccv/tableA1.tex",
        params:
            bench_dir=dir_of_input("bench"),
            embeddings=get_eccv_similarity_flags,
            config=get_eccv_report_params,
            score=get_eccv_score_settings,
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=2000,
        log:
            "logs/tables/eccv_annotator_similarity.log",
        benchmark:
            "benchmarks/rules/tables/eccv_annotator_similarity.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-annotator-similarity --bench {params.bench_dir} {params.embeddings} --config {params.config:q} "
            "{params.score} --source {params.source} --out-csv {output.csv} > {log} 2>&1"


    rule eccv_answer_shares:
        input:
            bench=f"{DATA}/eccv/items.parquet",
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/tableB2.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/tableB2.md",
            tex=f"{RESULTS}/tables/eccv/tableB2.tex",
        params:
            bench_dir=dir_of_input("bench"),
            annotators=get_eccv_annotator_name_flags,
            score=get_eccv_score_settings,
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/eccv_answer_shares.log",
        benchmark:
            "benchmarks/rules/tables/eccv_answer_shares.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-answer-shares --bench {params.bench_dir} {params.annotators} {params.score} "
            "--source {params.source} --out-csv {output.csv} > {log} 2>&1"


    rule eccv_positives_per_query:
        input:
            bench=f"{DATA}/eccv/items.parquet",
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/figure3.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/figure3.md",
            tex=f"{RESULTS}/tables/eccv/figure3.tex",
        params:
            bench_dir=dir_of_input("bench"),
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/eccv_positives_per_query.log",
        benchmark:
            "benchmarks/rules/tables/eccv_positives_per_query.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-positives-per-query --bench {params.bench_dir} --source {params.source} "
            "--out-csv {output.csv} > {log} 2>&1"


    rule eccv_figure:
        input:
            data=f"{RESULTS}/tables/eccv/{{eccv_figure}}.csv",
        output:
            png=flag_paper(f"{RESULTS}/figures/eccv/{{eccv_figure}}.png", "eccv", "figures"),
            pdf=f"{RESULTS}/figures/eccv/{{eccv_figure}}.pdf",
        wildcard_constraints:
            eccv_figure="figure3|figure5|figureE2|figureE3",
        params:
            source=SOURCE,
            dpi=config["report"]["dpi"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/eccv_{eccv_figure}.log",
        benchmark:
            "benchmarks/rules/figures/eccv_{eccv_figure}.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-figure --figure {wildcards.eccv_figure} --data {input.data} --source {params.source} "
            "--dpi {params.dpi} --out-png {output.png} > {log} 2>&1"


    # Table 2 as section 3.3 defines it: the original, CxC and PM positives measured by the human-verified pairs (the
    # annotators' candidates and the simulated workers' answers to them), r' = r ∩ h. World-only, as this file is: the
    # released files hold no candidates or answers (the audit beside it measures the same sets against the whole truth).
    rule eccv_table2:
        input:
            bench=f"{DATA}/eccv/items.parquet",
        output:
            csv=flag_paper(f"{RESULTS}/tables/eccv/table2.csv", "eccv", "tables"),
            md=f"{RESULTS}/tables/eccv/table2.md",
            tex=f"{RESULTS}/tables/eccv/table2.tex",
        params:
            bench_dir=dir_of_input("bench"),
            config=section_json("eccv"),
            score=get_eccv_score_settings,
            source=SOURCE,
        threads: 1
        resources:
            mem_mb=3000,
        log:
            "logs/tables/eccv_table2.log",
        benchmark:
            "benchmarks/rules/tables/eccv_table2.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench eccv-table2 --bench {params.bench_dir} --config {params.config:q} {params.score} "
            "--source {params.source} --out-csv {output.csv} > {log} 2>&1"


# ECCV Figure 3(a) from the released association files: the eccv files' queries by their number of positives under
# each set (eccv, cxc, original), the numbers and their drawing (the world's: rules eccv_positives_per_query and
# eccv_figure, above).
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
        PAPER_ENV
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
        PAPER_ENV
    shell:
        "itmbench eccv-figure --figure figure3 --data {input.data} --source released --dpi {params.dpi} "
        "--out-png {output.png} > {log} 2>&1"
