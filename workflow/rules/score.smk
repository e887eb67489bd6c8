# Scoring: one embedding per needed item per model, then per-(model, benchmark) scores and metrics.


rule embed:
    input:
        needed=rules.needed_items.output[0],
        images=rules.world.output.images,
        captions=rules.world.output.captions,
        checkpoint=get_checkpoint,
    output:
        f"{RESULTS}/embeddings/{{model}}.npz",
    params:
        spec=get_model_spec,
        checkpoint=get_checkpoint_flag,
        items_dir=dir_of_input("captions"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/embed/{model}.log",
    benchmark:
        "benchmarks/rules/embed/{model}.tsv"
    conda:
        ENV
    shell:
        "itmbench embed --model {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
        "--items {params.items_dir} --needed {input.needed} --out {output} --threads {threads} > {log} 2>&1"


rule score_retrieval:
    input:
        item_table=f"{DATA}/{{benchmark}}/items.parquet",
        positives=f"{DATA}/{{benchmark}}/positives.parquet",
        embeddings=rules.embed.output[0],
    output:
        f"{RESULTS}/scores/{{benchmark}}/{{model}}.parquet",
    params:
        bench=dir_of_input("item_table"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
    log:
        "logs/score/{benchmark}/{model}.log",
    benchmark:
        "benchmarks/rules/score/{benchmark}/{model}.tsv"
    conda:
        ENV
    shell:
        "itmbench score-retrieval --bench {params.bench} --embeddings {input.embeddings} "
        "--out {output} --threads {threads} > {log} 2>&1"


rule metrics_retrieval:
    input:
        rules.score_retrieval.output[0],
    output:
        f"{RESULTS}/metrics/{{benchmark}}/{{model}}.json",
    params:
        score=get_score_params,
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/metrics/{benchmark}/{model}.log",
    benchmark:
        "benchmarks/rules/metrics/{benchmark}/{model}.tsv"
    conda:
        ENV
    shell:
        "itmbench metrics-retrieval --scores {input} --model {wildcards.model} --benchmark {wildcards.benchmark} "
        "--config {params.score:q} --out {output} > {log} 2>&1"
