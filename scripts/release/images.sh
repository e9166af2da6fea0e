#!/usr/bin/env bash
# The release's images, each an OCI image layout archive holding one image index for linux/amd64 and
# linux/arm64, built from this checkout without running anything of arm64 (no QEMU):
#
#   images.sh OUT_DIR [NAME...]        writes OUT_DIR/images/<name>-<version>.tar for every image (or
#                                      the NAMEs), then checks them
#   images.sh check OUT_DIR [NAME...]  reads each archive: an index of two manifests, each config's
#                                      architecture, and the ELF machine of the image's main programs
#   images.sh push OUT_DIR             pushes each archive to <registry>/<name>:<version> as a multi-arch
#                                      index (registry.sh: $DEVTOOL_RELEASE_REGISTRY or the project's);
#                                      prints "<name> <reference>@<digest>" per image
#
# The images (the chart's, and the agent's image the CLI runs in dev pods):
#   devtool-bin      the agent and Syncthing (agent/build.sh), FROM scratch
#   devtool-service  Node.js 20 (Debian 13's) + dist/devtool-service.cjs
#   devtool-ingress  Node.js 20 (Debian 13's) + dist/devtool-ingress.cjs
#   devtool-caddy    the front door's proxy: Caddy from Debian 12 (cluster/images/caddy)
#   devtool-runner   the pipeline runner: Node.js 20 and git + devtool, kubectl, helm, the host bundle (its BuildKit client)
#   devtool-builder  the hosted builder: buildkitd and its gateway + Debian 12's runc, CNI plugins, git
# Go programs are cross-compiled (CGO off). A Debian base is the local cluster's image of the same
# recipe (cluster/images/<recipe>, built with debootstrap and apt in a chroot, amd64), flattened into
# one layer; its arm64 twin is the same package set unpacked from Debian's arm64 packages
# (debian-arch.sh). Everything is cached under $DEVTOOL_BUILD_CACHE (/var/cache/devtool-build):
# the flattened bases per recipe and architecture, keyed by the cluster image's digest, and the .debs.
# Needs root (owners in the root file systems), Go, jq, and the local cluster's registry (the amd64
# Debian bases are built there); devtool-bin alone needs only Go and jq: `npm run release` builds it
# first, since the CLI package names it. Progress goes to stderr.
set -euo pipefail

RELEASE_DIR=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$RELEASE_DIR/../.." && pwd)
# shellcheck source=../../cluster/lib/common.sh
source "$root/cluster/lib/common.sh" # K8S_VERSION, LOGS, fail_component
# shellcheck source=../../cluster/lib/build.sh
source "$root/cluster/lib/build.sh" # k8s_ldflags, build_key, go_build
# shellcheck source=debian-arch.sh
source "$RELEASE_DIR/debian-arch.sh"
# shellcheck source=oci.sh
source "$RELEASE_DIR/oci.sh"
# shellcheck source=registry.sh
source "$RELEASE_DIR/registry.sh"
# shellcheck source=../runner-layout.sh
source "$root/scripts/runner-layout.sh" # runner_layout, node_arch

BUILD_CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
BASES_CACHE=$BUILD_CACHE/release-bases
DEBS_CACHE=$BUILD_CACHE/release-debs
ARCHES=(amd64 arm64)
IMAGES=(devtool-bin devtool-service devtool-ingress devtool-caddy devtool-runner devtool-builder)
VERSION=$(node -p 'require(process.argv[1]).version' "$root/package.json")
# The revision label of every image: the commit (DEVTOOL_RELEASE_REVISION names another, e.g. a test's
# second build of one commit).
REVISION=${DEVTOOL_RELEASE_REVISION:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}
PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

