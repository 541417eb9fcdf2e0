#!/usr/bin/env bash
# Checks that each layer of core/src imports only from the layers below it (docs/design.md,
# "Layers"). Bottom up: error, runtime, transport, then client+lease+watch (one layer, as KV,
# Lease and Watcher are in etcd's clientv3), then cache (a prefix's local copy), then sync. Prints every import that reaches up and
# exits 1 if there is one. It reads `crate::<module>` paths, so a crate-root re-export
# (`crate::Client`) counts as the module it comes from; comments are not looked at.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../core/src"
layers=(error runtime transport "client lease watch" cache sync)
declare -A root=([Error]=error [ErrorKind]=error [Result]=error [Client]=client [ClientOptions]=client
    [KeyValue]=client [Op]=client [Lease]=lease [LostReason]=lease [LostSignal]=lease
    [Watch]=watch [WatchOptions]=watch [WatchEvent]=watch [EventType]=watch [Pem]=transport [TlsOptions]=transport [Cache]=cache [CacheEvent]=cache
    [LockGuard]=sync [Mutex]=sync [Election]=sync [Leader]=sync [Leadership]=sync [Observer]=sync [Semaphore]=sync [MAX_PERMITS]=sync [RwLock]=sync [LockOptions]=sync [LockState]=sync [QueueEntry]=sync [Metrics]=sync)
bad=0
for i in "${!layers[@]}"; do
    files=()
    for module in ${layers[$i]}; do
        found=$(find . -path "./$module.rs" -o -path "./$module/*.rs")
        [ -n "$found" ] || { echo "check-layers: no source for module $module"; bad=1; }
        files+=($found)
    done
    above=()
    for group in "${layers[@]:$((i + 1))}"; do above+=($group); done
    for name in "${!root[@]}"; do
        [[ " ${above[*]} " == *" ${root[$name]} "* ]] && above+=("$name")
    done
    [ "${#above[@]}" -gt 0 ] && [ "${#files[@]}" -gt 0 ] || continue
    # Doc comments may point anywhere; code may not.
    if grep -nE "crate::($(IFS='|'; echo "${above[*]}"))\b" "${files[@]}" | grep -vE '^[^:]+:[0-9]+:\s*//'; then
        echo "check-layers: the lines above, in ${layers[$i]}, import from a layer above it"
        bad=1
    fi
done
exit "$bad"
