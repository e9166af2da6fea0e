# The hosted builder of the devtool chart: devtool-buildkit-gateway (buildkit/gateway), which starts
# one buildkitd (built from buildkit/daemon, the release buildkit/README.md pins) per user, with
# Debian 12's runc for its OCI worker. Not in IMAGE_RECIPES (the cluster does not need it):
# scripts/service-up.sh builds it with `cluster.sh image buildkitd`, passing the binaries in
# BUILDKITD_BIN and GATEWAY_BIN; the cache key covers both.
IMAGE=buildkitd:devtool
FROM=debian:bookworm
# git: BuildKit's git source (a build context given as a repository URL). containernetworking-plugins
# and iptables: the bridge (and its NAT) each build step's own network namespace hangs off.
PACKAGES=(runc ca-certificates git containernetworking-plugins iptables)
ENTRYPOINT=(/usr/local/bin/devtool-buildkit-gateway)
KEY_EXTRA=$(cat "${BUILDKITD_BIN:?BUILDKITD_BIN: the buildkitd binary (buildkit/build.sh buildkitd-path)}" \
  "${GATEWAY_BIN:?GATEWAY_BIN: the gateway binary (buildkit/build.sh gateway-path)}" | sha256sum)
recipe_finish() {
  install -m 755 "$BUILDKITD_BIN" "$ROOT/usr/local/bin/buildkitd"
  install -m 755 "$GATEWAY_BIN" "$ROOT/usr/local/bin/devtool-buildkit-gateway"
  mkdir -p "$ROOT/var/lib/buildkit" "$ROOT/etc/buildkit"
}
