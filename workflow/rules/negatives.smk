# Negative generators: the world's diffusion model and the recognizer that reads its images (GPU
# rules that also run on CPU), BiVLC's candidates from them (bivlc.generator: diffusion), and the
# filter rates of both generators on one sample (`snakemake generators`, or in the BiVLC report).


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


rule generate_candidates:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
        diffusion=rules.train_diffusion.output.model,
        recognizer=rules.train_recognizer.output.model,
    output:
        table=f"{BIVLC_CANDIDATES}/candidates.parquet",
        images=f"{BIVLC_CANDIDATES}/images.npy",
    params:
        world=get_world_params,
        config=get_bivlc_generation_params,
        items_dir=dir_of_input("image_table"),
        diffusion=dir_of_input("diffusion"),
        recognizer=dir_of_input("recognizer"),
        out=dir_of_output("table"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/negatives/generate_candidates.log",
    benchmark:
        "benchmarks/rules/negatives/generate_candidates.tsv"
    conda:
        ENV
    shell:
        "itmbench generate-candidates --items {params.items_dir} --world {params.world:q} --config {params.config:q} "
        "--diffusion {params.diffusion} --recognizer {params.recognizer} --out {params.out} "
        "--threads {threads} > {log} 2>&1"


rule generator_filter_rates:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
        diffusion=rules.train_diffusion.output.model,
        recognizer=rules.train_recognizer.output.model,
    output:
        csv=f"{FILTER_RATES}.csv",
        md=f"{FILTER_RATES}.md",
        tex=f"{FILTER_RATES}.tex",
        records=f"{FILTER_SAMPLE}/records.parquet",
        sample=f"{FILTER_SAMPLE}/images.npy",
    params:
        world=get_world_params,
        config=get_filter_rate_params,
        sample=get_filter_rate_sample,
        items_dir=dir_of_input("image_table"),
        diffusion=dir_of_input("diffusion"),
        recognizer=dir_of_input("recognizer"),
        sample_dir=dir_of_output("records"),
    threads: workflow.cores
    resources:
        mem_mb=4000,
        gpu=1,
    log:
        "logs/negatives/filter_rates.log",
    benchmark:
        "benchmarks/rules/negatives/filter_rates.tsv"
    conda:
        ENV
    shell:
        "itmbench filter-rates --items {params.items_dir} --world {params.world:q} --config {params.config:q} "
        "--filter {params.sample:q} --diffusion {params.diffusion} --recognizer {params.recognizer} "
        "--out-csv {output.csv} --sample-out {params.sample_dir} --threads {threads} > {log} 2>&1"


rule plot_generated_negatives:
    input:
        records=rules.generator_filter_rates.output.records,
        sample=rules.generator_filter_rates.output.sample,
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
    output:
        NEGATIVES_FIGURE,
    params:
        sample_dir=dir_of_input("records"),
        items_dir=dir_of_input("image_table"),
    threads: 1
    resources:
        mem_mb=2000,
    log:
        "logs/negatives/plot_generated_negatives.log",
    benchmark:
        "benchmarks/rules/negatives/plot_generated_negatives.tsv"
    conda:
        ENV
    shell:
        "itmbench plot-negatives --sample {params.sample_dir} --items {params.items_dir} --out {output} > {log} 2>&1"
