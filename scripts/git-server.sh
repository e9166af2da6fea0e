#!/usr/bin/env bash
# A git server reachable over HTTPS inside the local cluster, for pipeline tests and the demo (test
# infrastructure, not part of the product). Git's smart HTTP (`git http-backend` behind
# scripts/git-server.mjs) in a pod of the image node-git (cluster/images/node-git, built here),
# behind the front door's Ingress: https://git-server.<endpoint domain>/<name>.git, TLS from the
# front door's CA like any endpoint. Needs the front door (`npm run service:up`). Not git.<domain>:
# this machine's network answers that name itself (a 404 from another server).
#
#   scripts/git-server.sh up                 deploy or update it; prints its base URL
#   scripts/git-server.sh repo NAME DIR [--token TOKEN] [--branch BRANCH]
#                                            (re)create repository NAME.git from the files of DIR,
#                                            one commit on BRANCH (default main); with --token a
#                                            private one (HTTP basic auth, the token as password);
#                                            prints its clone URL
#
# Idempotent. Repositories live in the pod (emptyDir): a new pod starts empty, which tests do not
# mind (they make their repositories after `up`). Progress goes to stderr.
set -euo pipefail
exec 3>&1 1>&2

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../cluster/lib/common.sh
source "$root/cluster/lib/common.sh" # ENDPOINT_DOMAIN
NAMESPACE=devtool-git
HOST=git-server.$ENDPOINT_DOMAIN
CA=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}/ca.crt

gdie() { printf 'git-server: %s\n' "$*" >&2; exit 1; }
usage() { gdie "usage: $0 up | repo NAME DIR [--token TOKEN] [--branch BRANCH]"; }
[[ $EUID -eq 0 ]] || gdie "must run as root (the local cluster's admin kubeconfig is root's)"
kctl() { bash "$root/cluster/cluster.sh" kubectl -n "$NAMESPACE" "$@"; }

# The HTTP status of a GET (curl ARGS... URL), or curl's error and 000, on one line.
status_of() { local out; out=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "$@" 2>&1 | tr '\n' ' '); echo "${out% }"; }

# Whether the server answers through the front door; what it got is kept in $last_answer.
last_answer=''
answers() {
  last_answer=$(status_of --cacert "$CA" "https://$HOST/healthz")
  [[ $last_answer == 200 ]]
}

# Why the front door does not answer, layer by layer: the Service's ready endpoints, and the
# Service's address from this machine (the front door runs on the node's network and dials it).
diagnose() {
  local ip endpoints direct
  ip=$(kctl get service git-server -o jsonpath='{.spec.clusterIP}' 2>&1)
  endpoints=$(kctl get endpointslices -l kubernetes.io/service-name=git-server -o jsonpath='{range .items[*].endpoints[*]}{.addresses[0]}({.conditions.ready}) {end}' 2>&1)
  direct=$(status_of "http://$ip/healthz")
  echo "last answer: ${last_answer:-none}; Service $ip, ready endpoints: ${endpoints:-none}; http://$ip/healthz from this machine: $direct"
}

cmd_up() {
  [[ -s $CA ]] || gdie "no front door CA at $CA: run npm run service:up first"
  local image
  image=$(bash "$root/cluster/cluster.sh" image node-git | tail -n 1)
  bash "$root/cluster/cluster.sh" kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | bash "$root/cluster/cluster.sh" kubectl apply -f - >/dev/null
  kctl create configmap git-server --from-file=server.mjs="$root/scripts/git-server.mjs" --dry-run=client -o yaml | kctl apply -f - >/dev/null
  # The program's hash in the pod template: a changed program rolls the pod, an unchanged one does not.
  local program_hash
  program_hash=$(sha256sum <"$root/scripts/git-server.mjs" | cut -c1-16)
  kctl apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: git-server, labels: {app: git-server}}
