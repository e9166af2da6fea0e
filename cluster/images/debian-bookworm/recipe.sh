# Debian 12 minbase from deb.debian.org (lib/rootfs.sh: debootstrap_rootfs),
# the base of the nginx, redis and postgres images.
IMAGE=debian:bookworm
FROM=debootstrap
SUITE=bookworm
CMD=(bash)
