#!/usr/bin/env python3
"""Fails when a public name of the Python package lacks a docstring.

Reads bindings-python/python/etcdlock statically with griffe (the library mkdocstrings uses, so
the check sees what the API reference shows): every name in ``etcdlock.__all__`` that is a
function or a class, every public method and property of those classes (a name without a
leading underscore, plus ``__init__`` when the class defines one with parameters), and the same
for the public submodules ``etcdlock.fencing`` and ``etcdlock.prometheus``. Prints each missing
one as ``path:line: qualified.name`` and exits 1; exits 0 with a count when all are documented.
"""

import sys
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[2]
SEARCH = ROOT / "bindings-python" / "python"
PUBLIC_MODULES = ("etcdlock", "etcdlock.fencing", "etcdlock.prometheus")


def public_names(module):
    exported = module.exports
    if exported:
        return [n if isinstance(n, str) else n.name for n in exported]
    return [n for n in module.members if not n.startswith("_")]


def documented(obj):
    return obj.docstring is not None and obj.docstring.value.strip() != ""


def where(obj):
    path = obj.filepath if not isinstance(obj.filepath, list) else obj.filepath[0]
    try:
        path = Path(path).relative_to(ROOT)
    except ValueError:
        pass
    return f"{path}:{obj.lineno}"


def check_class(cls, label, missing, seen):
    for name, member in cls.members.items():
        if name.startswith("_"):
            continue
        if member.is_alias:
            try:
                member = member.final_target
            except griffe.AliasResolutionError:
                continue
        if not (member.is_function or member.is_attribute and "property" in member.labels):
            continue
        seen.append(f"{label}.{name}")
        if not documented(member):
            missing.append(f"{where(member)}: {label}.{name}")


def main():
    loader = griffe.GriffeLoader(search_paths=[str(SEARCH)], allow_inspection=False)
    package = loader.load("etcdlock")
    loader.resolve_aliases(implicit=True, external=False)
    missing, seen = [], []
    for modname in PUBLIC_MODULES:
        module = package if modname == "etcdlock" else package[modname.split(".", 1)[1]]
        for name in public_names(module):
            obj = module[name]
            if obj.is_alias:
                obj = obj.final_target
            label = f"{modname}.{name}"
            if obj.is_class:
                seen.append(label)
                if not documented(obj):
                    missing.append(f"{where(obj)}: {label}")
                check_class(obj, label, missing, seen)
            elif obj.is_function:
                seen.append(label)
                if not documented(obj):
                    missing.append(f"{where(obj)}: {label}")
    if missing:
        print(f"{len(missing)} of {len(seen)} public Python names have no docstring:")
        print("\n".join(missing))
        return 1
    print(f"every public Python name has a docstring ({len(seen)} checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
