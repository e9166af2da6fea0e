#!/usr/bin/env bash
# The demo, from a fresh clone: install, build, start the local cluster (or reuse it), point
# devtool at it, deploy the sample application, start a dev container, then install the devtool
# service on the cluster and log in to it with a user's token (scripts/demo-service.sh). A step
# whose feature is not built yet says so and is skipped, never faked.
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

# What an earlier run of the demo left, from this clone or another one (maybe deleted since): its
# `devtool up web` still running in the background (it holds localhost:8080), and web in development.
for pid in $(pgrep -f 'devtool.cjs up web' || true); do
  case "$(readlink "/proc/$pid/cwd" 2>/dev/null)" in
    */examples/demo | */examples/demo" (deleted)") kill "$pid" 2>/dev/null && echo "stopped the 'devtool up web' of an earlier demo run (pid $pid)" ;;
  esac
done
if down_out=$(cd examples/demo && devtool down web 2>&1); then
  # Left by the demo of a clone deleted since: `down` took it over (docs/dev-containers.md).
  if grep -q 'taking it over' <<<"$down_out"; then echo "$down_out"; fi
else
  if grep -q 'was activated from' <<<"$down_out"; then
    # Only `down` in that clone, which still exists, could restore web (a deleted one is taken over by
    # the `down` above); the namespace is the demo's own, so start it afresh.
    echo "web was left in development by the demo of another clone: deleting the demo's namespace devtool-demo to start afresh"
    bash cluster/cluster.sh kubectl delete namespace devtool-demo --wait=true --timeout=3m
  fi
fi

say "Deploying the sample application (examples/demo/compose.yaml)"
export DEVTOOL_ENDPOINT_DOMAIN="${DEVTOOL_ENDPOINT_DOMAIN:-demo.devtool.local}"
(cd examples/demo && devtool deploy --file compose.yaml --name demo --wait --timeout 5m)
(cd examples/demo && devtool endpoints --name demo)
KUBECONFIG="$kubeconfig" bash cluster/cluster.sh kubectl get pods,svc,ingress -n devtool-demo

say "Building the devtool-bin image (in-container agent and Syncthing) for this version"
# The pushed reference carries its digest, so the node never starts an older agent of the same tag.
DEVTOOL_BIN_IMAGE=$(bash agent/build.sh localhost:5000 | tail -n 1)
export DEVTOOL_BIN_IMAGE

say "Starting a development container for web: devtool up web"
# Without a terminal `up` keeps its tunnel and forwards open until it is stopped, so it runs in the
# background here, as it would in another terminal.
cd examples/demo
setsid nohup node "$root/dist/devtool.cjs" up web >"$DEVTOOL_HOME/up-web.log" 2>&1 </dev/null &
# Ready means: dev pod running, first file sync done, forwards listening.
for _ in $(seq 180); do
  grep -q 'Forwarding until interrupted' "$DEVTOOL_HOME/up-web.log" 2>/dev/null && break
  sleep 1
done
# shellcheck disable=SC2016 # expanded by the dev container's shell
if ! devtool exec web -- sh -c 'echo "$GREETING: $(hostname)"'; then
  echo "the dev container did not come up; devtool up said:" >&2
  cat "$DEVTOOL_HOME/up-web.log" >&2
  exit 1
fi
say "Running the app in the dev container and reaching it through the forwarded port 8080"
devtool exec web -- sh -c 'nginx && echo "nginx started in the dev container"'
for _ in $(seq 20); do curl -fsS localhost:8080 >/dev/null 2>&1 && break; sleep 0.5; done
curl -fsS localhost:8080 | grep -o '<title>.*</title>'
say "Editing a file locally: file sync carries it into the dev container, nginx serves it"
echo "saved on this machine at $(date +%T)" > site/live.txt
for _ in $(seq 50); do curl -fsS localhost:8080/live.txt 2>/dev/null | grep -q "saved on this machine" && break; sleep 0.2; done
curl -fsS localhost:8080/live.txt
devtool status web
cd "$root"

# The devtool service on the same cluster: installed, a user made, logged in with its token.
bash scripts/demo-service.sh

echo
echo "The dev container is active. From examples/demo:"
echo "  devtool exec web -- sh      a shell in it"
echo "  curl localhost:8080         the forwarded port (edit site/index.html and reload)"
echo "  devtool status web --info   file sync status and the sync services' addresses"
echo "  devtool down web            put the original web Deployment back"
echo
echo "The cluster keeps running: KUBECONFIG=$kubeconfig kubectl get pods -A"
echo "Stop it with: npm run cluster:down"
