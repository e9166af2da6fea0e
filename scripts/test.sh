#!/usr/bin/env bash
# The whole test suite, from a fresh clone: install dependencies, type-check, lint, build, unit tests,
# then end-to-end tests (the built CLI, and the local cluster, which is started or reused).
# Ends with one line "N passed, N failed" summing both runs.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

step() { printf '\n==> %s\n' "$*"; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci"
  npm ci --no-audit --no-fund || exit 1
fi
step "typecheck"
npx tsc --noEmit || exit 1
step "lint: format, rules, layers, line length (npm run lint; npm run format fixes the format)"
bash scripts/lint.sh || exit 1
step "build"
node scripts/build.mjs || exit 1

log=$(mktemp)
trap 'rm -f "$log" "$log".*' EXIT
status=0
# go_tests DIR NAME [FLAGS...]: go test -v: one "--- PASS/FAIL" line per test here; on a failure, the whole output of that
# module's run too (a failing test's logs say why, and a flaky one may not fail again). Returns 1 on a failure.
go_tests() {
  local dir=$1 out=$log.go.$2
  (cd "$dir" && go test -count=1 -v "${@:3}" ./... 2>&1) >"$out"
  grep -E '^(--- |ok|FAIL|panic)' "$out" || true
  cat "$out" >>"$log.go"
  if grep -qE '^(FAIL|panic)' "$out"; then
    printf '\n--- the whole output of go test in %s, for the failure above:\n' "$dir"
    cat "$out"
    return 1
  fi
}
# The unit and Go tests need no cluster and mostly one core, while the end-to-end tests mostly wait on
# the cluster: they run beside the infrastructure's preparation and the end-to-end tests, and their
# output is printed after those. Exit status: 1 if any of them failed.
cluster_free_tests() {
  local failed=0
  step "unit tests"
  node scripts/run-tests.mjs unit 2>&1 || failed=1
  step "agent tests (Go)"
  go_tests agent agent || failed=1
  step "host bundle tests (Go)"
  go_tests "$(bash agent/build.sh host-src)" host -tags "$(bash agent/build.sh host-tags)" || failed=1
  # The agent's install and supervise tests again, on the host bundle laid out as the image lays it out.
  DEVTOOL_AGENT_TEST_BUNDLE=$(bash agent/build.sh host-path linux "$(go env GOARCH)" | tail -n 1) \
    go_tests agent agent-bundle -run 'TestInstall|TestSupervise' || failed=1
  step "BuildKit client tests (Go)"
  go_tests buildkit/client buildkit || failed=1
  step "hosted builder gateway tests (Go)"
  go_tests buildkit/gateway buildkit-gateway || failed=1
  return "$failed"
}
step "unit and Go tests: started beside the end-to-end tests; their output follows those"
cluster_free_tests >"$log.beside" 2>&1 &
beside_pid=$!
# The end-to-end tests' infrastructure, before them: on a fresh machine these are long Go builds
# (Kubernetes from source, BuildKit, Syncthing, Helm, Traefik), which must not count against any one test's
# 10-minute limit. Each is cached outside the clone; a warm run only checks and reuses. helm is not
# put on this PATH: the tests that install charts put it on the CLI's (test/e2e/cluster.ts).
step "test infrastructure: local cluster, Docker daemon, BuildKit daemon, devtool-bin image, helm and traefik (cached), Chromium"
infra() {
  local started=$SECONDS
  "$@" >/dev/null || { echo "FAILED: $* (its log lines are above)"; return 1; }
  echo "ready in $((SECONDS - started))s: $*"
}
infra_failed=0
# One node: the tests that add nodes remove them in their `after`, and a run cut off before that
# must not leave the next run's tests a second node.
if infra env DEVTOOL_CLUSTER_NODES=1 bash cluster/cluster.sh up && infra bash cluster/dockerd.sh up && infra bash buildkit/buildkitd.sh up && infra bash agent/build.sh localhost:5000 &&
  infra bash cluster/helm.sh path && infra bash cluster/traefik.sh path && infra bash scripts/browser.sh path; then
  # Service contexts name the agent by its version tag (localhost:5000/devtool-bin:<version>), which
  # every build pushes again: the node must not keep starting the agent of an earlier build.
  bash cluster/cluster.sh forget-image "$(bash agent/build.sh image-ref)"
  # A run cut off before its cleanup (a killed CI job) leaves its test namespaces, and their dev
  # pods keep two cores busy: gone before this run's tests start (test/e2e/cluster.ts labels them).
  infra bash cluster/cluster.sh kubectl delete namespace -l devtool.dev/e2e=true --wait=true --timeout=180s ||
    echo "(leftover test namespaces still terminating; the tests go on)"
  # And the users the tests made on the installed service (test/e2e/installed-service.ts; their Secrets
  # are owned by their ServiceAccounts, so the garbage collector removes them).
  bash cluster/cluster.sh kubectl -n devtool delete serviceaccount -l devtool.dev/e2e=true --ignore-not-found >/dev/null || true
  step "end-to-end tests"
  node scripts/run-tests.mjs e2e 2>&1 | tee -a "$log" || status=1
else
  # Counted as one failure: the end-to-end tests could not run at all.
  infra_failed=1
  status=1
fi
wait "$beside_pid" || status=1
cat "$log.beside" >>"$log"
cat "$log.beside"

# node's spec reporter ends each run with "ℹ pass N" / "ℹ fail N"; go test -v prints a
# "--- PASS"/"--- FAIL" line per top-level test.
passed=$(( $(grep -E '^ℹ pass [0-9]+' "$log" | awk '{s+=$3} END {print s+0}') + $(grep -cE '^--- PASS' "$log.go") ))
failed=$(( $(grep -E '^ℹ fail [0-9]+' "$log" | awk '{s+=$3} END {print s+0}') + $(grep -cE '^--- FAIL' "$log.go") + infra_failed ))
echo
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ] && [ "$status" -eq 0 ]
