#!/usr/bin/env bash
# Entrypoint compatible with the official postgres image's main behaviour:
#   POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust),
#   POSTGRES_USER (default postgres), POSTGRES_DB (default $POSTGRES_USER),
#   POSTGRES_INITDB_ARGS, POSTGRES_HOST_AUTH_METHOD, PGDATA, and scripts in
#   /docker-entrypoint-initdb.d (*.sh, *.sql, *.sql.gz) on first start.
set -Eeo pipefail

if [ "${1:0:1}" = '-' ]; then
  set -- postgres "$@"
fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  # Volumes arrive owned by root: hand PGDATA to postgres, then drop root.
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA" || true
  find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
  mkdir -p /var/run/postgresql
  chown postgres:postgres /var/run/postgresql
  chmod 3777 /var/run/postgresql
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
  auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
    echo 'error: database is uninitialized and superuser password is not specified.' >&2
    echo '  Set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust).' >&2
    exit 1
  fi
  user=${POSTGRES_USER:-postgres}
  db=${POSTGRES_DB:-$user}
  pwopt=()
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    pwopt=(--pwfile="$pwfile")
  fi
  # shellcheck disable=SC2086
  initdb --username="$user" "${pwopt[@]}" -D "$PGDATA" ${POSTGRES_INITDB_ARGS:-}
  rm -f "${pwfile:-}"
  printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"

  # Temporary server on the unix socket only, for database creation and
  # init scripts.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
  export PGUSER=$user PGPASSWORD=${POSTGRES_PASSWORD:-} PGHOST=/var/run/postgresql
  if [ "$db" != postgres ]; then
    psql -v ON_ERROR_STOP=1 --dbname postgres --set db="$db" <<<'CREATE DATABASE :"db";'
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh) echo "running $f"; . "$f" ;;
      *.sql) echo "running $f"; psql -v ON_ERROR_STOP=1 --dbname "$db" -f "$f" ;;
      *.sql.gz) echo "running $f"; gunzip -c "$f" | psql -v ON_ERROR_STOP=1 --dbname "$db" ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  unset PGPASSWORD
  echo 'PostgreSQL init process complete; ready for start up.'
fi

exec "$@"
