#!/usr/bin/env bash
# Every script the documentation tells users to run (`scripts/<name>.sh|.py`, `./<name>.sh` at the
# repository's root) has its run bit in git and a #! line, so `scripts/package.sh node` works as
# written, not only as `bash scripts/package.sh node`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bad=0
mapfile -t named < <(git ls-files -- '*.md' | xargs grep -hoE '(\./)?scripts/[A-Za-z0-9_.-]+\.(sh|py)|(^|[ `(])\./[a-z0-9-]+\.sh' \
    | sed -E 's/^[ `(]//; s#^\./##' | sort -u)
for f in "${named[@]}"; do
    [ -f "$f" ] || continue  # an example name in prose (./resize.sh), not a file of ours
    mode=$(git ls-files -s -- "$f" | cut -d' ' -f1)
    if [ "$mode" != "100755" ]; then
        echo "not executable in git: $f (git update-index --chmod=+x $f)"; bad=1
    fi
    if [ "$(head -c 2 "$f")" != "#!" ]; then
        echo "no #! line: $f"; bad=1
    fi
done
[ "$bad" = 0 ] && echo "every script the docs name is executable (${#named[@]} named)"
exit "$bad"
