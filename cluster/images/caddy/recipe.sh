# The front door's proxy: Caddy 2.6 from Debian 12 (docs/decisions/0071-caddy-from-debian.md).
# It starts with boot.json (only the admin API, on a unix socket in /run/caddy that the ingress
# controller beside it shares); the controller then loads the full configuration through it.
# Certificates and Caddy's PKI state go to /data (XDG_DATA_HOME), an emptyDir in the chart.
IMAGE=caddy:2
FROM=debian:bookworm
PACKAGES=(caddy ca-certificates)
ENTRYPOINT=(caddy)
CMD=(run --config /etc/caddy/boot.json)
ENV=(XDG_DATA_HOME=/data XDG_CONFIG_HOME=/config)
recipe_finish() {
  install -m 644 "$RECIPE_DIR/boot.json" "$ROOT/etc/caddy/boot.json"
  mkdir -p "$ROOT/data" "$ROOT/config" "$ROOT/run/caddy"
  # Fail the build if Debian's caddy is not the major version of the tag.
  chroot "$ROOT" /usr/bin/caddy version | grep -q '^v\{0,1\}2\.'
}
