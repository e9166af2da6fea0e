#!/usr/bin/env bash
# The demo's service part (scripts/demo.sh runs it last; it also runs alone, after `npm run build`):
# installs the devtool service on the local cluster (`npm run service:up`), creates a user
# (`npm run service:user`), logs in with its API token and shows the service context, then puts
# the local cluster's context back as the current one (the dev container of the demo uses it).
#
# The user's token is kept in $DEVTOOL_HOME/demo-user (0600) so that a later run logs in again as
# the same user; a user of that name made by another clone (whose token this one does not have)
# makes this run use a new name instead of failing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export DEVTOOL_HOME="${DEVTOOL_HOME:-$PWD/.devtool}"
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
devtool() { node "$root/dist/devtool.cjs" "$@"; }

say "Installing the devtool service on the cluster: npm run service:up"
url=$(bash scripts/service-up.sh | tail -n 1)
# The service's certificates are signed by the local cluster's own CA (made by service:up); the
# CLI trusts it this way until it keeps the CA the service hands out.
export NODE_EXTRA_CA_CERTS=${DEVTOOL_FRONT_DOOR_STATE:-/var/lib/devtool-front-door}/ca.crt
echo "The service answers at $url:"
curl -fsS --cacert "$NODE_EXTRA_CA_CERTS" "$url/api/v1/info" | node -e \
  'const i = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(`  version ${i.version}, endpoints under ${i.endpointDomain}, registry ${i.registry}, capabilities: ${i.capabilities.join(", ")}`)'

say "Creating a user with the operator command: npm run service:user -- NAME"
mkdir -p "$DEVTOOL_HOME"
saved=$DEVTOOL_HOME/demo-user # "NAME TOKEN" of the user an earlier run made
name='' token=''
if [[ -s $saved ]]; then
  read -r name token <"$saved"
  # Gone with a cluster that was deleted since (`cluster:down`): make a new one.
  if ! devtool context use "$url" --token "$token" >/dev/null 2>&1; then name='' token=''; fi
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
devtool context use "$url" --token "$token"
devtool context show

say "Back to the local cluster's context for the dev container"
devtool context use devtool-local --namespace devtool-demo --registry localhost:5000
echo "The service context stays stored: devtool context use $url switches to it (NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS trusts its CA)."
