//go:build !linux

package agent

import "errors"

// Off Linux the agent is the CLI's local helper only: `keygen`,
// `syncthing-config` and `version` configure and describe the Syncthing on
// the user's machine. The commands below run in a dev container, which is
// always Linux.
var errContainerOnly = errors.New("runs only in a dev container (Linux)")

func runSupervise([]string) error  { return errContainerOnly }
func runSSH([]string) error        { return errContainerOnly }
func runUntar([]string) error      { return errContainerOnly }
func runSettled([]string) error    { return errContainerOnly }
func runDropCopied([]string) error { return errContainerOnly }
