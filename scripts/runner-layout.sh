# shellcheck shell=bash
# The pipeline runner's own files, laid out as an installed release (src/binaries/host-binary.ts):
# the CLI bundle under /opt/devtool beside a package.json naming the package root, the platform
# package devtool-linux-<arch> nested in its node_modules with the host bundle (bin/devtool-host, as a
# release packs it; its BuildKit client builds images on the hosted builder), kubectl and helm, and
# a `devtool` command. One layout for the runner image
# built here (scripts/runner-image.sh) and the release's (scripts/release/images.sh).

# Go's architecture name as Node (and so a platform package's name) spells it.
node_arch() { if [[ $1 == amd64 ]]; then echo x64; else echo "$1"; fi; }

# runner_layout DIR GOARCH VERSION BUNDLE HOST_BUNDLE KUBECTL HELM: writes the files under DIR.
runner_layout() {
  local dir=$1 version=$3 bundle=$4 host=$5 kubectl=$6 helm=$7 package
  package=$dir/opt/devtool/node_modules/devtool-linux-$(node_arch "$2")
  install -D -m 644 "$bundle" "$dir/opt/devtool/devtool.cjs"
  printf '{"name":"devtool","version":"%s"}\n' "$version" >"$dir/opt/devtool/package.json"
  install -D -m 755 "$host" "$package/bin/devtool-host"
  printf '{"name":"devtool-linux-%s","version":"%s"}\n' "$(node_arch "$2")" "$version" >"$package/package.json"
  install -D -m 755 "$kubectl" "$dir/usr/local/bin/kubectl"
  install -D -m 755 "$helm" "$dir/usr/local/bin/helm"
  printf '#!/bin/sh\nexec node /opt/devtool/devtool.cjs "$@"\n' >"$dir/usr/local/bin/devtool"
  chmod 755 "$dir/usr/local/bin/devtool"
}
