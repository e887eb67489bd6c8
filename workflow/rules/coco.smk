# The real source (`--config source=coco`): COCO images and captions, the five released benchmarks, pretrained
# open_clip models, TROHN hard negatives (an LLM's captions, SDXL-DPO images) and the TROHN fine-tunes.
# Everything from embedding on is the shared rules of score.smk and report.smk. Every external file is fetched
# by `fetch_released` (released.smk) through DVC, from its URL or the mirror.

COCO = config["coco"]
TEXT_SHARDS = list(range(COCO["llm_shards"]))
IMAGE_SHARDS = list(range(COCO["sdxl_shards"]))


wildcard_constraints:
    text_shard=r"\d+",
    image_shard=r"\d+",


rule coco_items:
    input:
        karpathy=raw_file("karpathy_splits"),
        captions=raw_file("coco_captions_trainval2014"),
        train2014=raw_file("coco_train2014_images"),
        val2014=raw_file("coco_val2014_images"),
    output:
        images=f"{DATA}/items/images.parquet",
        captions=f"{DATA}/items/captions.parquet",
        summary=f"{DATA}/items/summary.json",
    params:
        out=dir_of_output("images"),
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=8000,
    log:
        "logs/coco/items.log",
    benchmark:
        "benchmarks/rules/coco/items.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-items --karpathy {input.karpathy} --captions {input.captions} "
        "--images train2014={input.train2014} val2014={input.val2014} --out {params.out} {params.registry} > {log} 2>&1"


rule coco_benchmark:
    input:
        released=get_coco_bench_files,
        images=rules.coco_items.output.images,
        captions=rules.coco_items.output.captions,
    output:
        f"{DATA}/{{bench}}/items.parquet",
    params:
        config=get_coco_bench_params,
        raw=RAW,
        items_dir=dir_of_input("images"),
        out=dir_of_output(0),
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=8000,
    log:
        "logs/coco/benchmarks/{bench}.log",
    benchmark:
        "benchmarks/rules/coco/benchmarks/{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench build-coco-benchmark --name {wildcards.bench} --raw {params.raw} --items {params.items_dir} "
        "--config {params.config:q} --out {params.out} {params.registry} > {log} 2>&1"


rule coco_needed_items:
    input:
        benches=get_coco_bench_item_tables,
        images=rules.coco_items.output.images,
        captions=rules.coco_items.output.captions,
    output:
        f"{DATA}/needed_items.parquet",
    params:
        items_dir=dir_of_input("images"),
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/coco/needed_items.log",
    benchmark:
        "benchmarks/rules/coco/needed_items.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-needed-items {input.benches} --items {params.items_dir} --out {output} > {log} 2>&1"


rule coco_caption_negatives:
    input:
        captions=rules.coco_items.output.captions,
    output:
        f"{RESULTS}/negatives/text/shard_{{text_shard}}.parquet",
    params:
        config=get_coco_llm_params,
        shards=COCO["llm_shards"],
        limit=COCO["trohn_captions"],
    threads: COCO_THREADS or 4
    resources:
        mem_mb=32000,
        gpu=1,
    log:
        "logs/coco/negatives/text_{text_shard}.log",
    benchmark:
        "benchmarks/rules/coco/negatives/text_{text_shard}.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-caption-negatives --captions {input.captions} --limit {params.limit} "
        "--shard {wildcards.text_shard} --shards {params.shards} --config {params.config:q} --out {output} > {log} 2>&1"


rule coco_merge_negatives:
    input:
        expand(f"{RESULTS}/negatives/text/shard_{{text_shard}}.parquet", text_shard=TEXT_SHARDS),
    output:
        negatives=f"{RESULTS}/negatives/text/negatives.parquet",
        csv=f"{RESULTS}/tables/trohn/text_filter.csv",
        md=f"{RESULTS}/tables/trohn/text_filter.md",
    params:
        min_kept=COCO["min_kept"],
    threads: 1
    resources:
        mem_mb=8000,
    log:
        "logs/coco/negatives/merge.log",
    benchmark:
        "benchmarks/rules/coco/negatives/merge.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-merge-negatives {input} --out {output.negatives} --summary-csv {output.csv} "
        "--min-kept {params.min_kept} > {log} 2>&1"


rule coco_image_negatives:
    input:
        negatives=rules.coco_merge_negatives.output.negatives,
    output:
        f"{RESULTS}/negatives/images/shard_{{image_shard}}/manifest.parquet",
    params:
        config=get_coco_sdxl_params,
        shards=COCO["sdxl_shards"],
        sample=COCO["trohn_img_captions"],
        seed=COCO["seed"],
        min_kept=COCO["min_kept"],
        out=dir_of_output(0),
    threads: COCO_THREADS or 4
    resources:
        mem_mb=32000,
        gpu=1,
    log:
        "logs/coco/negatives/images_{image_shard}.log",
    benchmark:
        "benchmarks/rules/coco/negatives/images_{image_shard}.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-image-negatives --negatives {input.negatives} --sample {params.sample} --seed {params.seed} "
        "--shard {wildcards.image_shard} --shards {params.shards} --config {params.config:q} "
        "--min-kept {params.min_kept} --out-dir {params.out} > {log} 2>&1"


rule coco_finetune:
    input:
        unpack(get_finetune_inputs),
    output:
        model=f"{RESULTS}/models/{{trained}}/model.pt",
        history=f"{RESULTS}/models/{{trained}}/history.json",
    params:
        spec=get_trained_spec,
        train=get_coco_train_params,
        items_dir=dir_of_input("images"),
        negatives=get_finetune_flags,
        val_images=COCO["val_images"],
        min_kept=COCO["min_kept"],
    threads: MODEL_THREADS
    resources:
        mem_mb=32000,
        gpu=1,
    log:
        "logs/coco/train/{trained}.log",
    benchmark:
        "benchmarks/rules/coco/train/{trained}.tsv"
    conda:
        ENV
    shell:
        "itmbench coco-finetune --model {wildcards.trained} --spec {params.spec:q} --train {params.train:q} "
        "--items {params.items_dir} {params.negatives} --val-images {params.val_images} --min-kept {params.min_kept} "
        "--out {output.model} "
        "--history {output.history} --threads {threads} > {log} 2>&1"
