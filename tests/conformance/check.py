#!/usr/bin/env python3
"""Fails when a binding's tests do not name every scenario of scenarios.md that applies to it.

A test names a scenario by writing its ID anywhere in a test file (a `covers: ID` comment, or
the ID in the test's name). IDs that are not in the catalogue are errors too, so that a typo
cannot pass for coverage, and so is an ID that names two rows. A test marked to be skipped
(pytest's skip marks, node:test's `skip`, Rust's `#[ignore]`) within a few lines of the ID does
not count as covering it.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "tests" / "conformance" / "scenarios.md"
TARGETS = {
    "core": (ROOT / "core" / "tests", ("*.rs",)),
    "python": (ROOT / "bindings-python" / "tests", ("*.py",)),
    "node": (ROOT / "bindings-node" / "test", ("*.js", "*.mjs", "*.cjs", "*.ts")),
    "c": (ROOT / "bindings-c" / "tests", ("*.c", "*.cpp", "*.cc", "*.sh", "*.py")),
    # The Java binding's JUnit tests (a row lists `java` to apply to it; `all` is the four above).
    "java": (ROOT / "bindings-java" / "src" / "test", ("*.java",)),
    # The `etcdlock` command line, run as a process (cli/tests/).
    "cli": (ROOT / "cli" / "tests", ("*.rs",)),
    # Fault scenarios on a 3-member cluster, judged by the history checker (tests/history/).
    "scenarios": (ROOT / "tests" / "history", ("test_*.py",)),
}
ID = re.compile(r"\b([A-Z]+(?:-[A-Z]+)*-\d{3})\b")


# Marks that skip a test, looked for from an ID to the test it names.
SKIP = re.compile(r"pytest\.mark\.skip|pytest\.skip\(|\bskip:\s*(?!false\b)|\.skip\(|#\[ignore")
SKIP_WINDOW = 6  # lines


def catalogue():
    rows = {}
    for line in CATALOGUE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and ID.fullmatch(cells[0]):
            applies = set()
            for a in (a.strip() for a in cells[1].split(",")):
                applies |= {"core", "python", "node", "c"} if a == "all" else {a}
            unknown = applies - TARGETS.keys()
            if unknown:
                sys.exit(f"{cells[0]}: unknown target(s) {sorted(unknown)}")
            if cells[0] in rows:
                sys.exit(f"{cells[0]} names two rows of {CATALOGUE.name}: give one a new ID")
            rows[cells[0]] = applies
    return rows


def named_ids(target):
    folder, patterns = TARGETS[target]
    found = {}
    for pattern in patterns:
        for f in sorted(folder.rglob(pattern)) if folder.exists() else []:
            if "node_modules" in f.parts:
                continue
            lines = f.read_text(errors="replace").splitlines()
            for n, line in enumerate(lines):
                for m in ID.finditer(line):
                    if SKIP.search("\n".join(lines[n : n + SKIP_WINDOW])):
                        continue
                    found.setdefault(m.group(1), f.relative_to(ROOT))
    return found


def main():
    rows = catalogue()
    failed = 0
    print(f"{'target':<8} {'covered':>8} {'required':>9}  missing")
    for target in TARGETS:
        named = named_ids(target)
        required = {i for i, applies in rows.items() if target in applies}
        missing = sorted(required - named.keys())
        unknown = sorted(i for i in named if i not in rows)
        print(f"{target:<8} {len(required & named.keys()):>8} {len(required):>9}  {', '.join(missing) or '-'}")
        for i in unknown:
            print(f"  {target}: {i} (in {named[i]}) is not in the catalogue")
        failed += len(missing) + len(unknown)
    print(f"conformance: {'full coverage' if not failed else f'{failed} problem(s)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
