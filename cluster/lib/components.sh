# shellcheck shell=bash
# The cluster's daemons: configuration, start and health checks. Each runs in
# its own session (start_daemon) with a pid file in $RUN and a log in $LOGS.
# Every start_* is a no-op when the daemon is already running (without even
# rewriting its config: kube-proxy exits when its config file changes), which
# is what makes `up` idempotent and lets it restart only what died.

# In start order.
# shellcheck disable=SC2034 # read by lib/lifecycle.sh
COMPONENTS=(registry etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

port_free_or_ours() {
  local name=$1 hostport=$2
  if (exec 3<>"/dev/tcp/${hostport%:*}/${hostport##*:}") 2>/dev/null; then
    die "$name: $hostport is already in use by another process (not started by this cluster)"
  fi
}

start_registry() {
  is_running registry && return 0
  port_free_or_ours registry "$REGISTRY_ADDR"
  mkdir -p "$STATE/registry/data"
  cat >"$STATE/registry/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $STATE/registry/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
EOF
  start_daemon registry /usr/bin/docker-registry serve "$STATE/registry/config.yml"
}
healthy_registry() { curl -sf --max-time 5 "http://$REGISTRY_ADDR/v2/"; }
wait_registry() { wait_for registry 30 healthy_registry; }

start_etcd() {
  is_running etcd && return 0
  port_free_or_ours etcd "$ETCD_CLIENT"
  mkdir -p "$STATE/etcd" && chmod 700 "$STATE/etcd"
  start_daemon etcd /usr/bin/etcd --name devtool --data-dir "$STATE/etcd" \
    --listen-client-urls "https://$ETCD_CLIENT" --advertise-client-urls "https://$ETCD_CLIENT" \
    --listen-peer-urls "https://$ETCD_PEER" --initial-advertise-peer-urls "https://$ETCD_PEER" \
    --initial-cluster "devtool=https://$ETCD_PEER" --initial-cluster-state new \
    --listen-metrics-urls http://127.0.0.1:2381 \
    --cert-file "$PKI/etcd-server.crt" --key-file "$PKI/etcd-server.key" \
    --trusted-ca-file "$PKI/ca.crt" --client-cert-auth \
    --peer-cert-file "$PKI/etcd-server.crt" --peer-key-file "$PKI/etcd-server.key" \
    --peer-trusted-ca-file "$PKI/ca.crt" --peer-client-cert-auth \
    --snapshot-count 10000 --quota-backend-bytes $((2 * 1024 * 1024 * 1024))
}
healthy_etcd() { curl -sf --max-time 5 http://127.0.0.1:2381/health; }
wait_etcd() { wait_for etcd 60 healthy_etcd; }

# true unless we may lower oom_score_adj (i.e. have CAP_SYS_RESOURCE).
restrict_oom_score_adj() {
  local cap
  cap=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
  if (((0x$cap >> 24) & 1)); then echo false; else echo true; fi
}

start_containerd() {
  is_running containerd && return 0
  local dir=$STATE/containerd
  mkdir -p "$dir/root" "$dir/state" "$dir/opt" "$dir/certs.d/$REGISTRY"
  containerd_config "$dir" "$CONTAINERD_SOCK" "$CNI_CONF_DIR" >"$dir/config.toml"
  registry_hosts_toml "$REGISTRY_ADDR" >"$dir/certs.d/$REGISTRY/hosts.toml"
  start_daemon containerd /usr/bin/containerd --config "$dir/config.toml"
}

# containerd_config DIR SOCKET CNI_CONF_DIR: our own config (the Debian package's /etc/containerd
# is left alone): cgroupfs (no systemd here), CNI from Debian's plugin dir, the pause image from
# the local registry, and registry hosts from DIR/certs.d so that localhost:5000 is pulled over
# plain HTTP. Every node's containerd (lib/nodes.sh) has its own DIR and socket.
containerd_config() {
  local dir=$1 sock=$2 cni_conf=$3
  cat <<EOF
version = 2
root = "$dir/root"
state = "$dir/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  # Pods get negative oom_score_adj values (-998 for sandboxes), which need
  # CAP_SYS_RESOURCE; where root lacks it (this VM's root does), runc would
  # fail every sandbox. Clamp to containerd's own score instead.
  restrict_oom_score_adj = $(restrict_oom_score_adj)
  # Pod network namespaces under the state dir too (default /var/run/netns),
  # so that "down" finds every mount below $STATE.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "$dir/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$cni_conf"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$dir/certs.d"
EOF
}

# registry_hosts_toml ADDR: containerd's hosts.toml for $REGISTRY, served at ADDR (host:port).
registry_hosts_toml() {
  cat <<EOF
server = "http://$1"
[host."http://$1"]
  capabilities = ["pull", "resolve", "push"]
EOF
}
healthy_containerd() { timeout 5 /usr/bin/ctr --address "$CONTAINERD_SOCK" version; }
wait_containerd() { wait_for containerd 30 healthy_containerd; }

start_apiserver() {
  is_running kube-apiserver && return 0
  port_free_or_ours kube-apiserver "127.0.0.1:$API_PORT"
  # ConsistentListFromCache needs etcd's RequestWatchProgress, which Debian's
  # etcd 3.4.23 lacks (fixed in 3.4.31); the apiserver would detect that and
  # fall back anyway, turning it off makes the behaviour explicit.
  start_daemon kube-apiserver "$K8S_BIN/kube-apiserver" \
    --advertise-address="$(node_ip)" --bind-address=0.0.0.0 --secure-port="$API_PORT" \
    --etcd-servers="https://$ETCD_CLIENT" --etcd-cafile="$PKI/ca.crt" \
    --etcd-certfile="$PKI/apiserver-etcd-client.crt" --etcd-keyfile="$PKI/apiserver-etcd-client.key" \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="$PKI/ca.crt" \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --service-account-issuer="https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true --profiling=false \
    --feature-gates=ConsistentListFromCache=false
}
healthy_kube-apiserver() { api "https://127.0.0.1:$API_PORT/readyz"; }
wait_apiserver() { wait_for kube-apiserver 90 healthy_kube-apiserver; }

start_controller_manager() {
  is_running kube-controller-manager && return 0
  local kcfg=$PKI/controller-manager.kubeconfig
  # --enable-hostpath-provisioner backs the default StorageClass (addons.sh);
  # --use-service-account-credentials gives each controller its own RBAC
  # identity, as in a kubeadm cluster.
  start_daemon kube-controller-manager "$K8S_BIN/kube-controller-manager" \
    --kubeconfig="$kcfg" --authentication-kubeconfig="$kcfg" --authorization-kubeconfig="$kcfg" \
    --bind-address=127.0.0.1 --leader-elect=false \
    --cluster-cidr="$POD_CIDR" --allocate-node-cidrs=true --node-cidr-mask-size=24 \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
    --root-ca-file="$PKI/ca.crt" --service-account-private-key-file="$PKI/sa.key" \
    --use-service-account-credentials=true --enable-hostpath-provisioner=true \
    --flex-volume-plugin-dir="$STATE/kubelet/volume-plugins" --profiling=false
}
healthy_kube-controller-manager() { curl -skf --max-time 5 https://127.0.0.1:10257/healthz; }
wait_controller_manager() { wait_for kube-controller-manager 60 healthy_kube-controller-manager; }

start_scheduler() {
  is_running kube-scheduler && return 0
  local kcfg=$PKI/scheduler.kubeconfig
  start_daemon kube-scheduler "$K8S_BIN/kube-scheduler" \
    --kubeconfig="$kcfg" --authentication-kubeconfig="$kcfg" --authorization-kubeconfig="$kcfg" \
    --bind-address=127.0.0.1 --leader-elect=false --profiling=false
}
healthy_kube-scheduler() { curl -skf --max-time 5 https://127.0.0.1:10259/healthz; }
wait_scheduler() { wait_for kube-scheduler 60 healthy_kube-scheduler; }

start_kubelet() {
  is_running kubelet && return 0
  local dir=$STATE/kubelet
  mkdir -p "$dir/root" "$dir/volume-plugins"
  kubelet_config "$dir" "$PKI/kubelet-server" "$CONTAINERD_SOCK" >"$dir/config.yaml"
  start_daemon kubelet "$K8S_BIN/kubelet" --config="$dir/config.yaml" \
    --kubeconfig="$PKI/kubelet.kubeconfig" --root-dir="$dir/root" \
    --hostname-override="$(node_name)" --node-ip="$(node_ip)"
}

# kubelet_config DIR SERVING_CERT CONTAINERD_SOCKET [YAML_LINE...]: cgroup v1 + cgroupfs driver
# (no systemd); failCgroupV1=false keeps this release running on cgroup v1. Low eviction
# thresholds: a dev VM's disk filling up should not evict the test pods. Client and serving
# certificates are ours (no bootstrap/rotation in a throwaway cluster); SERVING_CERT is the path
# without .crt/.key. The extra lines are an extra node's own settings (lib/nodes.sh).
kubelet_config() {
  local dir=$1 cert=$2 sock=$3
  shift 3
  cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$cert.crt"
tlsPrivateKeyFile: "$cert.key"
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$sock"
clusterDNS: ["$DNS_SVC_IP"]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: /etc/resolv.conf
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
serializeImagePulls: false
staticPodPath: ""
volumePluginDir: "$dir/volume-plugins"
evictionHard: {memory.available: "100Mi", nodefs.available: "2%", imagefs.available: "2%"}
imageGCHighThresholdPercent: 95
imageGCLowThresholdPercent: 90
EOF
  [[ $# -eq 0 ]] || printf '%s\n' "$@"
}
healthy_kubelet() { curl -sf --max-time 5 http://127.0.0.1:10248/healthz; }
wait_kubelet() { wait_for kubelet 60 healthy_kubelet; }

start_kube_proxy() {
  is_running kube-proxy && return 0
  kube_proxy_config "$(node_name)" "$PKI/kube-proxy.kubeconfig" "$POD_CIDR" >"$STATE/kube-proxy.yaml"
  start_daemon kube-proxy "$K8S_BIN/kube-proxy" --config="$STATE/kube-proxy.yaml"
}

# kube_proxy_config NODE KUBECONFIG CLUSTER_CIDR
kube_proxy_config() {
  cat <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: $3
hostnameOverride: $1
clientConnection: {kubeconfig: "$2"}
# maxPerCore 0: leave the host's conntrack table size alone.
conntrack: {maxPerCore: 0}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
EOF
}
healthy_kube-proxy() { curl -sf --max-time 5 http://127.0.0.1:10256/livez; }
wait_kube_proxy() { wait_for kube-proxy 60 healthy_kube-proxy; }

# Stop all daemons in three rounds: the node and controllers (so nothing
# restarts pods), then the pod containers through containerd (before
# containerd stops, which would orphan them under their shims) and
# containerd, then the apiserver and its storage.
stop_components() {
  stop_daemons kube-proxy kubelet kube-scheduler kube-controller-manager
  kill_all_containers
  stop_daemons containerd
  stop_daemons kube-apiserver etcd registry
}

kill_all_containers() {
  is_running containerd || return 0
  local ctr=(/usr/bin/ctr --address "$CONTAINERD_SOCK" -n k8s.io) id
  local ids
  ids=$("${ctr[@]}" tasks ls -q 2>/dev/null || true)
  [[ -z $ids ]] && return 0
  for id in $ids; do "${ctr[@]}" tasks kill -a -s SIGKILL "$id" >/dev/null 2>&1 || true; done
  sleep 1
  # Deleting a task unmounts its rootfs and lets its shim exit.
  for id in $ids; do "${ctr[@]}" tasks rm -f "$id" >/dev/null 2>&1 || true; done
}
