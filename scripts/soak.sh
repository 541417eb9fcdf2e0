#!/usr/bin/env bash
# Soak run (#21): minutes of lock contention from Python, Node, C and Rust workers on a 3-member
# etcd cluster under a seeded random nemesis (leader kill + restart, member SIGSTOP/SIGCONT,
# move-leader, connection resets), judged by the history checker; each worker's fds, threads
# and RSS must stay flat after the warm-up. Not in CI by default; scripts/test.sh runs `bash scripts/soak.sh --minutes 1`.
#   bash scripts/soak.sh [--minutes 10] [--seed N] [--langs python,node,c,rust] [--keep DIR]
# The Node, C and Rust workers must be built (demo/workers.py build, as ./demo.sh does); a
# missing one is an error (exit 2), or leave it out with --langs.
set -euo pipefail
cd "$(dirname "$0")/.."
export ETCD_BIN="${ETCD_BIN:-$PWD/.tools/etcd-v3.6.16/etcd}"
exec python3 tests/history/soak.py "$@"
