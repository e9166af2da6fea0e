#!/usr/bin/env bash
# The pipeline runner image (what `pipeline deploy` and `pipeline destroy` Jobs run): node-git:20
# (Node.js 20 and git from Debian, cluster/images/node-git) plus one layer with this checkout's
# devtool (dist/devtool-runner.cjs, the whole CLI self-contained, with its BuildKit client for the
# hosted builder), the cluster's kubectl and the pinned helm (cluster/helm.sh): what manifest
# deploy commands call. Built locally, pushed to the
# local registry as devtool-runner:<version>-<hash of the layer>, so an unchanged runner is not
# pushed again and a changed one gets a new tag. Prints name:tag@digest (stdout's last line).
# Needs dist/devtool-runner.cjs (`node scripts/build.mjs cluster`). Progress goes to stderr.
set -euo pipefail
exec 3>&1 1>&2

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../cluster/lib/common.sh
source "$root/cluster/lib/common.sh" # REGISTRY
# shellcheck source=runner-layout.sh
source "$root/scripts/runner-layout.sh" # runner_layout
crane() { bash "$root/cluster/cluster.sh" crane --insecure "$@"; }
bundle=$root/dist/devtool-runner.cjs
[[ -s $bundle ]] || { echo "runner-image: no $bundle: run node scripts/build.mjs cluster" >&2; exit 1; }

base=$(bash "$root/cluster/cluster.sh" image node-git | tail -n 1)
kubectl_bin=$(bash "$root/cluster/cluster.sh" kubectl-path | tail -n 1)
helm_bin=$(bash "$root/cluster/helm.sh" path)
case $(uname -m) in aarch64 | arm64) arch=arm64 ;; *) arch=amd64 ;; esac # the node's: the runner runs on this cluster
host_bundle=$(bash "$root/agent/build.sh" host-path linux "$arch" | tail -n 1)
version=$(node -p 'require(process.argv[1]).version' "$root/package.json")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runner_layout "$work/layer" "$arch" "$version" "$bundle" "$host_bundle" "$kubectl_bin" "$helm_bin"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work/layer" -cf "$work/layer.tar" .
key=$({ echo "$base"; sha256sum <"$work/layer.tar"; } | sha256sum | cut -c1-16)
ref=$REGISTRY/devtool-runner:$version-$key
if ! digest=$(crane digest "$ref" 2>/dev/null); then
  gzip -n -1 <"$work/layer.tar" >"$work/layer.tar.gz"
  # Under a scratch tag first: $ref appears only complete (the check above trusts it).
  crane append -b "$base" -f "$work/layer.tar.gz" -t "$ref-partial" >/dev/null
  crane mutate "$ref-partial" --entrypoint /bin/sh -w /work -t "$ref" >/dev/null
  digest=$(crane digest "$ref")
  echo "runner-image: pushed $ref" >&2
fi
echo "$ref@$digest" >&3
