# Redis 7 from Debian 12, started like the official image: in the
# foreground, reachable from other pods (protected mode off), data in /data.
IMAGE=redis:7
FROM=debian:bookworm
PACKAGES=(redis-server)
ENTRYPOINT=(/usr/local/bin/docker-entrypoint.sh)
CMD=(redis-server)
WORKDIR=/data
recipe_finish() {
  install -m 755 "$RECIPE_DIR/docker-entrypoint.sh" "$ROOT/usr/local/bin/docker-entrypoint.sh"
  mkdir -p "$ROOT/data"
  chroot "$ROOT" chown redis:redis /data
}
