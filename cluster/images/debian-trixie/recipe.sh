# Debian 13 minbase: the base of node:20, because Debian 12 only packages
# Node.js 18 while Debian 13 packages Node.js 20.
IMAGE=debian:trixie
FROM=debootstrap
SUITE=trixie
CMD=(bash)
