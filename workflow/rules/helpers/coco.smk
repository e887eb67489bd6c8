# Input functions of the COCO source's rules (workflow/rules/coco.smk).

def raw_file(key):
    """Where the data registry puts a released file (data/raw/<host>/<url path>)."""
    return str(raw_path(key, RAW))


def get_coco_bench_files(wildcards):
    """The released files a COCO benchmark's build reads (declared by its entry in sources/coco_registry.py)."""
    name = wildcards.bench
    return [raw_file(key) for key in COCO_BENCHMARKS[name].released_keys]


def get_coco_bench_params(wildcards):
    """The benchmark's own `coco_benchmarks` settings (id offsets of added items...)."""
    return json.dumps(config["coco_benchmarks"][wildcards.bench], sort_keys=True)


def get_coco_bench_item_tables(wildcards):
    return expand(f"{DATA}/{{bench}}/items.parquet", bench=WORLD_BENCHMARKS)


def get_coco_llm_params(wildcards):
    return json.dumps(config["coco"]["llm"], sort_keys=True)


def get_coco_sdxl_params(wildcards):
    return json.dumps(config["coco"]["sdxl"], sort_keys=True)


def get_coco_train_params(wildcards):
    return json.dumps(config["coco"]["train"], sort_keys=True)


def get_finetune_inputs(wildcards):
    """A fine-tuning's inputs: the COCO items, plus the TROHN negatives its recipe reads."""
    trainer = MODEL_SPECS[wildcards.trained]["trainer"]
    inputs = {"images": f"{DATA}/items/images.parquet", "captions": f"{DATA}/items/captions.parquet"}
    if trainer in ("negclip", "trohn_img"):
        inputs["negatives"] = f"{RESULTS}/negatives/text/negatives.parquet"
    if trainer == "trohn_img":
        inputs["manifests"] = expand(
            f"{RESULTS}/negatives/images/shard_{{image_shard}}/manifest.parquet",
            image_shard=range(config["coco"]["sdxl_shards"]),
        )
    return inputs


def get_finetune_flags(wildcards, input):
    flags = f"--negatives {input.negatives}" if input.get("negatives") else ""
    if input.get("manifests"):
        flags += f" --negative-images {os.path.dirname(os.path.dirname(input.manifests[0]))}"
    return flags
