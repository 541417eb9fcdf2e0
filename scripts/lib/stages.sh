# Stages for scripts/test.sh: each suite runs as a named stage whose wall time, CPU time and
# result are recorded, a failed stage does not stop the ones after it, and `stages_report`
# prints the time table, lists every failure together and sets the exit status.
#
#   source scripts/lib/stages.sh
#   stage "C binding" bash bindings-c/test.sh          # in the foreground, output as it comes
#   stage_bg "Rust core on 3.6" cargo test ...         # beside the others; output when it ends
#   stage_wait                                         # waits for every background stage
#   stage_skip "soak" "left out by --quick"
#   stages_report                                      # the table; returns 1 if any failed
#
# Each stage runs in a child shell started with `&` and waited for, never as `f || rc=$?`: in
# that form bash switches `set -e` off inside f and everything f starts (background children
# too), so a multi-command stage would carry on past its first failure.
#
# STAGES_BUDGET (seconds, default 2100 = 35 min, the test command's budget on 2 cores): the report
# says how much of it the run used and how much is left; past it, it warns and names the three
# slowest stages. It is a warning, never a failure (CI itself stops at 90 min).

_stage_dir="$(mktemp -d "${TMPDIR:-/tmp}/etcdlock-stages.XXXXXX")"
_stage_t0=$(date +%s.%N)
_stage_names=()   # in the order they started
_stage_bg=()      # indices of background stages not yet waited for
_stage_bg_pids=()

_stage_now() { date +%s.%N; }

# _stage_run INDEX CMD...: runs CMD in a child shell and writes INDEX.rc and INDEX.time
# ("wall cpu"). Called in a subshell of its own, so that `times` counts this stage's processes
# only (a fork starts with zero children's time).
_stage_run() {
    local i="$1"; shift
    local t0; t0=$(_stage_now)
    ( set -e; "$@" ) &
    local pid=$! rc
    set +e; wait "$pid"; rc=$?; set -e
    local t1; t1=$(_stage_now)
    # `times` prints this shell's and its children's user and system time, as "XmY.Zs". It must
    # run in this shell: inside $(...) it would be a fresh fork that has no children yet.
    times >"$_stage_dir/$i.times"
    local cpu; cpu=$(tail -1 "$_stage_dir/$i.times" | awk '{
        s = 0
        for (f = 1; f <= 2; f++) { split($f, p, "m"); s += p[1] * 60 + p[2] }
        printf "%.1f", s }')
    echo "$rc" >"$_stage_dir/$i.rc"
    awk -v a="$t0" -v b="$t1" -v c="$cpu" 'BEGIN { printf "%.1f %s\n", b - a, c }' >"$_stage_dir/$i.time"
}

# _stage_new NAME [SUFFIX]: registers a stage, announces it, sets _stage_i to its index.
_stage_new() {
    _stage_i=${#_stage_names[@]}
    _stage_names+=("$1")
    echo
    echo "== [stage $((_stage_i + 1))] $1${2:-}"
}

# stage NAME CMD...: runs CMD now, in the foreground (its output also kept, for `_stage_why`).
stage() {
    _stage_new "$1"; shift
    local i=$_stage_i
    ( _stage_run "$i" "$@" ) 2>&1 | tee "$_stage_dir/$i.log"
    _stage_say_end "$i"
}

# stage_bg NAME CMD...: starts CMD beside whatever else runs; its output is kept in a file and
# printed, whole, when `stage_wait` collects it.
stage_bg() {
    _stage_new "$1" ": started in the background"; shift
    local i=$_stage_i
    ( _stage_run "$i" "$@" ) >"$_stage_dir/$i.log" 2>&1 &
    _stage_bg+=("$i")
    _stage_bg_pids+=("$!")
}

# stage_wait: waits for every background stage, printing their outputs in the order they started.
stage_wait() {
    local k
    for k in "${!_stage_bg[@]}"; do
        local i="${_stage_bg[$k]}"
        wait "${_stage_bg_pids[$k]}" || true
        echo
        echo "== [stage $((i + 1))] ${_stage_names[$i]}: output"
        cat "$_stage_dir/$i.log"
        _stage_say_end "$i"
    done
    _stage_bg=()
    _stage_bg_pids=()
}

# stage_skip NAME REASON: a stage that did not run, and why.
stage_skip() {
    _stage_new "$1" ": skipped ($2)"
    echo "skipped $2" >"$_stage_dir/$_stage_i.rc"
    echo "0 0" >"$_stage_dir/$_stage_i.time"
}

_stage_result() { # INDEX -> passed | failed (status N) | skipped (reason)
    local rc; rc="$(cat "$_stage_dir/$1.rc" 2>/dev/null || echo "no status")"
    case "$rc" in
        0) echo "passed" ;;
        skipped*) echo "skipped (${rc#skipped })" ;;
        *) echo "failed (status $rc)" ;;
    esac
}

