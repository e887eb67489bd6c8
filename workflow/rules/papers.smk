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
        ENV
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
            ENV
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
            ENV
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
        ENV
    shell:
        "itmbench cxc-figure --figure {wildcards.cxc_figure} --data {input.data} {params.points} "
        "--source {params.source} --config {params.config:q} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"


# MCIC's OPTIMIZE-PV (Algorithm 1): PV-DBOW's dim and epochs by mgs-rank; the chosen point feeds MCIC's builds.
# OPTIMIZE-SCORE: the build chooses lambda by wmgs-rank; mcic_lambda_search shows that search.
if SOURCE == "world":

    rule mcic_optimize_pv:
        input:
            images=rules.world.output.images,
            image_table=rules.world.output.image_table,
            captions=rules.world.output.captions,
            scenes=rules.world.output.scenes,
        output:
            choice=MCIC_PV_CHOICE,
            csv=flag_paper(f"{RESULTS}/tables/mcic/pv_search.csv", "mcic", "tables"),
            md=f"{RESULTS}/tables/mcic/pv_search.md",
            tex=f"{RESULTS}/tables/mcic/pv_search.tex",
        params:
            world=get_world_params,
            config=get_mcic_pv_params,
            items_dir=dir_of_input("images"),
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=2000,
        log:
            "logs/tables/mcic_optimize_pv.log",
        benchmark:
            "benchmarks/rules/tables/mcic_optimize_pv.tsv"
        conda:
            ENV
        shell:
            "itmbench mcic-optimize-pv --items {params.items_dir} --world {params.world:q} --config {params.config:q} "
            "--confidence {params.confidence} --out-csv {output.csv} --out-choice {output.choice} > {log} 2>&1"

    rule mcic_lambda_search:
        input:
            bench=f"{DATA}/mcic/items.parquet",
        output:
            csv=flag_paper(f"{RESULTS}/tables/mcic/lambda_search.csv", "mcic", "tables"),
            md=f"{RESULTS}/tables/mcic/lambda_search.md",
            tex=f"{RESULTS}/tables/mcic/lambda_search.tex",
        params:
            bench_dir=dir_of_input("bench"),
            confidence=config["score"]["confidence"],
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/mcic_lambda_search.log",
        benchmark:
            "benchmarks/rules/tables/mcic_lambda_search.tsv"
        conda:
            ENV
        shell:
            "itmbench mcic-lambda-search --bench {params.bench_dir} --confidence {params.confidence} "
            "--out-csv {output.csv} > {log} 2>&1"

    # MCIC Tables 4 and 5: each sweep one job (params mcic_sweeps.<sweep>, a section of its own: changing one sweep
    # retrains neither the other nor any benchmark), then a table rule that renders its CSV beside the paper's.
    rule mcic_sweep:
        input:
            train_bench=f"{DATA}/mcic_train/items.parquet",
            bench=f"{DATA}/mcic/items.parquet",
            features=get_mcic_sweep_features,
            captions=rules.world.output.captions,
        output:
            f"{RESULTS}/mcic/sweeps/{{mcic_sweep}}.csv",
        params:
            config=lambda wildcards: json.dumps(config.get("mcic_sweeps", {}).get(wildcards.mcic_sweep, {}), sort_keys=True),
            train_dir=dir_of_input("train_bench"),
            bench_dir=dir_of_input("bench"),
            captions=lambda wildcards, input: f"--captions {os.path.dirname(input.captions)}" if wildcards.mcic_sweep == "lambda_gen" else "",
        wildcard_constraints:
            mcic_sweep="sizes|lambda_gen",
        threads: MODEL_THREADS
        resources:
            mem_mb=2000,
        log:
            "logs/mcic/sweep_{mcic_sweep}.log",
        benchmark:
            "benchmarks/rules/mcic/sweep_{mcic_sweep}.tsv"
        conda:
            ENV
        shell:
            "itmbench mcic-sweep --sweep {wildcards.mcic_sweep} --config {params.config:q} "
            "--train-bench {params.train_dir} --bench {params.bench_dir} --features {input.features} "
            "{params.captions} --threads {threads} --out {output} > {log} 2>&1"

    rule mcic_sweep_table:
        input:
            lambda wildcards: f"{RESULTS}/mcic/sweeps/{MCIC_SWEEP_OF[wildcards.mcic_table]}.csv",
        output:
            csv=flag_paper(f"{RESULTS}/tables/mcic/{{mcic_table}}.csv", "mcic", "tables"),
            md=f"{RESULTS}/tables/mcic/{{mcic_table}}.md",
            tex=f"{RESULTS}/tables/mcic/{{mcic_table}}.tex",
        params:
            confidence=config["score"]["confidence"],
            sweep=lambda wildcards: MCIC_SWEEP_OF[wildcards.mcic_table],
        wildcard_constraints:
            mcic_table="table4|table5",
        threads: 1
        resources:
            mem_mb=1000,
        log:
            "logs/tables/mcic_{mcic_table}.log",
        benchmark:
            "benchmarks/rules/tables/mcic_{mcic_table}.tsv"
        conda:
            ENV
        shell:
            "itmbench mcic-sweep-table --sweep {params.sweep} --data {input} "
            "--confidence {params.confidence} --out-csv {output.csv} > {log} 2>&1"


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
            ENV
        shell:
            "itmbench trohn-text-table {input} --out-csv {output.csv} --confidence {params.confidence} > {log} 2>&1"


# Paired tests of model pairs over the same instances of each accuracy benchmark with pairs (report.<bench>_paired):
# one rule per benchmark (bivlc_paired, bison_paired, mcic_paired, sugarcrepe_paired), from its per-instance scores.
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
            ENV
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
            ENV
        shell:
            "itmbench bivlc-figure4 --data {input.data} --source {params.source} --dpi {params.dpi} "
            "--out-png {output.png} > {log} 2>&1"


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
            ENV
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
            ENV
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
                ENV
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
                mem_mb=3000,  # METEOR's Java runs with -Xmx2G
            log:
                "logs/tables/bison_table4.log",
            benchmark:
                "benchmarks/rules/tables/bison_table4.tsv"
            conda:
                ENV
            shell:
                "itmbench bison-table4 {params.model_files} --captions {input.captions} --source {params.source} "
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
                ENV
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
                ENV
            shell:
                "itmbench bison-figure4-data {params.model_files} --scenes {input.scenes} "
                "--caption-scores {input.caption_scores} --source {params.source} --world {params.world:q} "
                "--figure-config {params.figure:q} --score {params.score:q} --rows {params.rows:q} "
                "--out-csv {output.csv} > {log} 2>&1"

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
            ENV
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
            ENV
        shell:
            "itmbench bison-figure --figure {wildcards.bison_data_figure} --data {input.data} "
            "--source {params.source} --dpi {params.dpi} --out-png {output.png} > {log} 2>&1"


# ECCV's and CxC's model pairs (report.eccv_paired, report.cxc_paired) compared over the same queries: a paired
# bootstrap of the difference of their per-query metrics; ECCV's ranking correlations with intervals over queries.
# From the per-query score files (never re-scored); the claims read both.
_GALLERY_PAIRED = [b for b in ("eccv", "cxc") if gallery_paired_pairs(b)]
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
            ENV
        shell:
            "itmbench eccv-rank-tau {params.flags} --config {params.score:q} --out-csv {output.csv} > {log} 2>&1"
