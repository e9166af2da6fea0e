# PostgreSQL 15 from Debian 12, behaving like the official image: the
# entrypoint initialises $PGDATA on first start from POSTGRES_PASSWORD /
# POSTGRES_USER / POSTGRES_DB (and /docker-entrypoint-initdb.d), then runs
# the server in the foreground as the postgres user, listening on all
# addresses.
IMAGE=postgres:15
FROM=debian:bookworm
PACKAGES=(postgresql-15)
ENTRYPOINT=(/usr/local/bin/docker-entrypoint.sh)
CMD=(postgres)
ENV=(PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
  PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
recipe_prepare() {
  # No Debian-style "main" cluster: the entrypoint runs initdb itself.
  mkdir -p "$ROOT/etc/postgresql-common"
  echo 'create_main_cluster = false' >"$ROOT/etc/postgresql-common/createcluster.conf"
}
recipe_finish() {
  install -m 755 "$RECIPE_DIR/docker-entrypoint.sh" "$ROOT/usr/local/bin/docker-entrypoint.sh"
  sed -ri "s!^#?(listen_addresses)\s*=\s*\S+.*!\1 = '*'!" \
    "$ROOT/usr/share/postgresql/15/postgresql.conf.sample"
  grep -q "^listen_addresses = '\*'" "$ROOT/usr/share/postgresql/15/postgresql.conf.sample"
  # Inside the chroot: /var/run is an absolute symlink to /run, which from
  # the host would resolve to the host's own /run.
  chroot "$ROOT" /bin/sh -ec '
    mkdir -p /docker-entrypoint-initdb.d /var/lib/postgresql/data /run/postgresql
    chown -R postgres:postgres /var/lib/postgresql /run/postgresql
    chmod 3777 /run/postgresql
    chmod 700 /var/lib/postgresql/data'
}
