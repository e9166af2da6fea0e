# shellcheck shell=bash
# Go builds of the cluster's own binaries, cached under $CACHE/bin/<name>-<key>.
# The key hashes the wrapper module (go.mod + go.sum pin every dependency),
# the Go toolchain version and the build flags, so a change to any of them
# rebuilds, and nothing else does. GOCACHE/GOMODCACHE stay at Go's defaults.

K8S_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

# Version stamps the release build sets; without them the binaries report
# v0.0.0-master, which shows up in `kubectl version` and node status.
k8s_ldflags() {
  local minor flags="-s -w" p
  minor=$(cut -d. -f2 <<<"$K8S_VERSION")
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    flags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}

# build_key MODULE_DIR EXTRA...: cache key for a wrapper module's build.
build_key() {
  local dir=$1; shift
  { cat "$dir"/go.mod "$dir"/go.sum 2>/dev/null; go version; printf '%s\n' "$@"; } |
    sha256sum | cut -c1-16
}

# go_build NAME MODULE_DIR OUTDIR LDFLAGS PKG...: build PKGs (main packages)
# into OUTDIR atomically: a half-finished build never looks like a cache hit.
go_build() {
  local name=$1 dir=$2 out=$3 ldflags=$4; shift 4
  local tmp="$out.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp" "$LOGS"
  log "building $name (go build, cached in $out; see $LOGS/build-$name.log)"
  local start=$SECONDS
  # CGO off: static binaries that do not depend on the host's libc.
  if ! (cd "$dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
    go build -trimpath -ldflags="$ldflags" -o "$tmp/" "$@") \
    </dev/null >>"$LOGS/build-$name.log" 2>&1; then
    rm -rf "$tmp"
    fail_component "build-$name" "go build failed"
  fi
  rm -rf "$out" && mv "$tmp" "$out"
  log "built $name in $((SECONDS - start))s"
}

ensure_go() {
  command -v go >/dev/null || die "the Go toolchain (go) is required to build the cluster binaries"
}

# Sets K8S_BIN to the directory holding (or to hold) the Kubernetes binaries.
k8s_bin_dir() {
  K8S_BIN=$CACHE/bin/k8s-$K8S_VERSION-$(build_key "$CLUSTER_DIR/k8s" "$(k8s_ldflags)" "${K8S_COMMANDS[*]}")
}

ensure_k8s_bins() {
  local c missing=
  k8s_bin_dir
  for c in "${K8S_COMMANDS[@]}"; do [[ -x $K8S_BIN/$c ]] || missing=1; done
  [[ -z $missing ]] && return 0
  local pkgs=()
  for c in "${K8S_COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  # One `go build` for all commands: they share most packages, so this
  # compiles each package once.
  go_build "k8s-$K8S_VERSION" "$CLUSTER_DIR/k8s" "$K8S_BIN" "$(k8s_ldflags)" "${pkgs[@]}"
}

# Sets COREDNS_BIN to the coredns binary.
ensure_coredns_bin() {
  local key dir
  key=$(build_key "$CLUSTER_DIR/coredns" "-s -w")
  dir=$CACHE/bin/coredns-$COREDNS_VERSION-$key
  COREDNS_BIN=$dir/coredns
  [[ -x $COREDNS_BIN ]] && return 0
  go_build "coredns-$COREDNS_VERSION" "$CLUSTER_DIR/coredns" "$dir" "-s -w" github.com/coredns/coredns
}

# Sets CRANE to the crane binary.
ensure_crane() {
  local key dir
  key=$(build_key "$CLUSTER_DIR/crane" "-s -w")
  dir=$CACHE/bin/crane-$CRANE_VERSION-$key
  CRANE=$dir/crane
  [[ -x $CRANE ]] && return 0
  go_build "crane-$CRANE_VERSION" "$CLUSTER_DIR/crane" "$dir" "-s -w" \
    github.com/google/go-containerregistry/cmd/crane
}

# Sets PAUSE_BIN to the pause binary (the pod sandbox process).
ensure_pause_bin() {
  local key dir
  key=$(build_key "$CLUSTER_DIR/images/pause" "-s -w" "$(cat "$CLUSTER_DIR/images/pause/main.go")")
  dir=$CACHE/bin/pause-$key
  PAUSE_BIN=$dir/pause
  [[ -x $PAUSE_BIN ]] && return 0
  go_build pause "$CLUSTER_DIR/images/pause" "$dir" "-s -w" .
}

# Sets LOCAL_PATH_BIN to Rancher's local-path-provisioner, the default
# StorageClass's provisioner (lib/addons.sh).
ensure_local_path_bin() {
  local key dir
  key=$(build_key "$CLUSTER_DIR/local-path" "-s -w")
  dir=$CACHE/bin/local-path-provisioner-$LOCAL_PATH_VERSION-$key
  LOCAL_PATH_BIN=$dir/local-path-provisioner
  [[ -x $LOCAL_PATH_BIN ]] && return 0
  go_build "local-path-provisioner-$LOCAL_PATH_VERSION" "$CLUSTER_DIR/local-path" "$dir" "-s -w" \
    github.com/rancher/local-path-provisioner
}

# All binaries. The Kubernetes build dominates a cold start; the small ones
# are built concurrently with it (2 cores are kept busy by either).
ensure_binaries() {
  ensure_go
  local pids=() f
  ensure_k8s_bins & pids+=($!)
  { ensure_crane && ensure_pause_bin && ensure_coredns_bin && ensure_local_path_bin; } & pids+=($!)
  for f in "${pids[@]}"; do wait "$f" || exit 1; done
  # The background subshells set the variables in their own copies; set them
  # here again (every build is a cache hit now).
  ensure_k8s_bins; ensure_crane; ensure_pause_bin; ensure_coredns_bin; ensure_local_path_bin
}
