#!/usr/bin/env bash
# The Java binding's suite: builds the native library and the classes with Maven (`mvn package`
# runs cargo), starts a throwaway etcd with tests/etcd_harness.py, runs the JUnit 5 tests under
# -Xcheck:jni against it, fails on any JNI warning in their output, and stops etcd by its state
# file. Ends with the Surefire totals.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cd "$root"
[ -x .tools/bin/etcd ] && [ -x .tools/bin/etcdctl ] && [ -x .tools/py-build/bin/cargo-zigbuild ] || bash scripts/install-deps.sh
# JdbcFenceTest starts a throwaway PostgreSQL itself (tests/pg_harness.py); install-deps.sh
# installs Debian's when missing.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || bash scripts/install-deps.sh
# Maven and a JDK (17, the baseline) from Debian's packages when missing.
bash scripts/install-java.sh

tmp="$(mktemp -d /tmp/etcdlock-java-test.XXXXXX)"
state="$tmp/etcd.json"
# By absolute path: the trap runs after the `cd "$here"` below (a relative path left every
# member running).
cleanup() {
    for s in "$state" "$tmp/mtls.json" "$tmp/other.json"; do
        python3 "$root/tests/etcd_harness.py" stop --state "$s" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

endpoints="$(python3 tests/etcd_harness.py start --members 1 --state "$state")"
export ETCDLOCK_ENDPOINTS="$endpoints" ETCDLOCK_ETCDCTL="$root/.tools/bin/etcdctl"
echo "== Java: etcd at $endpoints"
# For TlsTest: a member that requires client certificates signed by $ETCDLOCK_CERT_DIR/ca.pem
# (certificates made by the harness; the https endpoint is its last line).
export ETCDLOCK_CERT_DIR="$tmp/certs"
ETCDLOCK_MTLS_ENDPOINT="$(python3 tests/etcd_harness.py start --tls "$ETCDLOCK_CERT_DIR" --client-cert-auth --state "$tmp/mtls.json" | tail -1)"
export ETCDLOCK_MTLS_ENDPOINT
echo "== Java: mTLS etcd at $ETCDLOCK_MTLS_ENDPOINT"
# For TlsPemTest (TLS-NAME-001): a member whose certificate, signed by the same CA, names only
# DNS:other.invalid (neither 127.0.0.1 nor localhost). The harness keeps the certificates it
# finds, so a copy of the directory with that server certificate is made first.
other="$tmp/other-certs"
cp -r "$ETCDLOCK_CERT_DIR" "$other"
(cd "$other" && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=other host" \
    -keyout server.key -out server.csr 2>/dev/null \
    && printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:other.invalid\n' >server.ext \
    && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem 2>/dev/null)
ETCDLOCK_OTHERNAME_ENDPOINT="$(python3 tests/etcd_harness.py start --tls "$other" --state "$tmp/other.json" | tail -1)"
export ETCDLOCK_OTHERNAME_ENDPOINT
echo "== Java: etcd with a certificate for other.invalid at $ETCDLOCK_OTHERNAME_ENDPOINT"

cd "$here"
# ETCDLOCK_JAVA_TARGET: another build directory than target/ (two runs at once in one checkout
# must not share one: each would count, or delete, the other's reports).
out="${ETCDLOCK_JAVA_TARGET:-target}"
# Stale reports from an earlier run must not be counted.
rm -rf "$out/surefire-reports"
rc=0
mvn -B -q verify -Detcdlock.build.directory="$(realpath -m "$out")" 2>&1 | tee "$tmp/mvn.out" || rc=$?
# -Xcheck:jni reports misuse as warnings the tests themselves cannot see. The forked JVM writes
# them to its native stdout, which Surefire files under $out/surefire-reports/*.dumpstream.
if grep -rE "WARNING in native method|FATAL ERROR in native method|JNI (DETECTED|ERROR)" "$tmp/mvn.out" "$out/surefire-reports" | head -20 | grep .; then
    echo "FAIL - -Xcheck:jni reported the lines above"
    rc=1
fi
# The jar alone (no cargo, no target/classes): the loader extracts the library from inside it.
jar="$out/etcdlock-0.1.0.jar"
# (The listing goes through a file: `grep -q` ending a pipe early would fail it under pipefail.)
if [ -f "$jar" ] && unzip -l "$jar" >"$tmp/jar.list" && grep -q "META-INF/native/linux-x86_64/libetcdlock_jni.so" "$tmp/jar.list" \
    && env PATH=/usr/bin:/bin java -cp "$jar:$out/test-classes" io.etcdlock.examples.Example "$endpoints" >"$tmp/jar.out" 2>&1 \
    && tail -1 "$tmp/jar.out" | grep -qx done && ! grep -q SLF4J "$tmp/jar.out"; then
    echo "ok - the jar carries libetcdlock_jni.so and runs examples/Example with no toolchain on PATH (and no slf4j-api: silent; no opentelemetry-api: untraced)"
else
    cat "$tmp/jar.out" 2>/dev/null || true
    echo "FAIL - the jar does not run examples/Example on its own"
    rc=1
fi
# The license travels with the jar (pom.xml's resources), the repository's own text.
if [ -f "$jar" ] && grep -q " META-INF/LICENSE$" "$tmp/jar.list" && unzip -p "$jar" META-INF/LICENSE | cmp -s - "$root/LICENSE"; then
    echo "ok - the jar carries the repository's LICENSE at META-INF/LICENSE"
else
    echo "FAIL - the jar has no META-INF/LICENSE (or not the repository's)"
    rc=1
fi
# The database helpers ship in the jar; the JDBC drivers they are tested with do not (test scope:
# users bring their own).
if [ -f "$jar" ] && grep -q " io/etcdlock/fencing/JdbcFence.class$" "$tmp/jar.list" \
    && ! grep -Eq " (org/postgresql|org/sqlite)/" "$tmp/jar.list"; then
    echo "ok - the jar carries io.etcdlock.fencing.JdbcFence and no database driver"
else
    echo "FAIL - the jar lacks io.etcdlock.fencing.JdbcFence, or carries a database driver"
    rc=1
fi
# -Detcdlock.native.path= loads the given file instead of the jar's copy.
if java -Detcdlock.native.path=/nonexistent/libetcdlock_jni.so -cp "$jar:$out/test-classes" io.etcdlock.examples.Example "$endpoints" >"$tmp/override.out" 2>&1; then
    echo "FAIL - -Detcdlock.native.path pointing nowhere was ignored"
    rc=1
elif grep -q "/nonexistent/libetcdlock_jni.so" "$tmp/override.out" \
    && java -Detcdlock.native.path="$(realpath "$out")/classes/META-INF/native/linux-x86_64/libetcdlock_jni.so" \
        -cp "$jar:$out/test-classes" io.etcdlock.examples.Example "$endpoints" 2>&1 | tail -1 | grep -qx done; then
    echo "ok - -Detcdlock.native.path overrides the jar's library"
else
    cat "$tmp/override.out"
    echo "FAIL - -Detcdlock.native.path"
    rc=1
fi
# Every public class and member documented (doclint, warnings as errors).
# (slf4j-api and micrometer-core, the compile dependencies, from Maven's repository. Not
# offline: on a fresh machine the dependency plugin's own artifacts are not in ~/.m2 yet, and a
# class path that could not be made fails here, not as javadoc's "package org.slf4j does not
# exist".) Every package: io.etcdlock, its fencing and its micrometer binder.
if ! mvn -B -q -Detcdlock.build.directory="$(realpath -m "$out")" \
        org.apache.maven.plugins:maven-dependency-plugin:2.8:build-classpath \
        -DincludeScope=compile -Dmdep.outputFile="$tmp/cp.txt" >"$tmp/cp.out" 2>&1; then
    cat "$tmp/cp.out"
    echo "FAIL - mvn dependency:build-classpath (the class path javadoc needs)"
    rc=1
elif javadoc -quiet -Xdoclint:all -Werror -cp "$(cat "$tmp/cp.txt")" -d "$tmp/javadoc" src/main/java/io/etcdlock/*.java src/main/java/io/etcdlock/fencing/*.java src/main/java/io/etcdlock/micrometer/*.java >"$tmp/javadoc.out" 2>&1; then
    echo "ok - javadoc -Xdoclint:all finds nothing missing or malformed"
else
    cat "$tmp/javadoc.out"
    echo "FAIL - javadoc -Xdoclint:all"
    rc=1
fi
python3 - "$out/surefire-reports" <<'PY' || rc=1
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
