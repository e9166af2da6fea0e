#!/usr/bin/env bash
# npm run --silent service:user -- NAME [--admin | --disable | --enable | --delete]: a user of the
# devtool service on the local cluster (installed by `npm run service:up`), made (or disabled,
# enabled, deleted) by the service program's operator commands `create-user`, `disable-user`,
# `enable-user`, `delete-user` inside a running, ready service pod (`kubectl exec`, the way an
# operator does it on any cluster). Made or enabled, the last stdout line is the user's API token;
# a refusal (a taken or unknown name) is one line on stderr and a non-zero exit.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
NAMESPACE=${DEVTOOL_SERVICE_NAMESPACE:-devtool}
SELECTOR=app.kubernetes.io/component=service
die() { printf 'service:user: %s\n' "$1" >&2; exit "${2:-1}"; }

usage="usage: npm run --silent service:user -- NAME [--admin | --disable | --enable | --delete]"
[[ $# -ge 1 && $# -le 2 && $1 != -* ]] || die "$usage" 2
[[ $# -eq 1 || $2 =~ ^--(admin|disable|enable|delete)$ ]] || die "unexpected \"$2\"; $usage" 2
[[ $EUID -eq 0 ]] || die "must run as root (the local cluster's admin kubeconfig is root's)"

kctl() { bash "$root/cluster/cluster.sh" kubectl -n "$NAMESPACE" "$@"; }
# A ready pod that is not being deleted (a terminating one may be gone before the command ends).
# shellcheck disable=SC2016 # a Go template's variable
tmpl='{{range .items}}{{$pod := .metadata.name}}{{if not .metadata.deletionTimestamp}}{{range .status.conditions}}{{if and (eq .type "Ready") (eq .status "True")}}{{$pod}}{{"\n"}}{{end}}{{end}}{{end}}{{end}}'
pod=$(kctl get pods -l "$SELECTOR" -o go-template="$tmpl" 2>/dev/null | head -n 1) || true
[[ -n $pod ]] || die "no ready devtool service pod in namespace $NAMESPACE: start it with npm run service:up"

case ${2:-} in
  --disable | --enable | --delete) args=("${2#--}-user" "$1") ;;
  --admin) args=(create-user "$1" --admin) ;;
  *) args=(create-user "$1") ;;
esac
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# The program's own environment (POD_NAMESPACE, its ServiceAccount) is the pod's: exec inherits it.
if kctl exec "$pod" -c service -- node /app/devtool-service.cjs "${args[@]}" 2>"$err"; then
  exit 0
fi
# The program's one line (`devtool-service: user x already exists`), without kubectl's
# "command terminated with exit code N" after it.
line=$(grep -v '^command terminated with exit code' "$err" | sed 's/^devtool-service: //' | head -n 1)
die "${line:-kubectl exec into $pod failed}"
