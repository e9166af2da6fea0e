#!/usr/bin/env bash
# Schemathesis for test/e2e/service-api-schemathesis.e2e.test.ts: PyPI's package at a pinned
# version, installed once into a virtual environment outside the clone.
#
#   scripts/schemathesis.sh path   prints the program's path (installed on demand)
#
# The environment is
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/schemathesis-<version>/
# so a warm run installs nothing. Concurrent callers wait for one install. Logs go to stderr; only
# the path goes to stdout.
set -euo pipefail

CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
# Another version generates other requests and may check other things: pinned, not the newest.
SCHEMATHESIS_VERSION=4.32.5

log() { printf 'scripts/schemathesis.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ ${1:-} == path ]] || die "usage: scripts/schemathesis.sh path"
VENV=$CACHE/schemathesis-$SCHEMATHESIS_VERSION
BIN=$VENV/bin/schemathesis
DONE=$VENV/.installed # written last: a venv an interrupted install left is made again

if [[ ! -f $DONE ]]; then
  command -v python3 >/dev/null || die "python3 is required: Schemathesis is a Python program"
  mkdir -p "$CACHE"
  exec 9>"$CACHE/schemathesis.lock"
  flock 9
  if [[ ! -f $DONE ]]; then
    log "installing schemathesis $SCHEMATHESIS_VERSION into $VENV"
    rm -rf "$VENV"
    # Debian's python3 makes a venv only with python3-venv (ensurepip): installed when missing.
    if ! python3 -c 'import ensurepip' 2>/dev/null; then
      log "installing Debian's python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >&2 ||
        { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >&2; } ||
        die "apt-get install python3-venv failed"
    fi
    python3 -m venv "$VENV" >&2
    "$VENV/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" >&2 || die "pip install schemathesis==$SCHEMATHESIS_VERSION failed"
    touch "$DONE"
  fi
fi
printf '%s\n' "$BIN"
