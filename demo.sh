#!/usr/bin/env bash
# The demo: workers contending for one lock on a local etcd that this starts and stops.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
bash scripts/install-deps.sh >/dev/null
exec cargo run --quiet --release -p etcdlock --example demo
