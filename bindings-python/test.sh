#!/usr/bin/env bash
# Builds and installs the Python package from this checkout, then runs its pytest suite
# against a real etcd that the suite starts itself (needs scripts/install-deps.sh to have run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
PY="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

"$PY" -c 'import maturin' 2>/dev/null || "$PY" -m pip install --quiet 'maturin>=1.9,<2'
"$PY" -c 'import pytest' 2>/dev/null || "$PY" -m pip install --quiet pytest
# A real gRPC server registered from Python, called through etcd's Go resolver (REG-GRPC-002).
"$PY" -c 'import grpc, grpc_health' 2>/dev/null || "$PY" -m pip install --quiet 'grpcio>=1.60' 'grpcio-health-checking>=1.60'
# etcdlock.fencing.postgres's tests write through a throwaway PostgreSQL (FENCE-*).
"$PY" -c 'import psycopg' 2>/dev/null || "$PY" -m pip install --quiet 'psycopg[binary]>=3.1,<4'
# etcdlock.prometheus is tested in a real prometheus_client registry (METRICS-REGISTRY-001).
"$PY" -c 'import prometheus_client' 2>/dev/null || "$PY" -m pip install --quiet 'prometheus_client>=0.17'
# The OpenTelemetry spans are read back with the SDK's in-memory exporter (TRACE-SPANS-001).
"$PY" -c 'import opentelemetry.sdk' 2>/dev/null || "$PY" -m pip install --quiet 'opentelemetry-sdk>=1.20'

echo "== Python: build and install the etcdlock package (maturin, release profile)"
# No build isolation: use the maturin just checked. The crate is a workspace member, so
# maturin builds into the workspace's target/ with its release profile, reusing what
# `cargo build --release` already compiled.
"$PY" -m pip install --quiet --no-build-isolation --force-reinstall --no-deps .

echo "== Python: pytest against a real etcd"
# From tests/'s parent, so `import etcdlock` is the installed package (python/ is not on the path).
exec "$PY" -m pytest -p no:cacheprovider -q -rfEs tests
