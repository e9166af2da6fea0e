#!/usr/bin/env bash
# The demo's service part (scripts/demo.sh runs it before the plain context's deploy, whose endpoint
# its front door serves; it also runs alone, after `npm run build`):
# installs the devtool service on the local cluster (`npm run service:up`), creates a user
# (`npm run service:user`), logs in with its API token and shows the service context, creates a
# namespace through the service, deploys the sample application there with the user's own
# credentials and fetches its endpoint over HTTPS, then puts the local cluster's context back as
# the current one (the dev container of the demo uses it).
#
# The user's token is kept in $DEVTOOL_HOME/demo-user (0600) so that a later run logs in again as
# the same user; a user of that name made by another clone (whose token this one does not have)
# makes this run use a new name instead of failing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export DEVTOOL_HOME="${DEVTOOL_HOME:-$PWD/.devtool}"
# demo.sh exports it; run alone, the local cluster's (started if it is not running).
export KUBECONFIG="${KUBECONFIG:-$(bash cluster/cluster.sh up | tail -n 1)}"
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
devtool() { node "$root/dist/devtool.cjs" "$@"; }

say "Installing the devtool service on the cluster: npm run service:up"
url=$(bash scripts/service-up.sh | tail -n 1)
# The service's certificates are signed by the local cluster's own CA (made by service:up): the
# first login is told to trust it (DEVTOOL_CA_CERT); the context then keeps the CA the service
# announces and uses it for every later call.
ca=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}/ca.crt
echo "The service answers at $url:"
# shellcheck disable=SC2016 # JavaScript for node
curl -fsS --cacert "$ca" "$url/api/v1/info" | node -e \
  'const i = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(`  version ${i.version}, endpoints under ${i.endpointDomain}, registry ${i.registry}, capabilities: ${i.capabilities.join(", ")}`)'

say "Creating a user with the operator command: npm run service:user -- NAME"
mkdir -p "$DEVTOOL_HOME"
saved=$DEVTOOL_HOME/demo-user # "NAME TOKEN" of the user an earlier run made
name='' token=''
if [[ -s $saved ]]; then
  read -r name token <"$saved"
  # Gone with a cluster that was deleted since (`cluster:down`): make a new one.
  if ! DEVTOOL_CA_CERT=$ca devtool context use "$url" --token "$token" >/dev/null 2>&1; then name='' token=''; fi
fi
if [[ -n $token ]]; then
  echo "reusing the user $name made by an earlier run of the demo"
else
  name=demo
  if ! out=$(bash scripts/service-user.sh "$name" 2>&1); then
    grep -q 'already exists' <<<"$out" || { echo "$out" >&2; exit 1; }
    name=demo-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
    echo "the user demo exists already (made by another clone): creating $name instead"
    out=$(bash scripts/service-user.sh "$name")
  fi
  token=$(tail -n 1 <<<"$out")
  echo "created the user $name with its namespace $name-devtool; its API token is kept in $saved (mode 0600)"
  (umask 077 && echo "$name $token" >"$saved")
fi

say "Logging in with its API token: devtool context use $url --token ..."
DEVTOOL_CA_CERT=$ca devtool context use "$url" --token "$token"
devtool context show

say "A namespace of the user's own, through the service: devtool namespace create"
# The endpoint domain is the one the service announces (devtool.test), not the plain-cluster demo's.
unset DEVTOOL_ENDPOINT_DOMAIN
ns=$name-apps
if devtool namespace list | awk 'NR > 1 { print $1 }' | grep -qx "$ns"; then
  devtool namespace use "$ns"
else
  devtool namespace create "$ns"
fi
devtool namespace list

say "Deploying the sample application there, with the user's own short-lived credentials"
(cd examples/demo && devtool deploy --file compose.yaml --name demo --wait --timeout 5m)
app_url=$(cd examples/demo && devtool endpoints --name demo --output json | node -e \
  'console.log(JSON.parse(require("fs").readFileSync(0, "utf8"))[0])')
echo "Its endpoint, over HTTPS through the front door (certificate signed by the cluster's CA): $app_url"
curl -fsS --cacert "$ca" "$app_url" | grep -o '<title>[^<]*</title>'

say "Back to the local cluster's context for the dev container"
devtool context use devtool-local --namespace devtool-demo --registry localhost:5000
echo "The service context stays stored, with its CA: devtool context use $url switches to it."
