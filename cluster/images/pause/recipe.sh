# The pod sandbox image: the pause binary (main.go here, built by
# lib/build.sh) alone in a scratch image.
IMAGE=pause:devtool
FROM=scratch
ENTRYPOINT=(/pause)
KEY_EXTRA=$(sha256sum <"$PAUSE_BIN")
recipe_finish() { install -m 755 "$PAUSE_BIN" "$ROOT/pause"; }
