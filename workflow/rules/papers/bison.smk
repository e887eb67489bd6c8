# BISON's rules beyond its tables and headline figure (included by rules/papers.smk).

# BISON's section 6: each captioning metric of bison_caption_metrics a BISON scorer (a baseline of the registry,
# Paper.baselines), read by its world tables and Figure 8.
rule bison_caption_metric:
    input:
        bench=f"{DATA}/bison/items.parquet",
        captions=f"{DATA}/items/captions.parquet",
    output:
        scores=f"{RESULTS}/scores/bison_caption_metrics/{{caption_metric}}.parquet",
        metrics=f"{RESULTS}/metrics/bison_caption_metrics/{{caption_metric}}.json",
    params:
        bench_dir=dir_of_input("bench"),
        config=get_bison_caption_metrics_params,
        score=get_score_params,
    threads: 1
    resources:
        mem_mb=3000,  # METEOR's Java runs with -Xmx2G
    log:
        "logs/score/bison_caption_metrics/{caption_metric}.log",
    benchmark:
        "benchmarks/rules/score/bison_caption_metrics/{caption_metric}.tsv"
    conda:
        PAPER_ENV
    shell:
        "itmbench bison-caption-metric --metric {wildcards.caption_metric} --bench {params.bench_dir} "
        "--captions {input.captions} --config {params.config:q} --score {params.score:q} "
        "--out {output.scores} --metrics {output.metrics} > {log} 2>&1"


# BISON's Table 2 and the numbers of its Figures 6, 9 and 14 come from its queries, the captions, the models'
# embeddings and (Figure 9) each model's scores of the perturbed queries, Figure 8's from each captioner's generated
# captions and BISON scores, not from metrics: one rule computes each figure's numbers (a table), another draws it.

