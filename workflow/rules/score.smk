# Scoring: one embedding per item per model (the world's items, and the items a benchmark adds),
# then one job per (model, benchmark) writing its per-instance scores and their metrics (the metrics are
# a second output of the scoring job rather than a job of their own: a job costs a Python start-up and
# Snakemake's bookkeeping, about as much as the metrics themselves, for 68 such pairs in the default run).


rule embed:
    input:
        unpack(get_embed_inputs),
        checkpoint=get_checkpoint,
    output:
        f"{RESULTS}/embeddings/{{model}}/items.npz",
    wildcard_constraints:
        model="|".join(EMBEDDED_BY_EMBED) or "__none__",
    params:
        spec=get_model_spec,
        checkpoint=get_checkpoint_flag,
        items_dir=dir_of_input("captions"),
        selection=get_embed_selection,
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/embed/{model}/items.log",
    benchmark:
        "benchmarks/rules/embed/{model}/items.tsv"
    conda:
        ENV
    shell:
        "itmbench embed --model {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
        "--items {params.items_dir} {params.selection} --out {output} --threads {threads} > {log} 2>&1"


rule embed_added:
    input:
        bench=f"{DATA}/{{added}}/items.parquet",
        checkpoint=get_checkpoint,
    output:
        f"{RESULTS}/embeddings/{{model}}/{{added}}.npz",
    params:
        spec=get_model_spec,
        checkpoint=get_checkpoint_flag,
        items_dir=get_added_items_dir,
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/embed/{model}/{added}.log",
    benchmark:
        "benchmarks/rules/embed/{model}/{added}.tsv"
    conda:
        ENV
    shell:
        "itmbench embed --model {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
        "--items {params.items_dir} --out {output} --threads {threads} > {log} 2>&1"


rule score_benchmark:
    input:
        bench=f"{DATA}/{{bench}}/items.parquet",
        embeddings=get_bench_embeddings,
    output:
        scores=f"{RESULTS}/scores/{{bench}}/{{model}}.parquet",
        metrics=f"{RESULTS}/metrics/{{bench}}/{{model}}.json",
    params:
        bench_dir=dir_of_input("bench"),
        score=get_score_params,
    threads: 1  # one thread: jobs run side by side, and ranks never depend on the thread count
    resources:
        mem_mb=4000,
    log:
        "logs/score/{bench}/{model}.log",
    benchmark:
        "benchmarks/rules/score/{bench}/{model}.tsv"
    conda:
        ENV
    shell:
        "itmbench score-benchmark --name {wildcards.bench} --bench {params.bench_dir} --embeddings {input.embeddings} "
        "--out {output.scores} --metrics {output.metrics} --model {wildcards.model} --config {params.score:q} "
        "--threads {threads} > {log} 2>&1"
