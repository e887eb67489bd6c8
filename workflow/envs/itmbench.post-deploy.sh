#!/usr/bin/env bash
# Runs inside the freshly created conda env (Snakemake's post-deploy hook), from the workflow's
# working directory: install this checkout's itmbench package without touching the pinned deps.
set -euo pipefail
python -m pip install --no-deps -e .
