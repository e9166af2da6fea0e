# The hosted builder of the devtool chart: buildkitd (built from buildkit/daemon, the release
# buildkit/README.md pins) with Debian 12's runc for its OCI worker. Not in IMAGE_RECIPES (the
# cluster does not need it): scripts/service-up.sh builds it with `cluster.sh image buildkitd`,
# passing the binary in BUILDKITD_BIN; the cache key covers the binary.
IMAGE=buildkitd:devtool
FROM=debian:bookworm
# git: BuildKit's git source (a build context given as a repository URL). containernetworking-plugins
# and iptables: the bridge (and its NAT) each build step's own network namespace hangs off.
PACKAGES=(runc ca-certificates git containernetworking-plugins iptables)
ENTRYPOINT=(/usr/local/bin/buildkitd)
KEY_EXTRA=$(sha256sum <"${BUILDKITD_BIN:?BUILDKITD_BIN: the buildkitd binary (buildkit/build.sh buildkitd-path)}")
recipe_finish() {
  install -m 755 "$BUILDKITD_BIN" "$ROOT/usr/local/bin/buildkitd"
  mkdir -p "$ROOT/var/lib/buildkit" "$ROOT/etc/buildkit"
}
