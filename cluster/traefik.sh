#!/usr/bin/env bash
# Traefik on the local cluster: an ingress controller other than devtool's front door, for the
# tests of the chart installed with `ingress.enabled: false`. Built from its Go
# module (the Go module proxy), its image made here (cluster/images/traefik), run as a Deployment
# with the Kubernetes Ingress provider and an IngressClass of its own.
#
#   cluster/traefik.sh path                  the traefik binary (built on demand); prints its path
#   cluster/traefik.sh version               the pinned release, builds nothing
#   cluster/traefik.sh image                 its image in the local registry; prints ref@digest
#   cluster/traefik.sh up [--certificate CRT --key KEY]
#                                            start or update it; last stdout line = its address
#   cluster/traefik.sh default on|off        mark its IngressClass the cluster's default, or not
#   cluster/traefik.sh names add|remove NAME...
#                                            point NAMEs at its address on this machine (/etc/hosts)
#   cluster/traefik.sh down                  delete it, its class and every name added
#   cluster/traefik.sh status                what runs, its class, its names
#
# It runs in namespace devtool-traefik and serves only Ingresses of its class `traefik`, on one
# HTTPS entry point (TLS on every route) behind the ClusterIP Service `traefik` (port 443): the
# shared front door keeps the node's ports 80 and 443, and every name under devtool.test keeps
# resolving to the node. `names add` points given names at Traefik's Service address instead, for
# this machine only (pods still resolve them to the node). --certificate/--key: the PEM pair it
# serves where an Ingress names no Secret of its own (its default certificate: a wildcard for the
# endpoint domain); without, Traefik's own self-signed one.
#
# The class is not the cluster's default unless `default on` says so, and `up` leaves it as it
# is: the admission plugin gives a new Ingress without a class the newest default class, so a
# default Traefik class would take the Ingresses the shared front door serves (the Compose
# endpoints of other tests on this cluster). Mark it default only while nothing else deploys.
#
# The binary is cached outside the clone, in
#   ${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}/traefik-<version>-<key>/traefik
# where <key> hashes the module's checksum, the Go version and the build flags: a warm run builds
# nothing. Concurrent callers wait for one build. Logs go to stderr.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${DEVTOOL_BUILD_CACHE:-/var/cache/devtool-build}
export PATH=$PATH:/usr/local/go/bin
export GOTOOLCHAIN=local GOWORK=off

# Pinned release, and the checksum of its module zip (as in a go.sum line): a different download is
# refused. v3.7 replaces github.com/abbot/go-http-auth with a fork version the module proxy does not
# serve, so it cannot be built from the proxy; v3.6.12 can.
TRAEFIK_MODULE=github.com/traefik/traefik/v3
TRAEFIK_VERSION=v3.6.12
TRAEFIK_SUM=h1:6pe4s7aaDTQs+AsF7KP3sM/xnq7zOVvibRQe5tw9eFo=

NAMESPACE=devtool-traefik
CLASS=traefik
# The controller name Traefik's Kubernetes Ingress provider serves IngressClasses of.
CONTROLLER=traefik.io/ingress-controller
HOSTS=${DEVTOOL_HOSTS_FILE:-/etc/hosts}
MARK='# devtool cluster/traefik.sh'

