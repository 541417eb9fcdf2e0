#!/usr/bin/env python3
"""Checks the third-party notices an artifact ships against the crate it is built from.

    python3 tests/packaging/notices.py CRATE NOTICES [--binary FILE]

Every package in CRATE's normal dependency graph, as `cargo tree -e normal` prints it (an
independent reading of the graph, not the generator's own walk), must have its "- name version:"
line in NOTICES (the THIRD-PARTY-LICENSES file taken out of the artifact). With --binary (the
Node addon): when the binary carries mimalloc's C code (its strings name mimalloc), NOTICES must
carry the licence text of the C sources bundled in libmimalloc-sys, and that crate must be in the
graph. Prints what is missing and exits 1; prints a one-line summary otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The workspace's own crates: etcdlock's licence is LICENSE, not a third-party notice.
OURS = re.compile(r"^etcdlock(-[a-z-]+)?$")


def graph(crate: str) -> set[tuple[str, str]]:
    out = subprocess.run(
        ["cargo", "tree", "-p", crate, "-e", "normal", "--prefix", "none", "--locked", "--offline",
         "--target", "x86_64-unknown-linux-gnu", "--format", "{p}"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    pkgs = set()
    for line in out.splitlines():
        m = re.match(r"^(\S+) v(\S+)", line)
        if m and not OURS.match(m[1]):
            pkgs.add((m[1], m[2]))
    if not pkgs:
        sys.exit(f"notices.py: cargo tree -p {crate} listed no third-party crate")
    return pkgs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("crate")
    ap.add_argument("notices")
    ap.add_argument("--binary")
    a = ap.parse_args()
    text = open(a.notices, encoding="utf-8").read()
    named = set(re.findall(r"^- (\S+) (\S+): ", text, re.M))
    want = graph(a.crate)
    missing = sorted(want - named)
    for name, version in missing:
        print(f"missing: {name} {version} (in {a.crate}'s graph, not named in {a.notices})")
    extra = ""
    if a.binary:
        with open(a.binary, "rb") as f:
            linked = b"mimalloc" in f.read()
        if linked:
            if not any(n == "libmimalloc-sys" for n, _ in want):
                print(f"{a.binary} carries mimalloc, but libmimalloc-sys is not in {a.crate}'s graph")
                missing.append(("libmimalloc-sys", "?"))
            if not re.search(r"^T\d+, carried by: .*libmimalloc-sys \S+ \(c_src/mimalloc/[^)]*LICENSE", text, re.M):
                print(f"mimalloc's C code is linked into {a.binary}, but its licence text (libmimalloc-sys's "
                      f"c_src/mimalloc/.../LICENSE) is not in {a.notices}")
                missing.append(("mimalloc C code", "?"))
            extra = "; mimalloc's C code linked and its licence text present"
        else:
            extra = "; no mimalloc in the binary"
    if missing:
        return 1
    print(f"{a.crate}: all {len(want)} crates of its graph named in {a.notices}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
