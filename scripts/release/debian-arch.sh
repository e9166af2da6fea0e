# shellcheck shell=bash
# A Debian image for another architecture without running any of its programs (no QEMU, no
# chroot): its amd64 twin, built by the local cluster's recipes (cluster/lib/images.sh: debootstrap,
# apt-get in a chroot, maintainer scripts), gives the package set with exact versions and every file
# the maintainer scripts generated (/etc/passwd entries, /etc/alternatives, the CA bundle); each
# amd64 package's files are replaced by those of the same version for the other architecture,
# unpacked with dpkg-deb. What is not carried over: files generated per architecture (ld.so.cache,
# whose absence makes the loader search its default directories; gconv's module cache) and file
# capabilities a maintainer script sets (none of the release's images has one).
#
# The .debs are kept in $DEBS_CACHE/<arch>/ (apt's lists beside them), so a second build of the same
# package set is offline.

# foreign_packages ROOT: "name version" of every installed package of architecture amd64.
foreign_packages() {
  awk -v RS= -F'\n' '{
      name = ""; version = ""; arch = ""; installed = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^Package: /) name = substr($i, 10)
        else if ($i ~ /^Version: /) version = substr($i, 10)
        else if ($i ~ /^Architecture: /) arch = substr($i, 15)
        else if ($i ~ /^Status: .* installed$/) installed = 1
      }
      if (installed && arch == "amd64") print name, version
    }' "$1/var/lib/dpkg/status"
}

# deb_file ARCH NAME VERSION: where apt-get download puts that package (an epoch's colon as %3a).
deb_file() { echo "$DEBS_CACHE/$1/${2}_${3//:/%3a}_$1.deb"; }

# arch_packages ROOT ARCH: "name version" of the ARCH build of each of ROOT's amd64 packages: the
# same version, or the same with another binary-only rebuild suffix (+bN: rebuilds are per
# architecture, grep 3.11-4 on amd64 is 3.11-4+b1 on arm64). The packages are downloaded from the
# sources ROOT's apt names into a private apt state; the answer is kept per package set, so a
# second build of the same set asks no mirror.
arch_packages() {
  local root=$1 arch=$2 dir=$DEBS_CACHE/$2 set resolved
  set=$(foreign_packages "$root")
  resolved=$dir/resolved-$(sha256sum <<<"$set" | cut -c1-16)
  if [[ -s $resolved ]] && while read -r name version; do [[ -s $(deb_file "$arch" "$name" "$version") ]] || exit 1; done <"$resolved"; then
    cat "$resolved"
    return 0
  fi
  mkdir -p "$dir/state/lists/partial" "$dir/state/preferences.d" "$dir/cache/archives/partial"
  : >"$dir/state/status" && : >"$dir/state/sources.list" && : >"$dir/state/preferences"
  local apt_options=(-o "Dir::State=$dir/state" -o "Dir::State::status=$dir/state/status"
    -o "Dir::Cache=$dir/cache" -o "Dir::Etc::SourceList=$dir/state/sources.list"
    -o "Dir::Etc::SourceParts=$root/etc/apt/sources.list.d" -o "Dir::Etc::Preferences=$dir/state/preferences"
    -o "Dir::Etc::PreferencesParts=$dir/state/preferences.d" -o "APT::Architecture=$arch"
    -o "APT::Architectures::=$arch" -o Acquire::Languages=none -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  apt-get -q "${apt_options[@]}" update >&2 || return 1
  local names
  mapfile -t names < <(cut -d' ' -f1 <<<"$set")
  awk 'NR == FNR { want[$1] = $2; next }
      { name = $1; version = $3; gsub(/\+b[0-9]+$/, "", version)
        w = want[name]; gsub(/\+b[0-9]+$/, "", w)
        if (name in want && version == w && !(name in got)) { got[name] = $3; print name, $3 } }
      END { for (n in want) if (!(n in got)) { print "no " n " " want[n] " for this architecture" > "/dev/stderr"; exit 1 } }' \
    <(echo "$set") <(apt-cache "${apt_options[@]}" madison "${names[@]}") | LC_ALL=C sort >"$resolved.tmp" || return 1
  local name version missing=()
  while read -r name version; do
    [[ -s $(deb_file "$arch" "$name" "$version") ]] || missing+=("$name:$arch=$version")
  done <"$resolved.tmp"
  if ((${#missing[@]} > 0)); then
    (cd "$dir" && apt-get -q "${apt_options[@]}" download "${missing[@]}" >&2) || return 1
  fi
  mv "$resolved.tmp" "$resolved" && cat "$resolved"
}

# debian_arch_twin ROOT ARCH: turn ROOT (the flattened amd64 image) into the ARCH image, in place.
debian_arch_twin() {
  local root arch=$2 info name version deb list path
  root=$(realpath "$1") && info=$root/var/lib/dpkg/info
  local packages
  packages=$(arch_packages "$root" "$arch") || { echo "downloading the $arch packages failed" >&2; return 1; }
  while read -r name version; do
    deb=$(deb_file "$arch" "$name" "$version")
    list=$info/$name:amd64.list
    [[ -f $list ]] || list=$info/$name.list
    # The amd64 package's files go; directories stay (others may share them), and so do the
    # usr-merge links a bookworm package's list names as directories (/bin -> usr/bin) ...
    while IFS= read -r path; do
      [[ -d $root$path ]] || rm -f "$root$path"
    done <"$list"
    # ... and the ARCH package's come, through the usr-merge symbolic links (/bin -> usr/bin).
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink --numeric-owner -C "$root" || return 1
    # dpkg's record of it: the same names with the new architecture, the new file list and sums.
    local stem=$name
    [[ -f $info/$name:amd64.list ]] && stem=$name:$arch
    for path in "$info/$name:amd64".*; do
      [[ -e $path ]] && mv "$path" "$info/$name:$arch.${path##*.}"
    done
    dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' -e 's|^$|/.|' >"$info/$stem.list"
    dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./md5sums >"$info/$stem.md5sums" 2>/dev/null || rm -f "$info/$stem.md5sums"
  done <<<"$packages"
  awk -v arch="$arch" 'NR == FNR { version[$1] = $2; next }
      /^Package: / { name = substr($0, 10) }
      /^Architecture: amd64$/ { $0 = "Architecture: " arch }
      /^Version: / && name in version { $0 = "Version: " version[name] }
      { print }' <(echo "$packages") "$root/var/lib/dpkg/status" >"$root/var/lib/dpkg/status.new" &&
    mv "$root/var/lib/dpkg/status.new" "$root/var/lib/dpkg/status"
  [[ -f $root/var/lib/dpkg/arch-native ]] && echo "$arch" >"$root/var/lib/dpkg/arch-native"
  # Generated for amd64 only: the loader's cache, and what is left in amd64's library directories.
  rm -f "$root/etc/ld.so.cache"
  find "$root" -xdev -depth -path '*/x86_64-linux-gnu*' ! -type d -delete
  find "$root" -xdev -depth -path '*/x86_64-linux-gnu*' -type d -empty -delete
  local left
  left=$(node "$RELEASE_DIR/elf.mjs" find "$root" x86-64) || return 1
  [[ -z $left ]] || { printf 'amd64 programs left in the %s image:\n%s\n' "$arch" "$left" >&2; return 1; }
}
