#!/usr/bin/env bash
# Builds the artifacts that people install without this repository or a Rust toolchain, into
# dist/ (or $DIST_DIR). Needs cargo and a C compiler; no protoc (see third_party/etcd-client).
#
#   scripts/package.sh python   dist/etcdlock-V-cp39-abi3-manylinux_*.whl  (stripped, abi3)
#                               dist/etcdlock-V.tar.gz                     (sdist: core and the
#                                                                           patched etcd-client in it)
#   scripts/package.sh node     dist/etcdlock-V.tgz   (npm pack: the addon for this platform,
#                                                      stripped, in prebuilds/<platform>/)
#   scripts/package.sh c [PREFIX]   bindings-c/install.sh into DESTDIR=dist/c-root, and
#                               dist/etcdlock-c-V-<os>-<arch>.tar.gz of that tree (default
#                               PREFIX /usr/local)
#   scripts/package.sh cli      dist/etcdlock-cli-V-<os>-<arch>.tar.gz: the `etcdlock` command
#                               (stripped; needs only the C library) with its README
#   scripts/package.sh java     dist/etcdlock-V.jar   (mvn package: the classes and
#                               META-INF/native/linux-x86_64/libetcdlock_jni.so, stripped of its
#                               debug line tables; its pom inside, no runtime dependency; needs
#                               Maven and a JDK 17), with dist/etcdlock-V-sources.jar and
#                               dist/etcdlock-V-javadoc.jar
# Each artifact carries LICENSE, THIRD-PARTY-LICENSES (scripts/third-party-licenses.py: the crates
# linked into the binaries) and NOTICE: the wheel in .dist-info/licenses/ (pyproject's
# license-files, through links in bindings-python/), the npm package at its root (copied there
# by its prepack script), the jar in META-INF/, the C prefix in share/licenses/etcdlock/
# (install.sh), the CLI tarball at its top.
#   scripts/package.sh all      all five
# The binaries are built in the workspace's release profile (target/release, shared with
# `cargo build --release` and the test suites), and stripped when they are packed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="${DIST_DIR:-$root/dist}"
mkdir -p "$dist"
dist="$(cd "$dist" && pwd)"
PY="${PYTHON:-python3}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$root/Cargo.toml")"
[ -n "$version" ] || { echo "package.sh: no workspace version in Cargo.toml" >&2; exit 1; }
log() { echo "package.sh: $*" >&2; }

package_python() {
    "$PY" -c 'import maturin' 2>/dev/null || "$PY" -m pip install --quiet 'maturin>=1.9,<2'
    rm -f "$dist"/etcdlock-"$version"-*.whl "$dist/etcdlock-$version.tar.gz"
    log "python wheel (maturin build --release, stripped; the platform tag is maturin's audit of the glibc symbols used)"
    (cd "$root/bindings-python" && "$PY" -m maturin build --release --strip --out "$dist")
    log "python sdist"
    local tmp
    tmp="$(mktemp -d)"
    (cd "$root/bindings-python" && "$PY" -m maturin sdist --out "$tmp")
    # maturin puts in the path dependencies the package needs (core, the patched etcd-client, ...);
    # add whatever of third_party/etcd-client it leaves out, and LICENSE.
    "$PY" - "$tmp/etcdlock-$version.tar.gz" "$dist/etcdlock-$version.tar.gz" "$root" <<'EOF'
import io, os, subprocess, sys, tarfile
src, dst, root = sys.argv[1:]
prefix = os.path.basename(dst)[: -len(".tar.gz")]
files = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard",
                        "third_party/etcd-client"], check=True, capture_output=True, text=True).stdout.split()
with tarfile.open(src) as tin, tarfile.open(dst, "w:gz", format=tarfile.PAX_FORMAT) as tout:
    names = set()
    for m in tin.getmembers():
        names.add(m.name)
        tout.addfile(m, tin.extractfile(m) if m.isfile() else None)
    for rel in sorted(files) + ["LICENSE"]:
        name = f"{prefix}/{rel}"
        if name in names or not os.path.isfile(os.path.join(root, rel)):
            continue
        tout.add(os.path.join(root, rel), arcname=name, recursive=False)
    if f"{prefix}/third_party/etcd-client/src/lib.rs" not in tout.getnames():
        sys.exit("package.sh: third_party/etcd-client is missing from the sdist")
EOF
    rm -rf "$tmp"
    ls -l "$dist"/etcdlock-"$version"-*.whl "$dist/etcdlock-$version.tar.gz" >&2
}

