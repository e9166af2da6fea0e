# shellcheck shell=bash
# Host networking for pods: kernel settings and the CNI configuration that
# containerd hands to the bridge plugin. kube-proxy (iptables mode) adds the
# Service rules on top.

CNI_BRIDGE=devtool0

# Pods must not send packets larger than the host's uplink carries (this VM's
# eth0 has MTU 1400): use the MTU of the default-route interface.
uplink_mtu() {
  local dev
  dev=$(ip -4 route show default 2>/dev/null | awk '{for (i=1;i<NF;i++) if ($i=="dev") print $(i+1)}' | head -n1)
  if [[ -n $dev && -r /sys/class/net/$dev/mtu ]]; then cat "/sys/class/net/$dev/mtu"; else echo 1500; fi
}

set_sysctl() {
  local key=$1 value=$2 path=/proc/sys/${1//.//}
  [[ -w $path ]] || { log "warning: cannot set $key (no $path)"; return 0; }
  [[ $(cat "$path") == "$value" ]] || echo "$value" >"$path" 2>/dev/null ||
    log "warning: cannot set $key=$value"
}

# write_cni_conflist FILE IPMASQ MTU IPAM_DIR CIDR: a node's CNI configuration (bridge
# CNI_BRIDGE + host-local addresses from CIDR, leases in IPAM_DIR); IPMASQ: whether the bridge
# plugin masquerades what leaves the pod network.
write_cni_conflist() {
  cat >"$1" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "devtool",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": $2,
      "hairpinMode": true,
      "mtu": $3,
      "ipam": {
        "type": "host-local",
        "dataDir": "$4",
        "ranges": [[{ "subnet": "$5" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
}

setup_host_network() {
  # Bridged pod traffic must pass iptables for Service NAT to apply to
  # pod->Service->pod on the same bridge.
  [[ -d /proc/sys/net/bridge ]] || modprobe br_netfilter 2>/dev/null || true
  [[ -d /proc/sys/net/bridge ]] || die "br_netfilter is unavailable: pod->Service traffic would not work"
  set_sysctl net.ipv4.ip_forward 1
  set_sysctl net.bridge.bridge-nf-call-iptables 1
  set_sysctl net.bridge.bridge-nf-call-ip6tables 1
  # kubelet and containerd watch many files (one inotify instance per pod).
  set_sysctl fs.inotify.max_user_instances 8192
  set_sysctl fs.inotify.max_user_watches 524288
  modprobe overlay 2>/dev/null || true
  grep -qw overlay /proc/filesystems || die "the overlay filesystem is unavailable (containerd's snapshotter needs it)"

  mkdir -p "$CNI_CONF_DIR" "$STATE/cni/ipam"
  # bridge + host-local: one Linux bridge, addresses from POD_CIDR, the bridge
  # is the pods' gateway, and traffic leaving the pod network is masqueraded
  # so pods reach the outside (Debian mirror, npm registry) through the
  # host's default route. hairpinMode lets a pod reach itself via a Service.
  # portmap implements hostPort. containerd adds the loopback interface
  # itself (with the loopback plugin from CNI_BIN_DIR). The address leases
  # live in the state dir, so they go away with the cluster.
  write_cni_conflist "$CNI_CONF_DIR/10-devtool.conflist" true "$(uplink_mtu)" "$STATE/cni/ipam" "$POD_CIDR"
}

# The host-path provisioner writes to /tmp/hostpath_pv; make that a symlink to
# the state dir so volumes are removed with the cluster. A real directory
# there belongs to someone else: leave it, volumes then land in it. The
# local-path provisioner's folder is in the state dir already.
setup_hostpath_dir() {
  mkdir -p "$STATE/hostpath-pv" "$LOCAL_PATH_DIR"
  if [[ -L $HOSTPATH_PV_LINK || ! -e $HOSTPATH_PV_LINK ]]; then
    ln -sfn "$STATE/hostpath-pv" "$HOSTPATH_PV_LINK"
  else
    log "warning: $HOSTPATH_PV_LINK exists and is not ours; persistent volumes go there"
  fi
}

# Undo what the cluster did to the host network: the bridge, the CNI and
# kube-proxy iptables chains. Sysctls stay (they are harmless and shared).
teardown_host_network() {
  ip link del "$CNI_BRIDGE" 2>/dev/null || true
  local table chain
  for table in nat filter mangle; do
    # Rules in built-in chains that jump to our chains go first.
    iptables-save -t "$table" 2>/dev/null | grep -E '^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) .*-j (KUBE-|CNI-)' |
      sed 's/^-A /-D /' | while read -r rule; do
        eval "iptables -t $table $rule" 2>/dev/null || true
      done
    for chain in $(iptables-save -t "$table" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/\1/p'); do
      iptables -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $(iptables-save -t "$table" 2>/dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/\1/p'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
  [[ -L $HOSTPATH_PV_LINK ]] && rm -f "$HOSTPATH_PV_LINK"
  return 0
}
