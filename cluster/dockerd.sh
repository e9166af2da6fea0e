#!/usr/bin/env bash
# A Docker daemon (Debian's docker.io) for devtool's build tests and demo, started so that it
# cannot disturb the local cluster on the same machine (see cluster/README.md, "Docker daemon").
#
#   dockerd.sh up      install docker.io if needed, start (or reuse) the daemon; the last stdout
#                      line is its address for DOCKER_HOST (unix:///var/run/docker.sock)
#   dockerd.sh down    stop the daemon and its containerd (images and build cache are kept)
#   dockerd.sh status  each process (pid, health), the daemon's version
#
# What keeps it harmless next to the cluster (containerd at its own socket, CNI bridge devtool0,
# kube-proxy's iptables rules):
#   --iptables=false --ip-masq=false --ip-forward=false: dockerd never touches iptables (it would
#       otherwise set the FORWARD policy to DROP, cutting pod traffic) nor sysctls;
#   --bridge=none: no docker0 bridge, no address range to collide with pods or Services;
#   its own containerd (own socket, root, state; CRI plugin off), never the cluster's;
#   its own data root, exec root, pid file and config file (/etc/docker is not read).
# Build steps still reach the network: devtool builds with the Engine API's networkmode=host
# (src/image/docker-engine.ts). Base images come from localhost:5000, which dockerd pulls over
# plain HTTP (loopback registries are insecure registries by default).
#
# Environment: DEVTOOL_DOCKER_STATE (default /var/lib/devtool-docker: data root, logs, config;
# kept by `down`), DEVTOOL_DOCKER_SOCK (default /var/run/docker.sock).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The cluster's helpers (start_daemon, stop_daemons, wait_for, is_running, fail_component) and
# its package installer, pointed at this daemon's own directories below.
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
# shellcheck source=lib/packages.sh
source "$here/lib/packages.sh"

DSTATE=${DEVTOOL_DOCKER_STATE:-/var/lib/devtool-docker}
DOCKER_SOCK=${DEVTOOL_DOCKER_SOCK:-/var/run/docker.sock}
# Runtime state (sockets, pid files of containerd shims) on tmpfs with short paths: unix socket
# paths are limited to 108 bytes.
DEXEC=/run/devtool-docker
LOGS=$DSTATE/logs
RUN=$DSTATE/run
CTR_SOCK=$DEXEC/containerd/containerd.sock
DEB_PACKAGES=([docker.io]=/usr/sbin/dockerd [containerd]=/usr/bin/containerd [runc]=/usr/sbin/runc [curl]=/usr/bin/curl)

log() { printf '[dockerd %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Process names for pid files: is_running checks that the command line contains the name.
CTR=containerd
DOCKERD=dockerd

start_containerd() {
  is_running $CTR && return 0
  mkdir -p "$DSTATE/containerd/root" "$DEXEC/containerd/state"
  cat >"$DSTATE/containerd/config.toml" <<EOF
version = 2
root = "$DSTATE/containerd/root"
state = "$DEXEC/containerd/state"
# Docker needs no Kubernetes runtime interface; the cluster's containerd has its own.
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = "$CTR_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$DSTATE/containerd/opt"
EOF
  start_daemon $CTR /usr/bin/containerd --config "$DSTATE/containerd/config.toml"
}
healthy_containerd() { timeout 5 /usr/bin/ctr --address "$CTR_SOCK" version; }

start_dockerd() {
  is_running $DOCKERD && return 0
  mkdir -p "$DSTATE/data" "$DEXEC/exec"
  # The build cache is bounded; the classic builder is not used by devtool.
  cat >"$DSTATE/daemon.json" <<'EOF'
{
  "builder": { "gc": { "enabled": true, "defaultKeepStorage": "10GB" } }
}
EOF
  # --oom-score-adjust=0: root on this VM may lack CAP_SYS_RESOURCE, which dockerd's default -500 needs.
  start_daemon $DOCKERD /usr/sbin/dockerd \
    --config-file "$DSTATE/daemon.json" \
    --host "unix://$DOCKER_SOCK" \
    --data-root "$DSTATE/data" --exec-root "$DEXEC/exec" --pidfile "$DEXEC/dockerd.pid" \
    --containerd "$CTR_SOCK" \
    --iptables=false --ip-masq=false --ip-forward=false --bridge=none \
    --storage-driver overlay2 --oom-score-adjust=0
}
healthy_dockerd() { [[ $(curl -sS --max-time 5 --unix-socket "$DOCKER_SOCK" http://docker/_ping) == OK ]]; }

cmd_up() {
  # Only the DOCKER_HOST value goes to the real stdout, as the last line.
  exec 3>&1 1>&2
  local start=$SECONDS
  ensure_packages
  mkdir -p "$DSTATE" "$LOGS" "$RUN" "$DEXEC"
  if ! is_running $DOCKERD && healthy_dockerd 2>/dev/null; then
    die "a Docker daemon not started by this script answers on $DOCKER_SOCK; stop it, or set DEVTOOL_DOCKER_SOCK to another socket path"
  fi
  modprobe overlay 2>/dev/null || true
  grep -qw overlay /proc/filesystems || die "the overlay filesystem is unavailable (dockerd's overlay2 storage needs it)"
  start_containerd
  wait_for $CTR 30 healthy_containerd
  start_dockerd
  wait_for $DOCKERD 60 healthy_dockerd
  log "Docker daemon ready in $((SECONDS - start))s; DOCKER_HOST:"
  echo "unix://$DOCKER_SOCK" >&3
}

cmd_down() {
  log "stopping the Docker daemon"
  # dockerd first: it stops its containers through containerd.
  stop_daemons $DOCKERD
  stop_daemons $CTR
  # Shims of build containers that outlived their containerd: their command line names our socket.
  local pids
  pids=$(pgrep -f -- "-address $CTR_SOCK" || true)
  # shellcheck disable=SC2086
  [[ -z $pids ]] || kill -KILL $pids 2>/dev/null || true
  unmount_under "$DEXEC"
  unmount_under "$DSTATE/data"
  rm -rf --one-file-system "$DEXEC"
  [[ -S $DOCKER_SOCK ]] && ! healthy_dockerd 2>/dev/null && rm -f "$DOCKER_SOCK"
  log "stopped; images and build cache kept in $DSTATE/data"
}

cmd_status() {
  local c rc=0
  for c in "$CTR" "$DOCKERD"; do
    if ! is_running "$c"; then
      printf '%-12s stopped\n' "$c"
      rc=1
    elif "healthy_$c" >/dev/null 2>&1; then
      printf '%-12s running (pid %s), healthy\n' "$c" "$(pid_of "$c")"
    else
      printf '%-12s running (pid %s), NOT healthy (log: %s)\n' "$c" "$(pid_of "$c")" "$LOGS/$c.log"
      rc=1
    fi
  done
  if ((rc == 0)); then
    printf 'DOCKER_HOST  unix://%s\n' "$DOCKER_SOCK"
    curl -sS --max-time 5 --unix-socket "$DOCKER_SOCK" http://docker/version | sed 's/^/version      /'
    echo
  fi
  return $rc
}

usage() { echo "usage: $0 up|down|status" >&2; exit 2; }
[[ $# -eq 1 ]] || usage
[[ $EUID -eq 0 ]] || die "must run as root (it installs packages and starts daemons)"
mkdir -p "$(dirname "$DSTATE")"
exec 9>"$DSTATE.lock"
flock 9 || die "cannot lock $DSTATE.lock"
case $1 in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) usage ;;
esac
