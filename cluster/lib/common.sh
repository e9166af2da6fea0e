# shellcheck shell=bash disable=SC2034 # the settings here are read by the files that source this one
# Shared settings and helpers for cluster/*.sh. Sourced, never executed.
#
# Everything the cluster writes lives in two places:
#   CACHE  – binaries and images, keyed by version / recipe hash; survives
#            `cluster.sh down` so that the next `up` is fast.
#   STATE  – one running cluster (etcd data, certs, containerd and kubelet
#            dirs, registry storage, logs, pid files); `down` deletes it.

CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${DEVTOOL_CLUSTER_CACHE:-/var/cache/devtool-cluster}
STATE=${DEVTOOL_CLUSTER_STATE:-/var/lib/devtool-cluster}

# Pinned versions. Changing one invalidates the matching cache entry.
K8S_VERSION=v1.33.13            # k8s.io/kubernetes, see k8s/go.mod
COREDNS_VERSION=v1.12.4         # github.com/coredns/coredns, see coredns/go.mod
CRANE_VERSION=v0.20.6           # github.com/google/go-containerregistry, see crane/go.mod
LOCAL_PATH_VERSION=v0.0.30      # github.com/rancher/local-path-provisioner, see local-path/go.mod
# Helm (for the tests, not the cluster) is pinned in cluster/helm.sh (HELM_VERSION).

CLUSTER_NAME=devtool-local
REGISTRY=localhost:5000          # name used in image references
REGISTRY_ADDR=127.0.0.1:5000     # where docker-registry listens
API_PORT=6443
ETCD_CLIENT=127.0.0.1:2379
ETCD_PEER=127.0.0.1:2380
POD_CIDR=10.244.0.0/16
SERVICE_CIDR=10.96.0.0/12
KUBERNETES_SVC_IP=10.96.0.1      # first address of SERVICE_CIDR
DNS_SVC_IP=10.96.0.10
CLUSTER_DOMAIN=cluster.local
# Public endpoints of the local cluster live under this domain: CoreDNS (lib/addons.sh) and the
# host's resolver (cluster/dns.sh) answer every name under it with the node's address, where the
# front door (chart/, scripts/service-up.sh) listens on 80/443. Subdomains (e2e.devtool.test) too.
ENDPOINT_DOMAIN=devtool.test

LOGS=$STATE/logs
RUN=$STATE/run                   # pid files
PKI=$STATE/pki
KUBECONFIG_OUT=$STATE/kubeconfig # admin kubeconfig printed by `up`
CONTAINERD_SOCK=$STATE/containerd/containerd.sock
CNI_CONF_DIR=$STATE/cni/net.d
CNI_BIN_DIR=/usr/lib/cni
# The controller-manager's host-path provisioner always creates volumes under
# /tmp/hostpath_pv/<uuid>; we point that path at the state dir with a symlink.
HOSTPATH_PV_LINK=/tmp/hostpath_pv
# The default StorageClass's volumes (lib/addons.sh): one folder per claim, on
# the node its first pod runs on.
LOCAL_PATH_DIR=$STATE/local-path-pv

# Daemons and tools live in the system dirs; Go's usual place comes last.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH:/usr/local/go/bin

# --- output -----------------------------------------------------------------
# All progress goes to stderr: stdout is reserved for the kubeconfig path.
log() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Print the tail of a component's log to stderr and fail.
fail_component() {
  local name=$1 msg=$2
  log "ERROR: $name: $msg"
  if [[ -f $LOGS/$name.log ]]; then
    echo "----- last lines of $LOGS/$name.log -----" >&2
    tail -n 40 "$LOGS/$name.log" >&2
    echo "-----" >&2
  fi
  exit 1
}

# sha256 of files and strings, short form, for cache keys.
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

node_name() { hostname | tr '[:upper:]' '[:lower:]'; }

# IPv4 address of the interface holding the default route; pods reach the
# apiserver through it (the `kubernetes` Service cannot point at loopback).
node_ip() {
  local ip
  ip=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | head -n1)
  [[ -n $ip ]] || ip=$(hostname -I 2>/dev/null | awk '{print $1}')
  [[ -n $ip ]] || die "cannot find a non-loopback IPv4 address for the node"
  echo "$ip"
}

# --- processes ----------------------------------------------------------------
pid_of() { [[ -f $RUN/$1.pid ]] && cat "$RUN/$1.pid"; }

