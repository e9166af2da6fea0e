#!/usr/bin/env bash
# Builds the in-container agent and Syncthing, the host bundle (host/: Syncthing,
# devtool-agent and devtool-buildkit in one binary), and the devtool-bin image.
#
#   agent/build.sh [all] [REGISTRY]  the host bundle for every arch + the image
#                                    (the bundle as its devtool-agent), pushed
#                                    to REGISTRY ($DEVTOOL_BIN_REGISTRY,
#                                    default localhost:5000)
#   agent/build.sh binaries          agent and Syncthing for every arch; prints
#                                    their directories
#   agent/build.sh syncthing-path    this machine's Syncthing; prints its path
#   agent/build.sh agent-path        this machine's devtool-agent; prints its path
#   agent/build.sh host-path OS ARCH the host bundle for GOOS OS, GOARCH ARCH (a
#                                    release's platform packages, the image);
#                                    prints its path
#   agent/build.sh host-src          prints the folder host/ builds (and tests) in
#   agent/build.sh host-tags         prints the build tags host/ builds (and tests) with
#   agent/build.sh host-tidy         go mod tidy of host/ (its go.mod, go.sum)
#   agent/build.sh image-ref         prints the image reference, builds nothing
#
# Binaries are cached outside the clone, in
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/<name>-<version>-<key>/<os>-<arch>/
# where <key> hashes the sources, go.mod/go.sum, the Go version and the
# build flags (for Syncthing also our patches, applied at build time:
# agent/README.md "The Syncthing patches"): a warm run builds nothing.
# Logs go to stderr; only the requested paths/refs go to stdout.
set -euo pipefail

AGENT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$AGENT_DIR")
CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
ARCHES=${DEVTOOL_BIN_ARCHES:-amd64 arm64}
IMAGE_NAME=devtool-bin
# The dev container's init container runs this; the path is where the
# dev container mounts the shared emptyDir.
INSTALL_DIR=/devtool/bin
# Any non-root UID works; a numeric one in the image lets a pod with
# runAsNonRoot (Pod Security "restricted") run the init container as is.
IMAGE_USER=65532:65532

