#!/usr/bin/env python3
"""Fails when a binding's tests do not name every scenario of scenarios.md that applies to it.

A test names a scenario by writing its ID anywhere in a test file (a `covers: ID` comment, or
the ID in the test's name). IDs that are not in the catalogue are errors too, so that a typo
cannot pass for coverage, and so is an ID that names two rows. A test marked to be skipped
(pytest's skip marks, node:test's `skip`, Rust's `#[ignore]`) within a few lines of the ID does
not count as covering it.

Nor may any test be marked as an expected failure (node:test's `todo`, pytest's `xfail`) or be
switched off (JUnit's `@Disabled`, Rust's `#[ignore]`): such a test passes whatever it finds, so
a fixed bug's test would stop guarding it, and a broken one would show as a pass.
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
# Marks under which a test's failure does not fail its suite, or the test does not run.
NOT_GUARDING = re.compile(r"\btodo:\s*(?!false\b)|\.todo\(|pytest\.mark\.xfail|pytest\.xfail\(|@Disabled\b|#\[ignore")


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


def test_files(target):
    folder, patterns = TARGETS[target]
    for pattern in patterns:
        for f in sorted(folder.rglob(pattern)) if folder.exists() else []:
            if "node_modules" not in f.parts:
                yield f


def not_guarding(target):
    """`file:line: text` of each test marked as an expected failure or switched off."""
    for f in test_files(target):
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            if NOT_GUARDING.search(line):
                yield f"{f.relative_to(ROOT)}:{n}: {line.strip()[:100]}"


def named_ids(target):
    found = {}
    for f in test_files(target):
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
        for where in not_guarding(target):
            print(f"  {target}: a test marked to pass whatever it finds (expected failure, or off): {where}")
            failed += 1
    print(f"conformance: {'full coverage' if not failed else f'{failed} problem(s)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
