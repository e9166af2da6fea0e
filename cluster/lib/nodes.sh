# shellcheck shell=bash
# Extra nodes (DEVTOOL_CLUSTER_NODES=N, N > 1): node k (2..N) is a kubelet, a containerd and a
# kube-proxy of its own, started on the host in a network namespace of its own. The host stays
# node 1 and its components are untouched; the control plane, the registry and the add-ons are
# node 1's. Layout (docs/decisions/0221-extra-nodes-in-network-namespaces.md):
#
#   name        <hostname>-k
#   netns       devtool-node-k (/run/netns), reached through the veth pair dtnode-k <-> eth0
#   node IP     10.246.0.k (NODES_NET), routed by the host; the node's default route is the host
#   pods        10.245.k.0/24 on the node's own bridge devtool0; the host routes it to the node
#   state       $STATE/nodes/k (containerd, kubelet, CNI leases, local-path volumes), pid files
#               in $STATE/nodes/k/run, logs in $LOGS/<name>/, certificates in $PKI/node-k
#   cgroups     /sys/fs/cgroup/<controller>/devtool-node-k (the kubelet's cgroupRoot)
#   registry    localhost:5000 resolves to http://<host IP>:5000, which the host forwards to
#               the registry on 127.0.0.1:5000 (a DNAT for the nodes' veths only)
#
# Node 1's pods keep the whole of POD_CIDR (its host-local leases walk through the /16), so
# the extra nodes' pods live next to it, in EXTRA_POD_CIDR; ALL_POD_CIDR covers both.

MAX_NODES=9
EXTRA_POD_CIDR=10.245.0.0/16
ALL_POD_CIDR=10.244.0.0/15
NODES_NET=10.246.0.0/24
NODES_DIR=$STATE/nodes

extra_node_name() { echo "$(node_name)-$1"; }
extra_node_ip() { echo "10.246.0.$1"; }
extra_pod_cidr() { echo "10.245.$1.0/24"; }
# The address node k's pods reach their own node's bridge (and whatever runs in the node's network) at.
extra_node_bridge_ip() { echo "10.245.$1.1"; }

# The addresses a front door on an extra node reaches service pods from, comma-separated, for the
# service's trusted proxies: the node IPs (towards pods on other nodes) and each possible node's
# bridge (towards its own pods), for every node number up to MAX_NODES.
extra_node_proxy_addresses() {
  local k out=$NODES_NET
  for ((k = 2; k <= MAX_NODES; k++)); do out+=",$(extra_node_bridge_ip "$k")/32"; done
  echo "$out"
}
node_netns() { echo "devtool-node-$1"; }
node_netns_file() { echo "/run/netns/devtool-node-$1"; }
node_veth() { echo "dtnode-$1"; }
node_cgroup() { echo "devtool-node-$1"; }

# Numbers of the extra nodes this state has, ascending.
extra_nodes() {
  local d
  for d in "$NODES_DIR"/*/; do
    d=${d%/}
    d=${d##*/}
    [[ $d =~ ^[0-9]+$ ]] && echo "$d"
  done | sort -n
}

# The node number of NAME (<hostname>-k of an existing extra node), or fail.
extra_node_number() {
  local k
  for k in $(extra_nodes); do
    [[ $1 == "$(extra_node_name "$k")" ]] && { echo "$k"; return 0; }
  done
  return 1
}

# DEVTOOL_CLUSTER_NODES: unset keeps the extra nodes there are; else a count from 1 to MAX_NODES.
wanted_nodes() {
  local n=${DEVTOOL_CLUSTER_NODES:-}
  [[ -z $n || ( $n =~ ^[1-9][0-9]*$ && $n -le $MAX_NODES ) ]] ||
    die "DEVTOOL_CLUSTER_NODES=$n: expected a whole number of nodes from 1 to $MAX_NODES"
  echo "$n"
}

# nx K CMD...: CMD in node K's network namespace (host mounts, unlike `ip netns exec`).
nx() {
  local k=$1
  shift
  nsenter "--net=$(node_netns_file "$k")" "$@"
}

# In a function, `node_scope K` (through eval) makes RUN, LOGS and CONTAINERD_SOCK node K's for
# that function and what it calls, so that lib/common.sh's daemon helpers work per node.
node_scope() {
  printf 'local RUN=%q LOGS=%q CONTAINERD_SOCK=%q\n' "$NODES_DIR/$1/run" \
    "$LOGS/$(extra_node_name "$1")" "$NODES_DIR/$1/containerd/containerd.sock"
}

