#!/usr/bin/env bash
# Debian's Chromium, the headless browser the report tests open every report in
# (tests/workflow/test_e2e.py) and benchmarks/report_screenshot.py draws docs/img/report.png with.
# Idempotent: does nothing when a Chromium is installed already.
set -euo pipefail
for bin in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$bin" >/dev/null 2>&1; then exit 0; fi
done
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