package_node() {
    local pv
    pv="$(node -p 'require(process.argv[1]).version' "$root/bindings-node/package.json")"
    [ "$pv" = "$version" ] || { log "bindings-node/package.json has version $pv, Cargo has $version"; exit 1; }
    log "npm pack (its prepack script builds the addon and puts a stripped copy in prebuilds/)"
    rm -f "$dist/etcdlock-$version.tgz"
    (cd "$root/bindings-node" && npm pack --silent --pack-destination "$dist" >/dev/null)
    ls -l "$dist/etcdlock-$version.tgz" >&2
}

package_c() {
    local prefix="${1:-/usr/local}" stage="$dist/c-root"
    rm -rf "$stage"
    DESTDIR="$stage" bash "$root/bindings-c/install.sh" --prefix "$prefix" >&2
    local os arch
    os="$(uname -s | tr '[:upper:]' '[:lower:]')"
    arch="$(uname -m)"
    tar -C "$stage" -czf "$dist/etcdlock-c-$version-$os-$arch.tar.gz" .
    ls -l "$dist/etcdlock-c-$version-$os-$arch.tar.gz" >&2
}

package_cli() {
    log "cli (cargo build --release -p etcdlock-cli, stripped)"
    (cd "$root" && cargo build --quiet --release -p etcdlock-cli)
    local os arch name stage
    os="$(uname -s | tr '[:upper:]' '[:lower:]')"
    arch="$(uname -m)"
    name="etcdlock-cli-$version-$os-$arch"
    stage="$(mktemp -d)"
    mkdir -p "$stage/$name/bin"
    cp "$root/target/release/etcdlock" "$stage/$name/bin/etcdlock"
    strip "$stage/$name/bin/etcdlock"
    # Completions and man pages at the paths a prefix (/usr/local, ~/.local) keeps them under.
    local share="$stage/$name/share"
    mkdir -p "$share/bash-completion/completions" "$share/zsh/site-functions" "$share/fish/vendor_completions.d" "$share/man/man1"
    "$stage/$name/bin/etcdlock" completions bash >"$share/bash-completion/completions/etcdlock"
    "$stage/$name/bin/etcdlock" completions zsh >"$share/zsh/site-functions/_etcdlock"
    "$stage/$name/bin/etcdlock" completions fish >"$share/fish/vendor_completions.d/etcdlock.fish"
    "$stage/$name/bin/etcdlock" man --out-dir "$share/man/man1"
    # The licences: ours, the crates linked into the binary (with their texts) and the NOTICE.
    cp "$root/cli/README.md" "$root/LICENSE" "$root/THIRD-PARTY-LICENSES" "$root/NOTICE" "$stage/$name/"
    tar -C "$stage" -czf "$dist/$name.tar.gz" "$name"
    rm -rf "$stage"
    ls -l "$dist/$name.tar.gz" >&2
}

package_java() {
    local pv
    # The project's own <version> (the first one in the pom, before any dependency's).
    pv="$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/bindings-java/pom.xml" | head -1)"
    [ "$pv" = "$version" ] || { log "bindings-java/pom.xml has version $pv, Cargo has $version"; exit 1; }
    bash "$root/scripts/install-java.sh"
    log "java jar (mvn package: cargo build --release -p etcdlock-java, the library in the jar; no tests)"
    rm -f "$dist/etcdlock-$version.jar" "$dist/etcdlock-$version-sources.jar" "$dist/etcdlock-$version-javadoc.jar"
    # -Dmaven.test.skip: neither compiles nor runs the tests, even with ETCDLOCK_ENDPOINTS set.
    # A build directory of its own (target/java-package), so that a bindings-java/test.sh running
    # at the same time in bindings-java/target is not disturbed (cargo's target/release is shared).
    local build="$root/target/java-package"
    (cd "$root/bindings-java" && mvn -B -q -Dmaven.test.skip=true -Detcdlock.build.directory="$build" package)
    local j
    for j in "" -sources -javadoc; do cp "$build/etcdlock-$version$j.jar" "$dist/"; done
    ls -l "$dist/etcdlock-$version".jar "$dist/etcdlock-$version"-{sources,javadoc}.jar >&2
}

case "${1:-all}" in
    python) package_python ;;
    node) package_node ;;
    c) shift; package_c "$@" ;;
    cli) package_cli ;;
    java) package_java ;;
    all) package_c; package_cli; package_node; package_python; package_java ;;
    *) echo "usage: scripts/package.sh python|node|c [PREFIX]|cli|java|all" >&2; exit 2 ;;
esac
