# nginx 1.22 from Debian 12, laid out like the official image: serves
# /usr/share/nginx/html via /etc/nginx/conf.d/default.conf, logs to the
# container's stdout/stderr, runs in the foreground.
IMAGE=nginx:1
FROM=debian:bookworm
PACKAGES=(nginx)
CMD=(nginx -g "daemon off;")
recipe_finish() {
  rm -f "$ROOT/etc/nginx/sites-enabled/default"
  install -m 644 "$RECIPE_DIR/default.conf" "$ROOT/etc/nginx/conf.d/default.conf"
  mkdir -p "$ROOT/usr/share/nginx/html"
  install -m 644 "$RECIPE_DIR/index.html" "$ROOT/usr/share/nginx/html/index.html"
  ln -sf /dev/stdout "$ROOT/var/log/nginx/access.log"
  ln -sf /dev/stderr "$ROOT/var/log/nginx/error.log"
}
