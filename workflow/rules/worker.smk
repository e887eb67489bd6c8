# The warm worker (src/itmbench/worker.py): one process that has imported torch, open_clip and pandas
# once, in which the local jobs' `itmbench` commands run, each in its own forked child. Started before
# the first job of a local run and stopped when Snakemake exits; not for jobs that run elsewhere (SLURM)
# or in their own conda environment or container, nor for a run of a few jobs. ITMBENCH_WORKER=0 turns
# it off (docs/performance.md).
import itmbench.worker


onstart:
    if workflow.local_exec and not workflow.deployment_settings.deployment_method:
        itmbench.worker.start(log_dir="logs", jobs=len(workflow.dag))