# --- up ---------------------------------------------------------------------------------------

# Called by `up` once node 1 is ready: brings the extra nodes to the wanted count (removing
# the surplus, highest first), and starts whatever died on the others.
ensure_nodes() {
  local want=$1 k keep=()
  for k in $(extra_nodes | sort -rn); do
    if [[ -n $want && $k -gt $want ]]; then remove_node "$k" drain; else keep=("$k" "${keep[@]}"); fi
  done
  if [[ -n $want ]]; then
    keep=()
    for ((k = 2; k <= want; k++)); do keep+=("$k"); done
  fi
  [[ ${#keep[@]} -gt 0 ]] || return 0
  setup_nodes_network
  for k in "${keep[@]}"; do ensure_node "$k"; done
  for k in "${keep[@]}"; do wait_node_ready "$k"; done
  wait_local_path_config "${keep[@]}"
}

ensure_node() {
  local k=$1 start=$SECONDS dir=$NODES_DIR/$1
  eval "$(node_scope "$k")"
  mkdir -p "$dir/run" "$LOGS"
  ensure_node_pki "$k"
  setup_node_network "$k"
  setup_node_cgroups "$k"
  start_node_containerd "$k"
  wait_for containerd 30 healthy_containerd
  start_node_kubelet "$k"
  start_node_kube_proxy "$k"
  wait_for kubelet 60 nx "$k" curl -sf --max-time 5 http://127.0.0.1:10248/healthz
  wait_for kube-proxy 60 nx "$k" curl -sf --max-time 5 http://127.0.0.1:10256/livez
  log "node $(extra_node_name "$k") running ($((SECONDS - start))s)"
}

wait_node_ready() {
  eval "$(node_scope "$1")"
  wait_for kubelet 120 extra_node_ready "$1"
}
extra_node_ready() {
  kc get node "$(extra_node_name "$1")" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True
}

# Client and serving certificates of the node's kubelet (the Node authorizer knows it by its
# name), and kubeconfigs that reach the apiserver at the host's address.
ensure_node_pki() {
  local k=$1 name ip api
  [[ -f $PKI/node-$k/done ]] && return 0
  name=$(extra_node_name "$k")
  ip=$(extra_node_ip "$k")
  api="https://$(node_ip):$API_PORT"
  mkdir -p "$PKI/node-$k"
  issue "node-$k/kubelet" "/O=system:nodes/CN=system:node:$name" clientAuth
  issue "node-$k/kubelet-server" "/CN=$name" serverAuth "DNS:$name,DNS:localhost,IP:$ip,IP:127.0.0.1"
  write_kubeconfig "$PKI/node-$k/kubelet.kubeconfig" "node-$k/kubelet" "$api"
  write_kubeconfig "$PKI/node-$k/kube-proxy.kubeconfig" kube-proxy "$api"
  touch "$PKI/node-$k/done"
}

# The host's side, shared by all extra nodes (idempotent): node 1's pods keep their address
# towards other nodes' pods (ahead of the bridge plugin's masquerade), the nodes' own traffic
# leaves through the uplink masqueraded, forwarding to and from the nodes is allowed (Docker
# sets FORWARD's policy to DROP), and the registry answers on the host's address.
setup_nodes_network() {
  local uplink host_ip
  uplink=$(ip -4 route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") print $(i+1)}' | head -n1)
  host_ip=$(node_ip)
  ensure_chain nat DEVTOOL-NODES POSTROUTING \
    "-s $POD_CIDR -d $EXTRA_POD_CIDR -j ACCEPT" \
    ${uplink:+"-s $NODES_NET -o $uplink -j MASQUERADE"}
  ensure_chain nat DEVTOOL-NODES-REGISTRY PREROUTING \
    "-i dtnode-+ -d $host_ip -p tcp --dport ${REGISTRY_ADDR##*:} -j DNAT --to-destination $REGISTRY_ADDR"
  ensure_chain filter DEVTOOL-NODES FORWARD "-i dtnode-+ -j ACCEPT" "-o dtnode-+ -j ACCEPT"
}

# ensure_chain TABLE CHAIN PARENT RULE...: CHAIN holds exactly RULEs and is jumped to first
# from PARENT.
ensure_chain() {
  local table=$1 chain=$2 parent=$3 rule
  shift 3
  iptables -t "$table" -N "$chain" 2>/dev/null || iptables -t "$table" -F "$chain"
  for rule in "$@"; do
    # shellcheck disable=SC2086 # a rule is its words
    iptables -t "$table" -A "$chain" $rule || die "iptables -t $table -A $chain $rule failed"
  done
  iptables -t "$table" -C "$parent" -j "$chain" 2>/dev/null ||
    iptables -t "$table" -I "$parent" 1 -j "$chain" || die "cannot jump to $chain from $parent ($table)"
}

teardown_nodes_network() {
  local table chain
  for table in nat filter; do
    for chain in DEVTOOL-NODES DEVTOOL-NODES-REGISTRY; do
      while iptables -t "$table" -D POSTROUTING -j "$chain" 2>/dev/null; do :; done
      while iptables -t "$table" -D PREROUTING -j "$chain" 2>/dev/null; do :; done
      while iptables -t "$table" -D FORWARD -j "$chain" 2>/dev/null; do :; done
      iptables -t "$table" -F "$chain" 2>/dev/null && iptables -t "$table" -X "$chain" 2>/dev/null
    done
  done
  return 0
}

# The node's namespace, its link to the host, routes both ways, and the node's own pod
# network settings (the CNI bridge itself is made by the bridge plugin, in the namespace).
setup_node_network() {
  local k=$1 ns veth ip cidr host_ip mtu dir=$NODES_DIR/$1
  ns=$(node_netns "$k")
  veth=$(node_veth "$k")
  ip=$(extra_node_ip "$k")
  cidr=$(extra_pod_cidr "$k")
  host_ip=$(node_ip)
  mtu=$(uplink_mtu)
  [[ -e $(node_netns_file "$k") ]] || ip netns add "$ns" || die "cannot create network namespace $ns"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip link add "$veth" mtu "$mtu" type veth peer name eth0 mtu "$mtu" netns "$ns" ||
      die "cannot create the veth pair $veth for node $k"
  fi
  ip link set "$veth" up
  # The registry's DNAT targets 127.0.0.1: allowed for packets that come in on this link.
  set_sysctl "net.ipv4.conf.$veth.route_localnet" 1
  ip route replace "$ip/32" dev "$veth" src "$host_ip" || die "cannot route $ip to node $k"
  ip route replace "$cidr" via "$ip" dev "$veth" || die "cannot route $cidr to node $k"

  nx "$k" ip link set lo up
  nx "$k" ip link set eth0 up
  nx "$k" ip addr replace "$ip/32" dev eth0
  nx "$k" ip route replace "$host_ip/32" dev eth0 scope link
  nx "$k" ip route replace default via "$host_ip" dev eth0 || die "cannot set node $k's default route"
  local key
  for key in net/ipv4/ip_forward net/bridge/bridge-nf-call-iptables net/bridge/bridge-nf-call-ip6tables; do
    nx "$k" sh -c "echo 1 >/proc/sys/$key" || die "cannot set $key in $ns"
  done
  # Pods leave the node masqueraded, except towards other pods (the bridge plugin's own
  # masquerade would hide them behind the node's address).
  nx "$k" iptables -t nat -N DEVTOOL-NODE 2>/dev/null || nx "$k" iptables -t nat -F DEVTOOL-NODE
  nx "$k" iptables -t nat -A DEVTOOL-NODE -s "$cidr" ! -d "$ALL_POD_CIDR" -j MASQUERADE
  nx "$k" iptables -t nat -C POSTROUTING -j DEVTOOL-NODE 2>/dev/null ||
    nx "$k" iptables -t nat -A POSTROUTING -j DEVTOOL-NODE

  mkdir -p "$dir/cni/net.d" "$dir/cni/ipam"
  write_cni_conflist "$dir/cni/net.d/10-devtool.conflist" false "$mtu" "$dir/cni/ipam" "$cidr"
}

# The node's cgroup root in every cgroup v1 hierarchy; cpuset needs its CPUs and memory nodes
# filled in before anything can join.
setup_node_cgroups() {
  local k=$1 d root
  for d in /sys/fs/cgroup/*/; do
    d=${d%/}
    [[ -L $d || ${d##*/} == unified ]] && continue
    root=$d/$(node_cgroup "$k")
    mkdir -p "$root" 2>/dev/null || continue
    if [[ -f $d/cpuset.cpus ]]; then
      [[ -n $(cat "$root/cpuset.cpus") ]] || cat "$d/cpuset.cpus" >"$root/cpuset.cpus"
      [[ -n $(cat "$root/cpuset.mems") ]] || cat "$d/cpuset.mems" >"$root/cpuset.mems"
    fi
  done
}

start_node_containerd() {
  local k=$1 dir=$NODES_DIR/$1/containerd
  is_running containerd && return 0
  mkdir -p "$dir/root" "$dir/state" "$dir/opt" "$dir/certs.d/$REGISTRY"
  containerd_config "$dir" "$CONTAINERD_SOCK" "$NODES_DIR/$k/cni/net.d" >"$dir/config.toml"
  registry_hosts_toml "$(node_ip):${REGISTRY_ADDR##*:}" >"$dir/certs.d/$REGISTRY/hosts.toml"
  start_daemon_in "$(node_netns_file "$k")" containerd /usr/bin/containerd --config "$dir/config.toml"
}

start_node_kubelet() {
  local k=$1 dir=$NODES_DIR/$1/kubelet
  is_running kubelet && return 0
  mkdir -p "$dir/root" "$dir/volume-plugins" "$dir/pod-logs"
  # Its own cgroup root, and its own pod log folder: a kubelet deletes the folders under its
  # podLogsDir that belong to no pod of its own, which would be node 1's in /var/log/pods.
  kubelet_config "$dir" "$PKI/node-$k/kubelet-server" "$CONTAINERD_SOCK" \
    "cgroupRoot: /$(node_cgroup "$k")" "podLogsDir: \"$dir/pod-logs\"" >"$dir/config.yaml"
  start_daemon_in "$(node_netns_file "$k")" kubelet "$K8S_BIN/kubelet" --config="$dir/config.yaml" \
    --kubeconfig="$PKI/node-$k/kubelet.kubeconfig" --root-dir="$dir/root" \
    --hostname-override="$(extra_node_name "$k")" --node-ip="$(extra_node_ip "$k")"
}

start_node_kube_proxy() {
  local k=$1 file=$NODES_DIR/$1/kube-proxy.yaml
  is_running kube-proxy && return 0
  kube_proxy_config "$(extra_node_name "$k")" "$PKI/node-$k/kube-proxy.kubeconfig" "$ALL_POD_CIDR" >"$file"
  start_daemon_in "$(node_netns_file "$k")" kube-proxy "$K8S_BIN/kube-proxy" --config="$file"
}

# The local-path provisioner reads its node-to-folder map from a ConfigMap (lib/addons.sh names
# every possible extra node in it) through node 1's kubelet, and rereads it every 30 s. After
# the map changed (the first extra node on a cluster made before them), wait until the
# provisioner has it, so that a claim on an extra node gets that node's folder.
wait_local_path_config() {
  local uid node root=$STATE/kubelet/root file k deadline=$((SECONDS + 120))
  read -r uid node < <(kc -n local-path-storage get pods -l app=local-path-provisioner \
    -o 'jsonpath={.items[0].metadata.uid} {.items[0].spec.nodeName}' 2>/dev/null)
  [[ -n $uid ]] || return 0
  k=$(extra_node_number "$node") && root=$NODES_DIR/$k/kubelet/root
  file=$root/pods/$uid/volumes/kubernetes.io~configmap/config/config.json
  for k in "$@"; do
    if ! grep -q "\"$(extra_node_name "$k")\"" "$file" 2>/dev/null; then
      log "waiting for the local-path provisioner to see the extra nodes' folders"
      # Any change of the pod makes its kubelet sync the ConfigMap now rather than within a minute.
      kc -n local-path-storage annotate pod -l app=local-path-provisioner --overwrite \
        "devtool.dev/config-sync=$(date +%s)" >/dev/null 2>&1
      until grep -q "\"$(extra_node_name "$k")\"" "$file" 2>/dev/null; do
        ((SECONDS < deadline)) || die "the local-path provisioner's config never named node $(extra_node_name "$k")"
        sleep 1
      done
    fi
  done
  # The provisioner rereads the file every 30 s.
  local age
  age=$(($(date +%s) - $(stat -L -c %Y "$file")))
  ((age >= 31)) || sleep $((31 - age))
}

# Entries of local-path's nodePathMap for every possible extra node (JSON, each with a
# leading comma): each node's volumes in its own folder.
local_path_extra_nodes_json() {
  local k
  for ((k = 2; k <= MAX_NODES; k++)); do
    printf ', {"node": "%s", "paths": ["%s"]}' "$(extra_node_name "$k")" "$NODES_DIR/$k/local-path-pv"
  done
}

# --- stop, remove -----------------------------------------------------------------------------

# Everything of node K stops, containers included, as when a machine loses power; its state,
# network and Node object stay, and `up` starts it again.
stop_node() {
  local k=$1
  eval "$(node_scope "$k")"
  stop_daemons kube-proxy kubelet
  kill_all_containers
  stop_daemons containerd
  local i pids
  for ((i = 0; i < 3; i++)); do
    pids=$(node_pids "$k")
    [[ -z $pids ]] && return 0
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null || true
    sleep 0.5
  done
  pids=$(node_pids "$k")
  [[ -z $pids ]] || die "processes of node $(extra_node_name "$k") still running: $pids"
}

# Processes of node K: its containerd's shims and whatever is in its cgroups.
node_pids() {
  {
    pgrep -f -- "-address $NODES_DIR/$1/containerd/containerd.sock" || true
    find /sys/fs/cgroup/*/"$(node_cgroup "$1")" -name cgroup.procs -exec cat {} + 2>/dev/null || true
  } | sort -u | xargs
}

# remove_node K [drain]: every trace of node K goes. With `drain` (a running cluster that keeps
# going), it leaves the cluster first: drained (its pods stop gracefully, those of controllers
# start again elsewhere), its kubelet stopped (or it would register again), its Node deleted.
remove_node() {
  local k=$1 drain=${2:-} name d
  name=$(extra_node_name "$k")
  log "removing node $name"
  if [[ -n $drain ]]; then
    mkdir -p "$LOGS/$name"
    # Deleting rather than evicting: an eviction is refused in a namespace being deleted, and drain
    # would retry until that namespace is gone (seen: 50 s); a local node has no budget to keep.
    kc drain "$name" --ignore-daemonsets --delete-emptydir-data --force --disable-eviction --grace-period=5 --timeout=90s \
      >>"$LOGS/$name/drain.log" 2>&1 || log "warning: draining $name failed (see $LOGS/$name/drain.log); removing it anyway"
    (
      eval "$(node_scope "$k")"
      stop_daemons kube-proxy kubelet
    )
    kc delete node "$name" --ignore-not-found >/dev/null 2>&1 || log "warning: cannot delete the Node $name"
    # What drain leaves (DaemonSets' pods, pods of namespaces being deleted) would stay, Terminating
    # on a node that is gone, until the pod garbage collector's next pass (about a minute).
    kc delete pods -A --field-selector "spec.nodeName=$name" --force --grace-period=0 >/dev/null 2>&1 ||
      log "warning: cannot delete the pods left on $name"
  fi
  (stop_node "$k") || exit 1
  unmount_under "$NODES_DIR/$k"
  for d in /sys/fs/cgroup/*/"$(node_cgroup "$k")"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  ip netns del "$(node_netns "$k")" 2>/dev/null
  ip link del "$(node_veth "$k")" 2>/dev/null
  grep -q " ${NODES_DIR}/${k}[/ ]" /proc/mounts && die "mounts left under $NODES_DIR/$k"
  rm -rf --one-file-system "${NODES_DIR:?}/$k" "${PKI:?}/node-$k"
  [[ -n $(extra_nodes) ]] || { teardown_nodes_network; rmdir "$NODES_DIR" 2>/dev/null; }
  return 0
}

# --- status -----------------------------------------------------------------------------------

nodes_status() {
  local k c rc=0
  for k in $(extra_nodes); do
    (
      eval "$(node_scope "$k")"
      local bad=0
      echo "node $(extra_node_name "$k") (IP $(extra_node_ip "$k"), pods $(extra_pod_cidr "$k"), netns $(node_netns "$k")):"
      for c in containerd kubelet kube-proxy; do
        if ! is_running "$c"; then
          printf '  %-22s stopped\n' "$c"
          bad=1
        elif node_component_healthy "$k" "$c"; then
          printf '  %-22s running (pid %s), healthy\n' "$c" "$(pid_of "$c")"
        else
          printf '  %-22s running (pid %s), NOT healthy (log: %s)\n' "$c" "$(pid_of "$c")" "$LOGS/$c.log"
          bad=1
        fi
      done
      exit $bad
    ) || rc=1
  done
  return $rc
}

node_component_healthy() {
  local k=$1
  case $2 in
    containerd) timeout 5 /usr/bin/ctr --address "$NODES_DIR/$k/containerd/containerd.sock" version >/dev/null 2>&1 ;;
    kubelet) nx "$k" curl -sf --max-time 5 http://127.0.0.1:10248/healthz >/dev/null 2>&1 ;;
    kube-proxy) nx "$k" curl -sf --max-time 5 http://127.0.0.1:10256/livez >/dev/null 2>&1 ;;
  esac
}

# The extra nodes' names, one a line.
extra_nodes_names() {
  local k
  for k in $(extra_nodes); do extra_node_name "$k"; done
}
