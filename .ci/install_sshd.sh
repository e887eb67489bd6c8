#!/usr/bin/env bash
# Debian's OpenSSH server, for the SSH remote of tests/workflow/test_share_remotes.py (the test starts
# its own sshd on 127.0.0.1 with its own config, host key and client key, and stops it; nothing is
# enabled as a service). Idempotent: does nothing when sshd is installed already.
set -euo pipefail
if command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends openssh-server openssh-client
