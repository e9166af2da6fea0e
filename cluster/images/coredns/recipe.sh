# Cluster DNS: the coredns binary (built from ../../coredns, a wrapper module
# pinning github.com/coredns/coredns) alone in a scratch image. The Corefile
# comes from a ConfigMap (lib/addons.sh).
IMAGE=coredns:${COREDNS_VERSION#v}
FROM=scratch
ENTRYPOINT=(/coredns)
KEY_EXTRA=$(sha256sum <"$COREDNS_BIN")
recipe_finish() { install -m 755 "$COREDNS_BIN" "$ROOT/coredns"; }
