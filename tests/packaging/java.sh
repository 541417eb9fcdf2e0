# The Java part of scripts/test-packaging.sh (sourced by it: its check/ok/fail helpers, $tmp,
# $stubs, $jar, $endpoint, ... are set there). The jar, its -sources and -javadoc jars, its
# manifest, pom and notices; installed into a scratch Maven repository and used by a scratch
# Maven project (JDK 17, the baseline); then the same consumer on JDK 25 with and without
# --enable-native-access, and the native loader's extraction directory and platform errors.
if [ -f "$jar" ]; then
    echo "== Packaging: Java jar $(basename "$jar")"
    t0=$SECONDS
    size_ok "jar" "$jar"
    glibc_ok "jar" "$jar"
    unzip -l "$jar" >"$tmp/jar.list"
    check "jar holds META-INF/native/linux-x86_64/libetcdlock_jni.so, the classes, its pom and META-INF/{LICENSE,THIRD-PARTY-LICENSES,NOTICE}; no test classes" bash -c "
        grep -q ' META-INF/native/linux-x86_64/libetcdlock_jni.so\$' '$tmp/jar.list' && grep -q ' io/etcdlock/EtcdLockClient.class\$' '$tmp/jar.list' \
        && unzip -p '$jar' META-INF/LICENSE | cmp -s - '$root/LICENSE' \
        && unzip -p '$jar' META-INF/THIRD-PARTY-LICENSES | cmp -s - '$root/THIRD-PARTY-LICENSES' \
        && unzip -p '$jar' META-INF/NOTICE | cmp -s - '$root/NOTICE' \
        && grep -q ' META-INF/maven/io.etcdlock/etcdlock/pom.xml\$' '$tmp/jar.list' && ! grep -Eq 'Test\.class\$|/examples/|io/etcdlock/Etcd\.class\$' '$tmp/jar.list'"
    unzip -p "$jar" META-INF/THIRD-PARTY-LICENSES >"$tmp/jar-notices"
    check "jar: every crate linked into libetcdlock_jni (cargo tree -p etcdlock-java) is named in its THIRD-PARTY-LICENSES" \
        "$PY" tests/packaging/notices.py etcdlock-java "$tmp/jar-notices"
    check "jar manifest: Automatic-Module-Name: io.etcdlock" \
        bash -c "unzip -p '$jar' META-INF/MANIFEST.MF | tr -d '\r' | grep -qx 'Automatic-Module-Name: io.etcdlock'"
    sources="${jar%.jar}-sources.jar" javadoc="${jar%.jar}-javadoc.jar"
    check "$(basename "$sources") beside the jar: the API's sources and the licences" bash -c "
        unzip -l '$sources' >'$tmp/sources.list' && grep -q ' io/etcdlock/EtcdLockClient.java\$' '$tmp/sources.list' \
        && grep -q ' io/etcdlock/fencing/JdbcFence.java\$' '$tmp/sources.list' && grep -q ' META-INF/LICENSE\$' '$tmp/sources.list' \
        && ! grep -q 'libetcdlock_jni.so' '$tmp/sources.list'"
    check "$(basename "$javadoc") beside the jar: the API reference (built with doclint, warnings failing)" bash -c "
        unzip -l '$javadoc' >'$tmp/javadoc.list' && grep -q ' index.html\$' '$tmp/javadoc.list' \
        && grep -Eq ' (io.etcdlock/)?io/etcdlock/EtcdLockClient.html\$' '$tmp/javadoc.list' \
        && grep -Eq ' (io.etcdlock/)?io/etcdlock/fencing/JdbcFence.html\$' '$tmp/javadoc.list'"
    # Maven and java from their own directories plus /usr/bin:/bin, the stubs first: no cargo or
    # rustc to be found there (checked), and a call to a stub would be logged.
    jdirs=""
    for d in "$(dirname "$(command -v java)")" "$(dirname "$(command -v mvn)")" /usr/bin /bin; do
        case ":$jdirs:" in *":$d:"*) ;; *) jdirs="${jdirs:+$jdirs:}$d" ;; esac
    done
    check "no cargo, rustc or rustup on the Java part's PATH ($jdirs)" \
        env PATH="$jdirs" /bin/sh -c '! command -v cargo && ! command -v rustc && ! command -v rustup'
    # A scratch local repository receives the install. The plugins come from the user's local
    # repository (~/.m2, filled when bindings-java was built), read as a file:// repository, so
    # that no network is needed; Maven Central stays the fallback for anything not there.
    m2="$tmp/m2-repo"
    home_m2="${MAVEN_HOME_REPO:-$HOME/.m2/repository}"
    home_profile=""
    if [ -d "$home_m2" ]; then
        home_repo="<id>home-m2</id><url>file://$home_m2</url><snapshots><enabled>false</enabled></snapshots>"
        home_profile="<profiles><profile><id>home-m2</id>
  <repositories><repository>$home_repo</repository></repositories>
  <pluginRepositories><pluginRepository>$home_repo</pluginRepository></pluginRepositories>