spec:
  replicas: 1
  strategy: {type: Recreate}
  selector: {matchLabels: {app: git-server}}
  template:
    metadata:
      labels: {app: git-server}
      annotations: {devtool.dev/program-hash: "$program_hash"}
    spec:
      automountServiceAccountToken: false
      containers:
        - name: git
          image: $image
          command: [node, /program/server.mjs]
          env: [{name: GIT_ROOT, value: /srv/git}, {name: PORT, value: "8080"}]
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: {httpGet: {path: /healthz, port: http}, periodSeconds: 2}
          volumeMounts: [{name: program, mountPath: /program}, {name: repos, mountPath: /srv/git}]
      volumes:
        - {name: program, configMap: {name: git-server}}
        - {name: repos, emptyDir: {}}
---
apiVersion: v1
kind: Service
metadata: {name: git-server}
spec:
  selector: {app: git-server}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: git-server}
spec:
  ingressClassName: devtool
  rules:
    - host: $HOST
      http:
        paths: [{path: /, pathType: Prefix, backend: {service: {name: git-server, port: {name: http}}}}]
EOF
  kctl rollout status deploy/git-server --timeout 180s >/dev/null || gdie "the git server did not become ready: $(kctl get pods -o wide 2>&1 | tail -n +2)"
  # Seconds as a rule. A CI run once got 404 for minutes with the pod ready: the front door kept a
  # connection opened before kube-proxy routed the ClusterIP (ingress/translate.ts keeps none now);
  # diagnose says which layer fails if anything like it comes back.
  for _ in $(seq 1 120); do
    answers && { echo "https://$HOST" >&3; return 0; }
    sleep 1
  done
  gdie "https://$HOST/healthz does not answer through the front door after 120 s ($(diagnose))"
}

# A running pod of the server (one replica, Recreate: at most one).
server_pod() { kctl get pods -l app=git-server --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}' 2>/dev/null; }

cmd_repo() {
  local name=$1 dir=$2 token='' branch=main
  shift 2
  while [[ $# -gt 0 ]]; do
    case $1 in
      --token) token=${2:?--token needs a value}; shift 2 ;;
      --branch) branch=${2:?--branch needs a value}; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || gdie "invalid repository name \"$name\""
  [[ -d $dir ]] || gdie "no folder $dir"
  answers || cmd_up 3>/dev/null
  local pod
  pod=$(server_pod)
  [[ -n $pod ]] || gdie "no running git server pod"
  # The token goes in over stdin of its own exec, never as an argument (process lists, kubectl's
  # log); the repository moves into place with it, so it is never public for a moment.
  local pending=/srv/git/.token-$name
  if [[ -n $token ]]; then
    printf %s "$token" | kctl exec -i "$pod" -c git -- sh -c "cat >'$pending'" || gdie "storing the token of $name failed"
  fi
  # The folder's files (not its .git) become one commit on BRANCH.
  # shellcheck disable=SC2016 # run by the git container's shell
  tar -C "$dir" --exclude=.git -cf - . | kctl exec -i "$pod" -c git -- sh -euc '
    repo=/srv/git/$1.git pending=$3 work=$(mktemp -d)
    tar -C "$work" -xf -
    rm -rf "$repo.new"
    git -C "$work" init -q -b "$2"
    git -C "$work" add -A
    git -C "$work" -c user.name=devtool-tests -c user.email=tests@devtool.invalid commit -q -m "from git-server.sh repo" --allow-empty
    git clone -q --bare "$work" "$repo.new"
    if [ -f "$pending" ]; then mv "$pending" "$repo.new/devtool-token"; fi
    rm -rf "$work" "$repo" && mv "$repo.new" "$repo"
  ' sh "$name" "$branch" "$pending" >/dev/null || gdie "making repository $name failed"
  echo "https://$HOST/$name.git" >&3
}

case ${1:-} in
  up) [[ $# -eq 1 ]] || usage; cmd_up ;;
  repo) [[ $# -ge 3 ]] || usage; shift; cmd_repo "$@" ;;
  *) usage ;;
esac
