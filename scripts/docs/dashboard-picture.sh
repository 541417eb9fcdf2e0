#!/usr/bin/env bash
# Draws docs/grafana/etcdlock.png, the picture of the Grafana dashboard in the observability guide:
# docs/grafana/etcdlock.json's panels, each panel's own queries evaluated by a real Prometheus
# that scraped a real run (the demo's Python workers and `etcdlock elect` candidates on a
# throwaway 3-member etcd, with a frozen holder and a dead etcd member along the way). Not
# Grafana (which is not used), and not a test stage: a docs generator, run by hand when the
# dashboard or the metrics change. About four and a half minutes. Fails (non-zero) when any
# panel's query returns no data, so the picture never shows an empty panel.
#
#   bash scripts/docs/dashboard-picture.sh [--out PNG] [--save-data JSON] [--from-data JSON]
#
# Tools, each installed only when missing (so a machine that has them runs offline):
# Prometheus from Debian (`prometheus`, 2.42 in bookworm; its service is not started), matplotlib
# from PyPI (pinned below), etcd (scripts/install-deps.sh), the `etcdlock` binary
# (target/release/etcdlock) and the Python binding (bindings-python), built when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
log() { echo "dashboard-picture: $*" >&2; }

MATPLOTLIB=3.11.2
if ! python3 -c "import sys, matplotlib; sys.exit(matplotlib.__version__ != '$MATPLOTLIB')" 2>/dev/null; then
    log "pip install matplotlib==$MATPLOTLIB"
    python3 -m pip install --quiet "matplotlib==$MATPLOTLIB"
fi
# Without its recommends (the node exporter and what it pulls in). Only the binary is used, with a
# config, a TSDB and a port of this run's own; on a host with systemd the package's service also
# starts (as postgresql's does for scripts/install-deps.sh), and this script leaves it alone.
if ! command -v prometheus >/dev/null 2>&1; then
    log "apt-get install prometheus"
    export DEBIAN_FRONTEND=noninteractive
    apt=(apt-get install -y -qq --no-install-recommends prometheus)
    "${apt[@]}" >/dev/null || { apt-get update -qq && "${apt[@]}" >/dev/null; }
fi
if [ -z "${ETCD_BIN:-}" ] && [ ! -x .tools/bin/etcd ]; then
    bash scripts/install-deps.sh >/dev/null
fi
if [ ! -x target/release/etcdlock ]; then
    log "cargo build --release -p etcdlock-cli"
    cargo build --quiet --release -p etcdlock-cli
fi
if ! python3 -c "import etcdlock" 2>/dev/null; then
    log "pip install ./bindings-python"
    python3 -m pip install --quiet ./bindings-python
fi
exec python3 scripts/docs/dashboard_run.py "$@"
