#!/usr/bin/env bash
# The release's Helm chart:
#
#   chart.sh OUT_DIR   writes OUT_DIR/chart/devtool-<version>.tgz: chart/ whose default images are
#                      the release's (OUT_DIR/images, written by images.sh), by digest, under
#                      $DEVTOOL_RELEASE_REGISTRY (registry.sh): `helm install` with no image values
#                      works wherever that registry is reachable and holds them (images.sh push)
#
# chart/ itself keeps empty images (scripts/service-up.sh sets them to the local cluster's builds);
# only the packaged copy names the release's. Deterministic: helm's own package stamps the time, so
# the archive is written here (entries in name order, owner 0, mtime 0, gzip without a name or time)
# and read back with `helm show chart`. Progress goes to stderr; stdout's last line is the archive.
set -euo pipefail

RELEASE_DIR=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$RELEASE_DIR/../.." && pwd)
# shellcheck source=registry.sh
source "$RELEASE_DIR/registry.sh"

die() { printf 'release chart: ERROR: %s\n' "$*" >&2; exit 1; }
[[ $# -eq 1 ]] || die "usage: chart.sh OUT_DIR"
out=$(realpath "$1")
version=$(node -p 'require(process.argv[1]).version' "$root/package.json")
helm_bin=$(bash "$root/cluster/helm.sh" path)

# image NAME: the release's reference of image NAME, by the digest of its archive's index.
image() {
  local archive=$out/images/$1-$version.tar digest
  [[ -f $archive ]] || die "no $archive (scripts/release/images.sh $out first)"
  digest=$(tar -xOf "$archive" ./index.json | jq -r '.manifests[0].digest')
  [[ $digest == sha256:* ]] || die "$archive has no image index"
  echo "$RELEASE_REGISTRY/$1:$version@$digest"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$root/chart" "$work/devtool"
node "$RELEASE_DIR/chart-values.mjs" "$work/devtool/values.yaml" \
  "service.image=$(image devtool-service)" \
  "ingress.controller.image=$(image devtool-ingress)" \
  "ingress.proxy.image=$(image devtool-caddy)" \
  "builder.image=$(image devtool-builder)" \
  "pipelines.runnerImage=$(image devtool-runner)"
sed -i -e "s/^version: .*/version: $version/" -e "s/^appVersion: .*/appVersion: \"$version\"/" "$work/devtool/Chart.yaml"
"$helm_bin" lint "$work/devtool" >&2 || die "helm lint refused the packaged chart"

mkdir -p "$out/chart"
archive=$out/chart/devtool-$version.tgz
(cd "$work" && find devtool -print0 | LC_ALL=C sort -z |
  tar --create --file=- --no-recursion --null --files-from=- --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu) |
  gzip -n -9 >"$archive.tmp"
mv "$archive.tmp" "$archive"
shown=$("$helm_bin" show chart "$archive" | sed -n 's/^version: //p')
[[ $shown == "$version" ]] || die "helm reads version '$shown' from $archive"
printf 'release chart: %s (images under %s)\n' "$archive" "$RELEASE_REGISTRY" >&2
echo "$archive"
