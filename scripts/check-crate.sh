#!/usr/bin/env bash
# Checks that the Rust crate publishes and builds for a user with nothing but cargo: in a clean
# copy of the repository (git's files only), `cargo publish --dry-run` of the core and the patched
# etcd-client it depends on (packaged together, as `cargo publish --workspace` would upload them),
# then a scratch crate outside the repository that depends on `etcdlock` from the packaged crates
# (through [patch.crates-io], standing in for crates.io) builds with PROTOC pointing at a program
# that fails (nothing in the published crates may need protoc), takes a lock on a local etcd and
# releases it. The scratch build is the verification (`--no-verify`: cargo's own would compile
# the same packaged sources once more, ~1:40 of CPU); it resolves the newest compatible versions,
# as a new user's build does. ~1:40 of CPU in all (a debug build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/repo"
git ls-files -z --cached --others --exclude-standard | grep -zv '^target/' |
    tar --null -cf - -T - | tar -xf - -C "$work/repo"
export PROTOC=/bin/false CARGO_TARGET_DIR="$work/target"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
(cd "$work/repo" && cargo publish --dry-run --no-verify --quiet --allow-dirty -p etcdlock-etcd-client -p etcdlock 2>&1 |
    grep -v 'aborting upload due to dry run' || true)
pkg="$work/target/package/tmp-crate" # where a dry run leaves the .crate files
for crate in "etcdlock-$version" etcdlock-etcd-client-0.21.1; do
    [ -f "$pkg/$crate.crate" ] || { echo "check-crate: cargo publish --dry-run made no $crate.crate"; exit 1; }
    # What a crate names must be inside it: no file from outside its package (README, licence).
    files="$(tar -tzf "$pkg/$crate.crate")"
    for f in README.md Cargo.toml; do
        grep -qx "$crate/$f" <<<"$files" || { echo "check-crate: $crate.crate has no $f"; exit 1; }
    done
done
mkdir -p "$work/scratch/src" "$work/unpacked"
tar -xzf "$pkg/etcdlock-$version.crate" -C "$work/unpacked"
tar -xzf "$pkg/etcdlock-etcd-client-0.21.1.crate" -C "$work/unpacked"
cat >"$work/scratch/Cargo.toml" <<TOML
[package]
name = "scratch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
etcdlock = "$version"
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }

[patch.crates-io]
etcdlock = { path = "$work/unpacked/etcdlock-$version" }
etcdlock-etcd-client = { path = "$work/unpacked/etcdlock-etcd-client-0.21.1" }
TOML
cat >"$work/scratch/src/main.rs" <<'RS'
// A user's first program, against a local etcd: lock, a fenced write, release.
#[tokio::main]
async fn main() -> etcdlock::Result<()> {
    let endpoint = std::env::args().nth(1).expect("endpoint");
    let client = etcdlock::Client::connect([endpoint], etcdlock::ClientOptions::default()).await?;
    assert_eq!(client.mutex("", 10).err().map(|e| e.kind()), Some(etcdlock::ErrorKind::InvalidArgument));
    let guard = client.mutex("scratch/lock", 10)?.lock().await?;
    guard.put(b"scratch/state", b"held").await?;
    println!("held scratch/lock at token {}", guard.fencing_token());
    guard.release().await?;
    client.close().await;
    Ok(())
}
RS
if ! (cd "$work/scratch" && cargo build --quiet) >"$work/build.log" 2>&1; then
    cat "$work/build.log"; echo "check-crate: a crate depending on the packaged etcdlock does not build"; exit 1
fi
python3 tests/etcd_harness.py start --members 1 --state "$work/etcd.json" >"$work/endpoints"
trap 'python3 tests/etcd_harness.py stop --state "$work/etcd.json" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
out="$("$work/target/debug/scratch" "$(head -1 "$work/endpoints")" 2>&1)" || { echo "$out"; echo "check-crate: the scratch crate did not run"; exit 1; }
echo "check-crate: etcdlock $version and etcdlock-etcd-client 0.21.1 package (cargo publish --dry-run), and a crate depending on them builds with no protoc and runs: $out"