rlog() { printf '[release images %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
rdie() { rlog "ERROR: $*"; exit 1; }

crane() { bash "$root/cluster/cluster.sh" crane "$@"; }

# --- the programs, per architecture -----------------------------------------------------------

# kubectl_path ARCH: the cluster's kubectl (cluster/k8s, same version and flags) built for ARCH.
kubectl_path() {
  local arch=$1 dir
  if [[ $arch == "$(go env GOARCH)" ]]; then
    bash "$root/cluster/cluster.sh" kubectl-path | tail -n 1
    return
  fi
  dir=$BUILD_CACHE/kubectl-$K8S_VERSION-$(build_key "$CLUSTER_DIR/k8s" "$(k8s_ldflags)" kubectl)/linux-$arch
  if [[ ! -x $dir/kubectl ]]; then
    mkdir -p "$LOGS"
    GOARCH=$arch go_build "kubectl-$arch" "$CLUSTER_DIR/k8s" "$dir" "$(k8s_ldflags)" k8s.io/kubernetes/cmd/kubectl
  fi
  echo "$dir/kubectl"
}

buildkit_path() { GOARCH=$2 bash "$root/buildkit/build.sh" "$1-path" | tail -n 1; }
# The host bundle of linux/ARCH (agent/build.sh host-path), as the platform package carries it.
host_path() { bash "$root/agent/build.sh" host-path linux "$1" | tail -n 1; }
helm_path() { GOARCH=$1 bash "$root/cluster/helm.sh" path | tail -n 1; }

# --- what each image is -----------------------------------------------------------------------

# image_spec NAME: sets BASE (a cluster/images recipe, or empty: scratch), DROP (paths of the base
# that the image's own layer replaces, so no amd64 copy stays in the arm64 base) and CONFIG (the
# container config, JSON).
image_spec() {
  local labels
  labels=$(jq -cn --arg n "$1" --arg v "$VERSION" --arg r "$REVISION" \
    '{"org.opencontainers.image.title": $n, "org.opencontainers.image.version": $v, "org.opencontainers.image.revision": $r}')
  BASE='' DROP=()
  case $1 in
    devtool-bin)
      # As agent/build.sh makes it: the dev pod's init container copies the agent (the host bundle,
      # Syncthing inside) to /devtool/bin.
      CONFIG=$(jq -cn --argjson l "$labels" '{Entrypoint: ["/devtool-bin/devtool-agent", "install", "/devtool/bin"],
        User: "65532:65532", Labels: $l}') ;;
    devtool-service | devtool-ingress)
      BASE=node
      CONFIG=$(jq -cn --argjson l "$labels" --arg p "$PATH_ENV" --arg n "$1" \
        '{Env: [$p], Cmd: ["node", "/app/\($n).cjs"], Labels: $l}') ;;
    devtool-caddy)
      BASE=caddy
      CONFIG=$(jq -cn --argjson l "$labels" --arg p "$PATH_ENV" '{Env: [$p, "XDG_DATA_HOME=/data", "XDG_CONFIG_HOME=/config"],
        Entrypoint: ["caddy"], Cmd: ["run", "--config", "/etc/caddy/boot.json"], Labels: $l}') ;;
    devtool-runner)
      BASE=node-git
      CONFIG=$(jq -cn --argjson l "$labels" --arg p "$PATH_ENV" '{Env: [$p], Entrypoint: ["/bin/sh"], WorkingDir: "/work", Labels: $l}') ;;
    devtool-builder)
      BASE=buildkitd
      DROP=(usr/local/bin/buildkitd usr/local/bin/devtool-buildkit-gateway)
      CONFIG=$(jq -cn --argjson l "$labels" --arg p "$PATH_ENV" \
        '{Env: [$p], Entrypoint: ["/usr/local/bin/devtool-buildkit-gateway"], Labels: $l}') ;;
    *) rdie "no image $1" ;;
  esac
}

