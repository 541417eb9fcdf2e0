#!/usr/bin/env bash
# The Java binding's suite: builds the native library and the classes with Maven (`mvn package`
# runs cargo), starts a throwaway etcd with tests/etcd_harness.py, runs the JUnit 5 tests under
# -Xcheck:jni against it, fails on any JNI warning in their output, and stops etcd by its state
# file. Ends with the Surefire totals.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
[ -x .tools/bin/etcd ] && [ -x .tools/bin/etcdctl ] || bash scripts/install-deps.sh
command -v mvn >/dev/null && command -v java >/dev/null || { echo "test.sh: needs mvn and a JDK 17 (apt-get install maven openjdk-17-jdk-headless)" >&2; exit 1; }

tmp="$(mktemp -d /tmp/etcdlock-java-test.XXXXXX)"
state="$tmp/etcd.json"
cleanup() {
    python3 tests/etcd_harness.py stop --state "$state" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}
trap cleanup EXIT

endpoints="$(python3 tests/etcd_harness.py start --members 1 --state "$state")"
export ETCDLOCK_ENDPOINTS="$endpoints" ETCDLOCK_ETCDCTL="$root/.tools/bin/etcdctl"
echo "== Java: etcd at $endpoints"

cd "$here"
# Stale reports from an earlier run must not be counted.
rm -rf target/surefire-reports
rc=0
mvn -B -q verify 2>&1 | tee "$tmp/mvn.out" || rc=$?
# -Xcheck:jni reports misuse as warnings the tests themselves cannot see.
if grep -E "WARNING in native method|FATAL ERROR in native method|JNI (DETECTED|ERROR)" "$tmp/mvn.out"; then
    echo "FAIL - -Xcheck:jni reported the lines above"
    rc=1
fi
python3 - "$here/target/surefire-reports" <<'PY' || rc=1
import glob, sys, xml.etree.ElementTree as ET
t = f = e = s = 0
for path in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(path).getroot()
    t += int(r.get("tests")); f += int(r.get("failures")); e += int(r.get("errors")); s += int(r.get("skipped"))
print(f"Java: {t} tests, {f} failures, {e} errors, {s} skipped")
# A skipped test is not a pass, and no tests at all is not a pass.
sys.exit(0 if t > 0 and f == e == s == 0 else 1)
PY
exit "$rc"
