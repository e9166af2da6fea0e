#!/usr/bin/env bash
# A local BuildKit daemon for `devtool build` (BUILDKIT_HOST=127.0.0.1:1234)
# and the end-to-end tests (see buildkit/README.md).
#
#   buildkitd.sh up             start (or reuse) buildkitd; last stdout line is
#                               its address, tcp://127.0.0.1:1234
#   buildkitd.sh down [--purge] stop it; --purge also deletes its state (the
#                               build cache)
#   buildkitd.sh status         pid, address, version, worker
#
# buildkitd (the pinned release, built by buildkit/build.sh) runs as root
# with its OCI worker (Debian's runc), build steps on the host's network, and
# localhost:5000 (the local cluster's registry) as a plain-HTTP registry.
#
# Environment: DEVTOOL_BUILDKIT_STATE (default /var/lib/devtool-buildkit),
# DEVTOOL_BUILDKIT_PORT (default 1234), DEVTOOL_BUILD_CACHE (binaries).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${DEVTOOL_BUILDKIT_STATE:-/var/lib/devtool-buildkit}
PORT=${DEVTOOL_BUILDKIT_PORT:-1234}
ADDRESS=tcp://127.0.0.1:$PORT
SOCKET=$STATE/run/buildkitd.sock
CONFIG=$STATE/buildkitd.toml
LOG=$STATE/logs/buildkitd.log
PIDFILE=$STATE/run/buildkitd.pid
# The local cluster's registry (cluster/README.md), plain HTTP.
REGISTRY=localhost:5000

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH:/usr/local/go/bin

log() { printf '[buildkitd %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
fail() {
  log "ERROR: $*"
  if [[ -f $LOG ]]; then
    echo "----- last lines of $LOG -----" >&2
    tail -n 40 "$LOG" >&2
    echo "-----" >&2
  fi
  exit 1
}

usage() { echo "usage: $0 up | down [--purge] | status" >&2; exit 2; }

# Alive, and really ours: after a reboot a stale pid file may name an
# unrelated process.
daemon_pid() {
  local pid
  [[ -f $PIDFILE ]] || return 1
  pid=$(cat "$PIDFILE")
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && grep -qa -- "$CONFIG" "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

binaries() {
  BUILDKITD=$(bash "$HERE/build.sh" buildkitd-path) || die "building buildkitd failed (see above)"
  CLIENT=$(bash "$HERE/build.sh" client-path) || die "building devtool-buildkit failed (see above)"
}

ping() { "$CLIENT" ping "$ADDRESS"; }

# Debian's runc is the OCI worker's runtime (the cluster installs it too).
ensure_runc() {
  command -v runc >/dev/null && return 0
  command -v apt-get >/dev/null || die "runc not found; install Debian's runc package"
  log "installing Debian's runc"
  mkdir -p "$STATE/logs"
  { DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends runc; } \
    </dev/null >>"$STATE/logs/apt.log" 2>&1 || { LOG=$STATE/logs/apt.log; fail "apt-get install runc failed"; }
}

# The daemon's configuration. Build steps use the host's network namespace
# (networkMode "host", like `docker build --network=host`): a CNI bridge
# would need NAT rules next to the local cluster's bridge devtool0, whose
# teardown removes every CNI-* iptables chain.
write_config() {
  cat <<EOF
# Written by buildkit/buildkitd.sh; rewritten (and the daemon restarted) when it changes.
root = "$STATE/root"

[log]
  format = "text"
  level = "info"

[grpc]
  address = ["$ADDRESS", "unix://$SOCKET"]

[worker.oci]
  enabled = true
  snapshotter = "overlayfs"
  networkMode = "host"
  # 2-core machines: one build's steps must not starve everything else.
  max-parallelism = 2
  gc = true
  reservedSpace = "1GB"
  maxUsedSpace = "10GB"

[cdi]
  disabled = true

[worker.containerd]
  enabled = false

[registry."$REGISTRY"]
  http = true
  insecure = true
EOF
}

cmd_up() {
  binaries
  ensure_runc
  mkdir -p "$STATE/run" "$STATE/logs" "$STATE/root"
  local config pid binary_now
  config=$(write_config)
  if pid=$(daemon_pid); then
    binary_now=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
    if [[ $binary_now == "$BUILDKITD" && $(cat "$CONFIG" 2>/dev/null) == "$config" ]] && ping >/dev/null 2>&1; then
      log "running (pid $pid) at $ADDRESS"
      echo "$ADDRESS"
      return 0
    fi
    log "restarting (pid $pid): new binary or configuration, or not answering"
    stop_daemon
  fi
  printf '%s\n' "$config" >"$CONFIG"
  # A daemon that died hard leaves its socket and maybe mounts behind.
  rm -f "$SOCKET"
  unmount_under "$STATE/root"
  log "starting $BUILDKITD at $ADDRESS (log $LOG)"
  echo "=== $(date -Is) starting" >>"$LOG"
  # Own session (its process group can be stopped), detached from our stdio
  # (a daemon holding the caller's stdout would keep `npm run ...` from
  # returning) and from the lock (fd 9).
  setsid "$BUILDKITD" --config "$CONFIG" </dev/null >>"$LOG" 2>&1 9>&- &
  echo $! >"$PIDFILE"
  disown $! 2>/dev/null || true
  local deadline=$((SECONDS + 60))
  until ping >/dev/null 2>&1; do
    daemon_pid >/dev/null || fail "buildkitd exited"
    ((SECONDS < deadline)) || fail "buildkitd not answering at $ADDRESS after 60s"
    sleep 0.5
  done
  # Another daemon on the port would answer too; ours must still be alive.
  daemon_pid >/dev/null || fail "buildkitd exited"
  log "$(ping)"
  echo "$ADDRESS"
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

# SIGTERM the daemon's process group (buildkitd and the runc of running
# steps), SIGKILL what is left after 10 s.
stop_daemon() {
  local pid i
  pid=$(daemon_pid) || { rm -f "$PIDFILE"; return 0; }
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$PIDFILE" "$SOCKET"
  log "stopped (pid $pid)"
}

cmd_down() {
  stop_daemon
  unmount_under "$STATE"
  if [[ ${1:-} == --purge ]]; then
    rm -rf --one-file-system "$STATE"
    log "deleted $STATE"
  fi
}

cmd_status() {
  local pid
  if ! pid=$(daemon_pid); then
    echo "buildkitd: not running (state $STATE)"
    return 1
  fi
  CLIENT=$(bash "$HERE/build.sh" client-path) || return 1
  echo "buildkitd: pid $pid, $ADDRESS and unix://$SOCKET, log $LOG"
  ping || return 1
}

[[ $# -ge 1 ]] || usage
case $1 in up | status) [[ $# -eq 1 ]] || usage ;; down) [[ $# -le 2 ]] || usage ;; *) usage ;; esac
[[ $EUID -eq 0 ]] || die "must run as root (buildkitd's OCI worker mounts and runs containers)"

# One command at a time: test processes may call `up` concurrently. The lock
# is a sibling of the state dir (which `down --purge` deletes).
mkdir -p "$(dirname "$STATE")"
exec 9>"$STATE.lock"
flock 9 || die "cannot lock $STATE.lock"

case $1 in
  up) cmd_up ;;
  down) cmd_down "${2:-}" ;;
  status) cmd_status ;;
esac
