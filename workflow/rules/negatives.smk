# Negative generators: the world's diffusion model and the recognizer that reads its images (GPU
# rules that also run on CPU); a benchmark's candidates from them and their filter rates are its paper's rules.


rule train_diffusion:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
    output:
        model=f"{GENERATOR_MODELS}/diffusion/model.pt",
        history=f"{GENERATOR_MODELS}/diffusion/history.json",
    params:
        config=get_diffusion_params,
        items_dir=dir_of_input("image_table"),
        out=dir_of_output("model"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/negatives/train_diffusion.log",
    benchmark:
        "benchmarks/rules/negatives/train_diffusion.tsv"
    conda:
        ENV
    shell:
        "itmbench train-diffusion --items {params.items_dir} --config {params.config:q} --out {params.out} "
        "--threads {threads} > {log} 2>&1"


rule train_recognizer:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        scenes=rules.world.output.scenes,
    output:
        model=f"{GENERATOR_MODELS}/recognizer/model.pt",
        history=f"{GENERATOR_MODELS}/recognizer/history.json",
        metrics=f"{GENERATOR_MODELS}/recognizer/metrics.json",
    params:
        config=get_recognizer_params,
        items_dir=dir_of_input("image_table"),
        out=dir_of_output("model"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/negatives/train_recognizer.log",
    benchmark:
        "benchmarks/rules/negatives/train_recognizer.tsv"
    conda:
        ENV
    shell:
        "itmbench train-recognizer --items {params.items_dir} --config {params.config:q} --out {params.out} "
        "--threads {threads} > {log} 2>&1"
