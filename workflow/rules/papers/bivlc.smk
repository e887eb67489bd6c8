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


# BiVLC's candidates from the world's generators (bivlc.generator: diffusion), and the filter rates of both generators
# on one sample (`snakemake generators`, or in the BiVLC report).
if SOURCE == "world":

    rule generate_candidates:
        input:
            images=rules.world.output.images,
            image_table=rules.world.output.image_table,
            captions=rules.world.output.captions,
            scenes=rules.world.output.scenes,
            diffusion=rules.train_diffusion.output.model,
            recognizer=rules.train_recognizer.output.model,
        output:
            table=f"{BIVLC_CANDIDATES}/candidates.parquet",
            images=f"{BIVLC_CANDIDATES}/images.npy",
        params:
            world=get_world_params,
            config=get_bivlc_generation_params,
            items_dir=dir_of_input("image_table"),
            diffusion=dir_of_input("diffusion"),
            recognizer=dir_of_input("recognizer"),
            out=dir_of_output("table"),
        threads: workflow.cores
        resources:
            mem_mb=4000,
            gpu=1,
        log:
            "logs/negatives/generate_candidates.log",
        benchmark:
            "benchmarks/rules/negatives/generate_candidates.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench generate-candidates --items {params.items_dir} --world {params.world:q} --config {params.config:q} "
            "--diffusion {params.diffusion} --recognizer {params.recognizer} --out {params.out} "
            "--threads {threads} > {log} 2>&1"


    rule generator_filter_rates:
        input:
            images=rules.world.output.images,
            image_table=rules.world.output.image_table,
            captions=rules.world.output.captions,
            scenes=rules.world.output.scenes,
            diffusion=rules.train_diffusion.output.model,
            recognizer=rules.train_recognizer.output.model,
        output:
            csv=f"{FILTER_RATES}.csv",
            md=f"{FILTER_RATES}.md",
            tex=f"{FILTER_RATES}.tex",
            records=f"{FILTER_SAMPLE}/records.parquet",
            sample=f"{FILTER_SAMPLE}/images.npy",
        params:
            world=get_world_params,
            config=get_filter_rate_params,
            sample=get_filter_rate_sample,
            items_dir=dir_of_input("image_table"),
            diffusion=dir_of_input("diffusion"),
            recognizer=dir_of_input("recognizer"),
            sample_dir=dir_of_output("records"),
        threads: workflow.cores
        resources:
            mem_mb=4000,
            gpu=1,
        log:
            "logs/negatives/filter_rates.log",
        benchmark:
            "benchmarks/rules/negatives/filter_rates.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench filter-rates --items {params.items_dir} --world {params.world:q} --config {params.config:q} "
            "--filter {params.sample:q} --diffusion {params.diffusion} --recognizer {params.recognizer} "
            "--out-csv {output.csv} --sample-out {params.sample_dir} --threads {threads} > {log} 2>&1"


    rule plot_generated_negatives:
        input:
            records=rules.generator_filter_rates.output.records,
            sample=rules.generator_filter_rates.output.sample,
            images=rules.world.output.images,
            image_table=rules.world.output.image_table,
            captions=rules.world.output.captions,
            scenes=rules.world.output.scenes,
        output:
            NEGATIVES_FIGURE,
        params:
            sample_dir=dir_of_input("records"),
            items_dir=dir_of_input("image_table"),
        threads: 1
        resources:
            mem_mb=2000,
        log:
            "logs/negatives/plot_generated_negatives.log",
        benchmark:
            "benchmarks/rules/negatives/plot_generated_negatives.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench plot-negatives --sample {params.sample_dir} --items {params.items_dir} --out {output} > {log} 2>&1"
