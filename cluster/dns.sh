#!/usr/bin/env bash
# Host name resolution for the local cluster's endpoint domain: every name under devtool.test
# (ENDPOINT_DOMAIN in lib/common.sh) resolves to the node, where the front door listens, for
# everything on this machine (Node, curl, Chromium: they all read /etc/resolv.conf). Pods get the
# same answer from the cluster's CoreDNS (lib/addons.sh).
#
#   cluster/dns.sh up      install dnsmasq (Debian's dnsmasq-base: the daemon only, no service),
#                          run it on 127.0.0.1:53 answering the domain and forwarding every other
#                          name to the original nameservers, and put it first in /etc/resolv.conf
#   cluster/dns.sh down    stop it and put the original /etc/resolv.conf back
#   cluster/dns.sh status  what runs, what /etc/resolv.conf says, a test query
#
# Idempotent and reversible: `up` on a set-up machine changes nothing (it restarts dnsmasq only
# when its configuration changed, e.g. a new node address); the original resolv.conf is kept in
# $DNS_STATE/resolv.conf.orig (the other nameservers stay after ours, so a stopped dnsmasq costs a
# refused query, not a failed lookup). State: DEVTOOL_DNS_STATE (default /var/lib/devtool-dns);
# for tests, DEVTOOL_RESOLV_CONF (default /etc/resolv.conf) and DEVTOOL_DNS_LISTEN (127.0.0.1).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
DNS_STATE=${DEVTOOL_DNS_STATE:-/var/lib/devtool-dns}
RESOLV=${DEVTOOL_RESOLV_CONF:-/etc/resolv.conf}
ORIG=$DNS_STATE/resolv.conf.orig
CONF=$DNS_STATE/dnsmasq.conf
PIDFILE=$DNS_STATE/dnsmasq.pid
MARK='# devtool cluster/dns.sh:'
LISTEN=${DEVTOOL_DNS_LISTEN:-127.0.0.1}

dlog() { printf '[dns %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
ddie() { dlog "ERROR: $*"; exit 1; }

# After a reboot the PID file may name another process that got the same number: it must be dnsmasq.
running() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && [[ $(cat "/proc/$pid/comm" 2>/dev/null) == dnsmasq ]]
}

# Stop dnsmasq and wait until it is gone (its port is free again).
stop_dnsmasq() {
  running || return 0
  local pid i
  pid=$(cat "$PIDFILE")
  kill "$pid" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
ours() { grep -qF "$MARK" "$RESOLV" 2>/dev/null; }

ensure_dnsmasq() {
  [[ -x /usr/sbin/dnsmasq ]] && return 0
  dlog "installing Debian's dnsmasq-base"
  mkdir -p "$DNS_STATE"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends dnsmasq-base \
    </dev/null >>"$DNS_STATE/apt.log" 2>&1 ||
    { DEBIAN_FRONTEND=noninteractive apt-get update -q && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -q --no-install-recommends dnsmasq-base; } </dev/null >>"$DNS_STATE/apt.log" 2>&1 ||
    ddie "apt-get install dnsmasq-base failed (see $DNS_STATE/apt.log)"
}

write_conf() {
  local upstream ns
  upstream=$(awk '$1 == "nameserver" && $2 !~ /^(127\.|::1$)/ {print $2}' "$ORIG")
  [[ -n $upstream ]] || ddie "no upstream nameserver in $ORIG to forward to"
  {
    echo "# written by cluster/dns.sh up"
    echo "listen-address=$LISTEN"
    echo "bind-interfaces"
    echo "port=53"
    echo "no-resolv"
    echo "no-hosts"
    echo "user=nobody"
    echo "cache-size=1000"
    echo "address=/$ENDPOINT_DOMAIN/$(node_ip)"
    for ns in $upstream; do echo "server=$ns"; done
  } >"$CONF.new"
}

cmd_up() {
  [[ $EUID -eq 0 ]] || ddie "must run as root (it installs a package and edits $RESOLV)"
  mkdir -p "$DNS_STATE"
  ensure_dnsmasq
  # Keep the original once; a resolv.conf we wrote is never taken for the original.
  if [[ ! -f $ORIG ]]; then
    ours && ddie "$RESOLV carries our mark but $ORIG is missing: restore $RESOLV by hand"
    cp "$RESOLV" "$ORIG"
  fi
  write_conf
  if running && cmp -s "$CONF" "$CONF.new"; then
    rm -f "$CONF.new"
  else
    stop_dnsmasq
    mv "$CONF.new" "$CONF"
    dnsmasq --conf-file="$CONF" --pid-file="$PIDFILE" --log-facility="$DNS_STATE/dnsmasq.log" ||
      ddie "dnsmasq did not start (see $DNS_STATE/dnsmasq.log)"
    dlog "dnsmasq on $LISTEN:53: $ENDPOINT_DOMAIN -> $(node_ip), everything else -> $(grep '^server=' "$CONF" | cut -d= -f2 | xargs)"
  fi
  if ! ours; then
    # In place (it may be a bind mount), ours first, then the original lines.
    { echo "$MARK dnsmasq first for $ENDPOINT_DOMAIN; 'bash cluster/dns.sh down' restores $ORIG"
      echo "nameserver $LISTEN"
      grep -v "^nameserver $LISTEN\$" "$ORIG"; } >"$RESOLV.devtool-new"
    cat "$RESOLV.devtool-new" >"$RESOLV" && rm -f "$RESOLV.devtool-new"
    dlog "$RESOLV: nameserver $LISTEN first"
  fi
  # Through the system's resolver, when it is the one we set up (tests set up a scratch copy).
  [[ $RESOLV == /etc/resolv.conf ]] || return 0
  local probe="probe.$ENDPOINT_DOMAIN" got
  got=$(getent ahostsv4 "$probe" | awk 'NR == 1 {print $1}')
  [[ $got == "$(node_ip)" ]] || ddie "$probe resolves to '${got}', not the node $(node_ip)"
}

cmd_down() {
  if running; then stop_dnsmasq; dlog "dnsmasq stopped"; fi
  rm -f "$PIDFILE"
  if ours; then
    [[ -f $ORIG ]] || ddie "$ORIG is missing: restore $RESOLV by hand"
    cat "$ORIG" >"$RESOLV"
    dlog "$RESOLV restored"
  fi
  rm -f "$ORIG"
}

cmd_status() {
  if running; then echo "dnsmasq: running (pid $(cat "$PIDFILE")), $CONF"; else echo "dnsmasq: not running"; fi
  if ours; then echo "$RESOLV: ours (original in $ORIG)"; else echo "$RESOLV: not ours"; fi
  echo "probe.$ENDPOINT_DOMAIN -> $(getent ahostsv4 "probe.$ENDPOINT_DOMAIN" | awk 'NR == 1 {print $1}')"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
