# Node.js 20 and npm from Debian 13's packages (ca-certificates so that npm
# can reach the registry over https).
IMAGE=node:20
FROM=debian:trixie
PACKAGES=(nodejs npm ca-certificates)
CMD=(node)
KEY_EXTRA=$(host_cas_hash)
recipe_finish() {
  add_host_cas "$ROOT" || return 1
  # Fail the build if Debian's nodejs is not the major version of the tag.
  chroot "$ROOT" /usr/bin/node -e 'process.exit(process.versions.node.startsWith("20.") ? 0 : 1)'
}
