#!/bin/sh
# Like the official redis image: flags or a .conf file as first argument mean
# "run redis-server with these"; the server runs as the redis user and, with
# no config file, accepts connections from other pods.
set -e
case "$1" in
  -* | *.conf) set -- redis-server "$@" ;;
esac
if [ "$1" = redis-server ]; then
  shift
  case " $* " in
    *" --protected-mode "*) ;;
    *) set -- "$@" --protected-mode no ;;
  esac
  set -- redis-server "$@"
  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis '{}' + 2>/dev/null || true
    exec setpriv --reuid=redis --regid=redis --init-groups "$@"
  fi
fi
exec "$@"
