# Models that are not dual encoders: cross scorers (the captioner, the option scorers) score the pairs each
# benchmark lists; the same per-instance tables and metrics follow. The unimodal baselines (bag of
# words, pixel features) are embedding models and go through models.smk and score.smk.


rule embed_train_split:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        checkpoint=get_checkpoint,
    output:
        f"{RESULTS}/embeddings/{{model}}/train.npz",
    params:
        spec=get_model_spec,
        checkpoint=get_checkpoint_flag,
        items_dir=dir_of_input("captions"),
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/embed/{model}/train.log",
    benchmark:
        "benchmarks/rules/embed/{model}/train.tsv"
    conda:
        ENV
    shell:
        "itmbench embed --model {wildcards.model} --spec {params.spec:q} {params.checkpoint} "
        "--items {params.items_dir} --splits train --out {output} --threads {threads} > {log} 2>&1"


rule score_pairs:
    input:
        bench=f"{DATA}/{{pairbench}}/items.parquet",
        images=rules.world.output.images,
        captions=rules.world.output.captions,
        checkpoint=get_cross_checkpoint,
        features=get_cross_features,
        shortlist=get_shortlist,
    output:
        f"{RESULTS}/pairs/{{pairbench}}/{{cross}}.parquet",
    params:
        spec=get_cross_spec,
        bench_dir=dir_of_input("bench"),
        items_dir=dir_of_input("captions"),
        extra=get_extra_items_flag,
        features=get_features_flag,
        shortlist=get_shortlist_flag,
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/pairs/{pairbench}/{cross}.log",
    benchmark:
        "benchmarks/rules/pairs/{pairbench}/{cross}.tsv"
    conda:
        ENV
    shell:
        "itmbench score-pairs --name {wildcards.pairbench} --bench {params.bench_dir} --model {wildcards.cross} "
        "--spec {params.spec:q} --checkpoint {input.checkpoint} --items {params.items_dir} {params.extra} "
        "{params.features} {params.shortlist} --out {output} --threads {threads} > {log} 2>&1"


# The gallery benchmarks on the source's own items (GALLERY_BENCHMARKS) rank the same gallery: a cross scorer
# scores the union of the pairs they need once (each pair once per model, as each item is embedded once per
# model), and each benchmark reads its own pairs from it.
rule score_gallery_pairs:
    input:
        bench=get_gallery_benches,
        images=rules.world.output.images,
        captions=rules.world.output.captions,
        checkpoint=get_cross_checkpoint,
        features=get_cross_features,
        shortlist=get_gallery_shortlist,
    output:
        f"{RESULTS}/pairs/{GALLERY_PAIRS}/{{cross}}.parquet",
    params:
        spec=get_cross_spec,
        names=lambda wildcards: " ".join(gallery_benches(wildcards.cross)),
        bench_dirs=lambda wildcards, input: " ".join(os.path.dirname(b) for b in input.bench),
        items_dir=dir_of_input("captions"),
        features=get_features_flag,
        shortlist=get_shortlist_flag,
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        f"logs/pairs/{GALLERY_PAIRS}/{{cross}}.log",
    benchmark:
        f"benchmarks/rules/pairs/{GALLERY_PAIRS}/{{cross}}.tsv"
    conda:
        ENV
    shell:
        "itmbench score-pairs --name {params.names} --bench {params.bench_dirs} --model {wildcards.cross} "
        "--spec {params.spec:q} --checkpoint {input.checkpoint} --items {params.items_dir} "
        "{params.features} {params.shortlist} --out {output} --threads {threads} > {log} 2>&1"


rule score_benchmark_pairs:
    input:
        bench=f"{DATA}/{{bench}}/items.parquet",
        pairs=get_pairs_file,
        shortlist=get_shortlist,
    output:
        scores=f"{RESULTS}/scores/{{bench}}/{{cross}}.parquet",
        metrics=f"{RESULTS}/metrics/{{bench}}/{{cross}}.json",
    params:
        bench_dir=dir_of_input("bench"),
        shortlist=get_shortlist_flag,
        score=get_score_params,
    threads: 1  # as score_benchmark
    resources:
        mem_mb=4000,
    log:
        "logs/score/{bench}/{cross}.log",
    benchmark:
        "benchmarks/rules/score/{bench}/{cross}.tsv"
    conda:
        ENV
    shell:
        "itmbench score-benchmark --name {wildcards.bench} --bench {params.bench_dir} --pairs {input.pairs} "
        "{params.shortlist} --out {output.scores} --metrics {output.metrics} --model {wildcards.cross} "
        "--config {params.score:q} --threads {threads} > {log} 2>&1"


ruleorder: score_benchmark_pairs > score_benchmark