# own_layer NAME ARCH DIR: fills DIR with what the image adds to its base for ARCH.
own_layer() {
  local name=$1 arch=$2 dir=$3
  case $name in
    devtool-bin)
      # The Linux platform package's own build (agent/build.sh host-path).
      install -D -m 755 "$(host_path "$arch")" "$dir/devtool-bin/devtool-agent" ;;
    devtool-service | devtool-ingress)
      install -D -m 644 "$root/dist/$name.cjs" "$dir/app/$name.cjs" ;;
    devtool-caddy) ;;
    devtool-runner)
      runner_layout "$dir" "$arch" "$VERSION" "$root/dist/devtool-runner.cjs" "$(host_path "$arch")" "$(kubectl_path "$arch")" "$(helm_path "$arch")"
      mkdir -p "$dir/work" ;;
    devtool-builder)
      install -D -m 755 "$(buildkit_path buildkitd "$arch")" "$dir/usr/local/bin/buildkitd"
      install -D -m 755 "$(buildkit_path gateway "$arch")" "$dir/usr/local/bin/devtool-buildkit-gateway" ;;
  esac
}

# main_programs NAME ARCH: the files whose ELF machine `check` reads (no symbolic links).
main_programs() {
  case $1 in
    devtool-bin) echo devtool-bin/devtool-agent ;;
    devtool-service | devtool-ingress) echo usr/bin/node usr/lib/*-linux-gnu/libc.so.6 ;;
    devtool-caddy) echo usr/bin/caddy ;;
    devtool-runner) echo usr/bin/node usr/bin/git usr/local/bin/kubectl usr/local/bin/helm "opt/devtool/node_modules/devtool-linux-$(node_arch "$2")/bin/devtool-host" ;;
    devtool-builder) echo usr/local/bin/buildkitd usr/local/bin/devtool-buildkit-gateway usr/sbin/runc usr/sbin/xtables-nft-multi ;;
  esac
}

# --- the Debian bases ---------------------------------------------------------------------------

# base_layer RECIPE ARCH DROP...: prints the path of the recipe's flattened image for ARCH (a gzip
# layer, its .diff_id beside it), made once per cluster image digest.
base_layer() {
  local recipe=$1 arch=$2 ref key entry work
  shift 2
  ref=$(BUILDKITD_BIN=$(buildkit_path buildkitd amd64) GATEWAY_BIN=$(buildkit_path gateway amd64) \
    bash "$root/cluster/cluster.sh" image "$recipe" | tail -n 1) || rdie "the cluster image $recipe failed"
  # The key: the cluster image, what is dropped, how it is flattened and (not amd64) twinned.
  key=$({
    echo "${ref#*@}" "$*"
    declare -f tar_tree
    [[ $arch == amd64 ]] || cat "$RELEASE_DIR/debian-arch.sh"
  } | sha256sum | cut -c1-16)
  entry=$BASES_CACHE/$recipe-$arch-$key
  if [[ ! -f $entry/layer.tar.gz.diff_id ]]; then
    rlog "flattening $ref for linux/$arch"
    work=$BASES_CACHE/work-$recipe-$arch.$$
    rm -rf "$work" && mkdir -p "$work/root"
    crane --insecure export "$ref" - | tar -x --numeric-owner -C "$work/root" || rdie "exporting $ref failed"
    local p
    for p in "$@"; do rm -f "$work/root/$p"; done
    if [[ $arch != amd64 ]]; then
      debian_arch_twin "$work/root" "$arch" || rdie "the $arch twin of $recipe failed"
    fi
    { tar_tree "$work/root" >"$work/layer.tar" && gzip_layer "$work/layer.tar" "$work/layer.tar.gz"; } ||
      rdie "making the layer of $recipe for $arch failed"
    rm -rf "$entry" && mkdir -p "$entry"
    mv "$work/layer.tar.gz" "$work/layer.tar.gz.diff_id" "$entry/"
    rm -rf "$work"
    # Older entries of the same recipe and architecture go (another digest of the cluster image).
    find "$BASES_CACHE" -mindepth 1 -maxdepth 1 -type d -name "$recipe-$arch-*" ! -name "${entry##*/}" -mmin +60 \
      -exec rm -rf {} + 2>/dev/null || true
  fi
  echo "$entry/layer.tar.gz"
}

