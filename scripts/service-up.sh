#!/usr/bin/env bash
# npm run service:up: the devtool service on the local cluster, from this checkout. Starts the
# cluster if needed, builds and pushes the images, keeps the front door's CA, sets up name
# resolution of the endpoint domain, installs or upgrades the chart (chart/) and waits for it.
# The last stdout line is the service URL, once both service replicas are ready and
# https://<host>/api/v1/info answers with the CA through the front door. Idempotent; quick when
# warm (nothing is rebuilt whose inputs did not change, and the same values restart nothing).
#
# The CA stays outside the cluster and the repository, in $DEVTOOL_FRONT_DOOR_STATE (default
# /var/lib/devtool-front-door/ca.crt and ca.key): it survives `cluster.sh down`, so a browser or
# system that trusts it keeps trusting the front door. It may sign names under the endpoint domain
# only (a name constraint): a CA without that constraint, made before it existed, is replaced, and
# whoever trusted the old one trusts the new ca.crt instead. Progress goes to stderr.
set -euo pipefail
exec 3>&1 1>&2

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../cluster/lib/common.sh
source "$root/cluster/lib/common.sh" # ENDPOINT_DOMAIN, REGISTRY, node_ip
# shellcheck source=../cluster/lib/nodes.sh
source "$root/cluster/lib/nodes.sh" # extra_node_proxy_addresses
FD_STATE=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}
# DEVTOOL_SERVICE_RELEASE: another release of the service alone (namespace and host named after it,
# https://devtool-<release>.<domain>, an endpoint name of its namespace), behind the front door of
# the release `devtool` (installed first when it does not answer). A test that must not see another checkout's service:up replace its service mid-run
# (several worktrees on one cluster) installs its own this way.
RELEASE=${DEVTOOL_SERVICE_RELEASE:-devtool}
NAMESPACE=$RELEASE
HOST=$RELEASE.$ENDPOINT_DOMAIN
# DEVTOOL_SERVICE_INGRESS_CLASS (with DEVTOOL_SERVICE_RELEASE): that release behind another ingress
# controller's class instead (cluster/traefik.sh's `traefik`; no shared front door needed), with
# DEVTOOL_SERVICE_TLS_SECRET, the Secret of its host's certificate (ingress.tlsSecretName), and
# DEVTOOL_SERVICE_CA, the CA of that controller's certificates (ca.certificate, no key): the check
# of the service URL trusts it and expects the service to hand it out.
INGRESS_CLASS=${DEVTOOL_SERVICE_INGRESS_CLASS:-devtool}
SERVICE_CA=${DEVTOOL_SERVICE_CA:-$FD_STATE/ca.crt}
if [[ $RELEASE != devtool ]]; then
  HOST=devtool-$RELEASE.$ENDPOINT_DOMAIN
  [[ $RELEASE =~ ^[a-z0-9][-a-z0-9]{0,30}$ ]] || { echo "service-up: invalid DEVTOOL_SERVICE_RELEASE=$RELEASE" >&2; exit 2; }
  # The front door as it is when it answers (another checkout's install is as good); else ours.
  [[ $INGRESS_CLASS != devtool ]] ||
    curl -fsS --max-time 5 --cacert "$FD_STATE/ca.crt" "https://devtool.$ENDPOINT_DOMAIN/healthz" >/dev/null 2>&1 ||
    DEVTOOL_SERVICE_RELEASE='' bash "$0" >/dev/null
elif [[ $INGRESS_CLASS != devtool ]]; then
  echo "service-up: DEVTOOL_SERVICE_INGRESS_CLASS needs DEVTOOL_SERVICE_RELEASE (the release devtool is the front door)" >&2
  exit 2
fi
[[ -r $SERVICE_CA || $SERVICE_CA == "$FD_STATE/ca.crt" ]] || { echo "service-up: DEVTOOL_SERVICE_CA=$SERVICE_CA: not a readable file" >&2; exit 2; }
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