log() { printf '[traefik %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# As Traefik's Makefile stamps a release (`traefik version`).
LDFLAGS="-s -w -X $TRAEFIK_MODULE/pkg/version.Version=$TRAEFIK_VERSION -X $TRAEFIK_MODULE/pkg/version.Codename=devtool"
LDFLAGS+=" -X $TRAEFIK_MODULE/pkg/version.BuildDate=1970-01-01T00:00:00Z"

bin_path() {
  local key
  key=$({ printf '%s\n' "$TRAEFIK_MODULE@$TRAEFIK_VERSION" "$TRAEFIK_SUM" "$LDFLAGS"; go version; } | sha256sum | cut -c1-16)
  ENTRY=$CACHE/traefik-$TRAEFIK_VERSION-$key
  BIN=$ENTRY/traefik
}

# field JSON NAME: a string field of `go mod download -json`'s output.
field() { sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" <<<"$1" | head -n1; }

# build: into ENTRY atomically (a killed build never looks cached), under a lock.
build() {
  command -v go >/dev/null || die "the Go toolchain (go) is required"
  bin_path
  [[ -x $BIN ]] && return 0
  mkdir -p "$CACHE"
  local lock
  exec {lock}>"$ENTRY.lock"
  flock "$lock"
  if [[ -x $BIN ]]; then exec {lock}>&-; return 0; fi
  local tmp=$ENTRY.tmp.$$ start=$SECONDS info dir sum err
  rm -rf "$tmp" && mkdir -p "$tmp"
  if ! info=$(cd "$tmp" && go mod download -json "$TRAEFIK_MODULE@$TRAEFIK_VERSION" 2>&1); then
    rm -rf "$tmp"
    die "go mod download $TRAEFIK_MODULE@$TRAEFIK_VERSION failed: $info"
  fi
  err=$(field "$info" Error)
  [[ -z $err ]] || { rm -rf "$tmp"; die "go mod download $TRAEFIK_MODULE@$TRAEFIK_VERSION: $err"; }
  dir=$(field "$info" Dir)
  sum=$(field "$info" Sum)
  [[ $sum == "$TRAEFIK_SUM" ]] || { rm -rf "$tmp"; die "$TRAEFIK_MODULE@$TRAEFIK_VERSION has checksum $sum, pinned $TRAEFIK_SUM"; }
  log "building traefik $TRAEFIK_VERSION -> $ENTRY (10 minutes or more the first time on 2 cores)"
  # In the module's own folder: its go.mod and go.sum (and replace directives) pin every
  # dependency, as for Traefik's release. CGO off: a static binary for a scratch image. The web UI
  # is not built (no Node build here): the dashboard is not served, nothing else needs it.
  if ! (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly \
    nice -n 19 go build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$tmp/traefik" ./cmd/traefik) </dev/null >&2; then
    rm -rf "$tmp"
    die "building traefik $TRAEFIK_VERSION failed"
  fi
  mkdir -p "$ENTRY" && mv "$tmp/traefik" "$BIN" && rm -rf "$tmp"
  exec {lock}>&-
  log "built traefik $TRAEFIK_VERSION in $((SECONDS - start))s"
  # Other traefik entries (older versions or keys) untouched for an hour go: a version bump does not
  # fill the disk, and another checkout may still be using a recent one.
  find "$CACHE" -mindepth 1 -maxdepth 1 -name 'traefik-*' ! -name "$(basename "$ENTRY")" ! -name "$(basename "$ENTRY").lock" \
    -mmin +60 -exec rm -rf {} + 2>/dev/null || true
}

kctl() { bash "$here/cluster.sh" kubectl "$@"; }

image() {
  build
  TRAEFIK_BIN=$BIN TRAEFIK_VERSION=$TRAEFIK_VERSION bash "$here/cluster.sh" image traefik | tail -n 1
}

# The Service's ClusterIP: reachable from this machine (kube-proxy) and from pods.
address() { kctl -n "$NAMESPACE" get service traefik -o jsonpath='{.spec.clusterIP}' 2>/dev/null; }

cmd_up() {
  local crt='' key=''
  while (($#)); do
    case $1 in
      --certificate) crt=${2:?--certificate needs a file}; shift 2 ;;
      --key) key=${2:?--key needs a file}; shift 2 ;;
      *) die "up: unknown argument $1 (expected --certificate FILE --key FILE)" ;;
    esac
  done
  [[ -n $crt && -z $key || -z $crt && -n $key ]] && die "up: --certificate and --key go together"
  if [[ -n $crt ]]; then
    [[ -r $crt ]] || die "up: --certificate $crt: not a readable file"
    [[ -r $key ]] || die "up: --key $key: not a readable file"
    openssl x509 -in "$crt" -noout 2>/dev/null || die "up: --certificate $crt: not a PEM certificate"
  fi
  local ref checksum
  ref=$(image) || die "building the traefik image failed"
  log "image $ref"
  kctl create namespace "$NAMESPACE" --dry-run=client -o yaml | kctl apply -f - >/dev/null
  if [[ -n $crt ]]; then
    kctl -n "$NAMESPACE" create secret tls default-certificate --cert "$crt" --key "$key" --dry-run=client -o yaml |
      kctl apply -f - >/dev/null
  fi
  # The pods restart when the image or the default certificate changes, never for nothing.
  checksum=$({ echo "$ref"; [[ -z $crt ]] || cat "$crt" "$key"; } | sha256sum | cut -c1-16)
  manifest "$ref" "$checksum" "$([[ -n $crt ]] && echo yes)" | kctl apply -f - >/dev/null
  kctl -n "$NAMESPACE" rollout status deployment/traefik --timeout=180s >&2 ||
    { kctl -n "$NAMESPACE" logs deployment/traefik --tail 30 >&2 || true; die "traefik did not become ready"; }
  local ip
  ip=$(address)
  [[ -n $ip ]] || die "the Service traefik has no address"
  log "traefik $TRAEFIK_VERSION serves Ingresses of class $CLASS at https://$ip (Service $NAMESPACE/traefik)"
  echo "$ip"
}

# manifest IMAGE CHECKSUM WITH_CERT: everything but the namespace and the certificate's Secret.
manifest() {
  local ref=$1 checksum=$2 with_cert=$3
  cat <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: traefik, namespace: $NAMESPACE}
---
# What the Kubernetes Ingress provider reads (its informers): Ingresses and their classes, the
# Services and EndpointSlices behind them, the Secrets their TLS sections name, and nodes.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: devtool-traefik}
rules:
  - apiGroups: [""]
    resources: [services, secrets, nodes]
    verbs: [get, list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
  - apiGroups: [networking.k8s.io]
    resources: [ingresses, ingressclasses]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: devtool-traefik}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: devtool-traefik}
subjects: [{kind: ServiceAccount, name: traefik, namespace: $NAMESPACE}]
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: $CLASS}
spec: {controller: $CONTROLLER}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: traefik, namespace: $NAMESPACE}
data:
  # The file provider's dynamic configuration: the default certificate, served to a client whose
  # name no Ingress's own Secret covers (Ingresses with a TLS section but no secretName: the
  # endpoints devtool makes).
  dynamic.yaml: |
