#!/usr/bin/env bash
# The demo, from a fresh clone: install, build, start the local cluster (or reuse it), point
# devtool at it, install the devtool service and its HTTPS front door on the cluster and log in to
# it with a user's token (scripts/demo-service.sh), deploy the sample application on the plain
# context and open its endpoint, then start a dev container.
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

# The devtool service on the same cluster: installed with its front door (which serves every
# endpoint under devtool.test over HTTPS, the plain context's too), a user made, logged in with its
# token; it ends with the local cluster's context current again.
bash scripts/demo-service.sh

say "Deploying the sample application on the plain context (examples/demo/compose.yaml)"
# The names the front door serves, resolving to the node here and in pods (cluster/dns.sh).
export DEVTOOL_ENDPOINT_DOMAIN="${DEVTOOL_ENDPOINT_DOMAIN:-devtool.test}"
(cd examples/demo && devtool deploy --file compose.yaml --name demo --wait --timeout 5m)
(cd examples/demo && devtool endpoints --name demo)
KUBECONFIG="$kubeconfig" bash cluster/cluster.sh kubectl get pods,svc,ingress -n devtool-demo
ca=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}/ca.crt
web_url=$(cd examples/demo && devtool endpoints --name demo --output json | node -e \
  'console.log(JSON.parse(require("fs").readFileSync(0, "utf8"))[0])')
echo "Its endpoint through the front door (a browser trusts it once $ca is imported): $web_url"
curl -fsS --cacert "$ca" "$web_url" | grep -o '<title>[^<]*</title>'

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
# The exact text: the dev volume may keep a live.txt of an earlier run, which says "saved on this
# machine" too. The time carries nanoseconds so the new text never equals an old one.
saved="saved on this machine at $(date +%T.%N)"
echo "$saved" > site/live.txt
for _ in $(seq 50); do [ "$(curl -fsS localhost:8080/live.txt 2>/dev/null)" = "$saved" ] && break; sleep 0.2; done
served=$(curl -fsS localhost:8080/live.txt)
echo "$served"
if [ "$served" != "$saved" ]; then
  echo "the dev container still serves another live.txt 10 s after the local edit (expected: $saved)" >&2
  exit 1
fi
devtool status web
cd "$root"

echo
echo "The dev container is active. From examples/demo:"
echo "  devtool exec web -- sh      a shell in it"
echo "  curl localhost:8080         the forwarded port (edit site/index.html and reload)"
echo "  devtool status web --info   file sync status and the sync services' addresses"
echo "  devtool down web            put the original web Deployment back"
echo
echo "Images (a build: section) are built by a builder this context does not have yet: start the local"
echo "BuildKit daemon with 'npm run buildkit:up', then: devtool context use devtool-local --builder tcp://127.0.0.1:1234"
echo "(on the service context, the cluster's hosted builder builds them)."
echo
echo "The cluster keeps running: KUBECONFIG=$kubeconfig kubectl get pods -A"
echo "Stop it with: npm run cluster:down"
