#!/usr/bin/env bash
# Builds BuildKit's daemon and devtool's BuildKit client for this machine.
#
#   buildkit/build.sh client-path [OS ARCH]
#                                     devtool-buildkit (the client the CLI
#                                     runs) for this machine, or for GOOS OS,
#                                     GOARCH ARCH (a release's platform
#                                     packages); prints its path
#   buildkit/build.sh buildkitd-path  host-arch buildkitd (the local build
#                                     daemon, see buildkitd.sh); prints its path
#   buildkit/build.sh gateway-path    host-arch devtool-buildkit-gateway (the
#                                     hosted builder's front); prints its path
#   buildkit/build.sh version         prints the pinned BuildKit release
#
# Binaries are cached outside the clone, in
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/<name>-<buildkit version>-<key>/<os>-<arch>/
# where <key> hashes the sources (go.mod/go.sum pin every dependency), the Go
# version and the build flags: a warm run builds nothing. Logs go to stderr;
# only the requested path goes to stdout.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
export PATH=$PATH:/usr/local/go/bin

log() { printf 'buildkit/build.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "the Go toolchain (go) is required"

required() { awk -v m=github.com/moby/buildkit '($1 == "require" && $2 == m) { print $3 } ($1 == m) { print $2 }' "$1" | head -n1; }
VERSION=$(required "$HERE/daemon/go.mod")
[[ -n $VERSION ]] || die "no github.com/moby/buildkit requirement in buildkit/daemon/go.mod"
CLIENT_VERSION=$(required "$HERE/client/go.mod")
# The client speaks the daemon's gRPC API and session protocol: one release for both.
[[ $CLIENT_VERSION == "$VERSION" ]] ||
  die "buildkit/client/go.mod requires github.com/moby/buildkit $CLIENT_VERSION, buildkit/daemon/go.mod $VERSION: pin one release in both"

# The version stamps BuildKit's own release build sets (its Dockerfile);
# `buildkitd --version` then names the release.
DAEMON_LDFLAGS="-s -w -X github.com/moby/buildkit/version.Version=$VERSION \
-X github.com/moby/buildkit/version.Revision=$VERSION \
-X github.com/moby/buildkit/version.Package=github.com/moby/buildkit"
CLIENT_LDFLAGS="-s -w -X devtool.dev/buildkit/client.buildkitVersion=$VERSION"

# key FILES... -- EXTRA...: short hash of the files' names and contents,
# the Go version and EXTRA (flags).
key() {
  local files=() extra=()
  while (($#)) && [[ $1 != -- ]]; do files+=("$1"); shift; done
  (($#)) && shift
  extra=("$@")
  {
    for f in "${files[@]}"; do printf '%s\n' "${f#"$HERE"/}"; cat "$f"; done
    go version
    printf '%s\n' "${extra[@]}"
  } | sha256sum | cut -c1-16
}

sources() {
  find "$HERE/$1" -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -print |
    LC_ALL=C sort
}

DAEMON_CACHE=$CACHE/buildkitd-$VERSION-$(key "$HERE/daemon/go.mod" "$HERE/daemon/go.sum" -- "$DAEMON_LDFLAGS")
CLIENT_CACHE=$CACHE/devtool-buildkit-$VERSION-$(mapfile -t s < <(sources client); key "${s[@]}" -- "$CLIENT_LDFLAGS")
GATEWAY_LDFLAGS="-s -w"
GATEWAY_CACHE=$CACHE/devtool-buildkit-gateway-$VERSION-$(mapfile -t s < <(sources gateway); key "${s[@]}" -- "$GATEWAY_LDFLAGS")

# exe OS NAME: the file name of program NAME on OS.
exe() { if [[ $1 == windows ]]; then echo "$2.exe"; else echo "$2"; fi; }

# build NAME MODULE_DIR OUTDIR LDFLAGS PKG OS-ARCH: static, trimmed, into
# OUTDIR/OS-ARCH/NAME (NAME.exe on Windows), atomically (a killed build
# never looks like a cache hit). Concurrent builds of one entry wait for
# one another.
build() {
  local name=$1 dir=$2 out=$3/$6 ldflags=$4 pkg=$5 os=${6%-*} arch=${6#*-}
  name=$(exe "$os" "$name")
  [[ -x $out/$name ]] && return 0
  mkdir -p "$3"
  local lock
  exec {lock}>"$out.lock"
  flock "$lock"
  if [[ -x $out/$name ]]; then exec {lock}>&-; return 0; fi
  local tmp=$out.tmp.$$ start=$SECONDS
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "building $name $VERSION $os/$arch -> $out"
  # CGO off: static binaries, independent of the host's libc (BuildKit's
  # own release builds buildkitd the same way), that cross-compile for
  # macOS and Windows without their SDKs. -mod=readonly: go.sum must
  # already pin everything.
  if ! (cd "$dir" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS=-mod=readonly \
    go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp/$name" "$pkg") </dev/null >&2; then
    rm -rf "$tmp"
    die "building $name for $os/$arch failed"
  fi
  rm -rf "$out" && mv "$tmp" "$out"
  exec {lock}>&-
  log "built $name $os/$arch in $((SECONDS - start))s"
  prune "$3"
}

# prune ENTRY: delete older cache entries of the same name (other keys), so
# editing the client does not fill the disk. Entries touched in the last
# hour are kept: another checkout may be using them.
prune() {
  local entry=$1 base
  base=$(basename "$entry")
  find "$(dirname "$entry")" -mindepth 1 -maxdepth 1 -type d -name "${base%-*}-*" \
    ! -name "$base" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
}

# The daemon and the gateway run on Linux only (locally for tests, or in the cluster).
linux=linux-$(go env GOARCH)
case ${1:-} in
  client-path)
    if (($# == 3)); then os=$2 arch=$3; elif (($# == 1)); then os=$(go env GOOS) arch=$(go env GOARCH); else
      die "usage: buildkit/build.sh client-path [OS ARCH] (GOOS and GOARCH, e.g. darwin arm64)"
    fi
    build devtool-buildkit "$HERE/client" "$CLIENT_CACHE" "$CLIENT_LDFLAGS" ./cmd/devtool-buildkit "$os-$arch"
    echo "$CLIENT_CACHE/$os-$arch/$(exe "$os" devtool-buildkit)"
    ;;
  buildkitd-path)
    build buildkitd "$HERE/daemon" "$DAEMON_CACHE" "$DAEMON_LDFLAGS" github.com/moby/buildkit/cmd/buildkitd "$linux"
    echo "$DAEMON_CACHE/$linux/buildkitd"
    ;;
  gateway-path)
    build devtool-buildkit-gateway "$HERE/gateway" "$GATEWAY_CACHE" "$GATEWAY_LDFLAGS" . "$linux"
    echo "$GATEWAY_CACHE/$linux/devtool-buildkit-gateway"
    ;;
  version)
    echo "$VERSION"
    ;;
  -h | --help | help)
    sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    ;;
  *)
    die "usage: buildkit/build.sh client-path [OS ARCH]|buildkitd-path|gateway-path|version"
    ;;
esac