</profile></profiles><activeProfiles><activeProfile>home-m2</activeProfile></activeProfiles>"
    fi
    printf '<settings><localRepository>%s</localRepository>%s</settings>\n' "$m2" "$home_profile" >"$tmp/m2-settings.xml"
    mvn_scratch() {
        env -u CARGO -u RUSTC -u PROTOC -u ETCDLOCK_ENDPOINTS PATH="$stubs:$jdirs" \
            timeout 300 mvn -B -q -s "$tmp/m2-settings.xml" "$@"
    }
    rm -f "$tmp/calls.log"
    check "mvn install:install-file the jar into a scratch local repository (its pom from inside the jar)" \
        in_dir "$tmp" mvn_scratch org.apache.maven.plugins:maven-install-plugin:3.1.1:install-file -Dfile="$jar" \
        -Dsources="$sources" -Djavadoc="$javadoc"
    installed="$m2/io/etcdlock/etcdlock/$version/etcdlock-$version"
    check "installed as io.etcdlock:etcdlock:$version (the same jar, its -sources and -javadoc jars, and a pom)" bash -c "
        cmp '$jar' '$installed.jar' && cmp '$sources' '$installed-sources.jar' && cmp '$javadoc' '$installed-javadoc.jar' && [ -s '$installed.pom' ]"
    # Central's metadata: licences and developers (no <url>/<scm>: no project address exists yet).
    check "the pom names its licence (Apache-2.0) and developers" "$PY" - "$installed.pom" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
r = ET.parse(sys.argv[1]).getroot()
assert r.findtext("m:licenses/m:license/m:name", "", ns) == "Apache-2.0", "no Apache-2.0 licence"
assert r.findtext("m:developers/m:developer/m:name", "", ns), "no developer"
EOF
    # The pom's dependencies: test scope (JUnit, jetcd) or optional (slf4j-api) only.
    if "$PY" - "$installed.pom" >"$tmp/pomdeps.out" 2>&1 <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
needed = []
for d in ET.parse(sys.argv[1]).getroot().findall("m:dependencies/m:dependency", ns):
    ga = f"{d.findtext('m:groupId', '', ns)}:{d.findtext('m:artifactId', '', ns)}"
    scope = (d.findtext("m:scope", "", ns) or "compile").strip()
    optional = (d.findtext("m:optional", "", ns) or "false").strip() == "true"
    print(f"pom dependency {ga} ({scope}{', optional' if optional else ''})")
    if scope in ("compile", "runtime") and not optional:
        needed.append(ga)
sys.exit(f"runtime dependencies: {needed}" if needed else 0)
EOF
    then
        sed 's/^/   /' "$tmp/pomdeps.out"; ok "the jar's pom needs no runtime dependency"
    else
        cat "$tmp/pomdeps.out"; fail "the jar's pom has runtime dependencies"
    fi
    # The consumer: a scratch Maven project that depends on io.etcdlock:etcdlock, built and run
    # (exec:exec forks a java with the runtime class path Maven resolved) with the same settings.
    # Its plugin versions are those bindings-java builds with (in ~/.m2 once that was built).
    jproj="$tmp/java-project"
    mkdir -p "$jproj/src/main/java/example"
    cat >"$jproj/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>etcdlock-consumer</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>io.etcdlock</groupId><artifactId>etcdlock</artifactId><version>$version</version></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.12.1</version></plugin>
      <plugin><groupId>org.codehaus.mojo</groupId><artifactId>exec-maven-plugin</artifactId><version>3.1.1</version>
        <configuration><executable>java</executable>
          <arguments><argument>-classpath</argument><classpath/><argument>example.Main</argument><argument>$endpoint</argument></arguments>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
EOF
    cat >"$jproj/src/main/java/example/Main.java" <<'EOF'
package example;

import io.etcdlock.ClientOptions;
import io.etcdlock.DistributedLock;
import io.etcdlock.EtcdLockClient;
import io.etcdlock.LockGuard;
import io.etcdlock.LockOptions;
import java.io.File;
import java.time.Duration;

