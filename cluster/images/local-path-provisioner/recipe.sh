# The default StorageClass's provisioner: Rancher's local-path-provisioner
# (built from ../../local-path, a wrapper module pinning its Go module) alone
# in a scratch image. It only talks to the API server; the directories are
# made by its helper pods, which run the cluster's debian:bookworm
# (lib/addons.sh).
IMAGE=local-path-provisioner:${LOCAL_PATH_VERSION#v}
FROM=scratch
ENTRYPOINT=(/local-path-provisioner)
KEY_EXTRA=$(sha256sum <"$LOCAL_PATH_BIN")
recipe_finish() { install -m 755 "$LOCAL_PATH_BIN" "$ROOT/local-path-provisioner"; }
