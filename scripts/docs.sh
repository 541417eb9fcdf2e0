#!/usr/bin/env bash
# Builds the documentation site into site/ (gitignored): the API references generated from the
# code, each with its generator's warnings as errors, then `mkdocs build --strict` (a broken
# link or a missing page fails it). A stage of scripts/test.sh.
#
#   1. rustdoc:  RUSTDOCFLAGS="-D warnings" cargo doc -p etcdlock --no-deps, with the features
#                docs.rs documents (core/Cargo.toml); core/src/lib.rs warns on a public item
#                without a doc comment (missing_docs) and on a broken intra-doc link, so either
#                fails this step
#   2. Python:   every public name has a docstring (scripts/docs/check_py_docstrings.py);
#                mkdocstrings renders them inside the mkdocs build (docs/api/python.md)
#   3. TypeDoc:  over bindings-node's .d.ts, --treatWarningsAsErrors (scripts/docs/typedoc.json)
#   4. javadoc:  mvn javadoc:javadoc in bindings-java (doclint all, failOnWarnings: its pom.xml)
#   5. Doxygen:  over include/etcdlock.h, WARN_AS_ERROR (scripts/docs/Doxyfile)
#   6. the error and log messages docs/guides/troubleshooting.md quotes are in the code
#                (scripts/docs/check_quoted_messages.py)
#   7. mkdocs build --strict, with the references of 1 and 3-5 added as files of the site
#      (scripts/docs/hooks.py), so links to them are checked too; then its control: the same
#      build with one broken link added must fail.
#
# Tools: mkdocs, mkdocs-material and mkdocstrings[python] from PyPI (pinned below), TypeDoc from
# npm (scripts/docs/package.json), Doxygen from Debian, Maven and a JDK (scripts/install-java.sh);
# each is installed only when missing, so a machine that has them builds offline.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
gen="$root/target/docs-gen"
export ETCDLOCK_DOCS_GEN="$gen"
log() { echo "== docs: $*"; }

PY_TOOLS=(mkdocs==1.6.1 mkdocs-material==9.8.2 mkdocstrings==1.0.8 mkdocstrings-python==2.0.11 griffelib==2.4.1)
if ! python3 - "${PY_TOOLS[@]}" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
    log "pip install ${PY_TOOLS[*]}"
    python3 -m pip install --quiet "${PY_TOOLS[@]}"
fi
if [ ! -x scripts/docs/node_modules/.bin/typedoc ] || [ ! -d scripts/docs/node_modules/@types/node ]; then
    log "npm ci (TypeDoc, TypeScript, @types/node)"
    (cd scripts/docs && npm ci --no-audit --no-fund --silent)
fi
if ! command -v doxygen >/dev/null 2>&1; then
    log "apt-get install doxygen"
    apt-get install -y -qq doxygen >/dev/null || { apt-get update -qq && apt-get install -y -qq doxygen >/dev/null; }
fi
bash scripts/install-java.sh >/dev/null

rm -rf "$gen" site
mkdir -p "$gen/api"

# Its own target directory: the dependencies' metadata is built for the dev profile, which the
# test command builds nothing else for, and the stages beside this one keep target/'s lock.
log "rustdoc (warnings as errors: every public item documented, every intra-doc link resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc --quiet -p etcdlock --no-deps --features postgres,prometheus --target-dir target/docs-build
cp -r target/docs-build/doc "$gen/api/rust"

log "Python: every public name has a docstring"
python3 scripts/docs/check_py_docstrings.py

log "TypeDoc (warnings as errors)"
(cd scripts/docs && node_modules/.bin/typedoc --options typedoc.json --logLevel Warn --out "$gen/api/node")

log "javadoc (doclint, warnings as errors)"
(cd bindings-java && { mvn -B -q -Dstyle.color=never -o javadoc:javadoc || mvn -B -q -Dstyle.color=never javadoc:javadoc; })
cp -r bindings-java/target/reports/apidocs "$gen/api/java"

log "Doxygen over include/etcdlock.h (warnings as errors)"
mkdir -p "$gen/api/c"
{ cat scripts/docs/Doxyfile; echo "OUTPUT_DIRECTORY = $gen/api/c"; } | doxygen -

log "the messages the troubleshooting page quotes are in the code"
python3 scripts/docs/check_quoted_messages.py

# Not --quiet: with it, mkdocs 1.6 drops warnings before --strict counts them, and passes.
log "mkdocs build --strict"
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict 2>&1 | { grep -v '^INFO ' || true; }
# The control: the same build with one broken link (hooks.py adds it) must fail.
log "control: mkdocs build --strict fails on a broken link"
control="$(mktemp -d /tmp/etcdlock-docs-control.XXXXXX)"
if ETCDLOCK_DOCS_CONTROL=broken-link NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict \
        --site-dir "$control/site" >"$control/log" 2>&1; then
    echo "the build passed with a broken link"; rm -rf "$control"; exit 1
fi
grep -q "no-such-page.md" "$control/log" || { cat "$control/log"; rm -rf "$control"; exit 1; }
rm -rf "$control"
# The generators' licence texts (.md files, left out of the pages by hooks.py).
(cd "$gen" && find api -name '*.md' -exec cp --parents {} "$root/site/" \;)
log "site/index.html ($(find site -type f | wc -l) files)"