$(if [[ -n $with_cert ]]; then
    printf '    tls:\n      stores:\n        default:\n          defaultCertificate:\n'
    printf '            certFile: /etc/traefik/certificate/tls.crt\n            keyFile: /etc/traefik/certificate/tls.key\n'
  else
    printf '    {}\n'
  fi)
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: traefik, namespace: $NAMESPACE, labels: {app.kubernetes.io/name: traefik}}
spec:
  replicas: 1
  selector: {matchLabels: {app.kubernetes.io/name: traefik}}
  template:
    metadata:
      labels: {app.kubernetes.io/name: traefik}
      annotations: {devtool.dev/checksum: "$checksum"}
    spec:
      serviceAccountName: traefik
      securityContext: {runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534}
      containers:
        - name: traefik
          image: $ref
          args:
            # One entry point, TLS on every route attached to it (an Ingress's TLS section only
            # names certificates to Traefik; routes get TLS from the entry point).
            - --entryPoints.websecure.address=:8443
            - --entryPoints.websecure.http.tls=true
            - --entryPoints.traefik.address=:9000
            - --ping=true
            - --ping.entryPoint=traefik
            # Only Ingresses of its own class (and none without a class: those the shared front
            # door serves); a Service with no ready endpoint (a sleeping preview) answers 503.
            - --providers.kubernetesIngress.ingressClass=$CLASS
            - --providers.kubernetesIngress.allowEmptyServices=true
            - --providers.file.filename=/etc/traefik/dynamic/dynamic.yaml
            - --global.checkNewVersion=false
            - --global.sendAnonymousUsage=false
            - --log.level=INFO
            - --log.noColor=true
          ports:
            - {name: websecure, containerPort: 8443}
            - {name: ping, containerPort: 9000}
          readinessProbe:
            httpGet: {path: /ping, port: ping}
            periodSeconds: 2
          resources:
            requests: {cpu: 20m, memory: 50Mi}
            limits: {memory: 256Mi}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: {drop: [ALL]}
          volumeMounts:
            - {name: dynamic, mountPath: /etc/traefik/dynamic, readOnly: true}