# --- build, check, push -------------------------------------------------------------------------

# build_image NAME OUT_DIR: OUT_DIR/images/NAME-VERSION.tar; prints its index digest.
build_image() {
  local name=$1 out=$2/images/$1-$VERSION.tar arch manifests=() layers work
  image_spec "$name"
  work=$(mktemp -d "$2/images/.$name.XXXXXX")
  LAYOUT=$work/layout
  for arch in "${ARCHES[@]}"; do
    layers=()
    [[ -n $BASE ]] && layers+=("$(base_layer "$BASE" "$arch" "${DROP[@]}")")
    mkdir -p "$work/$arch"
    own_layer "$name" "$arch" "$work/$arch"
    if [[ -n $(ls -A "$work/$arch") ]]; then
      tar_tree "$work/$arch" --owner=0 --group=0 >"$work/$arch.tar"
      gzip_layer "$work/$arch.tar" "$work/$arch.tar.gz"
      layers+=("$work/$arch.tar.gz")
    fi
    manifests+=("$(add_image "$arch" "$CONFIG" "${layers[@]}")")
  done
  local digest
  digest=$(finish_layout "$VERSION" "${manifests[@]}")
  archive_layout "$out"
  rm -rf "$work"
  rlog "$out: $digest ($(du -h "$out" | cut -f1))"
}

# with_layout ARCHIVE FUNCTION: FUNCTION with $LAYOUT the archive's layout, unpacked.
with_layout() {
  local archive=$1 fn=$2 rc=0
  LAYOUT=$(mktemp -d)
  tar -xf "$archive" -C "$LAYOUT" || rc=1
  ((rc == 0)) && { "$fn" || rc=$?; }
  rm -rf "$LAYOUT"
  return $rc
}

blob() { echo "$LAYOUT/blobs/sha256/${1#sha256:}"; }

# check_layout: the unpacked archive of $CHECK_NAME.
check_layout() {
  local index manifest config arch platform layer path machine dir
  index=$(jq -r '.manifests[0].digest' "$LAYOUT/index.json")
  [[ $(jq -r '.manifests[0].mediaType' "$LAYOUT/index.json") == "$OCI_INDEX" ]] || { echo "index.json names no image index"; return 1; }
  [[ $(jq '.manifests | length' "$(blob "$index")") == "${#ARCHES[@]}" ]] || { echo "the index has not ${#ARCHES[@]} manifests"; return 1; }
  for arch in "${ARCHES[@]}"; do
    manifest=$(jq -r --arg a "$arch" '.manifests[] | select(.platform.architecture == $a and .platform.os == "linux") | .digest' "$(blob "$index")")
    [[ -n $manifest ]] || { echo "no linux/$arch manifest"; return 1; }
    config=$(jq -r .config.digest "$(blob "$manifest")")
    platform=$(jq -r '"\(.os)/\(.architecture)"' "$(blob "$config")")
    [[ $platform == "linux/$arch" ]] || { echo "the linux/$arch manifest's config says $platform"; return 1; }
    dir=$(mktemp -d "$LAYOUT/root.XXXXXX")
    local wanted=()
    for path in $(main_programs "$CHECK_NAME" "$arch"); do wanted+=("./$path"); done
    # Only those files, from every layer that has them (tar names the others as not found).
    for layer in $(jq -r '.layers[].digest' "$(blob "$manifest")"); do
      tar -xzf "$(blob "$layer")" -C "$dir" --no-same-owner --wildcards "${wanted[@]}" 2>/dev/null || true
    done
    local want=x86-64
    [[ $arch == arm64 ]] && want=aarch64
    for path in $(cd "$dir" && main_programs "$CHECK_NAME" "$arch"); do
      [[ -f $dir/$path && ! -L $dir/$path ]] || { echo "linux/$arch: no file $path"; return 1; }
      machine=$(node "$RELEASE_DIR/elf.mjs" machine "$dir/$path" | cut -d' ' -f1)
      [[ $machine == "$want" ]] || { echo "linux/$arch: $path is $machine, not $want"; return 1; }
      echo "$CHECK_NAME linux/$arch $path: $machine" >&2
    done
    rm -rf "$dir"
  done
}