# The in-cluster programs' images: node:20 (built by the cluster) plus one layer holding a
# self-contained bundle, tagged by the bundle's hash, so an unchanged program is neither rebuilt nor
# restarted. Prints name:tag@digest.
(cd "$root" && node scripts/build.mjs cluster)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bundle_image() { # NAME: dist/NAME.cjs -> $REGISTRY/NAME:<hash>@<digest>
  local name=$1 bundle=$root/dist/$1.cjs ref digest
  ref=$REGISTRY/$name:$(sha256sum <"$bundle" | cut -c1-16)
  if ! digest=$(crane digest "$ref" 2>/dev/null); then
    rm -rf "$work/app" && mkdir -p "$work/app"
    install -m 644 "$bundle" "$work/app/$name.cjs"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -czf "$work/layer.tar.gz" app
    crane append -b "$REGISTRY/node:20" -f "$work/layer.tar.gz" -t "$ref" >/dev/null
    digest=$(crane digest "$ref")
    slog "pushed $ref"
  fi
  echo "$ref@$digest"
}
controller=$(bundle_image devtool-ingress)
service=$(bundle_image devtool-service)
proxy=$REGISTRY/caddy:2@$(crane digest "$REGISTRY/caddy:2")
# hosted builds: buildkitd from buildkit/daemon (cached by release, buildkit/build.sh) and the
# gateway in front of it, with Debian's runc (cluster/images/buildkitd, cached by the binaries' hash).
BUILDKITD_BIN=$(bash "$root/buildkit/build.sh" buildkitd-path) || sdie "building buildkitd failed"
GATEWAY_BIN=$(bash "$root/buildkit/build.sh" gateway-path) || sdie "building the builder's gateway failed"
builder=$(BUILDKITD_BIN=$BUILDKITD_BIN GATEWAY_BIN=$GATEWAY_BIN bash "$root/cluster/cluster.sh" image buildkitd | tail -n 1) ||
  sdie "building the builder image failed"
runner=$(bash "$root/scripts/runner-image.sh" | tail -n 1)
step "images ready: $controller, $service, $proxy, $builder, $runner"

# The CA: made once (EC P-256, 10 years), kept across upgrades and cluster restarts. Its name
# constraint lets it sign DNS names under the endpoint domain and no IP address: a certificate it
# signed for any other name (github.com) is rejected by every client that trusts it.
mkdir -p "$FD_STATE" && chmod 700 "$FD_STATE"
constrained() { # the CA permits DNS names under $ENDPOINT_DOMAIN, nothing else
  local permitted
  permitted=$(openssl x509 -in "$FD_STATE/ca.crt" -noout -ext nameConstraints 2>/dev/null |
    awk '/Permitted:/ { p = 1; next } /Excluded:/ { p = 0 } p { print $1 }') || return 1
  [[ $permitted == "DNS:$ENDPOINT_DOMAIN" ]]
}
if [[ -s $FD_STATE/ca.crt ]] && ! constrained; then
  slog "the front door's CA $FD_STATE/ca.crt may sign names outside $ENDPOINT_DOMAIN: replacing it (trust the new one)"
  rm -f "$FD_STATE/ca.crt"
fi
if [[ ! -s $FD_STATE/ca.crt || ! -s $FD_STATE/ca.key ]]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
    -subj "/CN=devtool local front door CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "nameConstraints=critical,permitted;DNS:$ENDPOINT_DOMAIN,excluded;IP:0.0.0.0/0.0.0.0,excluded;IP:::/::" \
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