# Alive, and really ours: a stale pid file (the daemon died, or the machine
# rebooted) may name a pid now reused, even as a thread of another process
# (kill -0 and /proc/PID answer for a thread id too). Seen: dockerd.sh took a
# thread of the cluster's containerd for its own containerd, never started
# it, and failed. So the pid must lead its process, and its command line must
# be the one start_daemon recorded (pid files written before that record keep
# the older check: the name in the command line).
is_running() {
  local pid tgid
  pid=$(pid_of "$1") || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
  tgid=$(sed -n 's/^Tgid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
  [[ $tgid == "$pid" ]] || return 1
  if [[ -f $RUN/$1.cmdline ]]; then
    # Through a pipe: /proc files say size 0, and cmp -s takes two regular
    # files of different sizes for different without reading them.
    # shellcheck disable=SC2002
    cat "/proc/$pid/cmdline" 2>/dev/null | cmp -s - "$RUN/$1.cmdline"
  else
    grep -qa -- "$1" "/proc/$pid/cmdline" 2>/dev/null
  fi
}

# start_daemon NAME CMD...: run CMD in its own session (so its whole process
# group can be stopped later), detached from the caller's stdio: a daemon that
# kept our stdout open would make `npm run cluster:up` never return.
start_daemon() { launch_daemon "" "$@"; }

# start_daemon_in NETNS NAME CMD...: the same, in the network namespace whose
# file is NETNS (an extra node's, lib/nodes.sh); mounts stay the host's, so
# that node's kubelet and containerd see each other's mounts.
start_daemon_in() { launch_daemon "$@"; }

launch_daemon() {
  local netns=$1 name=$2 enter=()
  shift 2
  if is_running "$name"; then return 0; fi
  [[ -n $netns ]] && enter=(nsenter "--net=$netns")
  mkdir -p "$LOGS" "$RUN"
  echo "=== $(date -Is) starting: $*" >>"$LOGS/$name.log"
  # fd 3 (up's real stdout) and 9 (the command lock) must not leak either.
  setsid "${enter[@]}" "$@" </dev/null >>"$LOGS/$name.log" 2>&1 3>&- 9>&- &
  echo $! >"$RUN/$name.pid"
  # setsid (and nsenter) exec the command itself (a background job leads no
  # process group), so this is exactly the pid's /proc/PID/cmdline.
  printf '%s\0' "$@" >"$RUN/$name.cmdline"
  disown $! 2>/dev/null || true
  # Until the child has exec'd (bash, then setsid, then the daemon) its command line is not the
  # daemon's, and is_running would call a daemon that is starting gone: wait for the exec, or the exit.
  local pid i
  pid=$(pid_of "$name")
  for ((i = 0; i < 200; i++)); do
    is_running "$name" || ! kill -0 "$pid" 2>/dev/null && return 0
    sleep 0.05
  done
}

# stop_daemons NAME...: SIGTERM their process groups together, SIGKILL
# whatever is left after a grace time.
stop_daemons() {
  local name pid pids=() i alive
  for name in "$@"; do
    pid=$(pid_of "$name") || continue
    # Never a process that only reuses a stale pid (is_running).
    if is_running "$name"; then
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for ((i = 0; i < 50; i++)); do
    alive=
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [[ -z $alive ]] && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
  for name in "$@"; do rm -f "$RUN/$name.pid" "$RUN/$name.cmdline"; done
}

# wait_for NAME TIMEOUT_SECONDS CMD...: poll CMD until it succeeds; fail with
# the component's log if the time runs out or the process died.
wait_for() {
  local name=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [[ -f $RUN/$name.pid ]] && ! is_running "$name"; then
      fail_component "$name" "process exited"
    fi
    ((SECONDS < deadline)) || fail_component "$name" "not healthy after ${timeout}s"
    sleep 0.5
  done
}

# unmount_under DIR: unmount everything mounted at or below DIR, deepest first.
unmount_under() {
  local dir m
  dir=$(realpath -m "$1")
  awk -v d="$dir" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "warning: cannot unmount $m"
    done
}

# safe_rm DIR: delete a tree that may hold mounts (chroots, pod volumes)
# without ever descending into a mounted filesystem.
safe_rm() {
  [[ -e $1 ]] || return 0
  unmount_under "$1"
  rm -rf --one-file-system "$1"
}

# kill_tree PID: a process and all its descendants (children first found,
# then killed top-down so none is re-parented out of reach).
kill_tree() {
  local pid=$1 child
  kill -STOP "$pid" 2>/dev/null || return 0
  for child in $(pgrep -P "$pid" || true); do kill_tree "$child"; done
  kill -KILL "$pid" 2>/dev/null || true
}

# --- API access ---------------------------------------------------------------
# curl against the apiserver with the admin client certificate.
api() {
  curl -sS --fail --max-time 10 --cacert "$PKI/ca.crt" \
    --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$@"
}

# kubectl for the few things a shell script does best (applying manifests);
# tests and the product use the API through client libraries.
# kubectl is built with the cluster (same release), not taken from the host.
kc() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_OUT" "$@"; }
