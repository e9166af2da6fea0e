# shellcheck shell=bash
# Debian packages the cluster runs on. Installed on the first `up` only.

# package -> a file it ships, used to tell cheaply whether it is installed.
declare -A DEB_PACKAGES=(
  [etcd-server]=/usr/bin/etcd
  [containerd]=/usr/bin/containerd
  [runc]=/usr/sbin/runc
  [containernetworking-plugins]=/usr/lib/cni/bridge
  [iptables]=/usr/sbin/iptables
  [conntrack]=/usr/sbin/conntrack
  [socat]=/usr/bin/socat
  [ethtool]=/usr/sbin/ethtool
  [ebtables]=/usr/sbin/ebtables
  [debootstrap]=/usr/sbin/debootstrap
  [docker-registry]=/usr/bin/docker-registry
  [openssl]=/usr/bin/openssl
  [curl]=/usr/bin/curl
  [ca-certificates]=/etc/ssl/certs/ca-certificates.crt
  [iproute2]=/usr/sbin/ip
  [kmod]=/usr/sbin/modprobe
  [util-linux]=/usr/bin/nsenter
  [procps]=/usr/bin/pgrep
  [gzip]=/usr/bin/gzip
)

ensure_packages() {
  local missing=() p
  for p in "${!DEB_PACKAGES[@]}"; do
    [[ -e ${DEB_PACKAGES[$p]} ]] || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || die "apt-get not found; install by hand: ${missing[*]}"
  log "installing Debian packages: ${missing[*]}"
  mkdir -p "$LOGS"
  # Keep the packages' own services (etcd, docker-registry, containerd) from
  # being started by their maintainer scripts: this cluster runs its own
  # instances on the same ports. policy-rc.d is Debian's switch for that; we
  # only add it if none exists and remove it right after.
  local own_policy=
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    own_policy=1
  fi
  local rc=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "${missing[@]}"
  } </dev/null >>"$LOGS/apt.log" 2>&1 || rc=$?
  [[ -n $own_policy ]] && rm -f /usr/sbin/policy-rc.d
  ((rc == 0)) || fail_component apt "apt-get install failed"
}