# check_all OUT_DIR NAME...
check_all() {
  local out=$1 name problem
  shift
  for name in "$@"; do
    CHECK_NAME=$name
    problem=$(with_layout "$out/images/$name-$VERSION.tar" check_layout) || rdie "$name-$VERSION.tar: $problem"
  done
  rlog "checked $# archive(s) in $out/images: an index of ${ARCHES[*]} each, programs of the right machine"
}

# push_layout: $LAYOUT's index to $PUSH_REF; prints reference@digest.
push_layout() {
  local insecure=() want pushed
  [[ $PUSH_REF == localhost:* || $PUSH_REF == 127.0.0.1:* ]] && insecure=(--insecure)
  want=$(jq -r '.manifests[0].digest' "$LAYOUT/index.json")
  pushed=$(crane "${insecure[@]}" push "$LAYOUT" "$PUSH_REF" 2>/dev/null | tail -n 1) || return 1
  [[ ${pushed##*@} == "$want" ]] || { echo "the registry has $pushed, the archive $want" >&2; return 1; }
  echo "$PUSH_REF@$want"
}

push_all() {
  local out=$1 name pushed
  for name in "${IMAGES[@]}"; do
    PUSH_REF=$RELEASE_REGISTRY/$name:$VERSION
    pushed=$(with_layout "$out/images/$name-$VERSION.tar" push_layout) || rdie "pushing $PUSH_REF failed"
    rlog "pushed $pushed"
    echo "$name $pushed"
  done
}

# build_all OUT_DIR NAME...
build_all() {
  local out=$1 name
  shift
  mkdir -p "$out/images"
  command -v jq >/dev/null || rdie "jq is required"
  if [[ $* != devtool-bin ]]; then
    [[ $EUID -eq 0 ]] || rdie "must run as root (the Debian bases' files keep their owners)"
    (cd "$root" && node scripts/build.mjs cluster) >&2 || rdie "building the bundles failed"
  fi
  local arch
  for arch in "${ARCHES[@]}"; do host_path "$arch" >/dev/null || rdie "building the host bundle for linux/$arch failed"; done
  for name in "$@"; do build_image "$name" "$out"; done
  check_all "$out" "$@"
}

# known_images NAME...: the NAMEs, or every image when none is given; refuses a name it does not know.
known_images() {
  local name
  (($# > 0)) || set -- "${IMAGES[@]}"
  for name in "$@"; do
    [[ " ${IMAGES[*]} " == *" $name "* ]] || rdie "no image $name (the images: ${IMAGES[*]})"
  done
  echo "$@"
}

case ${1:-} in
  check)
    [[ $# -ge 2 ]] || rdie "usage: images.sh check OUT_DIR [NAME...]"
    list=$(known_images "${@:3}")
    read -ra names <<<"$list"
    check_all "$(realpath "$2")" "${names[@]}" ;;
  push) [[ $# -eq 2 ]] || rdie "usage: images.sh push OUT_DIR"; push_all "$(realpath "$2")" ;;
  '' | -*) rdie "usage: images.sh OUT_DIR [NAME...] | check OUT_DIR [NAME...] | push OUT_DIR" ;;
  *)
    list=$(known_images "${@:2}")
    read -ra names <<<"$list"
    mkdir -p "$1" && build_all "$(realpath "$1")" "${names[@]}" ;;
esac
