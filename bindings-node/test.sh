#!/usr/bin/env bash
# The Node package's tests, from a fresh clone: `npm install` (dev tools + the native addon built
# from source with cargo, release mode, in the workspace's target dir), then the node:test suite
# against a real single-member etcd started here and stopped on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
REPO="$(cd .. && pwd)"

# etcd/etcdctl for the tests (scripts/test.sh has installed them already when it calls us).
{ { [ -x "$REPO/.tools/bin/etcd" ] || [ -n "${ETCD_BIN:-}" ]; } && [ -x "$REPO/.tools/py-build/bin/cargo-zigbuild" ]; } || bash "$REPO/scripts/install-deps.sh"

echo "== Node: npm install (builds etcdlock.node from source when missing)"
npm install --no-audit --no-fund
# Rebuild from the current sources even when etcdlock.node exists (cargo is incremental).
npm run --silent build

state_dir="$(mktemp -d "${TMPDIR:-/tmp}/etcdlock-node-etcd.XXXXXX")"
cleanup() {
  python3 "$REPO/tests/etcd_harness.py" stop --state "$state_dir/etcd.json" >/dev/null 2>&1 || true
  rm -rf "$state_dir"
}
trap cleanup EXIT
ETCDLOCK_ENDPOINTS="$(python3 "$REPO/tests/etcd_harness.py" start --members 1 --state "$state_dir/etcd.json" | tail -n 1)"
export ETCDLOCK_ENDPOINTS

echo "== Node: node --test against etcd at $ETCDLOCK_ENDPOINTS"
node --test --test-concurrency=2 --test-timeout=120000 test/*.test.js
