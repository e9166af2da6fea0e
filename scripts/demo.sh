#!/usr/bin/env bash
# The demo, from a fresh clone: install, build, start the local cluster (or reuse it), point
# devtool at it, and run the sample application through devtool. Steps whose feature is not built
# yet are skipped with a note, never faked.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "Installing npm packages"
  npm ci --no-audit --no-fund
fi
say "Building devtool"
node scripts/build.mjs
devtool() { node "$PWD/dist/devtool.cjs" "$@"; }

say "Starting the local Kubernetes cluster (first run builds it from source; later runs reuse it)"
kubeconfig=$(bash cluster/cluster.sh up | tail -n 1)
export KUBECONFIG="$kubeconfig"
export DEVTOOL_HOME="${DEVTOOL_HOME:-$PWD/.devtool}"

say "Pointing devtool at it"
devtool version
devtool context use devtool-local --namespace devtool-demo --registry localhost:5000
devtool context list
devtool context show

say "Deploying the sample application and starting a dev container"
if devtool deploy --help >/dev/null 2>&1 && ! devtool deploy --file examples/demo/devtool.yml 2>/tmp/devtool-demo.err; then
  code=$?
  if [ "$code" -eq 3 ]; then
    echo "skipped: $(cat /tmp/devtool-demo.err)"
  else
    cat /tmp/devtool-demo.err >&2
    exit "$code"
  fi
fi
echo
echo "The cluster keeps running: KUBECONFIG=$kubeconfig kubectl get pods -A"
echo "Stop it with: npm run cluster:down"
