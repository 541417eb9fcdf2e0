#!/usr/bin/env bash
# A JDK 17 (the Java binding's baseline) and Maven, from Debian's packages, when either is
# missing; does nothing when both are on PATH. Used by everything that builds the Java binding:
# bindings-java/test.sh, scripts/package.sh java, the demo's and the benchmark's Java programs.
# JDK 25, which scripts/test-packaging.sh also runs the jar's consumer on (JEP 472's warning and
# --enable-native-access), is not installed here: Debian 12 has no package for it. The machine
# image carries Temurin 25 in /usr/lib/jvm; the packaging test looks there and in /opt (or takes
# ETCDLOCK_JDK25_HOME) and fails, saying so, when it finds none.
set -euo pipefail
command -v mvn >/dev/null && command -v javac >/dev/null && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "installing Maven and OpenJDK 17 (apt)" >&2
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq maven openjdk-17-jdk-headless >/dev/null
