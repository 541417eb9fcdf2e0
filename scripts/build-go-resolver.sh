#!/usr/bin/env bash
# Builds tests/interop/go-resolver (etcd's Go naming packages: the endpoints manager and the gRPC
# resolver) into target/interop/go-resolver and prints its path.
#   bash scripts/build-go-resolver.sh        (needs Go, which the machine has)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-build.sh"
go_build tests/interop/go-resolver target/interop/go-resolver
