#!/usr/bin/env bash
# Checks that third_party/etcd-client/src/rpc/generated/ is what tonic-prost-build makes of etcd's
# protos (third_party/etcd-client/PATCHED.md: the code is checked in so that no build of etcdlock
# needs protoc). Builds scripts/proto-gen (its own workspace and target directory, debug: ~35 s
# of CPU once) and compares. `--write` replaces the checked-in code instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
write=0
[ "${1:-}" = "--write" ] && write=1
gen=third_party/etcd-client/src/rpc/generated
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cargo run --quiet --locked --manifest-path scripts/proto-gen/Cargo.toml --target-dir target/proto-gen -- "$out"
status=0
for f in authpb etcdserverpb mvccpb v3electionpb v3lockpb; do
    if [ "$write" = 1 ]; then
        cp "$out/$f.rs" "$gen/$f.rs"
    elif ! cmp -s "$out/$f.rs" "$gen/$f.rs"; then
        echo "check-proto-gen: $gen/$f.rs is not what tonic-prost-build generates (bash scripts/check-proto-gen.sh --write)"
        diff -u "$gen/$f.rs" "$out/$f.rs" | head -20
        status=1
    fi
done
[ "$status" = 0 ] && echo "check-proto-gen: the checked-in protobuf code is what tonic-prost-build generates"
exit "$status"
