"""glibc's allocator settings of the DAG's jobs: memory a job frees stays with the job for its next array.

By default glibc's malloc hands every block above its mmap threshold (at most 32 MiB) to the kernel with its
own `mmap`, and returns it with `munmap` when freed; it also gives the top of its heap back whenever more than
128 KiB of it is free. A job that makes and drops large arrays over and over (a score matrix, a bootstrap's
resamples, a batch of a cross scorer) then faults every page of each array in afresh: the kernel zeroes it,
and that shows as system CPU time. `python benchmarks/job_cost.py --after-env NAME=VALUE ...` measures it on the
jobs of a finished run, with and without the settings (docs/performance.md). With the settings below the
freed memory is reused by the next allocation of the same process instead; what a job computes does not change,
only where its arrays live, and the process's peak memory is what its largest moment holds plus what
fragmentation strands.

The settings are glibc's environment variables (mallopt(3)), which a process reads at its start: the Snakefile
puts them in its own environment before the first job, so every job and the warm worker inherit them. A value
the user set is kept; other C libraries (musl, macOS) ignore the names.
"""

from __future__ import annotations

from collections.abc import MutableMapping

# name -> value (bytes): the mmap threshold above any array of a world job (4 GiB); memory freed at the heap's
# top kept (trim threshold as large); the heap grown 256 MiB at a time beyond a request (address space only).
SETTINGS = {
    "MALLOC_MMAP_THRESHOLD_": str(4 << 30),
    "MALLOC_TRIM_THRESHOLD_": str(4 << 30),
    "MALLOC_TOP_PAD_": str(256 << 20),
}


def job_environment(environ: MutableMapping[str, str]) -> dict[str, str]:
    """Add SETTINGS to `environ` where it does not set them already; returns the settings now in force."""
    for name, value in SETTINGS.items():
        environ.setdefault(name, value)
    return {name: environ[name] for name in SETTINGS}
