#!/usr/bin/env bash
# The demo, from a fresh clone: install, build, start the local cluster (or reuse it), point
# devtool at it, deploy the sample application, and start a dev container. A step whose feature
# is not built yet says so and is skipped, never faked.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "Installing npm packages"
  npm ci --no-audit --no-fund
fi
say "Building devtool"
node scripts/build.mjs
root=$PWD
devtool() { node "$root/dist/devtool.cjs" "$@"; }

say "Starting the local Kubernetes cluster (first run builds it from source; later runs reuse it)"
kubeconfig=$(bash cluster/cluster.sh up | tail -n 1)
export KUBECONFIG="$kubeconfig"
export DEVTOOL_HOME="${DEVTOOL_HOME:-$PWD/.devtool}"

say "Pointing devtool at it"
devtool version
devtool context use devtool-local --namespace devtool-demo --registry localhost:5000
devtool context list
devtool context show

say "Deploying the sample application (examples/demo/compose.yaml)"
export DEVTOOL_ENDPOINT_DOMAIN="${DEVTOOL_ENDPOINT_DOMAIN:-demo.devtool.local}"
(cd examples/demo && devtool deploy --name demo --wait --timeout 5m)
(cd examples/demo && devtool endpoints --name demo)
KUBECONFIG="$kubeconfig" bash cluster/cluster.sh kubectl get pods,svc,ingress -n devtool-demo

say "Starting a development container"
set +e
(cd examples/demo && devtool up demo 2>/tmp/devtool-demo.err)
code=$?
set -e
if [ "$code" -eq 3 ]; then
  echo "skipped: $(cat /tmp/devtool-demo.err)"   # exit 3: the feature is not in this build
elif [ "$code" -ne 0 ]; then
  cat /tmp/devtool-demo.err >&2
  exit "$code"
fi
echo
echo "The cluster keeps running: KUBECONFIG=$kubeconfig kubectl get pods -A"
echo "Stop it with: npm run cluster:down"