public class Main {
    public static void main(String[] args) throws Exception {
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            System.out.println("classpath " + entry);
        }
        try {
            Class.forName("org.slf4j.LoggerFactory");
            System.out.println("slf4j present");
        } catch (ClassNotFoundException e) {
            System.out.println("slf4j absent");
        }
        try (EtcdLockClient client = EtcdLockClient.connect(ClientOptions.builder()
                .endpoints(args[0]).timeout(Duration.ofSeconds(5)).build())) {
            // The native library is loaded by now: where -Detcdlock.native.workdir put it.
            String workdir = System.getProperty("etcdlock.native.workdir");
            if (workdir != null) {
                try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(java.nio.file.Path.of(workdir))) {
                    files.filter(p -> p.endsWith("libetcdlock_jni.so")).forEach(p -> System.out.println("extracted under workdir"));
                }
            }
            DistributedLock lock = client.lock("packaging/java-" + ProcessHandle.current().pid(),
                    LockOptions.ttl(Duration.ofSeconds(10)));
            long token;
            try (LockGuard held = lock.acquire(Duration.ofSeconds(5))) {
                token = held.fencingToken();
                System.out.println("held " + held.key() + " token " + token);
            }
            // Released: free again at once, with a greater token.
            try (LockGuard again = lock.tryAcquire().orElseThrow()) {
                System.out.println("again " + (again.fencingToken() > token ? "with a greater token" : "with token " + again.fencingToken()));
            }
        }
        System.out.println("done");
    }
}
EOF
    jrc=0
    in_dir "$jproj" mvn_scratch compile org.codehaus.mojo:exec-maven-plugin:3.1.1:exec >"$tmp/java.out" 2>&1 || jrc=$?
    # (Maven 3.8's -q still writes colour resets around the output: dropped, with blank lines.)
    sed -i -e 's/\x1b\[[0-9;]*m//g' -e '/^$/d' "$tmp/java.out"
    if [ "$jrc" = 0 ] \
        && grep -Fxq "classpath $jproj/target/classes" "$tmp/java.out" && grep -Fxq "classpath $installed.jar" "$tmp/java.out" \
        && [ "$(grep -c '^classpath ' "$tmp/java.out")" = 2 ] && grep -qx "slf4j absent" "$tmp/java.out" \
        && grep -Eqx "held packaging/java-[0-9]+/[0-9a-f]+ token [0-9]+" "$tmp/java.out" \
        && grep -qx "again with a greater token" "$tmp/java.out" && [ "$(tail -1 "$tmp/java.out")" = done ] \
        && ! grep -Eq "Exception|ERROR|WARN" "$tmp/java.out"; then
        sed 's/^/   /' "$tmp/java.out"
        ok "java: a Maven project depending on the installed jar acquires and releases (class path: its classes and the jar, no slf4j)"
    else
        cat "$tmp/java.out"; fail "java: the scratch Maven project against the installed jar"
    fi
    # The consumer's classes and the installed jar again, with plain java (no Maven): the native
    # loader's extraction directory and its platform checks, then JDK 25.
    jcp="$jproj/target/classes:$installed.jar"
    jrun() { # jrun OUT JAVA [JVM ARGS...]: runs the consumer, stdout and stderr into OUT
        local out="$1"
        shift
        env -u ETCDLOCK_ENDPOINTS PATH="$stubs:$jdirs" timeout 120 "$@" -cp "$jcp" example.Main "$endpoint" >"$out" 2>&1
    }
    ran_ok() { grep -qx "again with a greater token" "$1" && [ "$(tail -1 "$1")" = done ]; }
    # An unwritable java.io.tmpdir: a path under a regular file, which no one (root included)
    # can create, as a read-only root file system would refuse it.
    : >"$tmp/a-file"
    bad_tmp="$tmp/a-file/tmp"
    if jrun "$tmp/j-notmp.out" java -Djava.io.tmpdir="$bad_tmp"; then
        cat "$tmp/j-notmp.out"; fail "java: an unwritable java.io.tmpdir should stop the load"
    elif grep -Fq "cannot extract libetcdlock_jni.so to $bad_tmp (java.io.tmpdir)" "$tmp/j-notmp.out" \
        && grep -Fq -- "set -Detcdlock.native.workdir=" "$tmp/j-notmp.out"; then
        ok "java: an unwritable java.io.tmpdir gives an error naming it and -Detcdlock.native.workdir"
    else
        cat "$tmp/j-notmp.out"; fail "java: the error for an unwritable java.io.tmpdir names neither it nor etcdlock.native.workdir"
    fi
    wd="$tmp/native-workdir/sub"
    if jrun "$tmp/j-wd.out" java -Djava.io.tmpdir="$bad_tmp" -Detcdlock.native.workdir="$wd" && ran_ok "$tmp/j-wd.out" \
        && grep -qx "extracted under workdir" "$tmp/j-wd.out" && [ -d "$wd" ] && [ -z "$(ls -A "$wd")" ]; then
        ok "java: -Detcdlock.native.workdir (created) holds the library while running and nothing after exit; java.io.tmpdir unused"
    else
        cat "$tmp/j-wd.out"; ls -la "$wd" 2>&1 || true; fail "java: -Detcdlock.native.workdir with an unwritable java.io.tmpdir"
    fi
    # Another architecture (os.arch as the JVM reports it), and musl through the loader's test
    # hook (-Detcdlock.native.test.libc): refused before loading, naming the platform.
    if jrun "$tmp/j-arch.out" java -Dos.arch=aarch64; then
        fail "java: os.arch=aarch64 should be refused"
    elif grep -Fq "not for this platform (linux-aarch64)" "$tmp/j-arch.out" && grep -Fq -- "-Detcdlock.native.path=" "$tmp/j-arch.out"; then
        ok "java: on another architecture the error names it (linux-aarch64) and -Detcdlock.native.path"
    else
        cat "$tmp/j-arch.out"; fail "java: the error on another architecture"
    fi
    if jrun "$tmp/j-musl.out" java -Detcdlock.native.test.libc=musl; then
        cat "$tmp/j-musl.out"; fail "java: musl libc should be refused before loading"
    elif grep -Fq "this JVM runs on musl libc (linux-x86_64-musl" "$tmp/j-musl.out"; then
        ok "java: on musl libc the error names the platform (linux-x86_64-musl)"
    else
        cat "$tmp/j-musl.out"; fail "java: the error on musl libc"
    fi
    # JDK 25 (JEP 472): with --enable-native-access=ALL-UNNAMED, as bindings-java/README.md says,
    # no warning at all; without it the "restricted method" warning (so the first check can fail).
    jdk25="${ETCDLOCK_JDK25_HOME:-}"
    if [ -z "$jdk25" ]; then
        for d in /usr/lib/jvm/* /opt/*; do
            if [ -x "$d/bin/java" ] && "$d/bin/java" -version 2>&1 | grep -q '^[a-z]* version "25'; then jdk25="$d"; break; fi
        done
    fi
    if [ -z "$jdk25" ] || [ ! -x "$jdk25/bin/java" ]; then
        fail "java: no JDK 25 in /usr/lib/jvm or /opt (set ETCDLOCK_JDK25_HOME): the JDK 25 checks did not run"
    else
        if jrun "$tmp/j25.out" "$jdk25/bin/java" --enable-native-access=ALL-UNNAMED && ran_ok "$tmp/j25.out" \
            && ! grep -Eq "WARNING|Exception" "$tmp/j25.out"; then
            ok "java on JDK 25 ($jdk25) with --enable-native-access=ALL-UNNAMED: runs, no warning"
        else
            cat "$tmp/j25.out"; fail "java on JDK 25 with --enable-native-access=ALL-UNNAMED"
        fi
        if jrun "$tmp/j25-noflag.out" "$jdk25/bin/java" && ran_ok "$tmp/j25-noflag.out" \
            && grep -q "WARNING: A restricted method in java.lang.System has been called" "$tmp/j25-noflag.out"; then
            ok "java on JDK 25 without the flag: the restricted-method warning (JEP 472) the flag silences"
        else
            cat "$tmp/j25-noflag.out"; fail "java on JDK 25 without the flag: expected JEP 472's warning"
        fi
        # An application shipped as an executable jar: Enable-Native-Access in its own manifest
        # (the JDK reads the attribute from the java -jar jar only), as the README says.
        app="$tmp/java-app"
        mkdir -p "$app"
        cp "$installed.jar" "$app/etcdlock.jar"
        printf 'Main-Class: example.Main\nClass-Path: etcdlock.jar\nEnable-Native-Access: ALL-UNNAMED\n' >"$tmp/app.mf"
        if "$jdk25/bin/jar" --create --file "$app/app.jar" --manifest "$tmp/app.mf" -C "$jproj/target/classes" . \
            && env -u ETCDLOCK_ENDPOINTS timeout 120 "$jdk25/bin/java" -jar "$app/app.jar" "$endpoint" >"$tmp/j25-app.out" 2>&1 \
            && ran_ok "$tmp/j25-app.out" && ! grep -Eq "WARNING|Exception" "$tmp/j25-app.out"; then
            ok "java -jar on JDK 25: an application jar with Enable-Native-Access: ALL-UNNAMED in its manifest runs with no warning"
        else
            cat "$tmp/j25-app.out" 2>/dev/null || true; fail "java -jar on JDK 25 with Enable-Native-Access in the application's manifest"
        fi
    fi
    calls_clean "java: nothing called cargo, rustc or protoc"
    echo "== Packaging: Java part in $((SECONDS - t0)) s"
fi
