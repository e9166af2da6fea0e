# Node.js 20 and git from Debian 13's packages: the base of the pipeline runner image
# (scripts/runner-image.sh: plus devtool, kubectl and helm) and of the test git server
# (scripts/git-server.sh). Built on demand (`cluster.sh image node-git`), not by `up`.
IMAGE=node-git:20
FROM=debian:trixie
PACKAGES=(nodejs git ca-certificates)
CMD=(node)
KEY_EXTRA=$(host_cas_hash)
recipe_finish() {
  add_host_cas "$ROOT" || return 1
  chroot "$ROOT" /usr/bin/node -e 'process.exit(process.versions.node.startsWith("20.") ? 0 : 1)' &&
    chroot "$ROOT" /usr/bin/git --version >/dev/null
}
