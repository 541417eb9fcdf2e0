#!/usr/bin/env python3
"""Checks that the error and log messages a documentation page quotes are ones the code says.

A quoted message is an inline code span on a block-quote line (`> `...``) of the pages given
(default: docs/guides/troubleshooting.md). `…` in a quote stands for a part that varies; every
other piece of it (3 characters or more) must occur in the sources: the core, the command line
and the bindings (Rust, Java, JavaScript, Python), with string literals that the code joins
(a Rust line continuation, Java's `"a" + CONSTANT + "b"`, adjacent literals) joined first.
Messages that come from the system (the dynamic loader, the JVM) are shown in `text` blocks,
which this does not read. Run by scripts/docs.sh; exits 1 naming each quote not found.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    ("core/src", "*.rs"), ("cli/src", "*.rs"),
    ("bindings-c/src", "*.rs"), ("bindings-python/src", "*.rs"), ("bindings-node/src", "*.rs"),
    ("bindings-java/src", "*.rs"), ("bindings-java/src/main/java", "*.java"),
    ("bindings-node", "native.js"), ("bindings-node/lib", "*.js"),
    ("bindings-python/python", "*.py"),
]
QUOTE_LINE = re.compile(r"^\s*>\s")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def sources() -> str:
    texts = []
    for base, pattern in SOURCES:
        for path in sorted((ROOT / base).rglob(pattern)):
            text = path.read_text(encoding="utf-8", errors="replace")
            # Rust: a string continued on the next line ("...\<newline>   ...").
            text = re.sub(r"\\\n\s*", "", text)
            if path.suffix == ".java":
                consts = dict(re.findall(r'static final String ([A-Z_]+) = "([^"]*)";', text))
                # "a" + NAME + "b", "a" + NAME (at a line's end, then + "b" on the next).
                for name, value in consts.items():
                    text = re.sub(r'"\s*\+\s*' + name + r'\s*\+\s*"', lambda _m, v=value: v, text)
            # Adjacent literals joined by + (Java, JavaScript), also across lines.
            text = re.sub(r"""(["'`])\s*\+\s*\1""", "", text)
            texts.append(text)
    return "\n".join(texts)


def quotes(page: Path):
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if QUOTE_LINE.match(line):
            for _, quote in CODE_SPAN.findall(line):
                yield n, quote.strip()


def main(argv):
    pages = [Path(a) for a in argv] or [ROOT / "docs/guides/troubleshooting.md"]
    code = sources()
    missing, count = [], 0
    for page in pages:
        for n, quote in quotes(page):
            count += 1
            pieces = [p.strip() for p in quote.split("…")]
            absent = [p for p in pieces if len(p) >= 3 and p not in code]
            if absent:
                missing.append(f"{page.relative_to(ROOT) if page.is_absolute() else page}:{n}: `{quote}` (not in the code: {absent!r})")
    if count == 0:
        print("check_quoted_messages: no quoted message found: is the page's markup what this reads?")
        return 1
    for m in missing:
        print(m)
    if missing:
        print(f"check_quoted_messages: {len(missing)} of {count} quoted messages are not in the code")
        return 1
    print(f"check_quoted_messages: {count} quoted messages, each in the code")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
