# shellcheck shell=bash disable=SC2034 # read by the scripts that source this one
# Where the release's images live: the registry and namespace the project publishes under, each image
# as <RELEASE_REGISTRY>/<name>:<version>. DEVTOOL_RELEASE_REGISTRY names another at release time (a
# team's own registry, or localhost:5000/<something> standing in for the public one in the tests);
# the packaged chart and the pushed indexes then name it.
RELEASE_REGISTRY=${DEVTOOL_RELEASE_REGISTRY:-ghcr.io/devtool-dev}
