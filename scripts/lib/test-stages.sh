#!/usr/bin/env bash
# Self-test of scripts/lib/stages.sh, the stage runner of scripts/test.sh: a failed stage, in the
# foreground or the background, does not stop the later ones and makes the exit status non-zero;
# a stage made of several commands stops at its first failure; the list of failures shows what
# each one's output says of why; skips carry their reason; the
# budget warning names the three slowest stages. A few seconds; prints "ok - ..." / "FAIL - ...".
set -euo pipefail
lib="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/stages.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
check() { # check NAME CONDITION...
    local name="$1"; shift
    if "$@"; then echo "ok - $name"; else echo "FAIL - $name"; failed=1; fi
}
# run SCRIPT_BODY: runs it after sourcing the library; output in $tmp/out, status in $rc.
run() {
    printf 'set -euo pipefail\nsource %q\n%s\n' "$lib" "$1" >"$tmp/script.sh"
    rc=0
    bash "$tmp/script.sh" >"$tmp/out" 2>&1 || rc=$?
}
has() { grep -qF -- "$1" "$tmp/out"; }

run '
two_steps() { false; echo "REACHED after a failed command"; }
stage "first fails" false
stage_bg "background fails" bash -c "sleep 0.3; exit 3"
stage "several commands" two_steps
stage_bg "a panic in the background" bash -c "echo \"thread t panicked at x.rs:1:2:\"; echo BG_REASON; exit 101"
stage "a panic in the foreground" bash -c "echo \"thread t panicked at y.rs:3:4:\"; echo FG_REASON; exit 101"
stage "runs after the failures" echo "LATER STAGE RAN"
stage_skip "left out" "left out by --quick"
stages_report'
check "a failed stage does not stop the later ones" has "LATER STAGE RAN"
check "a stage of several commands stops at its first failure" bash -c "! grep -q REACHED '$tmp/out'"
check "the exit status is non-zero" test "$rc" != 0
check "the failures are listed together, the background one with its status" \
    bash -c "sed -n '/^failed stages/,\$p' '$tmp/out' | grep -q '^  background fails: failed (status 3)$'"
check "each failure's reason, from its output, after the list's heading (background and foreground)" \
    bash -c "sed -n '/^failed stages/,\$p' '$tmp/out' | grep -q 'BG_REASON' && sed -n '/^failed stages/,\$p' '$tmp/out' | grep -q 'FG_REASON'"
check "a skip is reported with its reason" has "skipped (left out by --quick)"
check "the closing count" has "stages: 1 passed, 5 failed, 1 skipped"
check "no warning under the budget" bash -c "! grep -q WARNING '$tmp/out'"
check "under the budget: what is left of the 35 minutes" \
    bash -c "grep -q '^budget: 35:00, used 0:0[0-9] (0 %), left 3[45]:[0-9][0-9]$' '$tmp/out'"

run '
STAGES_BUDGET=0
stage "a" sleep 0.3
stage_bg "b" sleep 0.6
stage "c" sleep 0.1
stage "d" true
stages_report'
check "all passed: exit status 0" test "$rc" = 0
check "over the budget: by how much" bash -c "grep -q '^budget: 0:00, used 0:01, over by 0:01$' '$tmp/out'"
check "over the budget: a warning naming the three slowest" \
    bash -c "grep -q '^WARNING: .* the slowest stages: b ([0-9:]*), a ([0-9:]*), c ([0-9:]*)$' '$tmp/out'"
[ "$failed" = 0 ] || { echo "--- last output:"; cat "$tmp/out"; }
exit "$failed"
