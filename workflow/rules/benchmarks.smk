# Benchmarks: canonical files per benchmark, and the union of items they need.


rule build_retrieval:
    input:
        images=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
    output:
        item_table=f"{DATA}/retrieval/items.parquet",
        positives=f"{DATA}/retrieval/positives.parquet",
    params:
        world=get_world_params,
        split=config["retrieval"]["split"],
        items_dir=dir_of_input("images"),
        out=dir_of_output("item_table"),
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/benchmarks/retrieval.log",
    benchmark:
        "benchmarks/rules/benchmarks/retrieval.tsv"
    conda:
        ENV
    shell:
        "itmbench build-retrieval --items {params.items_dir} --world {params.world:q} "
        "--split {params.split} --out {params.out} > {log} 2>&1"


rule needed_items:
    input:
        get_benchmark_items,
    output:
        f"{DATA}/needed_items.parquet",
    threads: 1
    resources:
        mem_mb=1000,
    log:
        "logs/benchmarks/needed_items.log",
    benchmark:
        "benchmarks/rules/benchmarks/needed_items.tsv"
    conda:
        ENV
    shell:
        "itmbench needed-items {input} --out {output} > {log} 2>&1"
