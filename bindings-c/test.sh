#!/usr/bin/env bash
# The C binding's suite, from a fresh clone: release build, header drift check, install into a
# temp PREFIX + the examples built with pkg-config and run (and README.md's task queue, pool,
# cache and lock set blocks), the C tests (ASan/UBSan) and C++ header tests against a real etcd
# (three members serving TLS for test_tls.c, two with auth for test_auth.c), valgrind runs of the
# API, async, recipe, registry, task queue, pool, cache, lock set and fence tests. Ends with
# "N passed, N failed".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
[ -x .tools/bin/etcd ] && [ -x .tools/bin/etcdctl ] && [ -x .tools/py-build/bin/cargo-zigbuild ] || bash scripts/install-deps.sh
# tests/test_fence_pg.py starts a throwaway PostgreSQL (tests/pg_harness.py): Debian's server.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || bash scripts/install-deps.sh
# The C toolchain pieces this suite needs, from Debian's packages when missing.
missing=()
for tool in cc:gcc c++:g++ pkg-config:pkg-config valgrind:valgrind; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
# examples/fence_pg.c builds against libpq (PostgreSQL's client library).
command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libpq || missing+=(libpq-dev)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq >/dev/null && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

tmp="$(mktemp -d /tmp/etcdlock-c-test.XXXXXX)"
state="$tmp/etcd.json"
cleanup() {
    for f in "$state" "$tmp/tls.json" "$tmp/mtls.json" "$tmp/auth.json" "$tmp/auth-ttl.json" "$tmp/other-name.json"; do
        python3 tests/etcd_harness.py stop --state "$f" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
record() { # record ok|FAIL NAME
    echo "$1 - $2"
    if [ "$1" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
# Runs a test program, counts its "ok - x" / "FAIL - x" lines; a crash or a non-zero exit
# without a FAIL line counts as one more failure.
run_prog() { # run_prog NAME TIMEOUT_S CMD...
    local name="$1" secs="$2"
    shift 2
    local out="$tmp/$name.out" rc=0
    timeout "$secs" "$@" >"$out" 2>&1 || rc=$?
    cat "$out"
    local ok fail
    ok=$(grep -c '^ok - ' "$out" || true)
    fail=$(grep -c '^FAIL - ' "$out" || true)
    passed=$((passed + ok))
    failed=$((failed + fail))
    if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then record FAIL "$name exited with status $rc"; fi
}

# Runs a program whose own ok/FAIL lines are not counted (the caller records one result).
run_quiet() { # run_quiet NAME TIMEOUT_S CMD...
    local name="$1" secs="$2"
    shift 2
    local rc=0
    timeout "$secs" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
    [ "$rc" = 0 ] || { tail -50 "$tmp/$name.out"; return 1; }
}

echo "== C: release build (build.rs fails on a stale header)"
cargo build --release -p etcdlock-c --message-format=json-render-diagnostics >"$tmp/build.json"
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
out_dir="$(python3 - "$tmp/build.json" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("reason") == "build-script-executed" and "etcdlock-c" in m.get("package_id", ""):
        print(m["out_dir"])
PY
)"
if [ -n "$out_dir" ] && diff -u include/etcdlock.h "$out_dir/etcdlock.h"; then
    record ok "include/etcdlock.h matches a fresh cbindgen generation"
else
    record FAIL "include/etcdlock.h differs from a fresh generation (ETCDLOCK_UPDATE_HEADER=1 cargo build -p etcdlock-c)"
fi

endpoints="$(python3 tests/etcd_harness.py start --members 1 --state "$state")"
export ETCDLOCK_ENDPOINTS="$endpoints" ETCDLOCK_ETCDCTL="$root/.tools/bin/etcdctl"
echo "== C: etcd at $endpoints"
# For test_tls.c: one member serving https with a server certificate, one that also requires
# client certificates (certificates made with openssl in $tmp/certs; each member also serves
# plain http, the line before its https endpoint).
export ETCDLOCK_CERT_DIR="$tmp/certs"
tls_out="$(python3 tests/etcd_harness.py start --tls "$ETCDLOCK_CERT_DIR" --state "$tmp/tls.json")"
mtls_out="$(python3 tests/etcd_harness.py start --tls "$ETCDLOCK_CERT_DIR" --client-cert-auth --state "$tmp/mtls.json")"
ETCDLOCK_TLS_ENDPOINT="$(tail -1 <<<"$tls_out")"
ETCDLOCK_TLS_PLAIN_ENDPOINT="$(tail -2 <<<"$tls_out" | head -1)"
ETCDLOCK_MTLS_ENDPOINT="$(tail -1 <<<"$mtls_out")"
# And one whose server certificate (signed by the same CA) names only DNS:other.invalid.
other_dir="$tmp/certs-other-name"
mkdir -p "$other_dir" && cp "$ETCDLOCK_CERT_DIR"/* "$other_dir"/
( cd "$other_dir" \
  && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=other host" \
       -keyout server.key -out server.csr \
  && printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.invalid\n' >server.ext \
  && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem ) >"$tmp/openssl.out" 2>&1 \
  || { cat "$tmp/openssl.out"; echo "cannot make the other-name certificate" >&2; exit 1; }
ETCDLOCK_OTHER_NAME_ENDPOINT="$(python3 tests/etcd_harness.py start --tls "$other_dir" --state "$tmp/other-name.json" | tail -1)"
export ETCDLOCK_TLS_ENDPOINT ETCDLOCK_TLS_PLAIN_ENDPOINT ETCDLOCK_MTLS_ENDPOINT ETCDLOCK_OTHER_NAME_ENDPOINT
echo "== C: TLS etcd at $ETCDLOCK_TLS_ENDPOINT, mTLS etcd at $ETCDLOCK_MTLS_ENDPOINT"
# For test_auth.c (which enables auth on them with etcdctl): a member, and one whose auth
# tokens live 2 s.
# JWT tokens: a role change makes every earlier one old (simple tokens never go old).
ETCDLOCK_AUTH_ENDPOINT="$(python3 tests/etcd_harness.py start --members 1 --jwt --state "$tmp/auth.json" | tail -1)"
ETCDLOCK_AUTH_TTL_ENDPOINT="$(python3 tests/etcd_harness.py start --members 1 --etcd-arg=--auth-token-ttl=2 --state "$tmp/auth-ttl.json" | tail -1)"
export ETCDLOCK_AUTH_ENDPOINT ETCDLOCK_AUTH_TTL_ENDPOINT

echo "== C: install into a temp PREFIX, build the examples with pkg-config, run them"
prefix="$tmp/prefix"
# --no-strip: the valgrind suppressions and sanitizer reports need the library's symbols.
bash "$here/install.sh" --no-strip "$prefix" >/dev/null 2>&1 || bash "$here/install.sh" --no-strip "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# The .pc sets no rpath: the programs below find the installed libetcdlock.so.0 this way.
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/basic.c" $(pkg-config --cflags --libs etcdlock) -o "$tmp/basic" \
    && run_quiet basic 60 "$tmp/basic" && grep -q '^done$' "$tmp/basic.out"; then
    record ok "examples/basic.c (shared, pkg-config) builds and runs"
else
    record FAIL "examples/basic.c (shared, pkg-config)"
fi
# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/basic.c" $(pkg-config --static --cflags --libs etcdlock-static) -o "$tmp/basic-static" \
    && run_quiet basic-static 60 "$tmp/basic-static" && grep -q '^done$' "$tmp/basic-static.out"; then
    record ok "examples/basic.c (static libetcdlock.a) builds and runs"
else
    record FAIL "examples/basic.c (static libetcdlock.a)"
fi

# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/async.c" $(pkg-config --cflags --libs etcdlock) -lpthread -o "$tmp/async" \
    && run_quiet async 60 "$tmp/async" && grep -q '^done$' "$tmp/async.out"; then
    record ok "examples/async.c (callbacks) builds and runs"
else
    record FAIL "examples/async.c (callbacks)"
fi

# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/registry.c" $(pkg-config --cflags --libs etcdlock) -o "$tmp/registry" \
    && run_quiet registry 60 "$tmp/registry" && grep -q '^done$' "$tmp/registry.out"; then
    record ok "examples/registry.c (register, discover, update, close) builds and runs"
else
    record FAIL "examples/registry.c (register, discover, update, close)"
fi

# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/queue.c" $(pkg-config --cflags --libs etcdlock) -o "$tmp/queue" \
    && run_quiet queue 60 "$tmp/queue" && grep -q '^done$' "$tmp/queue.out"; then
    record ok "examples/queue.c (task queue, once per period) builds and runs"
else
    record FAIL "examples/queue.c (task queue, once per period)"
fi

# The README's task queue, pool, cache and lock set blocks, as written there: each inside a function given a
# client (and the helpers it calls), compiled and run. Each follows its marker comment.
readme_block() { # readme_block NAME MARKER
    python3 - "$here/README.md" "$2" >"$tmp/$1.c" <<'PY'
import sys
text = open(sys.argv[1]).read()
start = text.index("```c\n", text.index(sys.argv[2])) + len("```c\n")
block = text[start:text.index("```\n", start)]
print("""#include <etcdlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static inline int run_report(int64_t fencing_token) { return fencing_token > 0; }
static inline int run_on(const char *slot) { return slot != NULL; }
static int example(etcdlock_client *client) {
""" + block + """    return rc == ETCDLOCK_OK ? 0 : 1;
}
int main(void) {
    etcdlock_client *client = NULL;
    if (etcdlock_client_new(getenv("ETCDLOCK_ENDPOINTS"), NULL, &client) != ETCDLOCK_OK) return 1;
    int failed = example(client);
    etcdlock_client_free(client);
    printf("%s\\n", failed ? "failed" : "done");
    return failed;
}""")
PY
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror "$tmp/$1.c" $(pkg-config --cflags --libs etcdlock) -o "$tmp/$1" \
        && run_quiet "$1" 60 "$tmp/$1" && grep -q '^done$' "$tmp/$1.out"
}
if readme_block readme_queue "<!-- test.sh compiles this block"; then
    record ok "README.md's task queue block builds and runs"
else
    record FAIL "README.md's task queue block"
fi
if readme_block readme_pool "<!-- test.sh compiles this pool block"; then
    record ok "README.md's pool block builds and runs"
else
    record FAIL "README.md's pool block"
fi
if readme_block readme_cache "<!-- test.sh compiles this cache block"; then
    record ok "README.md's cache block builds and runs"
else
    record FAIL "README.md's cache block"
fi
if readme_block readme_lockset "<!-- test.sh compiles this lock set block"; then
    record ok "README.md's lock set block builds and runs"
else
    record FAIL "README.md's lock set block"
fi

# shellcheck disable=SC2046
if cc -std=c11 -Wall -Wextra -Werror "$here/examples/tls.c" $(pkg-config --cflags --libs etcdlock) -o "$tmp/tls" \
    && ETCDLOCK_TLS_ENDPOINTS="$ETCDLOCK_MTLS_ENDPOINT" ETCDLOCK_CA_FILE="$ETCDLOCK_CERT_DIR/ca.pem" \
        ETCDLOCK_CERT_FILE="$ETCDLOCK_CERT_DIR/client.pem" ETCDLOCK_KEY_FILE="$ETCDLOCK_CERT_DIR/client.key" \
        run_quiet tls 60 "$tmp/tls" && grep -q '^done$' "$tmp/tls.out"; then
    record ok "examples/tls.c (mTLS) builds and runs"
else
    record FAIL "examples/tls.c (mTLS)"
fi

# examples/fence_pg.c: a lock's fence checked by PostgreSQL (libpq) first in the writer's
# transaction, run by tests/test_fence_pg.py against a throwaway PostgreSQL (tests/pg_harness.py):
# holders in turn commit, the same holder again too; a stale fence and another cluster's are refused.
# With the example's statement (tests/fence_pg_example.h): a C holder SIGSTOPped past its TTL
# (tests/fence_pg_holder.c), a task claim's fence and 8 threads under READ COMMITTED
# (tests/test_fence_db.c).
fence_pg_ok=1
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$here/examples/fence_pg.c" $(pkg-config --cflags --libs etcdlock libpq) -o "$tmp/fence_pg" \
    || { record FAIL "examples/fence_pg.c (libpq) builds"; fence_pg_ok=0; }
for t in fence_pg_holder test_fence_db; do
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror -I"$here/tests" "$here/tests/$t.c" $(pkg-config --cflags --libs etcdlock libpq) -lpthread -o "$tmp/$t" \
        || { record FAIL "tests/$t.c (libpq) builds"; fence_pg_ok=0; }
done
if [ "$fence_pg_ok" = 1 ]; then
    run_prog test_fence_pg 240 python3 "$here/tests/test_fence_pg.py" "$tmp/fence_pg" "$tmp/fence_pg_holder" "$tmp/test_fence_db"
fi

echo "== C: test programs (-Wall -Wextra -Werror, ASan + UBSan)"
# LeakSanitizer would report the Rust runtime's one-time allocations; leaks are checked by
# the valgrind run below instead.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
san="-g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# shellcheck disable=SC2046,SC2086
for t in test_api test_threads test_async test_queue test_options test_tls test_auth test_conn test_log test_inspect test_metrics test_recipes test_registry test_tasks test_task_limits test_pool test_cache test_lockset test_lockset_input test_fence test_health; do
    if cc -std=c11 -Wall -Wextra -Werror $san -I"$here/tests" "$here/tests/$t.c" $(pkg-config --cflags --libs etcdlock) -lpthread -o "$tmp/$t"; then
        run_prog "$t" 300 "$tmp/$t"
    else
        record FAIL "$t compiles"
    fi
done
# shellcheck disable=SC2046,SC2086
for t in test_cpp test_cache_cpp test_lockset_cpp; do
    if c++ -std=c++11 -Wall -Wextra -Werror -pedantic $san "$here/tests/$t.cpp" $(pkg-config --cflags --libs etcdlock) -o "$tmp/$t"; then
        run_prog "$t" 60 "$tmp/$t"
    else
        record FAIL "$t.cpp compiles"
    fi
done

echo "== C: valgrind (no leaks, no memory errors attributable to the library)"
for t in test_api test_async test_recipes test_registry test_tasks test_task_limits test_pool test_cache test_lockset test_lockset_input test_fence test_health; do
    args=()
    # test_pool's timing and many-thread tests, and test_lockset's opposite orders, run under ASan
    # only (`quick` leaves them out).
    [ "$t" = test_pool ] || [ "$t" = test_lockset ] && args=(quick)
    # shellcheck disable=SC2046
    cc -std=c11 -g -O1 -Wall -Wextra -Werror -I"$here/tests" "$here/tests/$t.c" $(pkg-config --cflags --libs etcdlock) -lpthread -o "$tmp/${t}_vg"
    if run_quiet "${t}_valgrind" 600 valgrind --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
        --errors-for-leak-kinds=definite,indirect,possible --suppressions="$here/tests/valgrind.supp" \
        "$tmp/${t}_vg" ${args[@]+"${args[@]}"} && grep -q 'ERROR SUMMARY: 0 errors' "$tmp/${t}_valgrind.out" && ! grep -q '^FAIL - ' "$tmp/${t}_valgrind.out"; then
        record ok "valgrind: $t without leaks or memory errors"
    else
        record FAIL "valgrind: $t"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
