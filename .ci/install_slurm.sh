#!/usr/bin/env bash
# Debian's SLURM (controller, node daemon, accounting daemon), munge and MariaDB, for the loopback
# cluster the SLURM tests start (tests/workflow/slurm_cluster.py), and a Java runtime
# (default-jre-headless) for METEOR, whose jar pycocoevalcap ships (BISON section 6; the METEOR tests
# run it). Idempotent: does nothing when everything is installed already. Installing starts no daemon
# that stays: the tests start their own.
set -euo pipefail
need=()
for bin in munged slurmctld slurmd slurmdbd sbatch sacct mariadbd java; do
    command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || need+=("$bin")
done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d: keep the packages' postinst from starting (and leaving running) their services
cleanup() { rm -f /usr/sbin/policy-rc.d; }
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    trap cleanup EXIT
fi
apt-get update
apt-get install -y --no-install-recommends munge slurmctld slurmd slurmdbd slurm-client mariadb-server \
    default-jre-headless
