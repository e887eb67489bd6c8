# Models: training in the world (models with a `trainer` in params.yaml).


rule train:
    input:
        images=rules.world.output.images,
        image_table=rules.world.output.image_table,
        captions=rules.world.output.captions,
        scenes=rules.world.output.scenes,
        init=get_init_checkpoint,
    output:
        model=f"{RESULTS}/models/{{trained}}/model.pt",
        history=f"{RESULTS}/models/{{trained}}/history.json",
    params:
        spec=get_trained_spec,
        train=get_train_params,
        items_dir=dir_of_input("image_table"),
        init=get_init_flag,
    threads: MODEL_THREADS
    resources:
        mem_mb=4000,
        gpu=1,
    priority: get_train_priority
    log:
        "logs/train/{trained}.log",
    benchmark:
        "benchmarks/rules/train/{trained}.tsv"
    conda:
        ENV
    shell:
        "itmbench train --model {wildcards.trained} --spec {params.spec:q} --train {params.train:q} "
        "--items {params.items_dir} --out {output.model} --history {output.history} {params.init} --threads {threads} > {log} 2>&1"