# _stage_why INDEX: the lines of a failed stage's output that say why (a Rust panic and its
# message, pytest's E lines and summary, node:test's "not ok", JUnit's and Python's errors), at
# most 40, so that the end of a long run's output shows them beside the table.
_stage_why() {
    grep -E -A4 -- 'panicked at|^E  |FAILED|not ok|Error:|^error|^FAIL' "$_stage_dir/$1.log" 2>/dev/null \
        | head -40 | sed 's/^/      | /' || true
}

_stage_clock() { # SECONDS -> M:SS
    awk -v s="$1" 'BEGIN { s = int(s + 0.5); printf "%d:%02d", s / 60, s % 60 }'
}

_stage_say_end() {
    local i="$1" wall cpu
    read -r wall cpu <"$_stage_dir/$i.time"
    echo "== [stage $((i + 1))] ${_stage_names[$i]}: $(_stage_result "$i") in $(_stage_clock "$wall") (CPU $(_stage_clock "$cpu"))"
}

# stages_report: the time table, the failures, the budget warning and a closing count line.
# Returns 1 if any stage failed.
stages_report() {
    stage_wait
    local total; total=$(awk -v a="$_stage_t0" -v b="$(_stage_now)" 'BEGIN { printf "%.1f", b - a }')
    local i passed=0 failed=0 skipped=0 failures=() rows=()
    echo
    echo "== Time table (wall = elapsed, CPU = user + system of the stage's processes; background stages overlap)"
    printf '%-4s %-72s %8s %8s  %s\n' "#" "stage" "wall" "CPU" "result"
    for i in "${!_stage_names[@]}"; do
        local wall cpu result
        read -r wall cpu <"$_stage_dir/$i.time"
        result="$(_stage_result "$i")"
        printf '%-4s %-72s %8s %8s  %s\n' "$((i + 1))" "${_stage_names[$i]}" "$(_stage_clock "$wall")" "$(_stage_clock "$cpu")" "$result"
        rows+=("$wall	${_stage_names[$i]}")
        case "$result" in
            passed) passed=$((passed + 1)) ;;
            skipped*) skipped=$((skipped + 1)) ;;
            *) failed=$((failed + 1)); failures+=("$i") ;;
        esac
    done
    echo "total: $(_stage_clock "$total") wall"
    local budget="${STAGES_BUDGET:-2100}"
    if awk -v t="$total" -v b="$budget" 'BEGIN { exit !(t > b) }'; then
        local slowest over
        over=$(awk -v t="$total" -v b="$budget" 'BEGIN { print t - b }')
        echo "budget: $(_stage_clock "$budget"), used $(_stage_clock "$total"), over by $(_stage_clock "$over")"
        slowest="$(printf '%s\n' "${rows[@]}" | sort -t '	' -k1,1 -rn | head -3 \
            | while IFS='	' read -r w n; do printf '%s (%s), ' "$n" "$(_stage_clock "$w")"; done)"
        echo "WARNING: the test command took $(_stage_clock "$total"), over its $(_stage_clock "$budget") budget; the slowest stages: ${slowest%, }"
    else
        local left pct
        left=$(awk -v t="$total" -v b="$budget" 'BEGIN { print b - t }')
        pct=$(awk -v t="$total" -v b="$budget" 'BEGIN { printf "%d", (b > 0 ? 100 * t / b : 0) }')
        echo "budget: $(_stage_clock "$budget"), used $(_stage_clock "$total") (${pct} %), left $(_stage_clock "$left")"
    fi
    if [ "$failed" -gt 0 ]; then
        echo "failed stages, and what their output says of why:"
        for i in "${failures[@]}"; do
            echo "  ${_stage_names[$i]}: $(_stage_result "$i")"
            _stage_why "$i"
        done
    fi
    echo "stages: $passed passed, $failed failed, $skipped skipped"
    rm -rf "$_stage_dir"
    [ "$failed" -eq 0 ]
}
