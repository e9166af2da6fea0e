#!/usr/bin/env bash
# Builds the Helm client (helm.sh/helm/v3/cmd/helm) for this machine, from the
# Go module proxy, at a pinned release: the end-to-end tests install charts
# with it (devtool runs `helm` from the user's PATH, as any deploy command).
#
#   cluster/helm.sh path      host-arch helm; prints its path (built on demand)
#   cluster/helm.sh version   prints the pinned Helm release, builds nothing
#   cluster/helm.sh run ARGS  runs the cached helm with ARGS (built on demand)
#
# The binary is cached outside the clone, in
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/helm-<version>-<key>/linux-<arch>/helm
# where <key> hashes the module's checksum, the Go version and the build
# flags: a warm run builds nothing. Concurrent callers wait for one build.
# Logs go to stderr; only the requested path goes to stdout.
set -euo pipefail

CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
export PATH=$PATH:/usr/local/go/bin
# The machine's Go, never a downloaded toolchain (Helm v3.22 needs go >= 1.26.0).
export GOTOOLCHAIN=local GOWORK=off

# Pinned release, and the checksum of its module zip (as in a go.sum line; the
# Go checksum database agrees): a different download is refused.
HELM_MODULE=helm.sh/helm/v3
HELM_VERSION=v3.22.0
HELM_SUM=h1:n1if5iQgHYsujPAcO5oonH/KiSNUmqmUF0iGVjSF3AU=

log() { printf 'cluster/helm.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "the Go toolchain (go) is required"

# Helm's release build (its Makefile) stamps the version; without it `helm
# version` says only "v3.22". -s -w: no symbol tables, as upstream.
LDFLAGS="-s -w -X $HELM_MODULE/internal/version.version=$HELM_VERSION -X $HELM_MODULE/internal/version.gitTreeState=clean"
ARCH=$(go env GOARCH)
KEY=$({ printf '%s\n' "$HELM_MODULE@$HELM_VERSION" "$HELM_SUM" "$LDFLAGS"; go version; } | sha256sum | cut -c1-16)
ENTRY=$CACHE/helm-$HELM_VERSION-$KEY
OUT=$ENTRY/linux-$ARCH
BIN=$OUT/helm

# field JSON NAME: a string field of `go mod download -json`'s output.
field() { sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" <<<"$1" | head -n1; }

# build: into OUT atomically (a killed build never looks like a cache hit),
# under a lock so that two callers never build it twice.
build() {
  [[ -x $BIN ]] && return 0
  mkdir -p "$ENTRY"
  local lock
  exec {lock}>"$OUT.lock"
  flock "$lock"
  if [[ -x $BIN ]]; then exec {lock}>&-; return 0; fi
  local tmp=$OUT.tmp.$$ start=$SECONDS info dir sum err k8s
  rm -rf "$tmp" && mkdir -p "$tmp"
  # Outside any module (the download needs none): the module cache verifies the zip
  # against the checksum database, and HELM_SUM pins it here as well.
  if ! info=$(cd "$tmp" && go mod download -json "$HELM_MODULE@$HELM_VERSION" 2>&1); then
    rm -rf "$tmp"
    die "go mod download $HELM_MODULE@$HELM_VERSION failed: $info"
  fi
  err=$(field "$info" Error)
  [[ -z $err ]] || { rm -rf "$tmp"; die "go mod download $HELM_MODULE@$HELM_VERSION: $err"; }
  dir=$(field "$info" Dir)
  sum=$(field "$info" Sum)
  [[ $sum == "$HELM_SUM" ]] || { rm -rf "$tmp"; die "$HELM_MODULE@$HELM_VERSION has checksum $sum, pinned $HELM_SUM"; }
  # As Helm's Makefile: the Kubernetes version its lint and capabilities assume
  # by default is that of the client-go it is built with, minor for minor.
  if ! k8s=$(cd "$dir" && GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' k8s.io/client-go 2>&1); then
    rm -rf "$tmp"
    die "reading Helm's k8s.io/client-go version failed: $k8s"
  fi
  local minor=${k8s#v0.}
  minor=${minor%%.*}
  [[ $minor =~ ^[0-9]+$ ]] || { rm -rf "$tmp"; die "unexpected k8s.io/client-go version $k8s"; }
  local ldflags="$LDFLAGS -X $HELM_MODULE/pkg/lint/rules.k8sVersionMajor=1 -X $HELM_MODULE/pkg/lint/rules.k8sVersionMinor=$minor"
  ldflags+=" -X $HELM_MODULE/pkg/chartutil.k8sVersionMajor=1 -X $HELM_MODULE/pkg/chartutil.k8sVersionMinor=$minor"
  log "building helm $HELM_VERSION linux/$ARCH -> $OUT (a few minutes the first time)"
  # In the module's own folder: its go.mod and go.sum pin every dependency, as
  # for Helm's release. CGO off: a static binary. -mod=readonly: nothing is
  # re-resolved. The module cache is read-only; only -o writes.
  if ! (cd "$dir" && CGO_ENABLED=0 GOOS=linux GOARCH=$ARCH GOFLAGS=-mod=readonly \
    nice go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp/helm" ./cmd/helm) </dev/null >&2; then
    rm -rf "$tmp"
    die "building helm $HELM_VERSION for linux/$ARCH failed"
  fi
  rm -rf "$OUT" && mv "$tmp" "$OUT"
  exec {lock}>&-
  log "built helm $HELM_VERSION linux/$ARCH in $((SECONDS - start))s"
  prune
}

# prune: delete other helm entries (older versions or keys), so a version bump
# does not fill the disk. Entries touched in the last hour are kept: another
# checkout may be using them.
prune() {
  find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name 'helm-*' ! -name "$(basename "$ENTRY")" \
    -mmin +60 -exec rm -rf {} + 2>/dev/null || true
}

case ${1:-} in
  path)
    build
    echo "$BIN"
    ;;
  version)
    echo "$HELM_VERSION"
    ;;
  run)
    shift
    build
    exec "$BIN" "$@"
    ;;
  -h | --help | help)
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    ;;
  *)
    die "usage: cluster/helm.sh path|version|run ARGS..."
    ;;
esac
