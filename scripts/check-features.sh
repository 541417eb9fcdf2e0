#!/usr/bin/env bash
# Checks that every way the test command and the packaging build a workspace crate resolves the
# same dependency features as `cargo test --workspace --all-targets`, so none of them recompiles
# tokio, tonic, etcd-client or core (see workspace-hack/Cargo.toml). Prints each package whose
# features differ and exits 1 if there is one; the fix is to add the missing features to
# workspace-hack/Cargo.toml. Takes a few seconds (cargo tree, nothing is compiled).
#
# The core's optional features (`postgres`: the database fencing helper on tokio-postgres;
# `prometheus`: the collector for a `prometheus` crate registry) are off in every build above;
# scripts/test.sh builds the core once more with both, for their own test binaries and doc
# tests. Such a build may add packages that no other build compiles (the
# driver and its dependencies, built once, by it alone), but every package that the workspace
# also compiles for the target must resolve with the workspace's features, or the feature's
# build would compile tokio, tonic or etcd-client again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# "name@version|features", one line per resolved package outside the workspace.
resolved() {
    cargo tree "$@" --prefix none --format '{p}|{f}' |
        grep -v "($PWD" | grep ' v[0-9]' | sed 's/ (\*)//; s/ (proc-macro)//' |
        awk -F'|' '{ split($1, p, " "); print p[1] "@" p[2] "|" $2 }' | sort -u
}

resolved --workspace --edges features,normal,build,dev >"$tmp/workspace"
bad=0
for sel in "etcdlock dev" etcdlock-c etcdlock-node etcdlock-python etcdlock-java etcdlock-bench etcdlock-cli; do
    pkg="${sel% dev}"
    edges=features,normal,build
    [ "$sel" = "$pkg" ] || edges="$edges,dev"
    if resolved -p "$pkg" --edges "$edges" | grep -vxF -f "$tmp/workspace" >"$tmp/diff"; then
        bad=1
        echo "check-features: building $pkg alone resolves these differently from the workspace:"
        sed 's/^/    /' "$tmp/diff"
    fi
done

# Packages the workspace compiles for the target (normal and dev edges: not build scripts' own).
resolved --workspace --edges features,normal,dev | cut -d'|' -f1 | sort -u >"$tmp/workspace-target"
# The features as scripts/test.sh builds them: together, in one build.
for feature in postgres,prometheus; do
    resolved -p etcdlock --features "$feature" --edges features,normal,build,dev | grep -vxF -f "$tmp/workspace" >"$tmp/extra" || true
    cut -d'|' -f1 "$tmp/extra" | grep -xF -f "$tmp/workspace-target" >"$tmp/shared" || true
    if [ -s "$tmp/shared" ]; then
        bad=1
        echo "check-features: building etcdlock with feature $feature resolves these packages, which the workspace also builds, differently:"
        grep -F -f "$tmp/shared" "$tmp/extra" | sed 's/^/    /'
    else
        own=$(cut -d'|' -f1 "$tmp/extra" | sort -u)
        echo "check-features: etcdlock with feature $feature shares the workspace's features and adds $(echo "$own" | grep -c . || true) packages that only it builds: $(echo $own)"
    fi
done
[ "$bad" = 0 ] && echo "check-features: every build of a workspace crate shares the workspace's dependency features"
exit "$bad"
