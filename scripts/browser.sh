#!/usr/bin/env bash
# The browser the end-to-end tests drive: Debian's Chromium, headless, and NSS's certutil, with
# which a test makes that browser trust the local CA (test/e2e/browser.ts). Nothing else is
# downloaded: playwright-core drives the installed browser and fetches none of its own.
#
#   bash scripts/browser.sh path    install what is missing, print the browser's path
set -euo pipefail

declare -A PACKAGES=([chromium]=/usr/bin/chromium [libnss3-tools]=/usr/bin/certutil)

ensure() {
  local missing=() p
  for p in "${!PACKAGES[@]}"; do [[ -x ${PACKAGES[$p]} ]] || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  command -v apt-get >/dev/null || { echo "apt-get not found; install by hand: ${missing[*]}" >&2; exit 1; }
  echo "installing Debian packages: ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
}

case ${1:-} in
  path)
    ensure
    echo "${PACKAGES[chromium]}"
    ;;
  *)
    echo "usage: $0 path" >&2
    exit 2
    ;;
esac
