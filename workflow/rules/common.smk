# Helpers: config validation, the model registry view, and named input functions (no lambdas in rules).
import json
import os

from snakemake.utils import validate


validate(config, schema="../schemas/params.schema.yaml", set_default=True)

SOURCE = config["source"]
DATA = f"data/{SOURCE}"
RESULTS = f"results/{SOURCE}"
MODELS = sorted(config["models"])
TRAINED = sorted(m for m, spec in config["models"].items() if spec.get("trainer"))
RETRIEVAL_BENCHMARKS = ["retrieval"]
NOTEBOOKS = "workflow/notebooks"
ENV = "../envs/itmbench.yaml"


wildcard_constraints:
    model="|".join(MODELS),
    trained="|".join(TRAINED) if TRAINED else "__none__",
    benchmark="|".join(RETRIEVAL_BENCHMARKS),


def section_json(name):
    """One params.yaml section as canonical JSON: the jobs that read it rerun when it changes."""
    return json.dumps(config[name], sort_keys=True)


def get_world_params(wildcards):
    return section_json("world")


def get_train_params(wildcards):
    return section_json("train")


def get_score_params(wildcards):
    return section_json("score")


def get_model_spec(wildcards):
    return json.dumps(config["models"][wildcards.model], sort_keys=True)


def get_trained_spec(wildcards):
    return json.dumps(config["models"][wildcards.trained], sort_keys=True)


def get_checkpoint(wildcards):
    """A trained model's checkpoint, or nothing for a model used as built (random, pretrained)."""
    if wildcards.model in TRAINED:
        return f"{RESULTS}/models/{wildcards.model}/model.pt"
    return []


def get_checkpoint_flag(wildcards, input):
    return f"--checkpoint {input.checkpoint}" if input.get("checkpoint") else ""


def get_benchmark_items(wildcards):
    return expand(f"{DATA}/{{benchmark}}/items.parquet", benchmark=RETRIEVAL_BENCHMARKS)


def get_retrieval_metrics(wildcards):
    return expand(f"{RESULTS}/metrics/{wildcards.benchmark}/{{model}}.json", model=MODELS)


def get_retrieval_report():
    return "reports/world/retrieval.html"


def get_reports(wildcards):
    return [get_retrieval_report()]


def dir_of_input(key):
    """A param function giving the folder of input file `key` (lint: no hard-coded prefixes)."""

    def _dir(wildcards, input):
        return os.path.dirname(input[key])

    _dir.__name__ = f"get_dir_of_input_{key}"
    return _dir


def dir_of_output(key):
    """A param function giving the folder of output file `key`."""

    def _dir(wildcards, output):
        return os.path.dirname(output[key])

    _dir.__name__ = f"get_dir_of_output_{key}"
    return _dir
