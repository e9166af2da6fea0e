// Command devtool-host is devtool's three host programs in one binary: Syncthing,
// devtool-agent and devtool-buildkit. A release's platform package carries it
// instead of the three (docs/decisions/0207-one-host-binary.md: the Go runtime,
// the standard library and the shared modules once, not three times).
//
// The program is the one argv[0] names (a file or link called syncthing,
// devtool-agent or devtool-buildkit, .exe on Windows), else the first argument:
//
//	devtool-host syncthing --home DIR ...
//	devtool-host devtool-agent keygen
//	devtool-host devtool-buildkit < request.json
//
// Syncthing must not re-execute itself, which would lose the first argument:
// devtool runs it without its monitor process (STMONITORED=yes, both ends) and
// restarts it itself.
package main

import (
	"fmt"
	"os"

	agent "devtool.dev/agent"
	buildkitclient "devtool.dev/buildkit/client"
	"github.com/syncthing/syncthing/devtool/syncthingmain"
)

var programs = map[string]func(){
	"syncthing":        syncthingmain.Main,
	"devtool-agent":    agent.Main,
	"devtool-buildkit": buildkitclient.Main,
}

func main() {
	name, args, ok := program(os.Args)
	if !ok {
		fmt.Fprint(os.Stderr, "usage: devtool-host syncthing|devtool-agent|devtool-buildkit [ARGS...]\n"+
			"(or run it under one of those names)\n")
		os.Exit(2)
	}
	// The agent copied into a dev container alone runs this binary as Syncthing too.
	agent.SyncthingInside = true
	os.Args = args
	programs[name]()
}