if SOURCE == "world":

    rule bison_table2:
        input:
            bench=f"{DATA}/bison/items.parquet",
            captions=f"{DATA}/items/captions.parquet",
        output:
            csv=flag_paper(f"{RESULTS}/tables/bison/table2.csv", "bison", "tables"),
            md=f"{RESULTS}/tables/bison/table2.md",
            tex=f"{RESULTS}/tables/bison/table2.tex",
        params:
            bench_dir=dir_of_input("bench"),
            source=SOURCE,
            config=get_bison_table2_config,
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/bison_table2.log",
        benchmark:
            "benchmarks/rules/tables/bison_table2.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-table2 --bench {params.bench_dir} --captions {input.captions} --source {params.source} "
            "--config {params.config:q} --confidence {params.confidence} --out-csv {output.csv} > {log} 2>&1"

    rule bison_perturbation_scores:
        input:
            bench=f"{DATA}/bison/items.parquet",
            captions=f"{DATA}/items/captions.parquet",
            images=f"{DATA}/items/images.npy",
            checkpoint=get_checkpoint,
        output:
            f"{RESULTS}/scores/bison_perturbations/{{model}}.parquet",
        wildcard_constraints:
            model="|".join(bison_perturbation_models()),
        params:
            spec=get_model_spec,
            checkpoint=get_checkpoint_flag,
            bench_dir=dir_of_input("bench"),
            items_dir=dir_of_input("captions"),
            config=bison_section_json("split", "seed"),
        threads: MODEL_THREADS
        resources:
            mem_mb=4000,
            gpu=1,
        log:
            "logs/score/bison_perturbations/{model}.log",
        benchmark:
            "benchmarks/rules/score/bison_perturbations/{model}.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-perturbation-scores --model {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
            "--items {params.items_dir} --bench {params.bench_dir} --captions {input.captions} "
            "--config {params.config:q} --threads {threads} --out {output} > {log} 2>&1"

    if bison_captioners():

        rule bison_generate_captions:
            input:
                captions=f"{DATA}/items/captions.parquet",
                images=f"{DATA}/items/images.npy",
                checkpoint=get_checkpoint,
            output:
                f"{RESULTS}/captions/{{model}}.parquet",
            wildcard_constraints:
                model="|".join(bison_captioners()),
            params:
                spec=get_model_spec,
                checkpoint=get_checkpoint_flag,
                items_dir=dir_of_input("captions"),
                config=bison_section_json("split"),
            threads: MODEL_THREADS
            resources:
                mem_mb=4000,
                gpu=1,
            log:
                "logs/score/bison_captions/{model}.log",
            benchmark:
                "benchmarks/rules/score/bison_captions/{model}.tsv"
            conda:
                PAPER_ENV
            shell:
                "itmbench bison-generate-captions --model {wildcards.model} --spec {params.spec:q} "
                "{params.checkpoint} --items {params.items_dir} --captions {input.captions} "
                "--config {params.config:q} --threads {threads} --out {output} > {log} 2>&1"

        rule bison_table4:
            input:
                unpack(get_bison_table4_inputs),
            output:
                csv=flag_paper(f"{RESULTS}/tables/bison/table4.csv", "bison", "tables"),
                md=f"{RESULTS}/tables/bison/table4.md",
                tex=f"{RESULTS}/tables/bison/table4.tex",
            params:
                model_files=get_bison_table4_flags,
                source=SOURCE,
                config=bison_section_json("split"),
                caption_metrics=get_bison_caption_metrics_params,
                score=get_score_params,
                rows=get_report_rows("bison"),
            threads: 1
            resources:
                mem_mb=1000,  # the metrics come from Figure 8: no METEOR here
            log:
                "logs/tables/bison_table4.log",
            benchmark:
                "benchmarks/rules/tables/bison_table4.tsv"
            conda:
                PAPER_ENV
            shell:
                "itmbench bison-table4 {params.model_files} --captions {input.captions} "
                "--caption-scores {input.caption_scores} --source {params.source} "
                "--config {params.config:q} --caption-metrics {params.caption_metrics:q} --score {params.score:q} "
                "--rows {params.rows:q} --out-csv {output.csv} > {log} 2>&1"

        rule bison_figure8_data:
            input:
                unpack(get_bison_figure8_inputs),
            output:
                csv=flag_paper(f"{RESULTS}/tables/bison/figure8.csv", "bison", "tables"),
                md=f"{RESULTS}/tables/bison/figure8.md",
                tex=f"{RESULTS}/tables/bison/figure8.tex",
                caption_scores=f"{RESULTS}/scores/bison_caption_scores.parquet",
            params:
                model_files=get_bison_figure8_flags,
                source=SOURCE,
                config=bison_section_json("split"),
                caption_metrics=get_bison_figure8_metrics,
                figure=get_bison_figure8_config,
                score=get_score_params,
                rows=get_report_rows("bison"),
            threads: 1
            resources:
                mem_mb=3000,  # METEOR's Java runs with -Xmx2G
            log:
                "logs/figures/bison_figure8_data.log",
            benchmark:
                "benchmarks/rules/figures/bison_figure8_data.tsv"
            conda:
                PAPER_ENV
            shell:
                "itmbench bison-figure8-data {params.model_files} --captions {input.captions} "
                "--source {params.source} --config {params.config:q} --caption-metrics {params.caption_metrics:q} "
                "--figure-config {params.figure:q} --score {params.score:q} --rows {params.rows:q} "
                "--out-csv {output.csv} --out-caption-scores {output.caption_scores} > {log} 2>&1"

        rule bison_figure4_data:
            input:
                unpack(get_bison_figure4_inputs),
            output:
                csv=flag_paper(f"{RESULTS}/tables/bison/figure4.csv", "bison", "tables"),
                md=f"{RESULTS}/tables/bison/figure4.md",
                tex=f"{RESULTS}/tables/bison/figure4.tex",
            params:
                model_files=get_bison_figure4_flags,
                source=SOURCE,
                world=get_bison_figure4_world,
                figure=get_bison_figure4_config,
                score=get_score_params,
                rows=get_report_rows("bison"),
            threads: 1
            resources:
                mem_mb=1000,
            log:
                "logs/figures/bison_figure4_data.log",
            benchmark:
                "benchmarks/rules/figures/bison_figure4_data.tsv"
            conda:
                PAPER_ENV
            shell:
                "itmbench bison-figure4-data {params.model_files} --scenes {input.scenes} "
                "--caption-scores {input.caption_scores} --source {params.source} --world {params.world:q} "
                "--figure-config {params.figure:q} --score {params.score:q} --rows {params.rows:q} "
                "--out-csv {output.csv} > {log} 2>&1"

    # BISON Table 6: the appendix's three captioning systems trained on each tower's frozen features (one job per
    # tower of bison_captioners.towers), then rendered beside the printed systems.
    rule bison_feature_captioners:
        input:
            captions=f"{DATA}/items/captions.parquet",
            images=f"{DATA}/items/images.npy",
            bench=f"{DATA}/bison/items.parquet",
            checkpoint=get_checkpoint,
        output:
            f"{RESULTS}/bison/table6/{{model}}.parquet",
        wildcard_constraints:
            model="|".join(config["bison_captioners"]["towers"]),
        params:
            spec=get_model_spec,
            checkpoint=get_checkpoint_flag,
            items_dir=dir_of_input("captions"),
            bench_dir=dir_of_input("bench"),
            config=bison_section_json("split"),
            captioners=get_bison_captioners_params,
            caption_metrics=get_bison_figure8_metrics,
            score=get_score_params,
        threads: MODEL_THREADS
        resources:
            mem_mb=3000,  # METEOR's Java runs with -Xmx2G
            gpu=1,
        log:
            "logs/score/bison_feature_captioners/{model}.log",
        benchmark:
            "benchmarks/rules/score/bison_feature_captioners/{model}.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-feature-captioners --tower {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
            "--items {params.items_dir} --captions {input.captions} --bench {params.bench_dir} "
            "--config {params.config:q} --captioners {params.captioners:q} --caption-metrics {params.caption_metrics:q} "
            "--score {params.score:q} --threads {threads} --out {output} > {log} 2>&1"

    rule bison_table6:
        input:
            unpack(get_bison_table6_inputs),
        output:
            csv=flag_paper(f"{RESULTS}/tables/bison/table6.csv", "bison", "tables"),
            md=f"{RESULTS}/tables/bison/table6.md",
            tex=f"{RESULTS}/tables/bison/table6.tex",
        params:
            cells=get_bison_table6_flags,
            source=SOURCE,
            captioners=get_bison_captioners_params,
            score=get_score_params,
            rows=get_report_rows("bison"),
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/bison_table6.log",
        benchmark:
            "benchmarks/rules/tables/bison_table6.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-table6 {params.cells} --captioners {params.captioners:q} --source {params.source} "
            "--score {params.score:q} --rows {params.rows:q} --out-csv {output.csv} > {log} 2>&1"

    rule bison_figure_data:
        input:
            unpack(get_bison_figure_data_inputs),
        output:
            csv=flag_paper(f"{RESULTS}/tables/bison/{{bison_data_figure}}.csv", "bison", "tables"),
            md=f"{RESULTS}/tables/bison/{{bison_data_figure}}.md",
            tex=f"{RESULTS}/tables/bison/{{bison_data_figure}}.tex",
        wildcard_constraints:
            bison_data_figure="figure6|figure9|figure14",
        params:
            bench_dir=dir_of_input("bench"),
            source=SOURCE,
            config=get_bison_figure_data_config,
            model_files=get_bison_model_file_flags,
            rows=get_report_rows("bison"),
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/bison_{bison_data_figure}_data.log",
        benchmark:
            "benchmarks/rules/figures/bison_{bison_data_figure}_data.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-figure-data --figure {wildcards.bison_data_figure} --bench {params.bench_dir} "
            "--captions {input.captions} --source {params.source} --config {params.config:q} {params.model_files} "
            "--rows {params.rows:q} --confidence {params.confidence} --out-csv {output.csv} > {log} 2>&1"

    rule bison_figure:
        input:
            data=f"{RESULTS}/tables/bison/{{bison_data_figure}}.csv",
        output:
            png=flag_paper(f"{RESULTS}/figures/bison/{{bison_data_figure}}.png", "bison", "figures"),
            pdf=f"{RESULTS}/figures/bison/{{bison_data_figure}}.pdf",
        wildcard_constraints:
            bison_data_figure="|".join(get_bison_data_figures()),
        params:
            source=SOURCE,
            dpi=config["report"]["dpi"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/figures/bison_{bison_data_figure}.log",
        benchmark:
            "benchmarks/rules/figures/bison_{bison_data_figure}.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench bison-figure --figure {wildcards.bison_data_figure} --data {input.data} "
            "--source {params.source} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"
