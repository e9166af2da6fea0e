# shellcheck shell=bash
# Root filesystems and image layers without a container engine:
# debootstrap for Debian bases, chroot + apt-get for derived images, and
# plain tar for the layers (a derived image's layer holds only what apt
# changed, plus OCI whiteouts for what it deleted).

DEBIAN_MIRROR=${DEVTOOL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SECURITY_MIRROR=${DEVTOOL_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

# What never goes into a layer: the runtime mounts these.
LAYER_PRUNE=(\( -path ./proc -o -path ./sys -o -path ./dev \) -prune -o)

# Mounts a chroot needs for maintainer scripts: /proc, and a private /dev
# (tmpfs with the few device nodes apt and dpkg use; never the host's /dev).
chroot_mount() {
  local root=$1 dev
  mount -t proc proc "$root/proc"
  mount -t tmpfs -o mode=755,size=16m devtool-chroot-dev "$root/dev"
  for dev in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
    IFS=: read -r name major minor <<<"$dev"
    mknod -m 666 "$root/dev/$name" c "$major" "$minor"
  done
  ln -s /proc/self/fd "$root/dev/fd"
  mkdir -p "$root/dev/pts" "$root/dev/shm"
}

# Undo chroot_mount; also called from `down` for build dirs left behind.
chroot_umount() {
  local root=$1 m
  for m in dev proc; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
  done
  return 0
}

# in_chroot ROOT CMD: run a shell command in ROOT with a clean environment.
in_chroot() {
  local root=$1; shift
  chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c "$*"
}

# debootstrap_rootfs SUITE ROOT: minimal Debian, cleaned like the official
# images (no apt lists or caches, no logs, empty resolv.conf/hostname).
debootstrap_rootfs() {
  local suite=$1 root=$2
  debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
    "$suite" "$root" "$DEBIAN_MIRROR" || return 1
  chroot_umount "$root"
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $DEBIAN_MIRROR
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $DEBIAN_SECURITY_MIRROR
Suites: $suite-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # Containers have no init: package installs must not start services.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  # Keep images small: drop downloaded .debs and apt's binary caches after
  # every install (as Debian's official container images do).
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/docker-no-recommends"
  clean_rootfs "$root"
  : >"$root/etc/hostname"
}

clean_rootfs() {
  local root=$1
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/tmp/* "$root"/var/tmp/* \
    "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old
  mkdir -p "$root/var/lib/apt/lists/partial"
  find "$root/var/log" -type f -delete 2>/dev/null || true
  : >"$root/etc/resolv.conf"
}

# full_layer ROOT OUT: the whole tree as one gzip layer.
full_layer() {
  local root=$1 out=$2
  (cd "$root" && find . -mindepth 1 "${LAYER_PRUNE[@]}" -print0 | LC_ALL=C sort -z) >"$out.list"
  # proc, sys and dev are kept as empty directories (mount points).
  local d
  for d in proc sys dev; do [[ -d $root/$d ]] && printf '%s\0' "./$d" >>"$out.list"; done
  tar_layer "$out" -C "$root" -T "$out.list"
  rm -f "$out.list"
}

tar_layer() (
  set -o pipefail
  local out=$1; shift
  tar --create --file=- --numeric-owner --no-recursion --null --xattrs \
    --xattrs-include=security.capability "$@" | gzip -4 >"$out.tmp" &&
    mv "$out.tmp" "$out"
)

# apt_install_layer ROOT OUT PACKAGES...: install PACKAGES into ROOT (a base
# image's tree) and write the difference as layer OUT. prepare/finish hooks
# of the recipe run before and after the install, with $ROOT set.
apt_install_layer() {
  local root=$1 out=$2; shift 2
  local work
  work=$(dirname "$out")/diff.$$
  mkdir -p "$work/wh"
  (cd "$root" && find . -mindepth 1 "${LAYER_PRUNE[@]}" -print0 | LC_ALL=C sort -z) >"$work/before"
  touch "$work/marker"
  sleep 1 # ctimes below must be strictly newer than the marker

  cp /etc/resolv.conf "$root/etc/resolv.conf"
  chroot_mount "$root"
  local rc=0
  {
    ROOT=$root recipe_prepare &&
      in_chroot "$root" "apt-get update -q && apt-get install -y -q --no-install-recommends $*" &&
      ROOT=$root recipe_finish
  } || rc=$?
  chroot_umount "$root"
  ((rc == 0)) || return $rc
  clean_rootfs "$root"

  # Changed or new entries: anything whose inode changed after the marker
  # (ctime: dpkg keeps packaged mtimes, but cannot fake ctime).
  (cd "$root" && find . -mindepth 1 "${LAYER_PRUNE[@]}" -cnewer "$work/marker" -print0 |
    LC_ALL=C sort -z) >"$work/changed"
  (cd "$root" && find . -mindepth 1 "${LAYER_PRUNE[@]}" -print0 | LC_ALL=C sort -z) >"$work/after"
  # Deleted entries become whiteouts (.wh.<name>), the topmost one only.
  local p last=
  : >"$work/whiteouts"
  while IFS= read -r -d '' p; do
    [[ -n $last && $p == "$last"/* ]] && continue
    last=$p
    mkdir -p "$work/wh/$(dirname "$p")"
    : >"$work/wh/$(dirname "$p")/.wh.$(basename "$p")"
    printf '%s\0' "$(dirname "$p")/.wh.$(basename "$p")" >>"$work/whiteouts"
  done < <(LC_ALL=C comm -z -23 "$work/before" "$work/after")
  tar_layer "$out" -C "$root" -T "$work/changed" -C "$work/wh" -T "$work/whiteouts"
  rm -rf "$work"
}

# Certificate authorities the host's administrator added, in Debian's place
# for them. Images that carry ca-certificates get them too: behind a
# TLS-intercepting egress proxy (as on CI machines) pods could not reach the
# npm registry otherwise. Without such CAs this adds nothing.
HOST_CA_DIR=/usr/local/share/ca-certificates
host_cas_hash() {
  find "$HOST_CA_DIR" -type f -name '*.crt' -print0 2>/dev/null | LC_ALL=C sort -z |
    xargs -0 -r cat | sha256sum | cut -c1-16
}
add_host_cas() {
  local root=$1
  [[ -d $HOST_CA_DIR ]] || return 0
  cp -rL "$HOST_CA_DIR/." "$root/usr/local/share/ca-certificates/"
  in_chroot "$root" update-ca-certificates
}

# extract_layer LAYER ROOT: unpack a layer made by full_layer.
extract_layer() {
  mkdir -p "$2"
  tar -xzf "$1" -C "$2" --numeric-owner --xattrs --xattrs-include=security.capability
}
