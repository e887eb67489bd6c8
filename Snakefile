# itmbench: one DAG regenerating five image-text matching evaluation papers.
# Table of contents only: logic lives in src/itmbench, helpers in workflow/rules/common.smk.
from snakemake.utils import min_version

min_version("9.17")  # a rule's priority may be a function (train)


configfile: "params.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/worker.smk"


if SOURCE == "world":

    include: "workflow/rules/world.smk"
    include: "workflow/rules/benchmarks.smk"
    include: "workflow/rules/models.smk"
    include: "workflow/rules/negatives.smk"
    include: "workflow/rules/cross.smk"

else:

    include: "workflow/rules/coco.smk"


include: "workflow/rules/score.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/papers.smk"
include: "workflow/rules/released.smk"


rule all:
    input:
        get_all_targets,
    default_target: True


rule retrieval:
    input:
        f"reports/{SOURCE}/retrieval.html",


rule released:
    input:
        "reports/released/released.html",


rule generators:
    input:
        get_generator_targets(),
