# shellcheck shell=bash
# The three commands of cluster.sh: up, down, status.

cmd_up() {
  # Only the kubeconfig path goes to the real stdout, as the last line.
  exec 3>&1 1>&2
  local start=$SECONDS nodes
  nodes=$(wanted_nodes) || exit 1
  ensure_packages
  if [[ -f $PKI/node-ip && $(cat "$PKI/node-ip") != "$(node_ip)" ]]; then
    log "the node's IP changed since the cluster was made; recreating it"
    cmd_down
  fi
  mkdir -p "$STATE" "$LOGS" "$RUN"
  ensure_pki
  ensure_go
  ensure_crane
  ensure_pause_bin
  setup_host_network
  setup_hostpath_dir

  start_registry
  wait_registry
  # Images (built on a cold cache, else only pushed into the registry) go in
  # the background while Kubernetes is built/started; pods wait for them.
  { ensure_coredns_bin && ensure_local_path_bin && ensure_images; } &
  images_pid=$!
  # If up fails meanwhile, stop the image job too: it holds the command lock.
  trap '[[ -n ${images_pid:-} ]] && kill_tree "$images_pid"' EXIT

  ensure_k8s_bins
  start_etcd
  start_containerd
  wait_etcd
  start_apiserver
  wait_apiserver
  start_controller_manager
  start_scheduler
  wait_containerd
  start_kubelet
  start_kube_proxy
  wait_controller_manager
  wait_scheduler
  wait_kubelet
  wait_kube_proxy

  wait "$images_pid" || die "building or publishing the images failed (see above)"
  images_pid=
  apply_addons
  wait_cluster_ready
  ensure_nodes "$nodes"
  log "cluster ready in $((SECONDS - start))s: node $(node_name)$(extra_nodes_names | sed 's/^/, node /' | tr -d '\n')," \
    "registry $REGISTRY, kubeconfig (context $CLUSTER_NAME):"
  echo "$KUBECONFIG_OUT" >&3
}

# One component stopped (SIGTERM, then SIGKILL), as a crash or an upgrade
# would; `up` starts it again, as it restarts whatever is not running.
# An extra node's name stops that whole node (lib/nodes.sh), as a power cut would.
cmd_stop() {
  local k
  if k=$(extra_node_number "$1"); then
    log "stopping node $1"
    stop_node "$k"
    return 0
  fi
  # shellcheck disable=SC2012 # the pid files are named after components: plain names
  [[ -f $RUN/$1.pid ]] || die "no running component $1 (running: $(ls "$RUN" 2>/dev/null | sed -n 's/\.pid$//p' | tr '\n' ' ')$(extra_nodes_names | xargs))"
  log "stopping $1"
  stop_daemons "$1"
}

cmd_down() {
  [[ -d $STATE ]] || { log "no cluster state in $STATE; nothing to do"; return 0; }
  log "stopping the cluster"
  local k
  for k in $(extra_nodes | sort -rn); do remove_node "$k"; done
  teardown_nodes_network
  stop_components
  kill_leftovers
  unmount_state
  remove_cgroups
  teardown_host_network
  # containerd's shims and runc keep their sockets/state here; remove the
  # directories only if empty (another containerd may use them).
  rmdir /run/containerd/s /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd 2>/dev/null
  # Verify before deleting the state: nothing of ours may survive.
  local left
  left=$(our_pids)
  [[ -z $left ]] || die "processes still running after down: $left"
  grep -q " ${STATE}[/ ]" /proc/mounts && die "mounts left under $STATE: $(grep " ${STATE}[/ ]" /proc/mounts)"
  rm -rf --one-file-system "$STATE"
  log "cluster stopped and $STATE removed"
}

# Processes of this cluster still alive: daemons from pid files, containerd
# shims (their command line names our containerd socket) and pod processes
# (in the kubepods cgroups kubelet made).
our_pids() {
  {
    local c
    for c in "${COMPONENTS[@]}"; do is_running "$c" && pid_of "$c"; done
    pgrep -f -- "-address $CONTAINERD_SOCK" || true
    find /sys/fs/cgroup/*/kubepods -name cgroup.procs -exec cat {} + 2>/dev/null || true
  } | sort -u | xargs
}

kill_leftovers() {
  local pids i
  for ((i = 0; i < 3; i++)); do
    pids=$(our_pids)
    [[ -z $pids ]] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.5
  done
}

# Unmount everything below $STATE (container rootfs, pod volumes, netns,
# chroot mounts of an interrupted image build).
unmount_state() { unmount_under "$STATE"; }

# kubelet's cgroups (cgroupfs driver): /sys/fs/cgroup/<controller>/kubepods.
remove_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/kubepods; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}

cmd_status() {
  local c rc=0
  for c in "${COMPONENTS[@]}"; do
    if ! is_running "$c"; then
      printf '%-24s stopped\n' "$c"
      rc=1
    elif "healthy_$c" >/dev/null 2>&1; then
      printf '%-24s running (pid %s), healthy\n' "$c" "$(pid_of "$c")"
    else
      printf '%-24s running (pid %s), NOT healthy (log: %s)\n' "$c" "$(pid_of "$c")" "$LOGS/$c.log"
      rc=1
    fi
  done
  nodes_status || rc=1
  if is_running kube-apiserver && [[ -f $KUBECONFIG_OUT ]]; then
    k8s_bin_dir
    echo "kubeconfig: $KUBECONFIG_OUT (context $CLUSTER_NAME)"
    echo "registry: $REGISTRY"
    kc get nodes -o wide 2>&1 || rc=1
    kc get pods -A -o wide 2>&1 || rc=1
    node_ready || rc=1
  fi
  return $rc
}
