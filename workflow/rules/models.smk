# Models: training in the world (models with a `trainer` in params.yaml). In the world a training job
# also writes its model's embeddings of the world's items (`embeddings/<model>/items.npz`, which
# rule `embed` writes for the other models): both depend on the world only, and one process then
# pays the start-up (torch, open_clip: about 5 s of CPU) and the model load once, not twice.
# Items that benchmarks add are still embedded by `embed_added`, one job per (model, benchmark).
# A cross scorer (coca) embeds nothing: `train_cross_scorer` is the same job without that output.


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
        **TRAIN_EMBEDDINGS,
    wildcard_constraints:
        trained="|".join(TRAINED_EMBEDDING) or "__none__",
    params:
        spec=get_trained_spec,
        train=get_train_params,
        items_dir=dir_of_input("image_table"),
        init=get_init_flag,
        embed=get_train_embed_flag,
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
        "--items {params.items_dir} --out {output.model} --history {output.history} {params.init} {params.embed} --threads {threads} > {log} 2>&1"


if TRAINED_CROSS:

    use rule train as train_cross_scorer with:
        output:
            model=f"{RESULTS}/models/{{trained}}/model.pt",
            history=f"{RESULTS}/models/{{trained}}/history.json",
        wildcard_constraints:
            trained="|".join(TRAINED_CROSS),
