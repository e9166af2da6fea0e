#!/usr/bin/env bash
# ShellCheck for `npm run lint`: Debian 12's package at a pinned version, fetched once from the
# machine's package archive (`apt-get download`, nothing installed) and unpacked outside the clone.
#
#   scripts/shellcheck.sh path      prints the binary's path (fetched on demand)
#   scripts/shellcheck.sh version   prints the pinned package version, fetches nothing
#   scripts/shellcheck.sh run ARGS  runs the cached shellcheck with ARGS (fetched on demand)
#
# The binary is cached in
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/shellcheck-<version>/<arch>/shellcheck
# so a warm run fetches nothing. Concurrent callers wait for one fetch.
# Logs go to stderr; only the requested path goes to stdout.
set -euo pipefail

CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}

# Debian 12 (bookworm/main) has this version. apt checks the package against the archive's
# signed index; another version (another Debian release) may report other findings, so the
# version is pinned, not the newest the archive offers.
SHELLCHECK_VERSION=0.9.0-1

log() { printf 'scripts/shellcheck.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v dpkg >/dev/null || die "dpkg is required: ShellCheck comes from Debian's package archive"
ARCH=$(dpkg --print-architecture)
ENTRY=$CACHE/shellcheck-$SHELLCHECK_VERSION
OUT=$ENTRY/$ARCH
BIN=$OUT/shellcheck

# download DIR: the package file into DIR. A fresh machine has no package lists yet: then once
# more after `apt-get update` (which needs root, as the cluster's package installs do).
download() {
  local out
  out=$(cd "$1" && apt-get download -q "shellcheck=$SHELLCHECK_VERSION" 2>&1) && return 0
  log "apt-get download failed; updating the package lists"
  out=$({ DEBIAN_FRONTEND=noninteractive apt-get update -q && cd "$1" &&
    apt-get download -q "shellcheck=$SHELLCHECK_VERSION"; } </dev/null 2>&1) && return 0
  log "$out"
  return 1
}

# fetch: into OUT atomically (a killed fetch never looks like a cache hit), under a lock so
# that two callers never fetch it twice.
fetch() {
  [[ -x $BIN ]] && return 0
  command -v apt-get >/dev/null || die "apt-get is required: ShellCheck comes from Debian's package archive"
  mkdir -p "$ENTRY"
  local lock
  exec {lock}>"$OUT.lock"
  flock "$lock"
  if [[ -x $BIN ]]; then exec {lock}>&-; return 0; fi
  local tmp=$OUT.tmp.$$ start=$SECONDS deb missing
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "fetching Debian's shellcheck $SHELLCHECK_VERSION ($ARCH) -> $OUT"
  download "$tmp" || { rm -rf "$tmp"; die "apt-get download shellcheck=$SHELLCHECK_VERSION failed (Debian 12's archive has this version)"; }
  deb=("$tmp"/shellcheck_*.deb)
  dpkg-deb -x "${deb[0]}" "$tmp/root" || { rm -rf "$tmp"; die "unpacking ${deb[0]} failed"; }
  mv "$tmp/root/usr/bin/shellcheck" "$tmp/shellcheck"
  rm -rf "$tmp/root" "${deb[@]}"
  # Its libraries (libgmp10, libffi8) are on every Debian 12 with apt; checked, not assumed.
  missing=$(ldd "$tmp/shellcheck" 2>&1 | grep 'not found' || true)
  [[ -z $missing ]] || { rm -rf "$tmp"; die "shellcheck needs libraries this machine lacks: $missing"; }
  "$tmp/shellcheck" --version >/dev/null || { rm -rf "$tmp"; die "the fetched shellcheck does not run"; }
  rm -rf "$OUT" && mv "$tmp" "$OUT"
  exec {lock}>&-
  log "fetched shellcheck $SHELLCHECK_VERSION in $((SECONDS - start))s"
  prune
}

# prune: delete other shellcheck entries (older versions), so a version bump does not fill the
# disk. Entries touched in the last hour are kept: another checkout may be using them.
prune() {
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name 'shellcheck-*' ! -name "$(basename "$ENTRY")" \
    -mmin +60 -exec rm -rf {} + 2>/dev/null || true
}

case ${1:-} in
  path)
    fetch
    echo "$BIN"
    ;;
  version)
    echo "$SHELLCHECK_VERSION"
    ;;
  run)
    shift
    fetch
    exec "$BIN" "$@"
    ;;
  -h | --help | help)
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    ;;
  *)
    die "usage: scripts/shellcheck.sh path|version|run ARGS..."
    ;;
esac
