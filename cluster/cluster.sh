#!/usr/bin/env bash
# Local Kubernetes cluster for devtool's tests and demo, built and run by the
# project itself (see cluster/README.md): the host is its first node, extra
# nodes run in network namespaces of their own (lib/nodes.sh).
#
#   cluster.sh up      start (or reuse) the cluster; last stdout line is the
#                      path of an admin kubeconfig (context devtool-local).
#                      DEVTOOL_CLUSTER_NODES=N: exactly N nodes (extra ones
#                      are added, or drained and removed); unset keeps the
#                      nodes there are (1 on a new cluster)
#   cluster.sh down    stop every process (every node), unmount, delete the state
#   cluster.sh status  what runs on each node, node readiness, system pods
#   cluster.sh stop NAME     stop one component (kube-apiserver, kubelet...),
#                               as a crash would, or a whole extra node
#                               (<host>-2...), as a power cut would; `up`
#                               starts it again (fault tests)
#   cluster.sh crane ARGS...    the cached crane (registry client), e.g. to
#                               push an image to localhost:5000 in a test
#   cluster.sh kubectl ARGS...  kubectl of the cluster's release, on its
#                               admin kubeconfig (for people debugging)
#   cluster.sh kubectl-path     the path of that kubectl (static; the pipeline
#                               runner image carries it)
#   cluster.sh image RECIPE     build (or take from the cache) an image that `up`
#                               does not need, e.g. node-git, and push it to the
#                               registry; prints its reference name:tag@digest
#   cluster.sh forget-image REF every node drops its copy of REF, so the next
#                               pod pulls it again (a tag pushed with new content)
#
# Environment: DEVTOOL_CLUSTER_CACHE (default /var/cache/devtool-cluster),
# DEVTOOL_CLUSTER_STATE (default /var/lib/devtool-cluster), DEVTOOL_CLUSTER_NODES.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for f in common packages build pki network components rootfs images addons nodes lifecycle; do
  # shellcheck source=/dev/null
  source "$here/lib/$f.sh"
done

usage() { echo "usage: $0 up|down|status|stop COMPONENT|image RECIPE|crane ARGS...|kubectl ARGS...|kubectl-path|forget-image REF" >&2; exit 2; }

[[ $# -ge 1 ]] || usage
# Tools need no lock: they only talk to the registry / apiserver.
case $1 in
  crane) shift; ensure_go; ensure_crane; exec "$CRANE" "$@" ;;
  kubectl) shift; ensure_go; ensure_k8s_bins; exec "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" "$@" ;;
  kubectl-path) ensure_go; ensure_k8s_bins; echo "$K8S_BIN/kubectl"; exit 0 ;;
  # The node drops its copy of REF (a tag pushed again with new content: IfNotPresent would keep
  # starting the old one); the next pod that names it pulls it from the registry.
  forget-image)
    [[ $# -eq 2 ]] || usage
    for sock in "$CONTAINERD_SOCK" "$STATE"/nodes/*/containerd/containerd.sock; do
      [[ -S $sock ]] && /usr/bin/ctr --address "$sock" -n k8s.io images rm "$2" >/dev/null 2>&1
    done
    exit 0 ;;
esac
[[ $# -eq 1 || ( $# -eq 2 && ( $1 == stop || $1 == image ) ) ]] || usage
[[ $EUID -eq 0 ]] || die "must run as root (it installs packages, mounts, sets up networking)"

# One command at a time: test processes may call `up` concurrently. The lock
# is a sibling of the state dir (which `down` deletes); daemons do not
# inherit it (start_daemon closes fd 9).
mkdir -p "$(dirname "$STATE")"
exec 9>"$STATE.lock"
flock 9 || die "cannot lock $STATE.lock"

case $1 in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  stop) cmd_stop "$2" ;;
  image)
    [[ -f $here/images/$2/recipe.sh ]] || die "no recipe images/$2/recipe.sh"
    # Recipes name these binaries (only `up` builds them); looking up a recipe by image name reads
    # every recipe, and this image's chain uses neither.
    PAUSE_BIN=${PAUSE_BIN:-/dev/null} COREDNS_BIN=${COREDNS_BIN:-/dev/null} LOCAL_PATH_BIN=${LOCAL_PATH_BIN:-/dev/null}
    { ensure_go && ensure_crane && mkdir -p "$LOGS" "$CACHE/images" && ensure_image "$2"; } || die "image $2 failed (logs: $LOGS)"
    ref=$REGISTRY/$(load_recipe "$2"; echo "$IMAGE")
    echo "$ref@$(cat "$(image_cache_dir "$2")/digest")"
    ;;
  *) usage ;;
esac
