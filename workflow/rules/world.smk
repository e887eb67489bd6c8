# The world: scenes, rendered images, captions, splits.


rule world:
    output:
        images=f"{DATA}/items/images.npy",
        image_table=f"{DATA}/items/images.parquet",
        captions=f"{DATA}/items/captions.parquet",
        scenes=f"{DATA}/items/scenes.parquet",
    params:
        world=get_world_params,
        out=dir_of_output("image_table"),
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/world/world.log",
    benchmark:
        "benchmarks/rules/world/world.tsv"
    conda:
        ENV
    shell:
        "itmbench world --config {params.world:q} --out {params.out} > {log} 2>&1"


rule world_calibration:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
        benches=get_calibration_benches,
        released=get_calibration_released,
    output:
        csv=f"{RESULTS}/tables/world/calibration.csv",
        md=f"{RESULTS}/tables/world/calibration.md",
        tex=f"{RESULTS}/tables/world/calibration.tex",
    params:
        world=get_world_params,
        items_dir=dir_of_input("images"),
        benches=get_calibration_bench_flags,
        raw=get_calibration_raw_flag,
        registry=get_registry_flag,
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/world/calibration.log",
    benchmark:
        "benchmarks/rules/world/calibration.tsv"
    conda:
        ENV
    shell:
        "itmbench world-calibration --items {params.items_dir} --world {params.world:q} {params.benches} "
        "{params.raw} {params.registry} --out-csv {output.csv} > {log} 2>&1"
