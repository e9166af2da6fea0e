#!/usr/bin/env bash
# npm run lint: the checks that read the code without running it, all of them even when one fails:
#   Biome: formatting (no writes; `npm run format` writes) and lint rules (biome.json)
#   dependency-cruiser: the layers of src/, what ingress/ and server/ may reach, and import loops (.dependency-cruiser.cjs)
#   line length: no line over 160 characters, which the formatter cannot wrap (strings, comments)
#   docs check: in docs and code comments, cited repository paths exist, no citation a reader cannot
#     open, no dated figures in comments, docs within their sizes (scripts/docs-check/rules.ts)
#   ShellCheck: every shell script, with the files it sources (.shellcheckrc; Debian's package: scripts/shellcheck.sh)
#   gofmt: every Go file formatted (`gofmt -w FILE` writes); go vet: every Go module with code of ours
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
bin=node_modules/.bin
max=160
status=0

# sources PATTERN...: the files matching, tracked or new, that are in the work tree.
sources() {
  git ls-files --cached --others --exclude-standard -- "$@" | while IFS= read -r f; do [[ -f $f ]] && printf '%s\n' "$f"; done
}

$bin/biome check --error-on-warnings --max-diagnostics=200 || status=1

$bin/depcruise --config .dependency-cruiser.cjs api src ingress server || status=1

# The files Biome checks (biome.json), tracked or new; characters, not bytes (C.UTF-8).
long=$(git ls-files --cached --others --exclude-standard -- api src ingress server test bench scripts cluster buildkit |
  grep -E '\.(ts|mjs)$' | grep -vE '/(testdata|fixtures)/|\.generated\.' |
  xargs -r env LC_ALL=C.UTF-8 grep -nE "^.{$((max + 1)),}" | cut -c1-120)
if [ -n "$long" ]; then
  printf '%s\n' "$long"
  echo "$(printf '%s\n' "$long" | wc -l) lines over $max characters (shown cut): wrap the string or comment"
  status=1
fi

node --import tsx scripts/docs-check.ts || status=1

# ShellCheck reads its settings from .shellcheckrc; -x follows `source`d files.
mapfile -t scripts < <(sources '*.sh' .ci/run)
if shellcheck=$(bash scripts/shellcheck.sh path); then
  "$shellcheck" -x "${scripts[@]}" || status=1
else
  echo "ShellCheck is not available (above): the shell scripts are not checked"
  status=1
fi

# gofmt over every Go file, go vet in each module. The machine's Go, as the builds use it: never a
# downloaded toolchain, and go.mod and go.sum are never rewritten.
export PATH=$PATH:/usr/local/go/bin GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly
if command -v go >/dev/null; then
  unformatted=$(sources '*.go' | xargs -r gofmt -l) || status=1
  if [ -n "$unformatted" ]; then
    printf '%s\n' "$unformatted"
    echo "$(printf '%s\n' "$unformatted" | wc -l) Go files not formatted: gofmt -w FILE"
    status=1
  fi
  # A wrapper module's tools.go only pins an upstream program for its build and is never compiled: nothing to vet.
  code=$(sources '*.go' | grep -v '/tools\.go$')
  for mod in $(sources '*go.mod' | xargs -r -n1 dirname); do
    grep -q "^$mod/" <<<"$code" || continue
    if [[ $mod == agent/host ]]; then
      # The host bundle resolves the agent, the BuildKit client and the patched Syncthing only in
      # the copy agent/build.sh makes of it, with Syncthing's build tags.
      if ! { tags=$(bash agent/build.sh host-tags) && src=$(bash agent/build.sh host-src) && (cd "$src" && go vet -tags "$tags" ./...); }; then
        echo "go vet: findings in $mod (above)"
        status=1
      fi
      continue
    fi
    (cd "$mod" && go vet ./...) || { echo "go vet: findings in $mod (above)"; status=1; }
  done
else
  echo "go not found (on PATH or in /usr/local/go/bin): the Go files are not checked"
  status=1
fi
exit $status