$(if [[ -n $with_cert ]]; then echo "            - {name: certificate, mountPath: /etc/traefik/certificate, readOnly: true}"; fi)
            - {name: tmp, mountPath: /tmp}
      volumes:
        - name: dynamic
          configMap: {name: traefik}
$(if [[ -n $with_cert ]]; then echo "        - name: certificate"; echo "          secret: {secretName: default-certificate}"; fi)
        - name: tmp
          emptyDir: {}
---
apiVersion: v1
kind: Service
metadata: {name: traefik, namespace: $NAMESPACE}
spec:
  type: ClusterIP
  selector: {app.kubernetes.io/name: traefik}
  ports:
    - {name: websecure, port: 443, targetPort: websecure}
EOF
}

cmd_default() {
  case ${1:-} in
    on) kctl annotate --overwrite ingressclass "$CLASS" ingressclass.kubernetes.io/is-default-class=true >/dev/null ;;
    off) kctl annotate ingressclass "$CLASS" ingressclass.kubernetes.io/is-default-class- >/dev/null 2>&1 || true ;;
    *) die "usage: cluster/traefik.sh default on|off" ;;
  esac
  log "IngressClass $CLASS default: $1"
}

# names add|remove NAME...: lines "<address> NAME $MARK" in $HOSTS, written in place (it may be a
# bind mount). glibc (Node, curl) reads it before DNS, so these names reach Traefik here.
cmd_names() {
  local op=${1:-} n ip
  shift || true
  [[ ($op == add || $op == remove) && $# -gt 0 ]] || die "usage: cluster/traefik.sh names add|remove NAME..."
  for n in "$@"; do [[ $n =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "names: invalid host name '$n'"; done
  local kept
  kept=$(grep -v -F "$MARK" "$HOSTS" || true)
  local ours
  ours=$(grep -F "$MARK" "$HOSTS" || true)
  for n in "$@"; do ours=$(awk -v n="$n" '$2 != n' <<<"$ours"); done
  if [[ $op == add ]]; then
    ip=$(address)
    [[ -n $ip ]] || die "names add: traefik is not running (cluster/traefik.sh up)"
    for n in "$@"; do ours+=$'\n'"$ip $n $MARK"; done
  fi
  { [[ -z $kept ]] || printf '%s\n' "$kept"; grep -v '^$' <<<"$ours" || true; } >"$HOSTS.devtool-new"
  cat "$HOSTS.devtool-new" >"$HOSTS" && rm -f "$HOSTS.devtool-new"
}

cmd_down() {
  kctl delete namespace "$NAMESPACE" --ignore-not-found --wait=false >/dev/null
  kctl delete ingressclass "$CLASS" --ignore-not-found >/dev/null
  kctl delete clusterrolebinding devtool-traefik --ignore-not-found >/dev/null
  kctl delete clusterrole devtool-traefik --ignore-not-found >/dev/null
  if grep -qF "$MARK" "$HOSTS"; then
    grep -v -F "$MARK" "$HOSTS" >"$HOSTS.devtool-new" || true
    cat "$HOSTS.devtool-new" >"$HOSTS" && rm -f "$HOSTS.devtool-new"
  fi
  log "traefik deleted (namespace $NAMESPACE, class $CLASS, names in $HOSTS)"
}

cmd_status() {
  kctl -n "$NAMESPACE" get deployment,service -o wide 2>/dev/null || echo "traefik: not running"
  kctl get ingressclass "$CLASS" -o jsonpath='{.metadata.name} default={.metadata.annotations.ingressclass\.kubernetes\.io/is-default-class}{"\n"}' 2>/dev/null || true
  grep -F "$MARK" "$HOSTS" | sed "s| *$MARK||" || echo "names: none"
}

case ${1:-} in
  path) build; echo "$BIN" ;;
  version) echo "$TRAEFIK_VERSION" ;;
  image) image ;;
  up) shift; cmd_up "$@" ;;
  default) shift; cmd_default "$@" ;;
  names) shift; cmd_names "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  -h | --help | help) sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
  *) die "usage: cluster/traefik.sh path|version|image|up|default on|off|names add|remove NAME...|down|status" ;;
esac
