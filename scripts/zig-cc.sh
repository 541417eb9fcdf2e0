#!/bin/sh
# The workspace's linker on x86_64 Linux (.cargo/config.toml): zig's `cc` with glibc 2.17 as the
# target, so that every binary we build — the C library, the Python extension, the Node addon, the
# JNI library, the command line, and the tests — needs nothing newer than glibc 2.17 (manylinux2014:
# RHEL/UBI 7 and 8, Amazon Linux 2, Debian 9 and later, Ubuntu 18.04 and later), whatever glibc
# the building machine has. Compilation is rustc's and the C compiler's as before; only the link
# goes through zig, whose glibc 2.17 stubs decide which symbol versions the binaries ask for.
#
# zig and cargo-zigbuild come from PyPI, in .tools/py-build (scripts/install-deps.sh). `cargo-zigbuild
# zig cc` is cargo-zigbuild's linker front end: it drops the arguments rustc passes that zig's cc
# does not take. -g keeps the line tables the release profile asks for (zig drops them without it).
venv="$(cd "$(dirname "$0")/.." && pwd)/.tools/py-build"
if [ -x "$venv/bin/cargo-zigbuild" ]; then
    # cargo-zigbuild runs zig as `python3 -m ziglang`: the venv's python3.
    PATH="$venv/bin:$PATH"
    export PATH
elif ! command -v cargo-zigbuild >/dev/null 2>&1; then
    echo "scripts/zig-cc.sh: the linker needs zig and cargo-zigbuild: run scripts/install-deps.sh" \
        "(it installs them into .tools/py-build)" >&2
    exit 1
fi
exec cargo-zigbuild zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.2.17 "$@"