log() { printf 'agent/build.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

command -v go >/dev/null || die "the Go toolchain (go) is required"
GO_VERSION=$(go version)

cli_version() {
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$ROOT/package.json" | head -n1
}
VERSION=$(cli_version)
[[ -n $VERSION ]] || die "no version in $ROOT/package.json"
SYNCTHING_VERSION=$(awk '$1 == "require" && $2 == "github.com/syncthing/syncthing" { print $3 }' "$AGENT_DIR/syncthing/go.mod")
[[ -n $SYNCTHING_VERSION ]] || die "no github.com/syncthing/syncthing requirement in agent/syncthing/go.mod"

# Syncthing's own build (build.go) stamps these; without a version it
# reports unknown-dev. The stamp is the release's commit time, so builds
# are reproducible. noassets: no web GUI, only the REST API is used (its
# generated assets are not in the module anyway); noupgrade: never
# replace itself; noquic: no QUIC transport, devtool's Syncthings talk TCP
# only, through the tunnel (1.4 MiB less: docs/decisions/0207-one-host-binary.md).
SYNCTHING_TAGS=noassets,noupgrade,noquic
SYNCTHING_STAMP=1750411043 # v1.30.0 tag time, 2025-06-20T09:17:23Z
SYNCTHING_LDFLAGS="-s -w -X github.com/syncthing/syncthing/lib/build.Version=$SYNCTHING_VERSION \
-X github.com/syncthing/syncthing/lib/build.Stamp=$SYNCTHING_STAMP \
-X github.com/syncthing/syncthing/lib/build.User=devtool \
-X github.com/syncthing/syncthing/lib/build.Host=devtool \
-X github.com/syncthing/syncthing/lib/build.Tags=$SYNCTHING_TAGS"
AGENT_LDFLAGS="-s -w -X devtool.dev/agent.version=$VERSION -X devtool.dev/agent.syncthingVersion=$SYNCTHING_VERSION"

# key FILES... -- EXTRA...: short hash of the files' names and contents,
# the Go version and EXTRA (flags).
# One sha256sum for all the files (names relative to agent/): `up` in a
# source checkout runs this script twice before it can start (~100 ms
# each, most of it processes started one per file before).
key() {
  local names=() extra=()
  while (($#)) && [[ $1 != -- ]]; do names+=("${1#"$AGENT_DIR"/}"); shift; done
  (($#)) && shift
  extra=("$@")
  {
    (cd "$AGENT_DIR" && sha256sum -- "${names[@]}")
    printf '%s\n' "$GO_VERSION" "${extra[@]}"
  } | sha256sum | cut -c1-16
}

agent_sources() {
  find "$AGENT_DIR" -path "$AGENT_DIR/syncthing" -prune -o -path "$AGENT_DIR/host" -prune -o \
    -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -print |
    LC_ALL=C sort
}

AGENT_CACHE=$CACHE/devtool-agent-$VERSION-$(mapfile -t s < <(agent_sources); key "${s[@]}" -- "$AGENT_LDFLAGS")
# Our changes to Syncthing (agent/README.md "The Syncthing patches",
# docs/decisions/0154-syncthing-index-pause-patch.md): every agent/syncthing/*.patch, applied in name order at
# build time to a copy of the module, never committed as source. They are
# part of the key, so changing one rebuilds once.
mapfile -t SYNCTHING_PATCHES < <(find "$AGENT_DIR/syncthing" -maxdepth 1 -name '*.patch' | LC_ALL=C sort)
# The layout syncthing_src writes: part of the key, so a change to it is a new entry.
SYNCTHING_SRC_LAYOUT="patched module + devtool/syncthingmain"
SYNCTHING_CACHE=$CACHE/syncthing-$SYNCTHING_VERSION-$(key "$AGENT_DIR/syncthing/go.mod" "$AGENT_DIR/syncthing/go.sum" \
  "$AGENT_DIR/syncthing/tools.go" "${SYNCTHING_PATCHES[@]}" -- "$SYNCTHING_LDFLAGS" "$SYNCTHING_TAGS" "$SYNCTHING_SRC_LAYOUT")

# The host bundle (host/): its main, the agent's and the BuildKit client's
# sources, the patched Syncthing (SYNCTHING_CACHE's key) and all the flags.
HOST_LDFLAGS="$SYNCTHING_LDFLAGS -X devtool.dev/agent.version=$VERSION \
-X devtool.dev/agent.syncthingVersion=$SYNCTHING_VERSION -X devtool.dev/buildkit/client.buildkitVersion=$(
  awk '$1 == "require" && $2 == "github.com/moby/buildkit" { print $3 } $1 == "github.com/moby/buildkit" { print $2 }' "$ROOT/buildkit/client/go.mod" | head -n1)"
host_sources() {
  agent_sources
  # Its tests too: host_src copies them.
  find "$AGENT_DIR/host" -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print
  # As ../buildkit/...: key() names files relative to agent/, the same in every checkout.
  find "$AGENT_DIR/../buildkit/client" -path "$AGENT_DIR/../buildkit/client/probe" -prune -o \
    -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum \) -print
}
HOST_CACHE=$CACHE/devtool-host-$VERSION-$(mapfile -t s < <(host_sources | LC_ALL=C sort -u); key "${s[@]}" -- "$HOST_LDFLAGS" "$SYNCTHING_TAGS" "${SYNCTHING_CACHE##*-}")

# exe OS NAME: the file name of program NAME on OS.
exe() { if [[ $1 == windows ]]; then echo "$2.exe"; else echo "$2"; fi; }

# build NAME MODULE_DIR OUTDIR OS-ARCH TAGS LDFLAGS PKG: static, trimmed,
# into OUTDIR/OS-ARCH/NAME (NAME.exe on Windows), atomically (a killed
# build never looks like a cache hit).
build() {
  local name=$1 dir=$2 out=$3/$4 os=${4%-*} arch=${4#*-} tags=$5 ldflags=$6 pkg=$7
  name=$(exe "$os" "$name")
  [[ -x $out/$name ]] && return 0
  # Concurrent builds of the same thing (go test runs packages in
  # parallel, each asking for Syncthing) wait for one another.
  mkdir -p "$3"
  local lock
  exec {lock}>"$out.lock"
  flock "$lock"
  if [[ -x $out/$name ]]; then exec {lock}>&-; return 0; fi
  local tmp=$out.tmp.$$ start=$SECONDS
  rm -rf "$tmp" && mkdir -p "$tmp"
  log "building $name $os/$arch -> $out"
  # CGO off: static binaries that run on any image, even FROM scratch
  # or musl-based, and that cross-compile for macOS and Windows without
  # their SDKs. -mod=readonly: go.sum must already pin everything.
  if ! (cd "$dir" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOFLAGS=-mod=readonly \
    go build -trimpath -buildvcs=false -tags "$tags" -ldflags "$ldflags" -o "$tmp/$name" "$pkg") </dev/null >&2; then
    rm -rf "$tmp"
    die "building $name for $os/$arch failed"
  fi
  rm -rf "$out" && mv "$tmp" "$out"
  exec {lock}>&-
  log "built $name $os/$arch in $((SECONDS - start))s"
  prune "$3"
}

# prune ENTRY: delete older cache entries of the same name (other source
# hashes), so editing the agent does not fill the disk. Entries touched in
# the last hour are kept: another checkout may be using them.
prune() {
  local entry=$1 base
  base=$(basename "$entry")
  find "$(dirname "$entry")" -mindepth 1 -maxdepth 1 -type d -name "${base%-*}-*" \
    ! -name "$base" -mmin +60 -exec rm -rf {} + 2>/dev/null || true
}

# build_agent OS-ARCH, build_syncthing OS-ARCH
build_agent() { build devtool-agent "$AGENT_DIR" "$AGENT_CACHE" "$1" "" "$AGENT_LDFLAGS" ./cmd/devtool-agent; }

# syncthing_src: prints the directory of the wrapper module to build
# Syncthing from. On first use it copies the pinned module from the Go
# module cache into $SYNCTHING_CACHE/src/module, applies $SYNCTHING_PATCHES
# (exactly, no fuzz: an upgrade that moves the patched lines fails here,
# loudly) and writes $SYNCTHING_CACHE/src/main: agent/syncthing's go.mod,
# go.sum and tools.go plus a replace pointing at the patched copy.
syncthing_src() {
  local src=$SYNCTHING_CACHE/src
  [[ -f $src/.ready ]] && { echo "$src/main"; return 0; }
  mkdir -p "$SYNCTHING_CACHE"
  local lock
  exec {lock}>"$src.lock"
  flock "$lock"
  if [[ -f $src/.ready ]]; then exec {lock}>&-; echo "$src/main"; return 0; fi
  local tmp=$src.tmp.$$ dir
  rm -rf "$tmp" && mkdir -p "$tmp/main"
  dir=$(cd "$AGENT_DIR/syncthing" && GOFLAGS=-mod=readonly go mod download -json "github.com/syncthing/syncthing@$SYNCTHING_VERSION" |
    sed -n 's/^[[:space:]]*"Dir":[[:space:]]*"\(.*\)",\{0,1\}$/\1/p') ||
    die "go mod download github.com/syncthing/syncthing@$SYNCTHING_VERSION failed"
  [[ -n $dir && -f $dir/go.mod ]] || die "no module directory for github.com/syncthing/syncthing@$SYNCTHING_VERSION"
  cp -R "$dir" "$tmp/module" && chmod -R u+w "$tmp/module"
  local p
  for p in "${SYNCTHING_PATCHES[@]}"; do
    if ! patch -d "$tmp/module" -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch -i "$p" >&2; then
      rm -rf "$tmp"
      die "$(basename "$p") no longer applies to Syncthing $SYNCTHING_VERSION: re-check it (agent/README.md, \"The Syncthing patches\")"
    fi
  done
  # Syncthing's command as a package the host bundle can call (a main package
  # cannot be imported): cmd/syncthing's files, package main renamed, main()
  # exported as Main(). Inside the module, so its internal imports still resolve.
  local lib=$tmp/module/devtool/syncthingmain f
  mkdir -p "$lib"
  for f in "$tmp/module/cmd/syncthing/"*.go; do
    [[ $f == *_test.go ]] && continue
    sed -e 's/^package main$/package syncthingmain/' -e 's/^func main() {$/func Main() {/' "$f" >"$lib/$(basename "$f")"
  done
  grep -q '^func Main() {$' "$lib/main.go" || die "Syncthing $SYNCTHING_VERSION's cmd/syncthing/main.go has no func main(): re-check agent/build.sh syncthing_src"
  cp "$AGENT_DIR/syncthing/go.mod" "$AGENT_DIR/syncthing/go.sum" "$AGENT_DIR/syncthing/tools.go" "$tmp/main/"
  printf '\n// Generated by agent/build.sh: build the patched copy.\nreplace github.com/syncthing/syncthing => ../module\n' >>"$tmp/main/go.mod"
  touch "$tmp/.ready"
  rm -rf "$src" && mv "$tmp" "$src"
  exec {lock}>&-
  log "patched Syncthing $SYNCTHING_VERSION with ${#SYNCTHING_PATCHES[@]} patch(es) in $src"
  echo "$src/main"
}

build_syncthing() {
  local platform=$1 src
  [[ -x $SYNCTHING_CACHE/$platform/$(exe "${platform%-*}" syncthing) ]] && return 0
  # Not inline in build's arguments: a failing syncthing_src must stop here.
  src=$(syncthing_src) || exit 1
  build syncthing "$src" "$SYNCTHING_CACHE" "$platform" "$SYNCTHING_TAGS" "$SYNCTHING_LDFLAGS" \
    github.com/syncthing/syncthing/cmd/syncthing
}

# host_src: prints the directory to build (and test) the host bundle in, made
# on first use: host/'s files with replaces pointing at this checkout's agent
# and BuildKit client and at the patched Syncthing (absolute: the copy lives in
# the cache). Its files are all in HOST_CACHE's key, so it never changes.
host_src() {
  local st dir=$HOST_CACHE/src lock
  [[ -f $dir/.ready ]] && { echo "$dir"; return 0; }
  st=$(syncthing_src) || exit 1
  mkdir -p "$HOST_CACHE"
  exec {lock}>"$dir.lock"
  flock "$lock"
  if [[ ! -f $dir/.ready ]]; then
    rm -rf "$dir.tmp.$$" && mkdir -p "$dir.tmp.$$"
    cp "$AGENT_DIR/host/"*.go "$AGENT_DIR/host/go.mod" "$AGENT_DIR/host/go.sum" "$dir.tmp.$$/"
    printf '\n// Generated by agent/build.sh: this checkout and the patched Syncthing.\nreplace (\n\tdevtool.dev/agent => %s\n\tdevtool.dev/buildkit/client => %s\n\tgithub.com/syncthing/syncthing => %s\n)\n' \
      "$AGENT_DIR" "$ROOT/buildkit/client" "$(dirname "$st")/module" >>"$dir.tmp.$$/go.mod"
    touch "$dir.tmp.$$/.ready"
    rm -rf "$dir" && mv "$dir.tmp.$$" "$dir"
  fi
  exec {lock}>&-
  echo "$dir"
}

build_host() {
  local platform=$1 src
  [[ -x $HOST_CACHE/$platform/$(exe "${platform%-*}" devtool-host) ]] && return 0
  src=$(host_src) || exit 1
  build devtool-host "$src" "$HOST_CACHE" "$platform" "$SYNCTHING_TAGS" "$HOST_LDFLAGS" .
}

host_arch() { go env GOARCH; }
# This machine, as OS-ARCH: the binaries the CLI runs here.
host_platform() { echo "$(go env GOOS)-$(go env GOARCH)"; }

find_crane() {
  if [[ -n ${CRANE:-} ]]; then echo "$CRANE"; return; fi
  local c
  # The local cluster's build caches crane; reuse it if present.
  for c in /var/cache/devtool-cluster/bin/crane-*/crane; do
    [[ -x $c ]] && { echo "$c"; return; }
  done
  # Else build it from the cluster's pinned wrapper module (read-only use).
  local k dir
  k=$(key "$ROOT/cluster/crane/go.mod" "$ROOT/cluster/crane/go.sum" -- "-s -w")
  dir=$CACHE/crane-$k
  build crane "$ROOT/cluster/crane" "$dir" "linux-$(host_arch)" "" "-s -w" github.com/google/go-containerregistry/cmd/crane
  echo "$dir/linux-$(host_arch)/crane"
}

registry() { echo "${1:-${DEVTOOL_BIN_REGISTRY:-localhost:5000}}"; }

# push_image REGISTRY: one image per arch (tagged VERSION-ARCH), then an
# index tagged VERSION that points at all of them.
push_image() {
  local reg=$1 crane ref=$1/$IMAGE_NAME:$VERSION manifests=() arch work
  crane=$(find_crane)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  for arch in $ARCHES; do
    local root=$work/$arch/root layer=$work/$arch/layer.tar aref=$ref-$arch digest
    mkdir -p "$root/devtool-bin"
    # The host bundle as the agent: Syncthing is inside it (install copies it alone, supervise runs
    # it as Syncthing); the very file a release's Linux platform package carries.
    cp "$HOST_CACHE/linux-$arch/devtool-host" "$root/devtool-bin/devtool-agent"
    chmod 0755 "$root/devtool-bin" "$root/devtool-bin/"*
    # Reproducible layer: fixed owner, mtime and order.
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$root" -cf "$layer" devtool-bin
    log "pushing $aref"
    "$crane" --insecure append -f "$layer" -t "$aref" >&2 ||
      die "crane append to $reg failed (is the registry up? try: curl http://$reg/v2/)"
    digest=$("$crane" --insecure mutate "$aref" -t "$aref" \
      --set-platform "linux/$arch" \
      --entrypoint "/devtool-bin/devtool-agent,install,$INSTALL_DIR" \
      --user "$IMAGE_USER" \
      -l "org.opencontainers.image.title=$IMAGE_NAME" \
      -l "org.opencontainers.image.version=$VERSION" \
      -l "dev.devtool.syncthing.version=$SYNCTHING_VERSION")
    manifests+=(-m "$digest")
  done
  log "pushing index $ref (${ARCHES// /, })"
  "$crane" --insecure index append "${manifests[@]}" -t "$ref" >&2
  echo "$ref@$("$crane" --insecure digest "$ref")"
}

cmd=${1:-all}
case $cmd in
  syncthing-path)
    p=$(host_platform)
    build_syncthing "$p"
    echo "$SYNCTHING_CACHE/$p/$(exe "${p%-*}" syncthing)"
    ;;
  agent-path)
    p=$(host_platform)
    build_agent "$p"
    echo "$AGENT_CACHE/$p/$(exe "${p%-*}" devtool-agent)"
    ;;
  host-path)
    [[ $# -eq 3 ]] || die "usage: agent/build.sh host-path OS ARCH (GOOS and GOARCH, e.g. darwin arm64)"
    build_host "$2-$3"
    echo "$HOST_CACHE/$2-$3/$(exe "$2" devtool-host)"
    ;;
  host-src)
    # Where `go test -tags "$(agent/build.sh host-tags)"` of host/ runs (scripts/test.sh): the
    # copy that resolves its replaces.
    host_src
    ;;
  host-tags)
    echo "$SYNCTHING_TAGS"
    ;;
  host-tidy)
    # In a copy of the generated folder (the patched Syncthing resolves only
    # there), then back into host/ without the generated replaces.
    src=$(host_src) || exit 1
    tidy=$(mktemp -d)
    trap 'rm -rf "$tidy"' EXIT
    cp -R "$src/." "$tidy/"
    (cd "$tidy" && go mod tidy) >&2 || die "go mod tidy of host/ failed"
    sed '/^\/\/ Generated by agent\/build.sh/,$d' "$tidy/go.mod" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$AGENT_DIR/host/go.mod"
    cp "$tidy/go.sum" "$AGENT_DIR/host/go.sum"
    echo "$AGENT_DIR/host/go.mod"
    ;;
  binaries)
    for a in $ARCHES; do build_agent "linux-$a"; build_syncthing "linux-$a"; done
    echo "$AGENT_CACHE"
    echo "$SYNCTHING_CACHE"
    ;;
  image-ref)
    echo "$(registry "${2:-}")/$IMAGE_NAME:$VERSION"
    ;;
  all | image)
    for a in $ARCHES; do build_host "linux-$a"; done
    push_image "$(registry "${2:-}")"
    ;;
  -h | --help | help)
    sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    ;;
  *)
    # A bare registry argument means "all".
    if [[ $cmd == *[.:]* ]]; then
      for a in $ARCHES; do build_host "linux-$a"; done
      push_image "$(registry "$cmd")"
    else
      die "unknown command $cmd (see --help)"
    fi
    ;;
esac
