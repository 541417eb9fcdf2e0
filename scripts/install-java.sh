#!/usr/bin/env bash
# A JDK 17 (the Java binding's baseline) and Maven, from Debian's packages, when either is
# missing; does nothing when both are on PATH. Used by everything that builds the Java binding:
# bindings-java/test.sh, scripts/package.sh java, the demo's and the benchmark's Java programs.
set -euo pipefail
command -v mvn >/dev/null && command -v javac >/dev/null && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
echo "installing Maven and OpenJDK 17 (apt)" >&2
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq maven openjdk-17-jdk-headless >/dev/null
