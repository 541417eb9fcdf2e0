#!/usr/bin/env python3
"""Checks that the workspace's declared `rust-version` is honest: no package in the locked
dependency tree of a workspace crate (normal and build edges, every optional feature of ours on)
declares a newer one. A second toolchain cannot be installed here to build with the declared
version itself, so this scan is the check (release-readiness: "an honest rust-version"). What it
cannot see is our own use of newer std APIs; the floor named in Cargo.toml says which API sets it.

    python3 scripts/check-rust-version.py          the check (exit 1 if the declaration is too low)
    python3 scripts/check-rust-version.py --list   every package's rust-version, newest first
"""
import json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def version(v):
    return tuple(int(x) for x in (v or "0").split(".")) + (0,) * (3 - len((v or "0").split(".")))


def main():
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--all-features"], cwd=ROOT))
    # The workspace crates and the local crates they depend on (third_party/, published too).
    members = {p["id"] for p in meta["packages"] if p.get("source") is None}
    rv = {p["id"]: p.get("rust_version") for p in meta["packages"]}
    name = {p["id"]: f'{p["name"]}@{p["version"]}' for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    declared = {name[m]: rv[m] for m in members}
    worst = []
    for m in sorted(members, key=lambda m: name[m]):
        seen, todo = set(), [m]
        while todo:  # the tree without dev edges: what a user of the crate compiles
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            for d in nodes[pid]["deps"]:
                if any(k["kind"] in (None, "build") for k in d["dep_kinds"]):
                    todo.append(d["pkg"])
        need = max((rv[p] for p in seen - members if rv[p]), key=version, default=None)
        who = sorted(name[p] for p in seen - members if rv[p] and version(rv[p]) == version(need))
        worst.append((name[m], declared[name[m]], need, who))
    if "--list" in sys.argv:
        for pid in sorted(rv, key=lambda p: version(rv[p]), reverse=True):
            if rv[pid]:
                print(f"{rv[pid]:>8}  {name[pid]}")
        return 0
    bad = 0
    for crate, dec, need, who in worst:
        if dec is None or version(dec) < version(need):
            bad = 1
            print(f"check-rust-version: {crate} declares rust-version {dec}, but its locked tree needs {need} ({', '.join(who[:4])})")
    if not bad:
        top = max(worst, key=lambda w: version(w[2]))
        print(f"check-rust-version: every workspace crate's declared rust-version covers its locked tree "
              f"(newest needed: {top[2]}, by {', '.join(top[3][:4])})")
    return bad


sys.exit(main())
