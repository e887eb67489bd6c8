# Benchmarks: canonical files per benchmark, and the union of items they need.


rule build_benchmark:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
        deps=get_bench_deps,
        generated=get_bench_generated,
        annotators=get_bench_annotators,
        inputs=get_bench_inputs,
    output:
        f"{DATA}/{{bench}}/items.parquet",
    params:
        world=get_world_params,
        config=get_bench_params,
        deps=get_bench_dep_flags,
        annotators=get_bench_annotator_flags,
        items_dir=dir_of_input("images"),
        out=dir_of_output(0),
    threads: 1
    resources:
        mem_mb=4000,
    log:
        "logs/benchmarks/{bench}.log",
    benchmark:
        "benchmarks/rules/benchmarks/{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench build-benchmark --name {wildcards.bench} --items {params.items_dir} --world {params.world:q} "
        "--config {params.config:q} {params.deps} {params.annotators} --out {params.out} > {log} 2>&1"


rule audit_benchmark:
    input:
        bench=rules.build_benchmark.output[0],
        scenes=rules.world.output.scenes,
        images=rules.world.output.images,
    output:
        csv=f"{RESULTS}/tables/{{bench}}/audit.csv",
        md=f"{RESULTS}/tables/{{bench}}/audit.md",
        tex=f"{RESULTS}/tables/{{bench}}/audit.tex",
    params:
        world=get_world_params,
        config=get_bench_params,
        items_dir=dir_of_input("images"),
        bench_dir=dir_of_input("bench"),
    threads: 1
    resources:
        mem_mb=4000,
    log:
        "logs/audit/{bench}.log",
    benchmark:
        "benchmarks/rules/audit/{bench}.tsv"
    conda:
        ENV
    shell:
        "itmbench audit-benchmark --name {wildcards.bench} --items {params.items_dir} --bench {params.bench_dir} "
        "--world {params.world:q} --config {params.config:q} --out-csv {output.csv} > {log} 2>&1"
