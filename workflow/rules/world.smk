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
