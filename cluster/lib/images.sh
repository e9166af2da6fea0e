# shellcheck shell=bash
# Images, built locally and served by the local registry; nothing is pulled
# from a public registry. Each image has a recipe in cluster/images/<dir>/:
#
#   recipe.sh   IMAGE (name:tag), FROM (scratch | debootstrap | an image
#               built here, e.g. debian:bookworm), SUITE (debootstrap),
#               PACKAGES, ENTRYPOINT, CMD, ENV, WORKDIR, KEY_EXTRA, and the
#               hooks recipe_prepare / recipe_finish (run on the host with
#               $ROOT = the image's root filesystem, before / after apt).
#
# A built image is kept in $CACHE/images/<name>-<tag>-<key> as an OCI layout
# (plus, for Debian bases, the rootfs layer that derived images start from),
# keyed by a hash of its recipe directory, its base's key and
# IMAGE_BUILDER_VERSION (bump it when a change to this file or rootfs.sh
# changes what gets built).
# `up` then only pushes cached layouts into the (possibly fresh) registry.

IMAGE_BUILDER_VERSION=1
IMAGE_RECIPES=(pause coredns local-path-provisioner debian-bookworm debian-trixie nginx redis postgres node caddy node-git)
# shellcheck disable=SC2034 # read by lib/components.sh
PAUSE_IMAGE=$REGISTRY/pause:devtool
# shellcheck disable=SC2034 # read by lib/addons.sh
COREDNS_IMAGE=$REGISTRY/coredns:${COREDNS_VERSION#v}
# shellcheck disable=SC2034 # read by lib/addons.sh
LOCAL_PATH_IMAGE=$REGISTRY/local-path-provisioner:${LOCAL_PATH_VERSION#v}
# The local-path provisioner's helper pods (mkdir, rm -rf of a volume's folder): any image with a shell.
# shellcheck disable=SC2034 # read by lib/addons.sh
LOCAL_PATH_HELPER_IMAGE=$REGISTRY/debian:bookworm

crane_() { "$CRANE" --insecure "$@"; }

# Load a recipe into the current (sub)shell.
load_recipe() {
  IMAGE='' FROM=scratch SUITE='' PACKAGES=() ENTRYPOINT=() CMD=() ENV=() WORKDIR='' KEY_EXTRA=''
  # shellcheck disable=SC2317 # called by lib/rootfs.sh
  recipe_prepare() { :; }
  recipe_finish() { :; }
  RECIPE_DIR=$CLUSTER_DIR/images/$1
  # shellcheck source=/dev/null
  source "$RECIPE_DIR/recipe.sh"
}

# recipe_key DIR: hash of the recipe, the builder version and the base's key.
recipe_key() (
  load_recipe "$1"
  local base_key=''
  [[ $FROM != scratch && $FROM != debootstrap ]] && base_key=$(recipe_key "$(recipe_for "$FROM")")
  {
    find "$RECIPE_DIR" -type f -print0 | LC_ALL=C sort -z | xargs -0 cat
    echo "$IMAGE_BUILDER_VERSION $base_key $KEY_EXTRA"
  } | sha256sum | cut -c1-16
)

# recipe_for IMAGE: the recipe directory that builds IMAGE.
recipe_for() {
  local d
  for d in "${IMAGE_RECIPES[@]}"; do
    [[ $(load_recipe "$d"; echo "$IMAGE") == "$1" ]] && { echo "$d"; return 0; }
  done
  die "no recipe builds image $1"
}

image_cache_dir() (
  load_recipe "$1"
  echo "$CACHE/images/${IMAGE/:/-}-$(recipe_key "$1")"
)

# ensure_image DIR: make sure the recipe's image is in the registry, building
# it first if the cache has no entry for the current recipe.
ensure_image() (
  local dir=$1 cdir want have
  load_recipe "$dir"
  cdir=$(image_cache_dir "$dir")
  local ref=$REGISTRY/$IMAGE
  if [[ ! -f $cdir/digest ]]; then
    if [[ $FROM != scratch && $FROM != debootstrap ]]; then
      ensure_image "$(recipe_for "$FROM")" || exit 1
    fi
    build_image "$dir" "$cdir" || exit 1
  fi
  want=$(cat "$cdir/digest")
  have=$(crane_ digest "$ref" 2>/dev/null || true)
  if [[ $have != "$want" ]]; then
    crane_ push "$cdir/oci" "$ref" >>"$LOGS/images.log" 2>&1 ||
      fail_component images "pushing $ref to the local registry failed"
  fi
)

build_image() {
  local dir=$1 cdir=$2
  local work=$STATE/build/$dir
  local ref=$REGISTRY/$IMAGE start=$SECONDS
  log "building image $ref (recipe images/$dir)"
  safe_rm "$work" && rm -rf "$cdir.tmp" && mkdir -p "$work/root" "$cdir.tmp"
  local layer=$cdir.tmp/layer.tar.gz base=(--oci-empty-base) ilog=$LOGS/image-$dir.log base_cdir=
  case $FROM in
    debootstrap)
      debootstrap_rootfs "$SUITE" "$work/root" >>"$ilog" 2>&1 ||
        fail_component "image-$dir" "debootstrap $SUITE failed"
      ;;&
    debootstrap | scratch)
      { ROOT=$work/root recipe_finish && full_layer "$work/root" "$layer"; } >>"$ilog" 2>&1 ||
        fail_component "image-$dir" "making the layer of $IMAGE failed"
      ;;
    *)
      base_cdir=$(image_cache_dir "$(recipe_for "$FROM")")
      extract_layer "$base_cdir/layer.tar.gz" "$work/root"
      apt_install_layer "$work/root" "$layer" "${PACKAGES[@]}" >>"$ilog" 2>&1 ||
        { chroot_umount "$work/root"; fail_component "image-$dir" "installing ${PACKAGES[*]} for $IMAGE failed"; }
      base=(-b "$REGISTRY/$FROM")
      ;;
  esac
  # Assemble in the registry (crane needs a remote image to mutate), then
  # keep the result as an OCI layout in the cache.
  local mut=(--set-platform linux/amd64 -t "$ref") a
  for a in "${ENTRYPOINT[@]}"; do mut+=(--entrypoint "$a"); done
  for a in "${CMD[@]}"; do mut+=(--cmd "$a"); done
  for a in "${ENV[@]}"; do mut+=(-e "$a"); done
  [[ -n $WORKDIR ]] && mut+=(-w "$WORKDIR")
  {
    crane_ append "${base[@]}" -f "$layer" -t "$ref" &&
      crane_ mutate "$ref" "${mut[@]}" &&
      crane_ pull --format=oci "$ref" "$cdir.tmp/oci" &&
      crane_ digest "$ref" >"$cdir.tmp/digest"
  } >>"$ilog" 2>&1 || fail_component "image-$dir" "assembling $ref failed"
  # The base's layers are in the base's cache entry already: hard-link them.
  if [[ -n ${base_cdir:-} ]]; then
    local b
    for b in "$base_cdir"/oci/blobs/sha256/*; do
      [[ -f $cdir.tmp/oci/blobs/sha256/${b##*/} ]] && ln -f "$b" "$cdir.tmp/oci/blobs/sha256/${b##*/}"
    done
  fi
  # Only Debian bases keep their layer (derived images start from it).
  [[ $FROM == debootstrap ]] || rm -f "$layer"
  safe_rm "$work" && rm -rf "$cdir" && mv "$cdir.tmp" "$cdir"
  log "built image $ref in $((SECONDS - start))s ($(du -sh "$cdir" | cut -f1))"
}

# All images, in two parallel chains (network-bound apt work overlaps).
ensure_images() {
  mkdir -p "$LOGS" "$CACHE/images"
  local pids=() p rc=0
  { ensure_image pause && ensure_image local-path-provisioner; } & pids+=($!)
  { ensure_image coredns && ensure_image debian-trixie && ensure_image node; } & pids+=($!)
  { ensure_image debian-bookworm && ensure_image nginx && ensure_image redis &&
    ensure_image postgres && ensure_image caddy; } & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  ((rc == 0)) || fail_component images "image build failed"
}
