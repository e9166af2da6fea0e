#!/usr/bin/env bash
# npm run service:up: the devtool service on the local cluster, from this checkout. Starts the
# cluster if needed, builds and pushes the images, keeps the front door's CA, sets up name
# resolution of the endpoint domain, installs or upgrades the chart (chart/) and waits for it.
# The last stdout line is the service URL (for now the front door's: the service program and its
# Deployment come next). Idempotent; quick when warm (nothing is rebuilt whose inputs did not change).
#
# The CA stays outside the cluster and the repository, in $DEVTOOL_FRONT_DOOR_STATE (default
# /var/lib/devtool-front-door/ca.crt and ca.key): it survives `cluster.sh down`, so a browser or
# system that trusts it keeps trusting the front door. Progress goes to stderr.
set -euo pipefail
exec 3>&1 1>&2

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../cluster/lib/common.sh
source "$root/cluster/lib/common.sh" # ENDPOINT_DOMAIN, REGISTRY, node_ip
FD_STATE=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}
RELEASE=devtool
NAMESPACE=devtool
HOST=devtool.$ENDPOINT_DOMAIN
start=$SECONDS

slog() { printf '[service-up %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
sdie() { slog "ERROR: $*"; exit 1; }
step() { slog "$1 ($((SECONDS - start))s)"; }

[[ $EUID -eq 0 ]] || sdie "must run as root (the cluster and the host's resolver need it)"

KUBECONFIG=$(bash "$root/cluster/cluster.sh" up | tail -n 1)
export KUBECONFIG
step "cluster ready"
crane() { bash "$root/cluster/cluster.sh" crane --insecure "$@"; }
helm_bin=$(bash "$root/cluster/helm.sh" path)
step "helm ready"

# The controller's image: node:20 (built by the cluster) plus one layer holding the bundle, tagged
# by the bundle's hash, so an unchanged controller is neither rebuilt nor restarted.
(cd "$root" && node scripts/build.mjs cluster)
bundle=$root/dist/devtool-ingress.cjs
tag=$(sha256sum <"$bundle" | cut -c1-16)
controller=$REGISTRY/devtool-ingress:$tag
if ! digest=$(crane digest "$controller" 2>/dev/null); then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/app"
  install -m 644 "$bundle" "$work/app/devtool-ingress.cjs"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -czf "$work/layer.tar.gz" app
  crane append -b "$REGISTRY/node:20" -f "$work/layer.tar.gz" -t "$controller" >/dev/null
  digest=$(crane digest "$controller")
  slog "pushed $controller"
fi
controller=$controller@$digest
proxy=$REGISTRY/caddy:2@$(crane digest "$REGISTRY/caddy:2")
step "images ready: $controller, $proxy"

# The CA: made once (EC P-256, 10 years), kept across upgrades and cluster restarts.
mkdir -p "$FD_STATE" && chmod 700 "$FD_STATE"
if [[ ! -s $FD_STATE/ca.crt || ! -s $FD_STATE/ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=devtool local front door CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -keyout "$FD_STATE/ca.key.new" -out "$FD_STATE/ca.crt.new" 2>/dev/null || sdie "openssl could not make the CA"
  chmod 600 "$FD_STATE/ca.key.new"
  mv "$FD_STATE/ca.key.new" "$FD_STATE/ca.key" && mv "$FD_STATE/ca.crt.new" "$FD_STATE/ca.crt"
  slog "made the front door's CA: $FD_STATE/ca.crt"
fi

bash "$root/cluster/dns.sh" up
# Pods ask CoreDNS, which reloads its Corefile (lib/addons.sh, applied by `up`) within about a
# minute of a change (the kubelet's ConfigMap sync, then the reload plugin's check).
coredns_answer() {
  node -e "const r = new (require('node:dns').promises.Resolver)({ timeout: 2000, tries: 1 }); r.setServers(['$DNS_SVC_IP']);
    r.resolve4('probe.$ENDPOINT_DOMAIN').then((a) => console.log(a[0]), () => console.log(''))"
}
for i in $(seq 1 60); do
  [[ $(coredns_answer) == "$(node_ip)" ]] && break
  ((i == 1)) && slog "waiting for CoreDNS to load the $ENDPOINT_DOMAIN rule"
  ((i == 60)) && sdie "CoreDNS ($DNS_SVC_IP) does not answer probe.$ENDPOINT_DOMAIN with $(node_ip) after 120 s"
  sleep 2
done
step "names under $ENDPOINT_DOMAIN resolve to $(node_ip), here and in pods"

"$helm_bin" upgrade --install "$RELEASE" "$root/chart" --namespace "$NAMESPACE" --create-namespace \
  --set endpointDomain="$ENDPOINT_DOMAIN" \
  --set ingress.controller.image="$controller" --set ingress.proxy.image="$proxy" \
  --set-file ca.certificate="$FD_STATE/ca.crt" --set-file ca.key="$FD_STATE/ca.key" \
  --wait --timeout 5m >/dev/null || {
  bash "$root/cluster/cluster.sh" kubectl -n "$NAMESPACE" get pods -o wide
  bash "$root/cluster/cluster.sh" kubectl -n "$NAMESPACE" logs deploy/$RELEASE-front-door --all-containers --tail 20
  sdie "helm upgrade --install failed"
}
step "chart installed (release $RELEASE, namespace $NAMESPACE)"

# The front door answers over TLS signed by our CA (a Recreate rollout may need a moment).
for _ in $(seq 1 30); do
  if [[ $(curl -sS --max-time 5 --cacert "$FD_STATE/ca.crt" "https://$HOST/healthz" 2>/dev/null) == ok ]]; then
    step "https://$HOST answers; CA: $FD_STATE/ca.crt"
    echo "https://$HOST" >&3
    exit 0
  fi
  sleep 1
done
curl -sS --max-time 5 --cacert "$FD_STATE/ca.crt" "https://$HOST/healthz" || true
sdie "https://$HOST/healthz does not answer ok"
