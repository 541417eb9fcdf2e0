#!/usr/bin/env bash
# Start/stop a throwaway etcd cluster on 127.0.0.1 for manual runs and CI.
#
#   scripts/etcd.sh start [N] [--fast-election ...]  # prints the endpoints
#   scripts/etcd.sh env        # prints `export ETCDLOCK_ENDPOINTS=...`
#   scripts/etcd.sh stop
#
# e.g.  export ETCDLOCK_ENDPOINTS="$(scripts/etcd.sh start 3)"
#
# The cluster outlives this script; its PIDs and data dir are kept in
# .tools/etcd-state.json (override with --state FILE after the command).
# See tests/etcd_harness.py.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HARNESS="$REPO/tests/etcd_harness.py"

usage() { sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start)
    members=1
    if [ $# -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then members="$1"; shift; fi
    # stdout stays reserved for the endpoints line.
    "$REPO/scripts/install-deps.sh" >&2
    exec python3 "$HARNESS" start --members "$members" "$@"
    ;;
  stop|env)
    exec python3 "$HARNESS" "$cmd" "$@"
    ;;
  *)
    usage
    ;;
esac
