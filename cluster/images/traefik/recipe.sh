# Traefik, an ingress controller other than devtool's front door, for the tests of the chart on a
# cluster that has its own (cluster/traefik.sh). The binary is static (CGO off): it alone, in a
# scratch image. Not in IMAGE_RECIPES (the cluster does not need it): cluster/traefik.sh builds it
# with `cluster.sh image traefik`, passing the binary in TRAEFIK_BIN and its release in
# TRAEFIK_VERSION; the cache key covers the binary.
IMAGE=traefik:${TRAEFIK_VERSION:?TRAEFIK_VERSION: the Traefik release (cluster/traefik.sh version)}
FROM=scratch
ENTRYPOINT=(/usr/local/bin/traefik)
KEY_EXTRA=$(sha256sum <"${TRAEFIK_BIN:?TRAEFIK_BIN: the traefik binary (cluster/traefik.sh path)}")
recipe_finish() {
  install -D -m 755 "$TRAEFIK_BIN" "$ROOT/usr/local/bin/traefik"
  # Go's os.TempDir; nothing else is written.
  mkdir -p "$ROOT/tmp" && chmod 1777 "$ROOT/tmp"
}
