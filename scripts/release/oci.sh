# shellcheck shell=bash
# OCI image layouts written by hand, byte for byte the same for the same input: layers are tars with
# entries in name order, owners as numbers, every mtime 0 and no extended attributes, compressed by
# gzip without a name or time; configs carry no dates and no history; JSON is jq's compact output.
# Needs $LAYOUT (the layout directory being written) and jq.

OCI_LAYER=application/vnd.oci.image.layer.v1.tar+gzip
OCI_CONFIG=application/vnd.oci.image.config.v1+json
OCI_MANIFEST=application/vnd.oci.image.manifest.v1+json
OCI_INDEX=application/vnd.oci.image.index.v1+json

# tar_tree DIR [TAR OPTIONS...]: DIR's content as a tar on stdout, deterministic (above).
tar_tree() {
  local dir=$1; shift
  (cd "$dir" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
    tar --create --file=- --numeric-owner --mtime=@0 --format=gnu "$@" --no-recursion --null --files-from=-)
}

# gzip_layer TAR OUT: OUT.gz-less name given; writes OUT (gzip) and OUT.diff_id (the tar's digest).
gzip_layer() {
  local tar=$1 out=$2
  echo "sha256:$(sha256sum <"$tar" | cut -d' ' -f1)" >"$out.diff_id.tmp"
  gzip -n -6 <"$tar" >"$out.tmp"
  mv "$out.tmp" "$out" && mv "$out.diff_id.tmp" "$out.diff_id"
}

# add_blob FILE MEDIA_TYPE: FILE into $LAYOUT/blobs (hard-linked when it can be); prints its
# descriptor as JSON.
add_blob() {
  local file=$1 type=$2 digest size
  digest=$(sha256sum <"$file" | cut -d' ' -f1)
  size=$(stat -c %s "$file")
  mkdir -p "$LAYOUT/blobs/sha256"
  [[ -f $LAYOUT/blobs/sha256/$digest ]] || ln "$file" "$LAYOUT/blobs/sha256/$digest" 2>/dev/null ||
    cp "$file" "$LAYOUT/blobs/sha256/$digest"
  jq -cn --arg t "$type" --arg d "sha256:$digest" --argjson s "$size" '{mediaType: $t, digest: $d, size: $s}'
}

# add_json JSON MEDIA_TYPE: a JSON document as a blob; prints its descriptor.
add_json() {
  local tmp
  tmp=$(mktemp "$LAYOUT/.json.XXXXXX")
  printf '%s' "$1" >"$tmp" && chmod 644 "$tmp"
  add_blob "$tmp" "$2"
  rm -f "$tmp"
}

# add_image ARCH CONFIG_JSON LAYER...: an image for linux/ARCH from gzip layers (each with its
# .diff_id beside it) and the container config ({Entrypoint, Cmd, Env, ...}); prints the manifest's
# descriptor with its platform.
add_image() {
  local arch=$1 config=$2 layer diff_ids=() layers=() config_doc manifest
  shift 2
  for layer in "$@"; do
    diff_ids+=("$(cat "$layer.diff_id")")
    layers+=("$(add_blob "$layer" "$OCI_LAYER")")
  done
  config_doc=$(jq -cn --arg arch "$arch" --argjson config "$config" \
    '{architecture: $arch, os: "linux", config: $config, rootfs: {type: "layers", diff_ids: $ARGS.positional}}' \
    --args "${diff_ids[@]}")
  manifest=$(jq -cn --arg t "$OCI_MANIFEST" --argjson config "$(add_json "$config_doc" "$OCI_CONFIG")" \
    '{schemaVersion: 2, mediaType: $t, config: $config, layers: [$ARGS.positional[] | fromjson]}' --args "${layers[@]}")
  add_json "$manifest" "$OCI_MANIFEST" | jq -c --arg arch "$arch" '. + {platform: {architecture: $arch, os: "linux"}}'
}

# finish_layout TAG MANIFEST_DESCRIPTOR...: the image index of the per-arch manifests, named TAG in
# the layout's index.json; prints the index's digest.
finish_layout() {
  local tag=$1 index descriptor
  shift
  index=$(jq -cn --arg t "$OCI_INDEX" '{schemaVersion: 2, mediaType: $t, manifests: [$ARGS.positional[] | fromjson]}' --args "$@")
  descriptor=$(add_json "$index" "$OCI_INDEX")
  jq -cn --argjson d "$descriptor" --arg tag "$tag" \
    '{schemaVersion: 2, manifests: [$d + {annotations: {"org.opencontainers.image.ref.name": $tag}}]}' >"$LAYOUT/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$LAYOUT/oci-layout"
  jq -r .digest <<<"$descriptor"
}

# archive_layout OUT: the layout as one tar (deterministic, as the layers).
archive_layout() {
  local out=$1
  tar_tree "$LAYOUT" --owner=0 --group=0 >"$out.tmp" && mv "$out.tmp" "$out"
}
