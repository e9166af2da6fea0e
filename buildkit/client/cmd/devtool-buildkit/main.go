// Command devtool-buildkit: the BuildKit client on its own, as a source
// checkout's builds and the runner image carry it (package buildkitclient has
// the program).
package main

import buildkitclient "devtool.dev/buildkit/client"

func main() { buildkitclient.Main() }
