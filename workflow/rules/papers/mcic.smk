# MCIC-COCO's rules beyond its tables and headline figure (included by rules/papers.smk).

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
            PAPER_ENV
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
            PAPER_ENV
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
            PAPER_ENV
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
            PAPER_ENV
        shell:
            "itmbench mcic-sweep-table --sweep {params.sweep} --data {input} "
            "--confidence {params.confidence} --out-csv {output.csv} > {log} 2>&1"


# MCIC's train split (Algorithm 1's decoys, the same build on the train split) and the option scorers trained on it
# (params `models`, families ffnn and linear_option), which score MCIC as cross scorers.
if SOURCE == "world":

    rule mcic_train_split:
        input:
            images=rules.world.output.images,
            image_table=rules.world.output.image_table,
            captions=rules.world.output.captions,
            scenes=rules.world.output.scenes,
            inputs=get_mcic_build_inputs,
        output:
            f"{DATA}/mcic_train/items.parquet",
        params:
            world=get_world_params,
            config=get_mcic_train_params,
            inputs=get_mcic_build_input_flags,
            items_dir=dir_of_input("images"),
            out=dir_of_output(0),
        threads: 1
        resources:
            mem_mb=4000,
        log:
            "logs/benchmarks/mcic_train.log",
        benchmark:
            "benchmarks/rules/benchmarks/mcic_train.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench build-benchmark --name mcic --items {params.items_dir} --world {params.world:q} "
            "--config {params.config:q} {params.inputs} --out {params.out} > {log} 2>&1"

    rule train_ffnn:
        input:
            train_bench=rules.mcic_train_split.output[0],
            dev_bench=f"{DATA}/mcic/items.parquet",
            features=get_ffnn_features,
        output:
            model=f"{RESULTS}/models/{{ffnn}}/model.pt",
            history=f"{RESULTS}/models/{{ffnn}}/history.json",
        params:
            spec=get_ffnn_spec,
            train_dir=dir_of_input("train_bench"),
            dev_dir=dir_of_input("dev_bench"),
        threads: MODEL_THREADS
        resources:
            mem_mb=2000,
        log:
            "logs/train/{ffnn}.log",
        benchmark:
            "benchmarks/rules/train/{ffnn}.tsv"
        conda:
            PAPER_ENV
        shell:
            "itmbench train-ffnn --model {wildcards.ffnn} --spec {params.spec:q} --train-bench {params.train_dir} "
            "--dev-bench {params.dev_dir} --features {input.features} --out {output.model} --history {output.history} "
            "--threads {threads} > {log} 2>&1"

    ruleorder: train_ffnn > train