# Users' kubeconfigs name the API server as this machine reaches it: the local cluster's own.
kube_server=$(bash "$root/cluster/cluster.sh" kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
[[ -n $kube_server ]] || sdie "no API server URL in $KUBECONFIG"

# /metrics needs a scraper token (the chart has no /metrics without one): made once, kept beside the CA.
if [[ ! -s $FD_STATE/metrics-token ]]; then
  (umask 077 && openssl rand -hex 24 >"$FD_STATE/metrics-token.new") && mv "$FD_STATE/metrics-token.new" "$FD_STATE/metrics-token"
fi

kctl() { bash "$root/cluster/cluster.sh" kubectl -n "$NAMESPACE" "$@"; }
# Previews on the local install: a week without a redeploy and one goes (the chart's default is
# never); swept every 10 s, so a destroy without --wait is done moments after its run.
# Sign-up stays open here (the chart's default is an allow-list): the local install is a
# developer's own demo and the tests', its name resolving on this machine only, and the tests sign
# up users named anew each run.
# A sign-in lasts 12 hours here, not the chart's 8: a day's work, and the admin page's settings and
# the session cookie show that the service reads service.sessionLength (dashboard-admin.e2e.test.ts).
# The git server (scripts/git-server.sh) answers at a host of its own outside its namespace's endpoint names.
# The front door runs on every node: besides node 1's bridge address (the chart's default), the
# addresses the extra nodes' front doors reach service pods from.
proxies=10.244.0.1/32,$(extra_node_proxy_addresses)
front_door=(--set ingress.controller.image="$controller" --set ingress.proxy.image="$proxy"
  --set "ingress.allowedHosts.devtool-git[0]=git-server.$ENDPOINT_DOMAIN" --set "service.trustedProxyAddresses={$proxies}")
[[ $RELEASE == devtool ]] || front_door=(--set ingress.enabled=false --set frontDoor.host="$HOST")
ca=(--set-file ca.certificate="$FD_STATE/ca.crt" --set-file ca.key="$FD_STATE/ca.key")
if [[ $INGRESS_CLASS != devtool ]]; then
  front_door+=(--set ingress.className="$INGRESS_CLASS" --set ingress.tlsSecretName="${DEVTOOL_SERVICE_TLS_SECRET:-}")
  ca=(--set-file ca.certificate="$SERVICE_CA")
fi
# The builder listens on the node's network: another release's builder needs a port of its own, or
# its pod never schedules beside the shared release's (1235). One from the release name, 1300-1799.
builder_port=()
[[ $RELEASE == devtool ]] || builder_port=(--set builder.port=$((1300 + $(printf %s "$RELEASE" | cksum | cut -d' ' -f1) % 500)))
"$helm_bin" upgrade --install "$RELEASE" "$root/chart" --namespace "$NAMESPACE" --create-namespace \
  --set endpointDomain="$ENDPOINT_DOMAIN" "${front_door[@]}" \
  "${ca[@]}" \
  --set service.image="$service" --set service.registry="$REGISTRY" --set service.kubeApiServer="$kube_server" \
  --set builder.enabled=true --set builder.image="$builder" --set builder.hostNetwork=true --set "builder.insecureRegistries={$REGISTRY}" \
  "${builder_port[@]}" --set pipelines.runnerImage="$runner" \
  --set previews.staleAfter=168h --set previews.sweepInterval=10s \
  --set service.signup.mode=open --set service.sessionLength=12h --set-file service.metricsToken="$FD_STATE/metrics-token" \
  --wait --timeout 5m >/dev/null || {
  kctl get pods -o wide
  kctl logs "ds/$RELEASE-front-door" --all-containers --tail 20
  kctl logs -l app.kubernetes.io/component=service --tail 20 --prefix
  sdie "helm upgrade --install failed"
}
# --wait saw the rollout through; both replicas must be ready now (maxUnavailable 0 keeps them so).
ready=$(kctl get deploy "$RELEASE-service" -o jsonpath='{.status.readyReplicas}/{.spec.replicas}')
[[ $ready == 2/2 ]] || sdie "service replicas ready: $ready, want 2/2"
# A rollout's old pods still finish their requests after --wait returns, then close: a form posted
# on a connection one of them closes is not retried by the front door (a browser test's sign-up
# failed so). The caller gets the service once only the new pods are left.
for i in $(seq 1 60); do
  pods=$(kctl get pods -l "app.kubernetes.io/component=service,app.kubernetes.io/instance=$RELEASE" --no-headers | wc -l)
  ((pods <= 2)) && break
  ((i == 60)) && sdie "the service's earlier pods are still terminating after 60 s ($pods pods)"
  sleep 1
done
builder_ready=$(kctl get deploy "$RELEASE-builder" -o jsonpath='{.status.readyReplicas}')
[[ $builder_ready == 1 ]] || { kctl logs "deploy/$RELEASE-builder" --tail 20; sdie "the builder is not ready"; }
step "chart installed (release $RELEASE, namespace $NAMESPACE), service replicas ready: $ready"

# The service answers through the front door (or the other controller) over TLS signed by its CA, and
# hands that CA out. The controller follows the Ingress within seconds; a rollout of the
# proxy may need a moment.
info=
for _ in $(seq 1 60); do
  info=$(curl -sS --max-time 5 --cacert "$SERVICE_CA" "https://$HOST/api/v1/info" 2>&1) || true
  if node -e 'const i = JSON.parse(process.argv[1]); process.exit(i.certificate === require("fs").readFileSync(process.argv[2], "utf8") ? 0 : 1)' \
    "$info" "$SERVICE_CA" 2>/dev/null; then
    step "https://$HOST answers; CA: $SERVICE_CA"
    echo "https://$HOST" >&3
    exit 0
  fi
  sleep 1
done
sdie "https://$HOST/api/v1/info does not answer with the CA: ${info:0:300}"
